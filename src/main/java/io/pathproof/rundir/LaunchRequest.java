package io.pathproof.rundir;

import java.util.List;

/**
 * The manifest's first turn: what {@code pathproof run} was asked to do, written before any rank starts. In a run of
 * pathproof's own stand-in job the workload and sizes are the launcher's; in a run that wraps a user's command
 * ({@code command} non-empty) the job decides them and they are null here. {@code commandLine} never names an
 * injected fault (it is in {@code fault.sealed.json}).
 */
public record LaunchRequest(
        String schema,
        String tool,
        List<String> commandLine,
        List<String> command,
        String start,
        String workloadName,
        String workloadSource,
        String topology,
        String backendRequested,
        Integer nproc,
        Integer nnodes,
        Integer nodeRank,
        Integer iters,
        Integer warmup,
        Long timeoutSec,
        PredictionRef prediction) {
    public LaunchRequest {
        commandLine = commandLine == null ? List.of() : List.copyOf(commandLine);
        command = command == null ? List.of() : List.copyOf(command);
    }

    /**
     * The turn by name: {@code tool} and the {@code start} time given, the schema this package writes, every other
     * component null (or empty) until set, and no sealed prediction until {@link Builder#prediction} names one.
     */
    public static Builder builder(String tool, String start) {
        return new Builder(tool, start);
    }

    /** LaunchRequest's components by name, so that no launcher lists sixteen values, most of them null, in order. */
    public static final class Builder {
        private final String tool;
        private final String start;
        private List<String> commandLine;
        private List<String> command;
        private String workloadName;
        private String workloadSource;
        private String topology;
        private String backendRequested;
        private Integer nproc;
        private Integer nnodes;
        private Integer nodeRank;
        private Integer iters;
        private Integer warmup;
        private Long timeoutSec;
        private PredictionRef prediction = new PredictionRef(null, null);

        private Builder(String tool, String start) {
            this.tool = tool;
            this.start = start;
        }

        /** pathproof's own command line as recorded (never naming an injected fault). */
        public Builder commandLine(List<String> v) {
            commandLine = v;
            return this;
        }

        /** The user's command that the launcher wraps. */
        public Builder command(List<String> v) {
            command = v;
            return this;
        }

        /** The stand-in job's workload: its name and where it came from (a preset or file). */
        public Builder workload(String name, String source) {
            workloadName = name;
            workloadSource = source;
            return this;
        }

        public Builder topology(String v) {
            topology = v;
            return this;
        }

        public Builder backendRequested(String v) {
            backendRequested = v;
            return this;
        }

        /** The stand-in job's ranks per node, nodes, and the node this launcher is. */
        public Builder ranks(int perNode, int nodes, int node) {
            nproc = perNode;
            nnodes = nodes;
            nodeRank = node;
            return this;
        }

        /** The stand-in job's measured and warm-up iterations. */
        public Builder sizes(int measured, int warmupIters) {
            iters = measured;
            warmup = warmupIters;
            return this;
        }

        public Builder timeoutSec(long v) {
            timeoutSec = v;
            return this;
        }

        /** The sealed prediction the run was started for: its file as given and its seal's SHA-256 (both may be null). */
        public Builder prediction(String file, String sealSha256) {
            prediction = new PredictionRef(file, sealSha256);
            return this;
        }

        public LaunchRequest build() {
            return new LaunchRequest(
                    RunManifest.SCHEMA,
                    tool,
                    commandLine,
                    command,
                    start,
                    workloadName,
                    workloadSource,
                    topology,
                    backendRequested,
                    nproc,
                    nnodes,
                    nodeRank,
                    iters,
                    warmup,
                    timeoutSec,
                    prediction);
        }
    }

    /** The sealed prediction a run was started for: its file as given and its seal, or both null. */
    public record PredictionRef(String file, String sealSha256) {}
}

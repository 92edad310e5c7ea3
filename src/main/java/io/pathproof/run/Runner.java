package io.pathproof.run;

import io.pathproof.core.PathproofException;
import io.pathproof.rundir.RunOutcome.RankExit;
import io.pathproof.rundir.Vocabulary;
import io.pathproof.scenario.Topology;
import io.pathproof.scenario.Workload;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The public entry of the run room: turns a {@link Request} into a run directory written by real torch processes
 * (one per rank), or, for Slurm, into the exact {@code srun} command that would do so; and a {@link CommandRequest}
 * into a run of the user's own command. What can be asked and what comes back are named here; the launches
 * themselves are {@link StandInLaunch} and {@link CommandRun}.
 */
public final class Runner {
    private Runner() {}

    /** Which communication backend the ranks use; AUTO = nccl when CUDA GPUs are visible, else gloo. */
    public enum Backend {
        NCCL,
        GLOO,
        AUTO
    }

    /**
     * How ranks are started. AUTO = {@code python -m torch.distributed.run} where it works, else SPAWN (each rank
     * started here with torchrun's worker environment). SRUN only prints the command (a dry run).
     */
    public enum Launcher {
        AUTO,
        SPAWN,
        TORCHRUN,
        SRUN
    }

    /**
     * Everything {@code pathproof run} was asked to do for pathproof's own job: the job, where its ranks are, its
     * iterations, how its ranks start, what it is held against, whether it also times a plain model beside the
     * instrumented one ({@code overhead}), how it was asked for, and its run directory ({@code out}).
     */
    public record Request(
            StandInJob job,
            RankLayout ranks,
            Iterations iterations,
            RankStart start,
            SealedInputs sealed,
            boolean overhead,
            Provenance provenance,
            Path out) {
        public Request {
            Objects.requireNonNull(job, "workload");
            Objects.requireNonNull(out, "out");
            ranks = ranks == null ? RankLayout.ONE : ranks;
            Objects.requireNonNull(iterations, "iterations");
            Objects.requireNonNull(iterations.measured(), "measured iterations");
            start = start == null ? new RankStart(null, null, null, 0) : start;
            sealed = sealed == null ? new SealedInputs(null, null) : sealed;
            provenance = provenance == null ? new Provenance(null, null) : provenance;
        }

        /**
         * A request to run {@code workload} into {@code out}, everything else by name and otherwise as {@code pathproof
         * run} defaults it: one node of one rank, 5 warm-up and 48 measured iterations, 3 under the profiler, no timeout.
         */
        public static Builder builder(Workload workload, Path out) {
            return new Builder(workload, out);
        }

        /** Request's parts by name, so that no caller lists them in order. */
        public static final class Builder extends LaunchBuilder<Builder> {
            private final Workload workload;
            private String workloadLabel;
            private String topologyLabel;
            private Backend backend = Backend.AUTO;
            private int nproc = 1;
            private int nnodes = 1;
            private int nodeRank;
            private String rdzvEndpoint;
            private int iters = 48;
            private int warmup = 5;
            private int profileIters = 3;
            private Launcher launcher = Launcher.AUTO;
            private String python;
            private boolean overhead;

            private Builder(Workload workload, Path out) {
                super(out);
                this.workload = workload;
            }

            @Override
            Builder self() {
                return this;
            }

            /** How the manifest names the workload and the topology (a preset's name or a file). */
            public Builder labels(String workloadName, String topologyName) {
                workloadLabel = workloadName;
                topologyLabel = topologyName;
                return this;
            }

            public Builder backend(Backend v) {
                backend = v;
                return this;
            }

            /** Ranks per node, nodes, and the node this launcher is. */
            public Builder ranks(int perNode, int nodes, int node) {
                nproc = perNode;
                nnodes = nodes;
                nodeRank = node;
                return this;
            }

            public Builder rdzvEndpoint(String v) {
                rdzvEndpoint = v;
                return this;
            }

            /** Measured, warm-up and profiled iterations. */
            public Builder sizes(int measured, int warmupIters, int profiled) {
                iters = measured;
                warmup = warmupIters;
                profileIters = profiled;
                return this;
            }

            public Builder launcher(Launcher v) {
                launcher = v;
                return this;
            }

            public Builder python(String v) {
                python = v;
                return this;
            }

            public Builder overhead(boolean v) {
                overhead = v;
                return this;
            }

            /** The request; each part checks itself, in the order run's flags are read. */
            public Request build() {
                Objects.requireNonNull(workload, "workload");
                Objects.requireNonNull(out, "out");
                return new Request(
                        new StandInJob(workload, workloadLabel, topologyLabel),
                        new RankLayout(nproc, nnodes, nodeRank, rdzvEndpoint),
                        new Iterations(iters, warmup, profileIters),
                        new RankStart(backend, launcher, python, timeoutSec),
                        sealed(),
                        overhead,
                        provenance(),
                        out);
            }
        }
    }

    /**
     * What the instrumentation costs: the recording Python comm hook runs on every {@code hookEvery}-th
     * measured iteration (and iterations 0, 1 and the profiler window; 1 = every iteration), DDP's own C++ allreduce on
     * the others; {@code profilerPlugin} is "auto", "none" or the path of pathproof's NCCL profiler plugin.
     */
    public record Instrumentation(int hookEvery, String profilerPlugin) {
        /** Chosen by measurement: docs/PERFORMANCE.md, "Instrumentation overhead"; vocabulary.json holds it for both sides. */
        public static final int DEFAULT_HOOK_EVERY = Vocabulary.hookEvery();

        public static final Instrumentation DEFAULT = new Instrumentation(DEFAULT_HOOK_EVERY, "auto");

        public Instrumentation {
            if (hookEvery < 1) {
                throw PathproofException.usage(
                        "--hook-every: must be >= 1 (1 = the comm hook on every iteration), got " + hookEvery);
            }
            profilerPlugin = profilerPlugin == null || profilerPlugin.isBlank() ? "auto" : profilerPlugin;
        }
    }

    /**
     * The outcome. {@code exitCode} is one of {@link io.pathproof.core.ExitCode}; {@code message} is one line (null on
     * success); {@code command} is the printed command of a dry run (srun), else null.
     */
    public record Result(
            Path runDir, boolean complete, int exitCode, String message, List<RankExit> ranks, String command) {}

    /**
     * {@code run --emulate}: the machine to emulate on the one real GPU ({@code topologyLabel} as given, for the
     * manifest), the directory (or file) of the patched NCCL, and an optional compute capability NCCL reports. A
     * {@code topology} of several nodes is an emulated cluster, as NCCL will see it
     * ({@link io.pathproof.scenario.Scenarios#emulatedCluster}): {@code ranksPerNode} ranks on each node (every node
     * holding exactly that many GPUs), each node's ranks with the node's own host hash and topology file; its nodes
     * reach each other through NCCL's Socket transport over loopback, or, with {@code netPlugin} (an NCCL net plugin
     * library that exposes the topology's NICs), through that plugin.
     */
    public record Emulate(
            String topologyLabel,
            Topology topology,
            Path ncclLib,
            Integer compCap,
            Integer ranksPerNode,
            Path netPlugin) {
        public Emulate {
            Objects.requireNonNull(topology, "topology");
            topologyLabel = topologyLabel == null ? topology.name() : topologyLabel;
            if (topology.nodes().size() > 1) {
                int per = topology.nodes().get(0).gpus().size();
                ranksPerNode = ranksPerNode == null ? per : ranksPerNode;
                Set<String> hosts = new HashSet<>();
                for (Topology.Node n : topology.nodes()) {
                    if (n.gpus().size() != ranksPerNode) {
                        throw PathproofException.badInput("--emulate " + topologyLabel + ": node " + n.hostname()
                                + " has " + n.gpus().size() + " GPU(s), not " + ranksPerNode
                                + ": an emulated cluster holds one GPU per rank");
                    }
                    if (!hosts.add(n.hostname())) {
                        throw PathproofException.badInput(
                                "--emulate " + topologyLabel + ": two nodes named '" + n.hostname()
                                        + "'; each emulated node needs its own name (it is the node's NCCL_HOSTID)");
                    }
                    // Without a plugin the network is the Socket transport over lo: one NIC named lo, no GPUDirect.
                    boolean loopback = n.nics().size() == 1
                            && n.nics().get(0).name().equals("lo")
                            && !n.nics().get(0).gdr();
                    if (netPlugin == null && !loopback) {
                        throw PathproofException.badInput(
                                "--emulate " + topologyLabel + ": node " + n.hostname() + " is not"
                                        + " joined over loopback (one NIC 'lo', no GPUDirect): Scenarios.emulatedCluster makes it so");
                    }
                }
            } else if (netPlugin != null) {
                throw PathproofException.usage(
                        "--net-plugin goes with an emulated cluster (--emulate TOPOLOGY --nodes N)");
            }
        }

        /** A single node: no network, every rank one GPU of it. */
        public Emulate(String topologyLabel, Topology topology, Path ncclLib, Integer compCap) {
            this(topologyLabel, topology, ncclLib, compCap, null, null);
        }

        /** Emulated nodes (1 for a single machine). */
        public int nodes() {
            return topology.nodes().size();
        }

        /** Whether the emulated machine is a cluster (several nodes, ranks told apart by host). */
        public boolean cluster() {
            return nodes() > 1;
        }
    }

    /**
     * What the Python that would run the ranks sees ({@code --python}, $PATHPROOF_PYTHON, python3, /usr/bin/python3):
     * its path, torch's version, the CUDA GPUs torch sees (0 without CUDA) and whether torch has NCCL.
     */
    /**
     * What the ranks' Python has: its torch, GPUs, whether torch has NCCL, and {@code ncclVersion}, the NCCL library it
     * loads (its own ncclGetVersion; torch's build version where none is loaded dynamically), or null.
     */
    public record Machine(String python, String torch, int gpus, boolean nccl, String ncclVersion) {
        public Machine(String python, String torch, int gpus, boolean nccl) {
            this(python, torch, gpus, nccl, null);
        }
    }

    /** The NCCL version the emulator library in {@code dir} was built from (its BUILD-INFO), or null. */
    public static String emulatorNcclVersion(Path dir) {
        return Emulation.buildInfo(dir).get("nccl_version");
    }

    /**
     * {@code pathproof run --out DIR -- COMMAND}: the user's own job, run as given, into {@code out}. {@code sealed}:
     * a non-null prediction means a sealed prediction was given and none is made in the run. {@code machine}: what the
     * in-run prediction is made for, and whether the ranks run emulated. {@code iterations}: the warm-up and the
     * profiler window count the job's iterations (DDP forwards with gradient sync); the job decides how many it
     * measures. {@code hookEvery}: the recording comm hook's period (null: each rank chooses by its backend,
     * vocabulary.json's hookEvery and hookEveryNccl). {@code nodeRank}: the node this launcher stands for when several
     * launchers (one torchrun per node) share the run directory; null = read torchrun's {@code --node_rank} in the
     * command, else 0. {@code passThrough}: the command's stdout and stderr also go to this process's (they are kept in
     * the run directory either way).
     */
    public record CommandRequest(
            List<String> command,
            Path out,
            long timeoutSec,
            Integer hookEvery,
            Iterations iterations,
            Integer nodeRank,
            TargetMachine machine,
            SealedInputs sealed,
            boolean passThrough,
            Provenance provenance) {
        public CommandRequest {
            command = checkCommand(command);
            Objects.requireNonNull(out, "out");
            RankStart.checkTimeout(timeoutSec);
            checkHookEvery(hookEvery);
            Objects.requireNonNull(iterations, "iterations");
            checkNodeRank(nodeRank);
            machine = machine == null ? TargetMachine.FOUND : machine;
            sealed = sealed == null ? new SealedInputs(null, null) : sealed;
            provenance = provenance == null ? new Provenance(null, null) : provenance;
        }

        private static List<String> checkCommand(List<String> command) {
            if (command == null || command.isEmpty()) {
                throw PathproofException.usage("run -- COMMAND: the command is missing");
            }
            return List.copyOf(command);
        }

        private static void checkHookEvery(Integer hookEvery) {
            if (hookEvery != null && hookEvery < 0) {
                throw PathproofException.usage(
                        "--hook-every: must be >= 0 (0 = no recording comm hook), got " + hookEvery);
            }
        }

        private static void checkNodeRank(Integer nodeRank) {
            if (nodeRank != null && nodeRank < 0) {
                throw PathproofException.usage("--node-rank: must be >= 0, got " + nodeRank);
            }
        }

        /** A request for {@code command} into {@code out}, everything else at its default, set by name. */
        public static Builder of(List<String> command, Path out) {
            return new Builder(command, out);
        }

        /** CommandRequest's optional parts by name, so that no caller lists them in order. */
        public static final class Builder extends LaunchBuilder<Builder> {
            private final List<String> command;
            private String topology;
            private Integer hookEvery;
            private int warmup = 5;
            private int profileIters = 3;
            private boolean passThrough;
            private Integer nodeRank;
            private Emulate emulate;
            private Integer topologyNodes;

            private Builder(List<String> command, Path out) {
                super(out);
                this.command = command;
            }

            @Override
            Builder self() {
                return this;
            }

            public Builder topology(String v) {
                topology = v;
                return this;
            }

            /** The recording comm hook's period; null (the default) lets each rank choose by its backend. */
            public Builder hookEvery(Integer v) {
                hookEvery = v;
                return this;
            }

            public Builder sizes(int warmupIters, int profiled) {
                warmup = warmupIters;
                profileIters = profiled;
                return this;
            }

            public Builder passThrough(boolean v) {
                passThrough = v;
                return this;
            }

            public Builder nodeRank(Integer v) {
                nodeRank = v;
                return this;
            }

            public Builder emulate(Emulate v) {
                emulate = v;
                return this;
            }

            public Builder topologyNodes(Integer v) {
                topologyNodes = v;
                return this;
            }

            /** The request; the parts are checked in the order run's flags are read (the command first). */
            public CommandRequest build() {
                List<String> cmd = checkCommand(command);
                Objects.requireNonNull(out, "out");
                RankStart.checkTimeout(timeoutSec);
                checkHookEvery(hookEvery);
                Iterations it = new Iterations(null, warmup, profileIters);
                checkNodeRank(nodeRank);
                return new CommandRequest(
                        cmd,
                        out,
                        timeoutSec,
                        hookEvery,
                        it,
                        nodeRank,
                        new TargetMachine(topology, topologyNodes, emulate),
                        sealed(),
                        passThrough,
                        provenance());
            }
        }
    }

    /**
     * The patched NCCL for {@code --emulate}, as found without --emulate having been asked for: the library file (null
     * when none was found), where it came from, and why it cannot be used (null when it can).
     */
    public record EmulatorLibrary(Path file, String how, String refusal) {
        public boolean usable() {
            return file != null && refusal == null;
        }
    }

    /** Progress of the measured run: steps done by rank 0 of the total; called from the monitoring thread. */
    public interface Progress {
        void steps(int done, int total);
    }

    /** Runs the user's command with pathproof's instrumentation in every rank (see {@link CommandRequest}). */
    public static Result wrap(CommandRequest req) {
        return CommandRun.run(req);
    }

    /** Probes the Python the ranks would use; exit 6 (TORCH_MISSING) naming what was tried when none has torch. */
    public static Machine probe(String python) {
        PythonProbe.Python p = PythonProbe.find(python);
        return new Machine(p.executable(), p.torchVersion(), p.cuda() ? p.gpus() : 0, p.nccl(), p.ncclVersion());
    }

    /**
     * Looks for the emulator library: {@code given} (--nccl-lib DIR), else $PATHPROOF_NCCL_EMULATOR, else
     * target/nccl-emulator/ under {@code cwd} (scripts/build-nccl-emulator.sh NCCL_SRC target/nccl-emulator); each
     * checked as --emulate checks it (the patch's mark in the file). Never throws for a missing or unpatched library.
     */
    public static EmulatorLibrary findEmulator(Path given, Map<String, String> env, Path cwd) {
        return Emulation.find(given, env, cwd);
    }

    /** Runs the job (or, for srun, prepares the run directory and returns the command). */
    public static Result run(Request req, Progress progress) {
        return run(req, Instrumentation.DEFAULT, progress, null);
    }

    /** As {@link #run(Request, Progress)}; {@code emulate} non-null runs the ranks under the NCCL emulator. */
    public static Result run(Request req, Progress progress, Emulate emulate) {
        return run(req, Instrumentation.DEFAULT, progress, emulate);
    }

    /** As {@link #run(Request, Progress)} with the given instrumentation. */
    public static Result run(Request req, Instrumentation ins, Progress progress) {
        return run(req, ins, progress, null);
    }

    /**
     * As {@link #run(Request, Progress)} with the given instrumentation; {@code emulate} non-null runs the ranks under
     * the NCCL emulator.
     */
    public static Result run(Request req, Instrumentation ins, Progress progress, Emulate emulate) {
        return new StandInLaunch(req, ins, emulate).run(progress);
    }
}

package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import io.pathproof.run.Runner;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Topology;
import io.pathproof.scenario.Workload;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Verb {@code run}: an instrumented, real DDP job whose every layer leaves evidence in RUNDIR. */
@Command(
        name = "run",
        resourceBundle = "io.pathproof.cli.run",
        mixinStandardHelpOptions = true,
        versionProvider = ToolVersion.class,
        description = {
            "Run an instrumented DDP job (gloo on CPU, NCCL on GPUs) and keep every piece of evidence in RUNDIR:",
            "comm-hook records, step times, DDP logging data, replica digests, profiler traces, NCCL logs, manifest."
        })
public final class RunCommand extends Verb implements Callable<Integer> {
    static final class What {
        @Option(names = "--scenario", description = "scenario preset or file (workload, topology, ranks, env)")
        String scenario;

        @Option(names = "--workload", description = "workload preset or file, e.g. one-64mib-fp32")
        String workload;
    }

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    What what;

    @picocli.CommandLine.Parameters(
            paramLabel = "COMMAND",
            arity = "0..*",
            description = "after --: the user's own launch command, run as given (torchrun …, srun …, python train.py)")
    List<String> command = new ArrayList<>();

    @Option(names = "--topology", description = "topology preset or file (recorded in the manifest)")
    String topology;

    @Option(
            names = "--nodes",
            paramLabel = "N",
            description =
                    "the topology (--topology, or --emulate's) is one node; the machine is N such nodes (recorded; the"
                            + " in-run prediction is made for them; with --emulate, an emulated cluster of N nodes on the one GPU)")
    Integer nodes;

    @Option(
            names = "--nic-speed",
            paramLabel = "MBPS",
            description = "with --emulate on a cluster: the speed of each node's one NIC where the topology lists none"
                    + " (Mb/s)")
    Long nicSpeed;

    /** The emulated cluster's per-node flags, shared with prove; run's wording is in run.properties. */
    @Mixin
    EmulatedClusterOptions cluster = new EmulatedClusterOptions();

    @Option(names = "--backend", defaultValue = "auto", description = "nccl, gloo or auto (default: ${DEFAULT-VALUE})")
    String backend;

    @Option(names = "--nproc", description = "ranks on this node (default: the scenario's ranks, else 1)")
    Integer nproc;

    @Option(names = "--nnodes", defaultValue = "1")
    int nnodes;

    @Option(names = "--node-rank", defaultValue = "0")
    int nodeRank;

    @Option(
            names = "--rdzv-endpoint",
            description = "HOST:PORT of rank 0's rendezvous (default: 127.0.0.1 and a free port)")
    String rdzvEndpoint;

    /** run's sizes: enough measured steps for a stable median, three of them under the profiler. */
    @Mixin
    RunFlags runs = new RunFlags(5, 48, 3, 0);

    @Option(
            names = "--inject",
            paramLabel = "K=V",
            description =
                    "a fault: NCCL_*/TORCH_* variable, or bucket_cap_mb=N, find_unused_parameters=true, compute_delay_ms=N, corrupt_grad_rank=R, exit_rank=R@I")
    List<String> inject = new ArrayList<>();

    @Option(
            names = "--prediction",
            description = "sealed prediction this run is for (its seal hash goes into the manifest)")
    Path prediction;

    @Option(
            names = "--launcher",
            defaultValue = "auto",
            description = "auto, spawn, torchrun, or srun (prints the srun command)")
    String launcher;

    @Option(
            names = "--overhead",
            description =
                    "also time a plain DDP model (no hook, no profiler), its steps alternating with the instrumented ones, to measure the instrumentation's cost")
    boolean overhead;

    @Option(
            names = "--emulate",
            paramLabel = "TOPOLOGY",
            description =
                    "emulate this single-node machine (preset, JSON, NCCL XML, nvidia-smi text) on the one real GPU:"
                            + " NCCL decisions real, timings not physical (needs --nccl-lib)")
    String emulate;

    @Option(
            names = "--nccl-lib",
            paramLabel = "DIR",
            description =
                    "the patched NCCL for --emulate: DIR/libnccl.so.2 from scripts/build-nccl-emulator.sh NCCL_SRC DIR")
    Path ncclLib;

    @Option(
            names = "--emulate-compcap",
            paramLabel = "CC",
            description = "with --emulate: the compute capability NCCL reports, e.g. 70 (NCCL_EMULATE_COMPCAP)")
    Integer emulateCompCap;

    @Option(
            names = "--hook-every",
            paramLabel = "K|auto",
            defaultValue = "auto",
            description =
                    "record buckets with the Python comm hook on every K-th measured iteration (also iterations 0, 1 and"
                            + " the profiler window; 1 = all, 0 = never). auto: the stand-in job and a job on gloo use vocabulary.json's"
                            + " hookEvery; a job on NCCL 0, since its flight recorder holds every"
                            + " bucket's AllReduce and DDP would keep the hook on every iteration (default: ${DEFAULT-VALUE})")
    String hookEvery;

    @Option(
            names = "--profiler-plugin",
            defaultValue = "auto",
            paramLabel = "PATH|auto|none",
            description =
                    "pathproof's NCCL profiler plugin (native/nccl-profiler); auto = $PATHPROOF_NCCL_PROFILER_PLUGIN or"
                            + " target/nccl-profiler/libnccl-profiler-pathproof.so when built (default: ${DEFAULT-VALUE})")
    String profilerPlugin;

    @Option(names = "--out", required = true, description = "the run directory (new or empty)")
    Path out;

    /**
     * The parsed command line: pathproof's own job ({@code scenario} or {@code workload}) or the user's
     * {@code command}, where its ranks run and on what machine, how each run is sized, and the run directory.
     */
    record Options(
            String scenario,
            String workload,
            List<String> command,
            String topology,
            Integer nodes,
            Long nicSpeed,
            EmulatedCluster cluster,
            String backend,
            Integer nproc,
            int nnodes,
            int nodeRank,
            String rdzvEndpoint,
            RunFlags.Sizes sizes,
            List<String> inject,
            Path prediction,
            String launcher,
            boolean overhead,
            String emulate,
            Path ncclLib,
            Integer emulateCompCap,
            String hookEvery,
            String profilerPlugin,
            Path out) {
        Options {
            command = List.copyOf(command);
            inject = List.copyOf(inject);
        }

        /** Whether {@code --scenario} or {@code --workload} names pathproof's own job. */
        boolean standInNamed() {
            return scenario != null || workload != null;
        }

        /** --hook-every as a number, or null for auto. */
        Integer hookEveryNumber() {
            if (hookEvery.equals("auto")) {
                return null;
            }
            try {
                return Integer.valueOf(hookEvery.trim());
            } catch (NumberFormatException e) {
                throw PathproofException.usage("--hook-every: a number >= 0 or auto, got '" + hookEvery + "'");
            }
        }

        /** Whether run's own emulation flags (not the shared cluster ones) were given. */
        boolean emulationFlagsGiven() {
            return ncclLib != null || emulateCompCap != null || nicSpeed != null;
        }
    }

    /** What the emulation flags go with when nothing is emulated: run's own and the shared ones, in one line. */
    private static final String WITHOUT_EMULATE = "--nccl-lib, --emulate-compcap, --nproc-per-node, --nic-speed and"
            + " --net-plugin go with --emulate TOPOLOGY";

    @Override
    public Integer call() {
        Options o = new Options(
                what == null ? null : what.scenario,
                what == null ? null : what.workload,
                command,
                topology,
                nodes,
                nicSpeed,
                cluster.cluster(),
                backend,
                nproc,
                nnodes,
                nodeRank,
                rdzvEndpoint,
                runs.sizes(),
                inject,
                prediction,
                launcher,
                overhead,
                emulate,
                ncclLib,
                emulateCompCap,
                hookEvery,
                profilerPlugin,
                out);
        return o.command().isEmpty() ? standIn(o) : wrap(o);
    }

    /**
     * pathproof's own job as {@code --scenario} or {@code --workload} names it: the workload, how the manifest labels
     * it and the topology, the ranks (the scenario's, else 1), and the scenario's variables with the injections.
     */
    private record StandIn(Workload workload, String label, String topology, int ranks, List<String> injections) {}

    /** {@code run --workload|--scenario …}: pathproof's own job, step by step. */
    private Integer standIn(Options o) {
        StandIn job = clusterOf(o, standInJob(o));
        Runner.Emulate emu = emulation(o);
        if (emu != null) {
            job = emulated(o, job, emu);
        }
        Runner.Request req = Runner.Request.builder(job.workload(), o.out())
                .labels(job.label(), job.topology())
                .backend(enumOf(Runner.Backend.class, o.backend(), "--backend"))
                .ranks(o.nproc() == null ? job.ranks() : o.nproc(), o.nnodes(), o.nodeRank())
                .rdzvEndpoint(o.rdzvEndpoint())
                .sizes(o.sizes().iters(), o.sizes().warmup(), o.sizes().profileIters())
                .inject(job.injections())
                .prediction(o.prediction())
                .timeoutSec(o.sizes().timeout())
                .launcher(enumOf(Runner.Launcher.class, o.launcher(), "--launcher"))
                .python(o.sizes().python())
                .overhead(o.overhead())
                .recorded(commandLine(), ToolVersion.get())
                .build();
        return report(o, req, emu);
    }

    /** {@code --emulate TOPOLOGY}'s machine, or null (refusing the emulation flags) when nothing is emulated. */
    private static Runner.Emulate emulation(Options o) {
        if (o.emulate() == null) {
            o.cluster().requireEmulation(false, o.emulationFlagsGiven(), WITHOUT_EMULATE);
            return null;
        }
        return o.cluster()
                .machine(
                        o.emulate(),
                        Scenarios.topology(o.emulate()),
                        o.nodes(),
                        o.nicSpeed(),
                        o.ncclLib(),
                        o.emulateCompCap());
    }

    /** The job {@code --scenario} or {@code --workload} names, on {@code --topology} where given. */
    private static StandIn standInJob(Options o) {
        if (!o.standInNamed()) {
            throw PathproofException.usage(
                    "run: give --workload or --scenario for pathproof's own job, or -- COMMAND for yours");
        }
        List<String> injections = new ArrayList<>();
        StandIn job;
        if (o.scenario() != null) {
            Scenario s = Scenarios.load(o.scenario());
            for (Map.Entry<String, String> e : s.env().entrySet()) {
                injections.add(
                        e.getKey() + "=" + e.getValue()); // validated with the --inject names: nothing passes unseen
            }
            job = new StandIn(
                    s.workload(),
                    "scenario " + o.scenario(),
                    o.topology() == null ? s.topology().name() : o.topology(),
                    s.ranks(),
                    injections);
        } else {
            Workload w = Scenarios.workload(o.workload());
            job = new StandIn(
                    w,
                    o.workload(),
                    o.topology() == null
                            ? null
                            : Scenarios.topology(o.topology()).name(),
                    1,
                    injections);
        }
        injections.addAll(o.inject());
        return job;
    }

    /** With {@code --nodes N} and no emulation, the job's topology as the cluster of N such nodes. */
    private static StandIn clusterOf(Options o, StandIn job) {
        if (o.nodes() == null || o.emulate() != null) {
            return job;
        }
        if (job.topology() == null) {
            throw PathproofException.usage("--nodes N goes with --topology NODE or a --scenario (the machine is N such"
                    + " nodes), or with --emulate NODE (an emulated cluster)");
        }
        // The run records the cluster by the name it gets: "<topology>-xN-nodes".
        Topology perNode = o.topology() != null
                ? Scenarios.topology(o.topology())
                : Scenarios.load(o.scenario()).topology();
        return new StandIn(
                job.workload(),
                job.label(),
                Scenarios.cluster(perNode, o.nodes()).name(),
                job.ranks(),
                job.injections());
    }

    /** The job on the emulated machine: its topology, and one rank per emulated GPU unless told otherwise. */
    private static StandIn emulated(Options o, StandIn job, Runner.Emulate emu) {
        String topo = job.topology();
        int ranks = job.ranks();
        if (emu.cluster()) {
            if (o.nproc() != null || o.topology() != null) {
                throw PathproofException.usage(
                        "--emulate on a cluster: its ranks are --nodes x --nproc-per-node and its"
                                + " prediction is made for the emulated cluster; --nproc and --topology go without it");
            }
            topo = emu.topology().name();
            ranks = emu.topology().gpuCount(); // every rank of every emulated node runs here
        } else {
            topo = topo == null ? emu.topology().name() : topo;
            if (o.nproc() == null && o.scenario() == null) {
                ranks = emu.topology().gpuCount(); // one rank per emulated GPU unless told otherwise
            }
        }
        return new StandIn(job.workload(), job.label(), topo, ranks, job.injections());
    }

    /** Runs the job with a progress bar on a terminal, and says how it ended (the srun command of a dry run). */
    private Integer report(Options o, Runner.Request req, Runner.Emulate emu) {
        PrintWriter out = out();
        PrintWriter err = err();
        boolean terminal = System.console() != null;
        Runner.Progress bar = terminal
                ? (done, total) -> {
                    int width = 30;
                    int fill = total == 0 ? 0 : done * width / total;
                    err.print("\r[" + "#".repeat(fill) + " ".repeat(width - fill) + "] " + done + "/" + total
                            + " steps (rank 0)");
                    err.flush();
                }
                : null;
        Runner.Result r = Runner.run(
                req,
                new Runner.Instrumentation(
                        o.hookEveryNumber() == null ? Runner.Instrumentation.DEFAULT_HOOK_EVERY : o.hookEveryNumber(),
                        o.profilerPlugin()),
                bar,
                emu);
        if (terminal) {
            err.println();
        }
        if (r.command() != null) {
            out.println(r.command());
            return 0;
        }
        if (r.exitCode() != 0) {
            throw new PathproofException(r.exitCode(), r.message());
        }
        out.println("run: complete: " + r.runDir() + " (" + r.ranks().size() + " process(es) exited 0)");
        return 0;
    }

    /** {@code run --out DIR -- COMMAND}: the user's own job, instrumented through its environment. */
    private Integer wrap(Options o) {
        if (o.standInNamed()
                || o.nproc() != null
                || o.overhead()
                || !o.backend().equals("auto")
                || o.nnodes() != 1
                || o.rdzvEndpoint() != null
                || !o.launcher().equals("auto")) {
            throw PathproofException.usage(
                    "run -- COMMAND: the command decides its workload, ranks, backend and launcher;"
                            + " --workload, --scenario, --nproc, --nnodes, --rdzv-endpoint, --backend, --launcher"
                            + " and --overhead go with pathproof's own job (--node-rank N names this launcher's node when"
                            + " several share the run directory; torchrun's own --node_rank is read from the command)");
        }
        Runner.Emulate emu = emulation(o);
        if (emu != null && emu.cluster() && o.topology() != null) {
            throw PathproofException.usage(
                    "run --emulate on a cluster -- COMMAND: the in-run prediction is made for the"
                            + " emulated cluster; --topology goes without it");
        }
        String topo = OwnJobTopology.forRanks(o.topology() != null ? o.topology() : o.emulate());
        if (emu == null) {
            OwnJobTopology.checkNodes(
                    o.topology(),
                    o.nodes(),
                    "run -- COMMAND --nodes N: goes with --topology NODE (the machine"
                            + " the in-run prediction is made for is N such nodes) or --emulate NODE (an emulated cluster)");
        }
        Runner.Result r = Runner.wrap(Runner.CommandRequest.of(o.command(), o.out())
                .inject(o.inject())
                .prediction(o.prediction())
                .topology(topo)
                .timeoutSec(o.sizes().timeout())
                .hookEvery(o.hookEveryNumber())
                .sizes(o.sizes().warmup(), o.sizes().profileIters())
                .recorded(commandLine(), ToolVersion.get())
                .passThrough(true)
                .nodeRank(o.nodeRank() == 0 ? null : o.nodeRank())
                .emulate(emu)
                .topologyNodes(o.nodes())
                .build());
        if (r.exitCode() != 0) {
            throw new PathproofException(r.exitCode(), r.message());
        }
        out().println("run: complete: " + r.runDir() + " (the command and "
                + (r.ranks().size() - 1) + " rank(s) finished)");
        List<Path> later = io.pathproof.rundir.DdpSessions.later(r.runDir());
        if (!later.isEmpty()) {
            out().println("run: the command built its DDP job " + (later.size() + 1)
                    + " times, one after another: the first session is " + r.runDir() + ", each later one a run"
                    + " directory of its own (accept --run DIR): "
                    + later.stream().map(Path::toString).collect(java.util.stream.Collectors.joining(", ")));
        }
        return 0;
    }

    private static <E extends Enum<E>> E enumOf(Class<E> type, String v, String flag) {
        try {
            return Enum.valueOf(type, v.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw PathproofException.usage(flag + " '" + v + "': expected one of "
                    + java.util.Arrays.stream(type.getEnumConstants())
                            .map(x -> x.name().toLowerCase(Locale.ROOT))
                            .toList());
        }
    }
}

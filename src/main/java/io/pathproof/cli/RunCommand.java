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
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

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
public final class RunCommand implements Callable<Integer> {
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

    /** --hook-every as a number, or null for auto. */
    private Integer hookEvery() {
        if (hookEvery.equals("auto")) {
            return null;
        }
        try {
            return Integer.valueOf(hookEvery.trim());
        } catch (NumberFormatException e) {
            throw PathproofException.usage("--hook-every: a number >= 0 or auto, got '" + hookEvery + "'");
        }
    }

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

    @Spec
    CommandSpec spec;

    /** What the emulation flags go with when nothing is emulated: run's own and the shared ones, in one line. */
    private static final String WITHOUT_EMULATE = "--nccl-lib, --emulate-compcap, --nproc-per-node, --nic-speed and"
            + " --net-plugin go with --emulate TOPOLOGY";

    @Override
    public Integer call() {
        return command.isEmpty() ? standIn() : wrap();
    }

    /**
     * pathproof's own job as {@code --scenario} or {@code --workload} names it: the workload, how the manifest labels
     * it and the topology, the ranks (the scenario's, else 1), and the scenario's variables with the injections.
     */
    private record StandIn(Workload workload, String label, String topology, int ranks, List<String> injections) {}

    /** {@code run --workload|--scenario …}: pathproof's own job, step by step. */
    private Integer standIn() {
        StandIn job = clusterOf(standInJob());
        Runner.Emulate emu = null;
        if (emulate != null) {
            emu = cluster.machine(emulate, Scenarios.topology(emulate), nodes, nicSpeed, ncclLib, emulateCompCap);
            job = emulated(job, emu);
        } else {
            cluster.requireEmulation(
                    false, ncclLib != null || emulateCompCap != null || nicSpeed != null, WITHOUT_EMULATE);
        }
        Runner.Request req = Runner.Request.builder(job.workload(), out)
                .labels(job.label(), job.topology())
                .backend(enumOf(Runner.Backend.class, backend, "--backend"))
                .ranks(nproc == null ? job.ranks() : nproc, nnodes, nodeRank)
                .rdzvEndpoint(rdzvEndpoint)
                .sizes(runs.iters, runs.warmup, runs.profileIters)
                .inject(job.injections())
                .prediction(prediction)
                .timeoutSec(runs.timeout)
                .launcher(enumOf(Runner.Launcher.class, launcher, "--launcher"))
                .python(runs.python)
                .overhead(overhead)
                .recorded(commandLine(), ToolVersion.get())
                .build();
        return report(req, emu);
    }

    /** The job {@code --scenario} or {@code --workload} names, on {@code --topology} where given. */
    private StandIn standInJob() {
        if (what == null) {
            throw PathproofException.usage(
                    "run: give --workload or --scenario for pathproof's own job, or -- COMMAND for yours");
        }
        List<String> injections = new ArrayList<>();
        StandIn job;
        if (what.scenario != null) {
            Scenario s = Scenarios.load(what.scenario);
            for (Map.Entry<String, String> e : s.env().entrySet()) {
                injections.add(
                        e.getKey() + "=" + e.getValue()); // validated with the --inject names: nothing passes unseen
            }
            job = new StandIn(
                    s.workload(),
                    "scenario " + what.scenario,
                    topology == null ? s.topology().name() : topology,
                    s.ranks(),
                    injections);
        } else {
            Workload w = Scenarios.workload(what.workload);
            job = new StandIn(
                    w,
                    what.workload,
                    topology == null ? null : Scenarios.topology(topology).name(),
                    1,
                    injections);
        }
        injections.addAll(inject);
        return job;
    }

    /** With {@code --nodes N} and no emulation, the job's topology as the cluster of N such nodes. */
    private StandIn clusterOf(StandIn job) {
        if (nodes == null || emulate != null) {
            return job;
        }
        if (job.topology() == null) {
            throw PathproofException.usage("--nodes N goes with --topology NODE or a --scenario (the machine is N such"
                    + " nodes), or with --emulate NODE (an emulated cluster)");
        }
        // The run records the cluster by the name it gets: "<topology>-xN-nodes".
        Topology perNode = topology != null
                ? Scenarios.topology(topology)
                : Scenarios.load(what.scenario).topology();
        return new StandIn(
                job.workload(), job.label(), Scenarios.cluster(perNode, nodes).name(), job.ranks(), job.injections());
    }

    /** The job on the emulated machine: its topology, and one rank per emulated GPU unless told otherwise. */
    private StandIn emulated(StandIn job, Runner.Emulate emu) {
        String topo = job.topology();
        int ranks = job.ranks();
        if (emu.cluster()) {
            if (nproc != null || topology != null) {
                throw PathproofException.usage(
                        "--emulate on a cluster: its ranks are --nodes x --nproc-per-node and its"
                                + " prediction is made for the emulated cluster; --nproc and --topology go without it");
            }
            topo = emu.topology().name();
            ranks = emu.topology().gpuCount(); // every rank of every emulated node runs here
        } else {
            topo = topo == null ? emu.topology().name() : topo;
            if (nproc == null && what.scenario == null) {
                ranks = emu.topology().gpuCount(); // one rank per emulated GPU unless told otherwise
            }
        }
        return new StandIn(job.workload(), job.label(), topo, ranks, job.injections());
    }

    /** Runs the job with a progress bar on a terminal, and says how it ended (the srun command of a dry run). */
    private Integer report(Runner.Request req, Runner.Emulate emu) {
        PrintWriter o = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
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
                        hookEvery() == null ? Runner.Instrumentation.DEFAULT_HOOK_EVERY : hookEvery(), profilerPlugin),
                bar,
                emu);
        if (terminal) {
            err.println();
        }
        if (r.command() != null) {
            o.println(r.command());
            return 0;
        }
        if (r.exitCode() != 0) {
            throw new PathproofException(r.exitCode(), r.message());
        }
        o.println("run: complete: " + r.runDir() + " (" + r.ranks().size() + " process(es) exited 0)");
        return 0;
    }

    /** {@code run --out DIR -- COMMAND}: the user's own job, instrumented through its environment. */
    private Integer wrap() {
        if (what != null
                || nproc != null
                || overhead
                || !backend.equals("auto")
                || nnodes != 1
                || rdzvEndpoint != null
                || !launcher.equals("auto")) {
            throw PathproofException.usage(
                    "run -- COMMAND: the command decides its workload, ranks, backend and launcher;"
                            + " --workload, --scenario, --nproc, --nnodes, --rdzv-endpoint, --backend, --launcher"
                            + " and --overhead go with pathproof's own job (--node-rank N names this launcher's node when"
                            + " several share the run directory; torchrun's own --node_rank is read from the command)");
        }
        Runner.Emulate emu = null;
        if (emulate != null) {
            emu = cluster.machine(emulate, Scenarios.topology(emulate), nodes, nicSpeed, ncclLib, emulateCompCap);
            if (emu.cluster() && topology != null) {
                throw PathproofException.usage(
                        "run --emulate on a cluster -- COMMAND: the in-run prediction is made for the"
                                + " emulated cluster; --topology goes without it");
            }
        } else {
            cluster.requireEmulation(
                    false, ncclLib != null || emulateCompCap != null || nicSpeed != null, WITHOUT_EMULATE);
        }
        String topo = OwnJobTopology.forRanks(topology != null ? topology : emulate);
        if (emu == null) {
            OwnJobTopology.checkNodes(
                    topology,
                    nodes,
                    "run -- COMMAND --nodes N: goes with --topology NODE (the machine"
                            + " the in-run prediction is made for is N such nodes) or --emulate NODE (an emulated cluster)");
        }
        Runner.Result r = Runner.wrap(Runner.CommandRequest.of(command, out)
                .inject(inject)
                .prediction(prediction)
                .topology(topo)
                .timeoutSec(runs.timeout)
                .hookEvery(hookEvery())
                .sizes(runs.warmup, runs.profileIters)
                .recorded(commandLine(), ToolVersion.get())
                .passThrough(true)
                .nodeRank(nodeRank == 0 ? null : nodeRank)
                .emulate(emu)
                .topologyNodes(nodes)
                .build());
        if (r.exitCode() != 0) {
            throw new PathproofException(r.exitCode(), r.message());
        }
        spec.commandLine()
                .getOut()
                .println("run: complete: " + r.runDir() + " (the command and "
                        + (r.ranks().size() - 1) + " rank(s) finished)");
        return 0;
    }

    private List<String> commandLine() {
        List<String> cl = new ArrayList<>();
        cl.add("pathproof");
        List<String> given = spec.commandLine().getParseResult().originalArgs();
        if (given.isEmpty() || !given.get(0).equals("run")) {
            cl.add("run"); // picocli may hand the subcommand only its own arguments
        }
        cl.addAll(given);
        return cl;
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

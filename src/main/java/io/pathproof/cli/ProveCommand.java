package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import io.pathproof.prove.Prove;
import io.pathproof.run.Runner;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Versions;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Verb {@code prove}: the seed's whole chapter on one scenario, ending with the reveal. */
@Command(
        name = "prove",
        resourceBundle = "io.pathproof.cli.prove",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        versionProvider = ToolVersion.class,
        description = {
            "Prove the path end to end: predict and seal, run a baseline, accept it, run a variant with one hidden fault,",
            "diagnose it blind, apply the diagnosed fix and verify it, explain, write report.html, then reveal the fault.",
            "Default: the small CPU scenario (cpu-x4-small: 4 gloo ranks, torch on the CPU) with a fault drawn at random.",
            "A step time the data cannot decide is settled by more runs of both configurations (--max-runs), else reported",
            "inconclusive: no fault is called diagnosed, no fix verified on it.",
            "Exit 0: acceptance has no FAIL, the diagnosis names the injected layer and the fix is verified; 10 inconclusive",
            "(nothing decided is wrong, but the step time stayed undecided); 1 otherwise;",
            "2 a wrong command line (a mistyped --fault); 3 a run's evidence incomplete or unreadable; 7 an NCCL scenario",
            "with no GPU and no emulator library; a run that fails ends prove with run's own code (4, 5, 6, 8)."
        })
public final class ProveCommand extends Verb implements Callable<Integer> {
    /** prove's CPU default: small enough for 3 runs of 4 gloo ranks on 2 cores in well under 120 s. */
    static final String DEFAULT_SCENARIO = "cpu-x4-small";

    @Mixin
    ScenarioOptions scenario = new ScenarioOptions();

    @Option(
            names = "--backend",
            defaultValue = "auto",
            description =
                    "nccl, gloo or auto (default: ${DEFAULT-VALUE}: NCCL with >= 2 GPUs;"
                            + " one GPU and the emulator library (--nccl-lib, $PATHPROOF_NCCL_EMULATOR, target/nccl-emulator): an emulated H200 x 4; else gloo)")
    String backend;

    @Option(
            names = "--emulate",
            description = "the scenario's machine emulated on the one GPU here: NCCL decisions real,"
                    + " timings not physical (needs --nccl-lib)")
    boolean emulate;

    @Option(
            names = "--nccl-lib",
            paramLabel = "DIR",
            description =
                    "the emulator library for --emulate (and for auto on one GPU): DIR/libnccl.so.2 from scripts/build-nccl-emulator.sh NCCL_SRC DIR")
    Path ncclLib;

    @Option(names = "--nproc", description = "ranks (default: the scenario's)")
    Integer nproc;

    /** The emulated cluster's per-node flags, shared with run; prove's wording is in prove.properties. */
    @Mixin
    EmulatedClusterOptions cluster = new EmulatedClusterOptions();

    @Option(
            names = "--fault",
            paramLabel = "K=V[,K=V]|random",
            defaultValue = "random",
            description =
                    "the fault of the variant run (default: ${DEFAULT-VALUE}, drawn with --seed and kept hidden until the end)")
    String fault;

    @Option(names = "--seed", defaultValue = "-1", description = "seed of the random fault (default: from the clock)")
    long seed;

    /** prove's sizes: three runs of 4 gloo ranks on 2 cores, each bounded so that a hung rank cannot stall the proof. */
    @Mixin
    RunFlags runs = new RunFlags(3, 24, 1, 300);

    @Option(
            names = "--max-runs",
            defaultValue = "3",
            paramLabel = "N",
            description =
                    "runs of each configuration prove may make to decide an inconclusive step time, interleaved and pooled"
                            + " (default ${DEFAULT-VALUE}; the looks share the error rates by Bonferroni alpha spending)")
    int maxRuns;

    /** prove's wording of it is in prove.properties. */
    @Mixin
    MarginOption margin = new MarginOption();

    @Option(
            names = "--samples",
            description = "committed GPU samples to accept on a CPU-only machine (default: samples/ beside the tool)")
    Path samples;

    @Option(names = "--out", description = "a new or empty directory (default: prove-YYYYMMDD-HHMMSS)")
    Path out;

    @picocli.CommandLine.Parameters(
            paramLabel = "COMMAND",
            arity = "0..*",
            description =
                    "after --: the user's own launch command (torchrun …, srun …, python train.py), proven as given")
    List<String> command = new ArrayList<>();

    /** What the cluster's flags go with when prove emulates nothing. */
    private static final String WITHOUT_EMULATE = "--nproc-per-node and --net-plugin go with --emulate on a cluster";

    /**
     * The parsed command line: the scenario or the user's {@code command}, the backend and the machine it runs on,
     * the fault, how each run is sized, how many runs may decide a step time and by which rule, and where it goes.
     */
    record Options(
            ScenarioChoice scenario,
            String backend,
            boolean emulate,
            Path ncclLib,
            Integer nproc,
            EmulatedCluster cluster,
            String fault,
            long seed,
            RunFlags.Sizes sizes,
            int maxRuns,
            double margin,
            Path samples,
            Path out,
            List<String> command) {
        Options {
            command = List.copyOf(command);
        }

        /** The step-time rule of {@code --margin}, checked when the plan is made, after the job and the backend. */
        io.pathproof.diagnose.Diagnosis.Rule rule() {
            return MarginOption.rule(margin);
        }
    }

    @Override
    public Integer call() {
        Options o = new Options(
                scenario.choice(),
                backend,
                emulate,
                ncclLib,
                nproc,
                cluster.cluster(),
                fault,
                seed,
                runs.sizes(),
                maxRuns,
                margin.margin,
                samples,
                out,
                command);
        return o.command().isEmpty() ? standIn(o) : ownCommand(o);
    }

    /** {@code prove -- COMMAND}: the user's own job, on the machine it finds or on {@code --topology}, or emulated. */
    private Integer ownCommand(Options o) {
        String topology =
                o.scenario().topology(); // the machine the in-run prediction is made for (default: the one it finds)
        if (o.scenario().scenario() != null
                || o.scenario().workload() != null
                || o.nproc() != null
                || !o.backend().equalsIgnoreCase("auto")) {
            throw PathproofException.usage("prove -- COMMAND: the command decides its workload, ranks and backend;"
                    + " --scenario, --workload, --nproc and --backend go with pathproof's own job");
        }
        String topo = OwnJobTopology.forRanks(topology);
        Integer nodes = o.scenario().nodes();
        OwnJobTopology.checkNodes(
                topology,
                nodes,
                "prove -- COMMAND --nodes N: goes with --topology NODE (the machine the"
                        + " in-run prediction is made for is N such nodes)");
        Runner.Emulate emu = null;
        Prove.BackendChoice choice = Prove.BackendChoice.given(
                "-- COMMAND",
                "the job's own",
                Runner.Backend.AUTO,
                "the command decides its backend (gloo on CPUs, NCCL on GPUs)");
        if (o.emulate()) {
            if (o.ncclLib() == null || topology == null) {
                throw PathproofException.usage(
                        "prove --emulate -- COMMAND needs --nccl-lib DIR and --topology MACHINE (the machine to emulate)");
            }
            emu = o.cluster()
                    .machine(
                            topology,
                            Scenarios.topology(topology),
                            nodes,
                            o.scenario().nicSpeed(),
                            o.ncclLib(),
                            null);
            String what = emu.cluster()
                    ? emu.nodes() + " nodes of " + topology + " (" + emu.ranksPerNode() + " ranks each)"
                    : topology;
            choice = Prove.BackendChoice.emulated(
                    o.ncclLib(),
                    "--emulate --topology " + topology
                            + ": the job's ranks on one GPU, NCCL believing it runs on " + what
                            + " (NCCL decisions real, timings not physical)");
        } else {
            o.cluster().requireEmulation(false, false, WITHOUT_EMULATE);
        }
        return prove(o, new Prove.OwnCommand(o.command(), String.join(" ", o.command()), topo, emu, nodes), choice);
    }

    /** pathproof's own job: the scenario given or chosen for this machine, emulated where the choice says so. */
    private Integer standIn(Options o) {
        if (o.emulate() && o.ncclLib() == null) {
            throw PathproofException.usage(
                    "prove --emulate needs --nccl-lib DIR (scripts/build-nccl-emulator.sh NCCL_SRC DIR builds it)");
        }
        Scenario s = o.scenario().given() ? o.scenario().resolve() : null;
        Prove.BackendChoice choice = choose(o, s);
        if (s == null) {
            s = Scenarios.load(choice.scenario() != null ? choice.scenario() : DEFAULT_SCENARIO);
        }
        Runner.Emulate emu = choice.emulate()
                ? o.cluster()
                        .machine(
                                s.topology().name(),
                                s.topology(),
                                null,
                                o.scenario().nicSpeed(),
                                choice.ncclLib(),
                                null)
                : null;
        o.cluster().requireEmulation(emu != null, false, WITHOUT_EMULATE);
        Integer nproc = o.nproc();
        if (emu != null && emu.cluster()) {
            s = onEmulatedCluster(nproc, s, emu);
            nproc = s.ranks();
        }
        String label = o.scenario().scenario() != null
                ? o.scenario().scenario()
                : o.scenario().given() ? s.name() : choice.scenario() != null ? choice.scenario() : DEFAULT_SCENARIO;
        int n = nproc != null ? nproc : choice.ranks() != null ? choice.ranks() : s.ranks();
        if (choice.ranks() != null && n != s.ranks()) {
            // auto ran the GPU scenario on fewer GPUs than it has: the prediction is made for the ranks that run.
            s = new Scenario(s.name(), s.workload(), s.topology(), s.versions(), n, s.env(), s.backend());
        }
        // The ranks' Python is probed where auto chose the backend or torch's version is not pinned (as before this
        // read
        // the NCCL it loads); a given backend with --torch starts no Python here and keeps the scenario's NCCL.
        Runner.Machine ranks = probed != null
                ? probed
                : o.scenario().torch() == null ? Runner.probe(o.sizes().python()) : null;
        if (o.scenario().torch() == null) {
            s = forTheTorchThatRuns(s, ranks);
        }
        if (o.scenario().nccl() == null) {
            s = forTheNcclThatRuns(
                    s,
                    emu != null
                            ? Runner.emulatorNcclVersion(emu.ncclLib())
                            : ranks == null ? null : ranks.ncclVersion());
        }
        return prove(o, new Prove.StandIn(s, label, choice.backend(), n, emu), choice);
    }

    /**
     * The scenario on the emulated cluster: its ranks are the cluster's, and the prediction is made for the cluster
     * NCCL will see: the ranks' GPUs, each node's emulated NIC, and NVLS and MNNVL off, as the emulation always sets
     * them.
     */
    private static Scenario onEmulatedCluster(Integer nproc, Scenario s, Runner.Emulate emu) {
        if (nproc != null && nproc != emu.topology().gpuCount()) {
            throw PathproofException.usage("prove --emulate on a cluster: --nproc " + nproc + " but " + emu.nodes()
                    + " nodes x " + emu.ranksPerNode() + " ranks; set the ranks of each node with --nproc-per-node");
        }
        java.util.Map<String, String> env = new java.util.LinkedHashMap<>(s.env());
        env.putIfAbsent("NCCL_NVLS_ENABLE", "0");
        env.putIfAbsent("NCCL_MNNVL_ENABLE", "0");
        return new Scenario(
                s.name(),
                s.workload(),
                emu.topology(),
                s.versions(),
                emu.topology().gpuCount(),
                env,
                s.backend());
    }

    private Integer prove(Options o, Prove.Job job, Prove.BackendChoice choice) {
        long sd = o.seed() >= 0 ? o.seed() : System.currentTimeMillis() % 1_000_000L;
        Path dir = o.out() != null
                ? o.out()
                : Path.of("prove-" + LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
        RunFlags.Sizes z = o.sizes();
        Prove.Plan plan = new Prove.Plan(
                job,
                o.fault(),
                sd,
                dir,
                new Prove.Sizes(z.warmup(), z.iters(), z.profileIters(), z.python(), z.timeout()),
                o.samples() != null ? o.samples() : defaultSamples(),
                ToolVersion.get(),
                commandLine(),
                choice,
                o.maxRuns(),
                o.rule());
        PrintWriter err = err();
        PrintWriter out = out();
        // One line per phase on stderr, on a terminal or not: prove takes minutes, and a CI log or a pipe that shows
        // nothing after "building…" for two of them looks hung. Flushed at once, since stderr may be buffered by a
        // pipe.
        Prove.Progress progress = (name, ms, detail) -> {
            err.printf(Locale.ROOT, "[%6.1f s] %-13s %s%n", ms / 1000.0, name, detail);
            err.flush();
        };
        err.println("prove: backend " + choice.line());
        err.println("prove: " + job.label() + " → " + dir.toAbsolutePath().normalize() + " (fault: "
                + (o.fault().equals("random") ? "random, seed " + sd : "given") + ")");
        err.flush();
        Prove.Outcome r = Prove.run(plan, progress);
        r.summary().forEach(out::println);
        out.flush();
        return r.exitCode();
    }

    /**
     * The backend: --emulate and an explicit --backend are taken as given; auto probes this machine (the GPUs the ranks'
     * Python sees, the emulator library) and lets prove's rule decide, a pure function of those facts.
     */
    private Prove.BackendChoice choose(Options o, Scenario given) {
        if (o.emulate()) {
            return Prove.BackendChoice.emulated(
                    o.ncclLib(),
                    "--emulate --nccl-lib " + o.ncclLib()
                            + ": the scenario's machine emulated on one GPU (NCCL decisions real, timings not physical)");
        }
        if (!o.backend().equalsIgnoreCase("auto")) {
            Runner.Backend b = backendOf(o.backend());
            return Prove.BackendChoice.given(
                    o.backend().toLowerCase(Locale.ROOT),
                    b.name().toLowerCase(Locale.ROOT),
                    b,
                    "--backend " + o.backend().toLowerCase(Locale.ROOT) + " as given");
        }
        Runner.Machine m = Runner.probe(o.sizes().python());
        probed = m;
        // Without a GPU the library cannot matter, and checking a present one reads all of it.
        Runner.EmulatorLibrary lib = m.gpus() >= 1 || o.ncclLib() != null
                ? Runner.findEmulator(o.ncclLib(), System.getenv(), Path.of(""))
                : null;
        return Prove.auto(m, lib, given, o.nproc());
    }

    /** The machine auto probed (null when the backend was given): its torch is the one the prediction is made for. */
    private Runner.Machine probed;

    /**
     * The prediction is made for the torch the ranks will import, not the scenario preset's: DDP's bucket rules differ
     * between releases (a preset's 1.13 predicted one first bucket of 1 MiB where torch 2.11 on the GPU node, given
     * bucket_cap_mb, closed it at the cap: docs/ddp-model-notes.md). {@code --torch} pins it instead.
     */
    static Scenario forTheTorchThatRuns(Scenario s, Runner.Machine m) {
        if (m == null || m.torch() == null || m.torch().isBlank()) {
            return s;
        }
        Version t = Version.parse(m.torch());
        if (s.versions().torch() != null && s.versions().torch().compareTo(t) == 0) {
            return s;
        }
        Versions v = new Versions(t, s.versions().nccl(), s.versions().cuda());
        return new Scenario(s.name(), s.workload(), s.topology(), v, s.ranks(), s.env(), s.backend());
    }

    /**
     * The prediction is made for the NCCL the ranks will load, not the preset's: NCCL's tuning and graph search differ
     * between releases. That is the emulator library's own version, else the library the ranks' torch loads (its
     * ncclGetVersion, which a pip-upgraded nvidia-nccl package or LD_LIBRARY_PATH changes under the same torch;
     * torch.cuda.nccl.version() is only the headers torch was built against). {@code --nccl} pins it instead; a
     * version the model does not know is refused by the prediction, naming it.
     */
    static Scenario forTheNcclThatRuns(Scenario s, String ran) {
        if (ran == null || ran.isBlank() || s.backend() == io.pathproof.scenario.Backend.GLOO) {
            return s;
        }
        Version n;
        try {
            n = Version.parse(ran);
        } catch (PathproofException e) {
            return s;
        }
        if (s.versions().nccl() != null && s.versions().nccl().compareTo(n) == 0) {
            return s;
        }
        Versions v = new Versions(s.versions().torch(), n, s.versions().cuda());
        return new Scenario(s.name(), s.workload(), s.topology(), v, s.ranks(), s.env(), s.backend());
    }

    private static Runner.Backend backendOf(String v) {
        try {
            return Runner.Backend.valueOf(v.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw PathproofException.usage("--backend '" + v + "': expected auto, nccl or gloo");
        }
    }

    /** samples/ of the checkout this jar was built in (target/../samples), else ./samples. */
    static Path defaultSamples() {
        try {
            Path jar = Path.of(ProveCommand.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            Path parent = jar.getParent() == null ? null : jar.getParent().getParent();
            if (parent != null && Files.isDirectory(parent.resolve("samples"))) {
                return parent.resolve("samples");
            }
        } catch (Exception e) {
            // no code source (an unusual class loader): fall back to the working directory
        }
        return Path.of("samples");
    }
}

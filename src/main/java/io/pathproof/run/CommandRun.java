package io.pathproof.run;

import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.predict.PredictionIo;
import io.pathproof.rundir.LaunchRequest;
import io.pathproof.rundir.LaunchStart;
import io.pathproof.rundir.RunManifest;
import io.pathproof.rundir.RunOutcome;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code pathproof run --out DIR -- COMMAND}: the user's own command, started as given, with pathproof's
 * instrumentation reaching every rank through the environment (the package first on PYTHONPATH, its sitecustomize,
 * the run directory, the evidence variables of NCCL and torch). The command's stdout and stderr pass through and are
 * kept in the run directory; what each rank did is read back from the status files the ranks write
 * ({@link CommandOutcome}). One launch, step by step: the checks before any file is written, this launcher's
 * directory and the manifest's request turn, the ranks' environment and the start turn, then the command until it
 * ends.
 */
final class CommandRun {
    static final String STDOUT = "command.stdout";
    static final String STDERR = "command.stderr";

    private final Runner.CommandRequest req;
    private final Injection inj;
    private final Emulation.Library emuLib;
    /** The emulated machine with the injected knobs applied to it (a slowed node's NICs); null when not emulated. */
    private final Runner.Emulate emulate;

    private final String sealSha;
    private final Path dir;
    private final int node;
    /** This launcher's own files: the run directory for node 0; node-N/ for a later node's launcher sharing it. */
    private final Path home;

    private final LaunchStart.Builder started;

    /** Everything that can be refused before a file is written: a wrong request leaves no run directory behind. */
    private CommandRun(Runner.CommandRequest req) {
        this.req = req;
        inj = Injection.parse(req.sealed().inject(), 0);
        Runner.Emulate emu = inj.emulated(req.machine().emulate());
        emulate = emu;
        emuLib = emu == null ? null : Emulation.checkMachine(emu, inj);
        if (emu != null && emu.cluster()) {
            checkClusterRanks(emu);
        }
        Path prediction = req.sealed().prediction();
        sealSha = prediction == null
                ? null
                : PredictionIo.readVerified(prediction).seal().sha256(); // exit 9
        dir = req.out().toAbsolutePath().normalize();
        node = req.nodeRank() != null ? req.nodeRank() : TorchrunFlags.nodeRank(req.command());
        // A later node's ranks still write their files into the run directory, as every rank has its own names.
        home = node == 0 ? dir : dir.resolve("node-" + node);
        started = LaunchStart.builder().launcher("command").hookEvery(req.hookEvery());
    }

    static Runner.Result run(Runner.CommandRequest req) {
        CommandRun launch = new CommandRun(req);
        Path pythonPath = launch.writeRequest();
        Map<String, String> added = launch.rankEnvironment(pythonPath);
        return launch.startAndWait(added);
    }

    /** One launcher starts every emulated rank of a cluster here: the command must start them all. */
    private void checkClusterRanks(Runner.Emulate emu) {
        Integer given = TorchrunFlags.nprocPerNode(req.command());
        int ranks = emu.topology().gpuCount();
        if (given != null && given != ranks) {
            throw PathproofException.usage("--emulate " + emu.topologyLabel() + ": the command starts "
                    + given + " rank(s) (--nproc_per_node " + given + ") but the emulated cluster has "
                    + emu.nodes() + " nodes x " + emu.ranksPerNode() + " = " + ranks
                    + ": one launcher starts every emulated rank here, so give it --nproc_per_node " + ranks);
        }
    }

    /** This launcher's directory with the instrumentation package, the manifest's request turn and the sealed fault. */
    private Path writeRequest() {
        prepare(dir, home, node);
        Path pythonPath = PythonPackage.extract(home);
        Path prediction = req.sealed().prediction();
        RunManifest.write(
                home,
                LaunchRequest.builder(req.provenance().tool(), Instant.now().toString())
                        .commandLine(Injection.blind(req.provenance().commandLine(), "--inject"))
                        .command(req.command())
                        .topology(req.machine().topology())
                        .timeoutSec(req.timeoutSec())
                        .prediction(prediction == null ? null : prediction.toString(), sealSha)
                        .build());
        inj.writeSealed(home); // blind by construction: the ranks read their knobs there, the manifest never names them
        RunManifest.write(home, RunOutcome.pending(null));
        return pythonPath;
    }

    /** What the command's processes get on top of this one's environment, and the manifest's start turn showing it. */
    private Map<String, String> rankEnvironment(Path pythonPath) {
        Map<String, String> added = environment(req, dir, pythonPath, inj, System.getenv());
        added.put("PATHPROOF_NODE", Integer.toString(node));
        added.put("PATHPROOF_FAULT", home.resolve(Injection.SEALED_FILE).toString());
        if (req.machine().emulate() != null) {
            emulate(added);
        }
        Map<String, String> shown = new TreeMap<>(added);
        inj.env().keySet().forEach(shown::remove);
        RunManifest.write(
                home,
                started.launcherEnv(shown).rankArgv(List.of(req.command())).build());
        return added;
    }

    /** The command, its output kept (and passed through), until it ends or its time is up; then its outcome. */
    private Runner.Result startAndWait(Map<String, String> added) {
        ProcessBuilder pb = new ProcessBuilder(req.command()).redirectInput(ProcessBuilder.Redirect.INHERIT);
        pb.environment().putAll(added);
        Process proc;
        try {
            proc = pb.start();
        } catch (IOException e) {
            String msg = "run: cannot start " + req.command().get(0) + ": " + e.getMessage();
            RunManifest.write(home, RunOutcome.failed(Instant.now().toString(), ExitCode.RANK_FAILED, msg));
            return new Runner.Result(dir, false, ExitCode.RANK_FAILED, msg, List.of(), null);
        }
        Thread reaper = new Thread(
                () -> {
                    if (proc.isAlive()) {
                        RankProcesses.killTree(proc);
                    }
                },
                "pathproof-command-reaper");
        Runtime.getRuntime().addShutdownHook(reaper);
        Thread out = tee(proc.getInputStream(), home.resolve(STDOUT), req.passThrough() ? System.out : null);
        Thread err = tee(proc.getErrorStream(), home.resolve(STDERR), req.passThrough() ? System.err : null);
        boolean timedOut = false;
        int code;
        try {
            if (req.timeoutSec() > 0 && !proc.waitFor(req.timeoutSec(), TimeUnit.SECONDS)) {
                timedOut = true;
                RankProcesses.killTree(proc);
            }
            code = proc.waitFor();
            out.join(5_000);
            err.join(5_000);
        } catch (InterruptedException e) {
            RankProcesses.killTree(proc);
            Thread.currentThread().interrupt();
            throw new PathproofException(
                    ExitCode.RANK_FAILED, "run: interrupted; the command was killed; files kept in " + dir);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(reaper);
            } catch (IllegalStateException e) {
                // the JVM is shutting down; the reaper runs
            }
        }
        return CommandOutcome.finish(dir, home, node, req.timeoutSec(), code, timedOut);
    }

    /**
     * {@code --emulate} for a user's command: the emulated machine's NCCL topology, the patched NCCL preloaded, and
     * what the ranks take by local rank (the instrumentation maps every rank's CUDA device to the one real GPU before
     * the job picks its device): the emulated busIds, and on a cluster each node's host id and topology file.
     *
     * <p>A cluster's ranks come from the command's one launcher (e.g. one torchrun with --nproc_per_node N x P), and
     * the instrumentation puts local rank L on node L / P. One launcher, not N: the command runs as given (N torchruns
     * would need its --nnodes, --node_rank and rendezvous rewritten), its ranks' global rank equals their local rank,
     * and node by node is how NCCL and the model number the ranks of a cluster.
     */
    private void emulate(Map<String, String> env) {
        Runner.Emulate emu = emulate;
        Emulation.Library lib = emuLib;
        PythonProbe.Python py = PythonProbe.find(null);
        Emulation.RealGpu real = Emulation.probe(py.executable());
        Emulation.Nodes nodes = Emulation.write(home, emu, real.busId());
        env.putAll(Emulation.env(home, lib, emu));
        env.put("PATHPROOF_EMULATE_BUSIDS", String.join(",", nodes.busIds()));
        if (emu.cluster()) {
            env.put("PATHPROOF_EMULATE_NODES", nodes.json(home));
            // The in-run prediction is made for the cluster NCCL sees (each node's NIC as the emulation presents it).
            env.put("PATHPROOF_TOPOLOGY", home.resolve(Emulation.CLUSTER_JSON).toString());
            env.remove("PATHPROOF_TOPOLOGY_NODES");
        } else {
            env.putIfAbsent("PATHPROOF_TOPOLOGY", emu.topologyLabel());
        }
        started.emulation(
                Emulation.manifest(emu, lib, real, nodes, emu.topology().gpuCount()));
    }

    /**
     * Node 0's launcher needs a new run directory, or one where only later nodes' launchers have begun (node-N/); a
     * later node's launcher joins whatever is there and needs its own node-N/ to be new.
     */
    private static void prepare(Path dir, Path home, int node) {
        if (node == 0) {
            try (Stream<Path> s = Files.exists(dir) ? Files.list(dir) : Stream.empty()) {
                if (s.anyMatch(p -> !p.getFileName().toString().matches("node-\\d+"))) {
                    throw PathproofException.usage(
                            "--out " + dir + ": not empty; a run directory holds one run (choose a new one)");
                }
                Files.createDirectories(dir);
            } catch (IOException e) {
                throw PathproofException.badInput("--out " + dir + ": cannot create: " + e.getMessage());
            }
            return;
        }
        RunDirectory.prepare(home);
    }

    /**
     * What the command's processes get on top of this process's environment: the instrumentation (PYTHONPATH first,
     * the run directory, how to run pathproof for the in-run prediction, the sampling), the evidence variables of NCCL
     * and torch unless the user set them, and the injected variables.
     */
    static Map<String, String> environment(
            Runner.CommandRequest req, Path dir, Path pythonPath, Injection inj, Map<String, String> parent) {
        Map<String, String> env = new LinkedHashMap<>();
        String pp = parent.get("PYTHONPATH");
        env.put("PYTHONPATH", pythonPath + (pp == null || pp.isEmpty() ? "" : java.io.File.pathSeparator + pp));
        env.put("PATHPROOF_OUT", dir.toString());
        env.put("PATHPROOF_CLI", Json.mapper().valueToTree(selfCommand()).toString());
        env.put("PATHPROOF_HOOK_EVERY", req.hookEvery() == null ? "auto" : Integer.toString(req.hookEvery()));
        env.put("PATHPROOF_WARMUP", Integer.toString(req.iterations().warmup()));
        env.put("PATHPROOF_PROFILE_ITERS", Integer.toString(req.iterations().profiled()));
        if (req.machine().topology() != null) {
            env.put("PATHPROOF_TOPOLOGY", req.machine().topology());
        }
        if (req.machine().nodes() != null) {
            env.put("PATHPROOF_TOPOLOGY_NODES", Integer.toString(req.machine().nodes()));
        }
        if (req.sealed().prediction() != null) {
            env.put("PATHPROOF_PREDICT", "0");
        }
        RunDirectory.putEvidenceEnv(env, dir, parent);
        env.put("PYTHONUNBUFFERED", "1");
        env.putAll(inj.env());
        return env;
    }

    /**
     * How a rank runs this pathproof: the same Java, the same class path, the CLI's main class. A short-lived JVM
     * that stops at the first JIT tier starts faster, and a prediction is a few milliseconds of work.
     */
    static List<String> selfCommand() {
        String java = ProcessHandle.current()
                .info()
                .command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        return List.of(
                java,
                "-XX:TieredStopAtLevel=1",
                "-Xshare:auto",
                "-cp",
                System.getProperty("java.class.path"),
                "io.pathproof.cli.Main");
    }

    /** Copies a stream of the command to its file in the run directory and, if given, to this process's own stream. */
    private static Thread tee(InputStream in, Path file, PrintStream mirror) {
        Thread t = new Thread(
                () -> {
                    byte[] buf = new byte[8192];
                    try (InputStream src = in;
                            OutputStream f = Files.newOutputStream(file)) {
                        int n;
                        while ((n = src.read(buf)) > 0) {
                            f.write(buf, 0, n);
                            f.flush();
                            if (mirror != null) {
                                mirror.write(buf, 0, n);
                                mirror.flush();
                            }
                        }
                    } catch (IOException e) {
                        // the command closed its end: what was read is kept
                    }
                },
                "pathproof-tee-" + file.getFileName());
        t.setDaemon(true);
        t.start();
        return t;
    }
}

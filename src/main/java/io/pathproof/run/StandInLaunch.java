package io.pathproof.run;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import io.pathproof.predict.PredictionIo;
import io.pathproof.rundir.LaunchRequest;
import io.pathproof.rundir.LaunchStart;
import io.pathproof.rundir.RunManifest;
import io.pathproof.rundir.RunOutcome;
import io.pathproof.rundir.RunOutcome.RankExit;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.IntFunction;

/**
 * One launch of pathproof's own job, step by step: what is checked before any file is written (the injection, the
 * emulator library, the prediction's seal, the rendezvous endpoint), the manifest's request turn, then the machine
 * (port, Python, backend, launcher) and the ranks. Each step writes what it learnt to the manifest's start turn, so
 * a launch refused half way leaves its reasons in the run directory.
 */
final class StandInLaunch {
    private final Runner.Request req;
    private final Runner.Instrumentation ins;
    private final Runner.Emulate emulate;
    private final ProfilerPlugin.Choice plugin;
    private final Injection inj;
    private final Emulation.Library emuLib;
    private final String sealSha;
    private final Path dir;
    private final LaunchStart.Builder started = LaunchStart.builder();
    /** Its port is 0 until the machine is chosen: a free local port, chosen when the ranks are about to start. */
    private Rendezvous rdzv;

    private PythonProbe.Python py;
    private Runner.Backend backend;
    private Runner.Launcher launcher;

    /** Everything that can be refused before a file is written: a wrong request leaves no run directory behind. */
    StandInLaunch(Runner.Request req, Runner.Instrumentation ins, Runner.Emulate emulate) {
        this.req = req;
        this.ins = ins;
        plugin = ProfilerPlugin.resolve(ins.profilerPlugin(), System.getenv(), Path.of(""));
        inj = Injection.parse(req.sealed().inject(), req.ranks().worldSize());
        this.emulate = inj.emulated(emulate);
        emuLib = this.emulate == null ? null : Emulation.check(req, this.emulate, inj);
        Path prediction = req.sealed().prediction();
        sealSha = prediction == null
                ? null
                : PredictionIo.readVerified(prediction).seal().sha256(); // exit 9
        rdzv = Rendezvous.of(req.ranks().endpoint());
        dir = req.out().toAbsolutePath().normalize();
    }

    /** The whole launch: the request's files, then a dry run (srun) or the ranks until they end. */
    Runner.Result run(Runner.Progress progress) {
        writeRequest();
        if (req.start().launcher() == Runner.Launcher.SRUN) {
            return srunDryRun();
        }
        Runner.Result refused = chooseMachine();
        return refused != null ? refused : startAndWait(progress);
    }

    /** The run directory with the workload and the harness, and the manifest's request turn. */
    private void writeRequest() {
        RunDirectory.prepare(dir);
        RunDirectory.writeWorkload(req.job().workload(), dir.resolve("workload.json"));
        RunDirectory.copyHarness(dir.resolve(RunDirectory.HARNESS));
        RankLayout ranks = req.ranks();
        Path prediction = req.sealed().prediction();
        RunManifest.write(
                dir,
                LaunchRequest.builder(req.provenance().tool(), Instant.now().toString())
                        .commandLine(Injection.blind(
                                req.provenance().commandLine(), "--inject")) // the fault is in fault.sealed.json only
                        .workload(req.job().workload().name(), req.job().workloadLabel())
                        .topology(req.job().topologyLabel())
                        .backendRequested(lower(req.start().backend()))
                        .ranks(ranks.perNode(), ranks.nodes(), ranks.nodeRank())
                        .sizes(req.iterations().measured(), req.iterations().warmup())
                        .timeoutSec(req.start().timeoutSec())
                        .prediction(prediction == null ? null : prediction.toString(), sealSha)
                        .build());
        // Blind by construction: what was injected goes to a file diagnose never opens, not the manifest, so a
        // diagnosis cannot be told what it has to find.
        inj.writeSealed(dir);
        RunManifest.write(dir, RunOutcome.pending(null));
    }

    /** Slurm: the exact srun command, printed and recorded, not run. */
    private Runner.Result srunDryRun() {
        String python = req.start().python() == null ? "python3" : req.start().python();
        String be = req.start().backend() == Runner.Backend.AUTO
                ? "auto"
                : lower(req.start().backend());
        String cmd = SrunCommand.render(req, dir, python, be, inj);
        if (ins.hookEvery() != Runner.Instrumentation.DEFAULT_HOOK_EVERY) {
            cmd += " --hook-every " + ins.hookEvery(); // harness arguments end the srun command line
        }
        RunManifest.write(
                dir,
                started.launcher("srun (dry run: not started)").srunCommand(cmd).build());
        RunManifest.write(dir, RunOutcome.pending("dry run: the srun command was printed, not run"));
        return new Runner.Result(dir, false, ExitCode.OK, null, List.of(), cmd);
    }

    /** The rendezvous port, the Python with torch, the backend and the launcher; a refusal as the failed result. */
    private Runner.Result chooseMachine() {
        rdzv = rdzv.chosen();
        started.master(rdzv.addr(), rdzv.port());
        if (req.ranks().nodeRank() == 0 && !rdzv.canBind()) {
            return fail(
                    ExitCode.PORT_IN_USE,
                    "run: rendezvous port " + rdzv.port() + " on " + rdzv.addr()
                            + " is in use; choose another with --rdzv-endpoint " + rdzv.addr() + ":PORT");
        }
        try {
            py = PythonProbe.find(req.start().python());
        } catch (PathproofException e) {
            return fail(e.exitCode(), e.getMessage());
        }
        started.python(new LaunchStart.PythonInfo(py.executable(), py.pythonVersion(), py.torchVersion(), py.gpus()));
        backend = emulate != null ? Runner.Backend.NCCL : req.start().backend();
        int nproc = req.ranks().perNode();
        if (backend == Runner.Backend.AUTO) {
            // nccl needs one GPU per rank (it refuses two ranks on one GPU); with fewer GPUs, gloo still runs
            backend = py.cuda() && py.gpus() >= nproc && py.nccl() ? Runner.Backend.NCCL : Runner.Backend.GLOO;
        }
        started.backend(lower(backend));
        String refusal = backendRefusal(backend, py, nproc, emulate != null);
        if (refusal != null) {
            return fail(ExitCode.NO_GPU, refusal);
        }
        launcher = emulate != null ? Runner.Launcher.SPAWN : req.start().launcher();
        if (launcher == Runner.Launcher.AUTO) {
            launcher = PythonProbe.torchrunWorks(py) ? Runner.Launcher.TORCHRUN : Runner.Launcher.SPAWN;
        }
        return null;
    }

    /** The ranks' arguments and environment, the manifest's start turn, then the ranks until they end. */
    private Runner.Result startAndWait(Runner.Progress progress) {
        String be = lower(backend);
        List<String> harnessArgs = HarnessInvocation.args(req, dir, be, inj);
        harnessArgs.addAll(List.of("--hook-every", Integer.toString(ins.hookEvery())));
        Map<String, String> env = HarnessInvocation.rankEnv(req, dir, backend, inj, rdzv);
        IntFunction<Map<String, String>> perRank = emulate != null ? emulation(env) : r -> Map.of();
        if (backend == Runner.Backend.NCCL) {
            env.putAll(ProfilerPlugin.env(plugin, dir, System.getenv(), inj.env()));
        }
        Map<String, String> launcherEnv = new TreeMap<>();
        env.forEach((k, v) -> {
            if (!inj.env().containsKey(k)) {
                launcherEnv.put(k, v);
            }
        });
        RankProcesses ranks = launcher == Runner.Launcher.TORCHRUN
                ? RankProcesses.torchrun(py.executable(), req.ranks(), dir, harnessArgs, env, rdzv.addr(), rdzv.port())
                : RankProcesses.spawn(py.executable(), req.ranks(), dir, harnessArgs, env, perRank);
        RunManifest.write(
                dir,
                started.launcher(lower(launcher))
                        .ncclProfilerPlugin(ProfilerPlugin.manifest(plugin, be))
                        .hookEvery(ins.hookEvery())
                        .launcherEnv(launcherEnv)
                        .rankArgv(ranks.argvs().stream()
                                .map(a -> Injection.blind(a, "--knob"))
                                .toList())
                        .build());
        Iterations it = req.iterations();
        RankProcesses.Outcome o = ranks.startAndWait(req.start().timeoutSec(), progress, it.warmup() + it.measured());
        return finish(o);
    }

    /**
     * {@code --emulate}: the emulated machine's NCCL topology written beside the run (one file per node of a
     * cluster), the patched NCCL in {@code env}, and each rank's own variables (the result, by rank): its emulated
     * busId and, on a cluster, its node's host id and topology file.
     */
    private IntFunction<Map<String, String>> emulation(Map<String, String> env) {
        Emulation.RealGpu real = Emulation.probe(py.executable());
        Emulation.Nodes nodes = Emulation.write(dir, emulate, real.busId());
        started.emulation(
                Emulation.manifest(emulate, emuLib, real, nodes, req.ranks().perNode()));
        env.putAll(Emulation.env(dir, emuLib, emulate));
        return r -> nodes.rank(dir, r);
    }

    /** How the ranks ended, as the manifest's outcome and the result: the first cause that explains a failure. */
    private Runner.Result finish(RankProcesses.Outcome o) {
        RunManifest m = RunManifest.read(dir);
        Emulation.complete(dir, m);
        boolean allZero = !o.ranks().isEmpty()
                && o.ranks().stream().allMatch(r -> Integer.valueOf(0).equals(r.exitCode()));
        boolean harnessDone =
                req.ranks().nodeRank() != 0 || Boolean.TRUE.equals(m.job().harnessFinished());
        int code;
        String msg;
        if (o.timedOut()) {
            code = ExitCode.TIMEOUT;
            msg = "run: timed out after " + req.start().timeoutSec() + " s; every rank was killed; files kept in "
                    + dir;
        } else if (!allZero && o.portInUse()) {
            code = ExitCode.PORT_IN_USE;
            msg = "run: a rank could not bind the rendezvous port " + m.start().masterPort() + " (address in use); see "
                    + dir.resolve(
                            o.firstFailure() == null ? "" : o.firstFailure().stderr());
        } else if (!allZero) {
            code = ExitCode.RANK_FAILED;
            RankExit f = o.firstFailure();
            msg = f == null
                    ? "run: the launcher failed; see " + dir
                    : "run: rank " + f.rank() + " exited with status " + f.exitCode() + " (" + f.ended()
                            + "); last line of " + f.stderr() + ": " + o.firstFailureLine();
        } else if (!harnessDone) {
            code = ExitCode.RANK_FAILED;
            msg = "run: every rank exited 0 but rank 0 did not finish the harness; see " + dir.resolve("rank0.stderr");
        } else {
            code = ExitCode.OK;
            msg = null;
        }
        return RunDirectory.ended(dir, dir, code, msg, o.ranks());
    }

    private Runner.Result fail(int code, String msg) {
        RunManifest.write(dir, started.build());
        RunManifest.write(dir, RunOutcome.failed(Instant.now().toString(), code, msg));
        return new Runner.Result(dir, false, code, msg, List.of(), null);
    }

    /** Why {@code backend} cannot run here (one line), or null when it can. */
    private static String backendRefusal(Runner.Backend backend, PythonProbe.Python py, int nproc, boolean emulated) {
        if (backend != Runner.Backend.NCCL) {
            return null;
        }
        if (!py.cuda() || py.gpus() == 0) {
            return "run: --backend nccl but " + py.executable() + " (torch " + py.torchVersion()
                    + ") sees no CUDA GPU; use --backend gloo";
        }
        if (emulated && !py.nccl()) {
            return "run: --emulate but " + py.executable() + " (torch " + py.torchVersion() + ") has no NCCL backend";
        }
        if (!emulated && nproc > py.gpus()) { // emulated ranks share one GPU on purpose
            return "run: --backend nccl needs one GPU per rank: --nproc " + nproc + " but " + py.gpus()
                    + " GPU(s) visible (NCCL refuses two ranks on one GPU)";
        }
        return null;
    }

    static String lower(Enum<?> e) {
        return e.name().toLowerCase(Locale.ROOT);
    }
}

package io.pathproof.run;

import io.pathproof.rundir.Vocabulary;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What every rank of pathproof's own job is started with, whichever launcher starts it: the harness's arguments and
 * the environment on top of the launcher's.
 */
final class HarnessInvocation {
    /** NCCL's log and the flight recorder, for every rank unless the user's environment sets them (vocabulary.json). */
    static final Map<String, String> NCCL_DEFAULTS = Vocabulary.rankEnv();

    private HarnessInvocation() {}

    static List<String> args(Runner.Request req, Path dir, String backend, Injection inj) {
        Iterations it = req.iterations();
        List<String> a = new ArrayList<>(List.of(
                dir.resolve(RunDirectory.HARNESS).toString(),
                "--run-dir",
                dir.toString(),
                "--workload",
                dir.resolve("workload.json").toString(),
                "--backend",
                backend,
                "--iters",
                Integer.toString(it.measured()),
                "--warmup",
                Integer.toString(it.warmup()),
                "--profile-iters",
                Integer.toString(it.profiled())));
        if (req.start().timeoutSec() > 0) {
            a.add("--pg-timeout");
            a.add(Long.toString(req.start().timeoutSec()));
        }
        if (req.overhead()) {
            a.add("--overhead");
        }
        a.addAll(inj.knobArgs());
        return a;
    }

    /**
     * The environment every rank gets on top of this process's: the NCCL evidence switches (unless the user's
     * environment or an injection sets them), the injections, and for gloo a malloc tunable.
     */
    static Map<String, String> rankEnv(
            Runner.Request req, Path dir, Runner.Backend backend, Injection inj, Rendezvous rdzv) {
        Map<String, String> parent = System.getenv();
        Map<String, String> env = new LinkedHashMap<>();
        RunDirectory.putEvidenceEnv(env, dir, parent);
        if (!parent.containsKey("OMP_NUM_THREADS")) {
            env.put("OMP_NUM_THREADS", "1"); // as torchrun does for nproc > 1: ranks must not fight over the cores
        }
        if (backend == Runner.Backend.GLOO && !parent.containsKey("GLIBC_TUNABLES")) {
            // On CPU every step allocates gradient-sized tensors; glibc returns them to the kernel and the next step
            // faults them in again, 4 KiB at a time (0.3 s per 64 MiB measured on a 2-core VM). Transparent huge pages
            // for malloc's mmap'd chunks (glibc >= 2.35; older glibc ignores the tunable) cut that fifteen-fold.
            env.put("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1");
        }
        env.put("PYTHONUNBUFFERED", "1");
        env.put("MASTER_ADDR", rdzv.addr());
        env.put("MASTER_PORT", Integer.toString(rdzv.port()));
        env.put("WORLD_SIZE", Integer.toString(req.ranks().worldSize()));
        env.put("LOCAL_WORLD_SIZE", Integer.toString(req.ranks().perNode()));
        env.put("GROUP_RANK", Integer.toString(req.ranks().nodeRank()));
        env.putAll(inj.env());
        return env;
    }
}

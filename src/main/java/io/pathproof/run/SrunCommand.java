package io.pathproof.run;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The exact {@code srun} command of a Slurm run: one task per rank, the harness started directly (no torchrun), the
 * worker environment derived per task from Slurm's own variables. The harness reads RANK/LOCAL_RANK and falls back to
 * SLURM_PROCID/SLURM_LOCALID, so the command needs no wrapper script. The variables go before srun through
 * {@code env} and reach the tasks by {@code --export=ALL}: srun's own {@code --export=K=V,…} list is comma-separated
 * and cannot carry values such as NCCL_DEBUG_SUBSYS's list of subsystems or {@code NCCL_ALGO=Ring,Tree}.
 */
final class SrunCommand {
    private static final Pattern SAFE = Pattern.compile("^[A-Za-z0-9_@%+=:,./-]+$");

    private SrunCommand() {}

    static List<String> argv(Runner.Request req, Path dir, String python, String backend, Injection inj) {
        String master = req.ranks().endpoint();
        List<String> a = new ArrayList<>();
        a.add("env");
        HarnessInvocation.NCCL_DEFAULTS.forEach((k, v) -> a.add(k + "=" + v));
        a.add("OMP_NUM_THREADS=1");
        a.add("PYTHONUNBUFFERED=1");
        a.add("WORLD_SIZE=" + req.ranks().worldSize());
        a.add("LOCAL_WORLD_SIZE=" + req.ranks().perNode());
        if (master != null) {
            int c = master.lastIndexOf(':');
            a.add("MASTER_ADDR=" + master.substring(0, c));
            a.add("MASTER_PORT=" + master.substring(c + 1));
        }
        inj.env().forEach((k, v) -> a.add(k + "=" + v));
        a.addAll(List.of(
                "srun",
                "--nodes=" + req.ranks().nodes(),
                "--ntasks=" + req.ranks().worldSize(),
                "--ntasks-per-node=" + req.ranks().perNode(),
                "--kill-on-bad-exit=1",
                "--output=" + dir.resolve("rank%t.stdout"),
                "--error=" + dir.resolve("rank%t.stderr"),
                "--export=ALL"));
        if (req.start().timeoutSec() > 0) {
            a.add("--time=" + Math.max(1, (req.start().timeoutSec() + 59) / 60));
        }
        a.add(python);
        a.addAll(HarnessInvocation.args(req, dir, backend, inj));
        return a;
    }

    /** The command as one line a POSIX shell reads back into the same argv (single quotes where needed). */
    static String render(Runner.Request req, Path dir, String python, String backend, Injection inj) {
        StringBuilder b = new StringBuilder();
        for (String arg : argv(req, dir, python, backend, inj)) {
            if (b.length() > 0) {
                b.append(' ');
            }
            b.append(quote(arg));
        }
        return b.toString();
    }

    static String quote(String arg) {
        if (!arg.isEmpty() && SAFE.matcher(arg).matches()) {
            return arg;
        }
        return "'" + arg.replace("'", "'\\''") + "'";
    }
}

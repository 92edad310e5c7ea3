package io.pathproof.run;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import io.pathproof.rundir.RunOutcome.RankExit;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The processes of one node's ranks: started from argv lists (never a shell), each with its stdout and stderr in
 * files of the run directory, watched until all end, a timeout passes, or one rank fails (then the rest are killed
 * after a grace period). Killing takes a process's whole tree, descendants first.
 */
final class RankProcesses {
    /** How long the other ranks may still run after one failed (they are usually stuck in a collective). */
    static final long FAIL_GRACE_MS = 5_000;
    /** Between SIGTERM and SIGKILL. */
    static final long KILL_GRACE_MS = 3_000;

    /** One process to start: the global rank it stands for (-1 for a launcher that owns several), argv, files. */
    record Slot(int rank, List<String> argv, Map<String, String> env, String stdout, String stderr) {}

    record Outcome(
            List<RankExit> ranks,
            boolean timedOut,
            boolean portInUse,
            RankExit firstFailure,
            String firstFailureLine) {}

    private final Path dir;
    private final List<Slot> slots;

    private RankProcesses(Path dir, List<Slot> slots) {
        this.dir = dir;
        this.slots = List.copyOf(slots);
    }

    /** One process per local rank, with torchrun's worker environment. */
    static RankProcesses spawn(
            String python, RankLayout ranks, Path dir, List<String> harnessArgs, Map<String, String> env) {
        return spawn(python, ranks, dir, harnessArgs, env, r -> Map.of());
    }

    /** As above, each rank's environment completed by {@code perRank} of its global rank (the emulator's busIds). */
    static RankProcesses spawn(
            String python,
            RankLayout ranks,
            Path dir,
            List<String> harnessArgs,
            Map<String, String> env,
            java.util.function.IntFunction<Map<String, String>> perRank) {
        List<Slot> s = new ArrayList<>();
        for (int local = 0; local < ranks.perNode(); local++) {
            int rank = ranks.nodeRank() * ranks.perNode() + local;
            Map<String, String> e = new HashMap<>(env);
            e.put("RANK", Integer.toString(rank));
            e.put("LOCAL_RANK", Integer.toString(local));
            e.putAll(perRank.apply(rank));
            List<String> argv = new ArrayList<>();
            argv.add(python);
            argv.addAll(harnessArgs);
            s.add(new Slot(rank, argv, e, "rank" + rank + ".stdout", "rank" + rank + ".stderr"));
        }
        return new RankProcesses(dir, s);
    }

    /**
     * One {@code python -m torch.distributed.run} for this node. {@code --tee 1 --redirects 2} keep each worker's
     * stdout and stderr under {@code torchrun-logs/}; those two single values are also the only ones torch 1.13's
     * parser survives on Python 3.11 (pytorch-ddp-model.md section 6).
     */
    static RankProcesses torchrun(
            String python,
            RankLayout ranks,
            Path dir,
            List<String> harnessArgs,
            Map<String, String> env,
            String addr,
            int port) {
        List<String> argv = new ArrayList<>(List.of(
                python,
                "-m",
                "torch.distributed.run",
                "--nnodes",
                Integer.toString(ranks.nodes()),
                "--node_rank",
                Integer.toString(ranks.nodeRank()),
                "--nproc_per_node",
                Integer.toString(ranks.perNode()),
                "--master_addr",
                addr,
                "--master_port",
                Integer.toString(port),
                "--tee",
                "1",
                "--redirects",
                "2",
                "--log_dir",
                dir.resolve("torchrun-logs").toString()));
        argv.addAll(harnessArgs);
        Map<String, String> e = new HashMap<>(env);
        // torchrun sets these itself per worker; passing ours would contradict it.
        for (String k : List.of("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK")) {
            e.remove(k);
        }
        return new RankProcesses(dir, List.of(new Slot(-1, argv, e, "launcher.stdout", "launcher.stderr")));
    }

    List<Slot> slots() {
        return slots;
    }

    List<List<String>> argvs() {
        return slots.stream().map(Slot::argv).toList();
    }

    Outcome startAndWait(long timeoutSec, Runner.Progress progress, int totalSteps) {
        List<Process> procs = new ArrayList<>();
        try {
            for (Slot s : slots) {
                ProcessBuilder pb = new ProcessBuilder(s.argv()).directory(dir.toFile());
                pb.environment().putAll(s.env());
                pb.redirectOutput(dir.resolve(s.stdout()).toFile());
                pb.redirectError(dir.resolve(s.stderr()).toFile());
                pb.redirectInput(ProcessBuilder.Redirect.from(nullDevice()));
                procs.add(pb.start());
            }
        } catch (IOException e) {
            procs.forEach(RankProcesses::killTree);
            throw new PathproofException(
                    ExitCode.RANK_FAILED,
                    "run: cannot start " + slots.get(procs.size()).argv().get(0) + ": " + e.getMessage());
        }
        // Ctrl-C or a kill of this JVM must not leave ranks running (they would hold the port and the GPUs).
        Thread reaper = new Thread(
                () -> procs.forEach(p -> {
                    if (p.isAlive()) {
                        killTree(p);
                    }
                }),
                "pathproof-run-reaper");
        Runtime.getRuntime().addShutdownHook(reaper);
        try {
            return watch(procs, timeoutSec, progress, totalSteps);
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(reaper);
            } catch (IllegalStateException e) {
                // the JVM is already shutting down; the reaper runs
            }
        }
    }

    private Outcome watch(List<Process> procs, long timeoutSec, Runner.Progress progress, int totalSteps) {
        long[] exitSeen = exitTimes(procs);
        boolean[] killed = new boolean[procs.size()];
        boolean timedOut = waitForAll(procs, exitSeen, killed, timeoutSec, progress, totalSteps);
        return outcome(procs, exitSeen, killed, timedOut);
    }

    /**
     * When each process was first seen ended (Long.MAX_VALUE while it runs). The JDK's process reaper completes
     * onExit() as soon as a process ends: finer than the 100 ms poll, so a rank that fails as a consequence (its peer
     * closed the connection) is not reported before the rank that failed.
     */
    private static long[] exitTimes(List<Process> procs) {
        long[] exitSeen = new long[procs.size()];
        java.util.Arrays.fill(exitSeen, Long.MAX_VALUE);
        for (int i = 0; i < procs.size(); i++) {
            final int idx = i;
            procs.get(i).onExit().thenRun(() -> {
                long t = System.nanoTime();
                synchronized (exitSeen) {
                    exitSeen[idx] = Math.min(exitSeen[idx], t);
                }
            });
        }
        return exitSeen;
    }

    /**
     * Polls every 100 ms, showing the steps rank 0 has written, until every process has ended, the timeout passes, or
     * {@link #FAIL_GRACE_MS} after the first failure; what is still alive then is killed. True when the timeout passed.
     */
    private boolean waitForAll(
            List<Process> procs,
            long[] exitSeen,
            boolean[] killed,
            long timeoutSec,
            Runner.Progress progress,
            int totalSteps) {
        long deadline = timeoutSec > 0 ? System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSec) : Long.MAX_VALUE;
        long killAt = Long.MAX_VALUE;
        int shown = -1;
        Path stepsFile = dir.resolve("steps-rank0.jsonl");
        try {
            while (true) {
                boolean anyAlive = false;
                boolean anyFailed = false;
                for (int i = 0; i < procs.size(); i++) {
                    Process p = procs.get(i);
                    if (p.isAlive()) {
                        anyAlive = true;
                    } else {
                        synchronized (exitSeen) {
                            exitSeen[i] = Math.min(exitSeen[i], System.nanoTime());
                        }
                        anyFailed |= p.exitValue() != 0;
                    }
                }
                if (progress != null) {
                    int done = countLines(stepsFile);
                    if (done != shown) {
                        shown = done;
                        progress.steps(Math.min(done, totalSteps), totalSteps);
                    }
                }
                if (!anyAlive) {
                    return false;
                }
                long now = System.nanoTime();
                if (now >= deadline) {
                    killAlive(procs, killed);
                    return true;
                }
                if (anyFailed && killAt == Long.MAX_VALUE) {
                    killAt = now + TimeUnit.MILLISECONDS.toNanos(FAIL_GRACE_MS);
                }
                if (now >= killAt) {
                    killAlive(procs, killed);
                    return false;
                }
                Thread.sleep(100);
            }
        } catch (InterruptedException e) {
            killAlive(procs, killed);
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /** How each process ended, whether a port was taken, and the rank seen failing first with its last stderr line. */
    private Outcome outcome(List<Process> procs, long[] exitSeen, boolean[] killed, boolean timedOut) {
        List<RankExit> exits = new ArrayList<>();
        RankExit first = null;
        long firstAt = Long.MAX_VALUE;
        boolean portInUse = false;
        for (int i = 0; i < slots.size(); i++) {
            Slot s = slots.get(i);
            Process p = procs.get(i);
            Integer code = p.isAlive() ? null : p.exitValue();
            String ended;
            if (killed[i]) {
                ended = timedOut ? "killed: timeout" : "killed: another rank failed";
            } else {
                ended = code != null && code == 0 ? "exited" : "failed";
            }
            RankExit x = new RankExit(s.rank(), code, ended, s.stdout(), s.stderr());
            exits.add(x);
            String err = tail(dir.resolve(s.stderr()));
            if (err.contains("Address already in use") || err.contains("EADDRINUSE")) {
                portInUse = true;
            }
            long seen;
            synchronized (exitSeen) {
                seen = exitSeen[i];
            }
            if ("failed".equals(ended) && seen < firstAt) { // the rank seen failing first is the one reported
                first = x;
                firstAt = seen;
            }
        }
        return new Outcome(
                exits, timedOut, portInUse, first, first == null ? "" : lastLine(tail(dir.resolve(first.stderr()))));
    }

    private static void killAlive(List<Process> procs, boolean[] killed) {
        for (int i = 0; i < procs.size(); i++) {
            if (procs.get(i).isAlive()) {
                killed[i] = true;
                killTree(procs.get(i));
            }
        }
    }

    /** SIGTERM to the process and every descendant (deepest first), then SIGKILL to whatever is left. */
    static void killTree(Process p) {
        List<ProcessHandle> tree = new ArrayList<>(p.descendants().toList());
        java.util.Collections.reverse(tree);
        tree.add(p.toHandle());
        tree.forEach(ProcessHandle::destroy);
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(KILL_GRACE_MS);
        for (ProcessHandle h : tree) {
            try {
                long left = Math.max(0, until - System.nanoTime());
                h.onExit().get(left, TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                h.destroyForcibly();
            }
        }
        try {
            p.waitFor(KILL_GRACE_MS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static java.io.File nullDevice() {
        return new java.io.File(System.getProperty("os.name").startsWith("Windows") ? "NUL" : "/dev/null");
    }

    static int countLines(Path f) {
        try {
            if (!Files.exists(f)) {
                return 0;
            }
            byte[] b = Files.readAllBytes(f);
            int n = 0;
            for (byte x : b) {
                if (x == '\n') {
                    n++;
                }
            }
            return n;
        } catch (IOException e) {
            return 0;
        }
    }

    /** The last 8 KiB of a file, as text. */
    static String tail(Path f) {
        try (RandomAccessFile r = new RandomAccessFile(f.toFile(), "r")) {
            long len = r.length();
            long from = Math.max(0, len - 8192);
            byte[] b = new byte[(int) (len - from)];
            r.seek(from);
            r.readFully(b);
            return new String(b, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    static String lastLine(String text) {
        String[] lines = text.strip().split("\\R");
        String l = lines.length == 0 ? "" : lines[lines.length - 1].strip();
        return l.isEmpty() ? "(empty)" : (l.length() > 300 ? l.substring(0, 300) + "…" : l);
    }
}

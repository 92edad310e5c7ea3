package io.pathproof.run;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.rundir.DdpSessions;
import io.pathproof.rundir.RunOutcome.RankExit;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * How a user's command ended, judged from its exit status and from what each of this launcher's ranks said of itself
 * in its status file: the first cause that explains a failure, written as the manifest's outcome.
 */
final class CommandOutcome {
    private static final Pattern RANK_FILE = Pattern.compile("^rank(\\d+)\\.json$");

    private CommandOutcome() {}

    /** The ranks' own status files, by rank: how each ended as it said itself. */
    static Map<Integer, JsonNode> rankStatus(Path dir) {
        Map<Integer, JsonNode> out = new TreeMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                Matcher m = RANK_FILE.matcher(p.getFileName().toString());
                if (m.matches()) {
                    try {
                        out.put(Integer.parseInt(m.group(1)), Json.mapper().readTree(p.toFile()));
                    } catch (IOException | NumberFormatException e) {
                        out.put(
                                Integer.parseInt(m.group(1)),
                                Json.mapper().createObjectNode().put("status", "unreadable status file"));
                    }
                }
            }
        } catch (IOException e) {
            // no directory listing: no rank reported
        }
        return out;
    }

    /** The ranks of node {@code node} as they ended: the command itself first (rank -1), then each rank. */
    private record Ranks(List<RankExit> exits, String firstBad, boolean none) {}

    private static Ranks ranks(Path dir, int node, int code, boolean timedOut) {
        Map<Integer, JsonNode> ranks = rankStatus(dir);
        ranks.values().removeIf(st -> st.path("node").asInt(0) != node); // the other nodes' launchers report theirs
        List<RankExit> exits = new ArrayList<>();
        exits.add(new RankExit(
                -1, code, timedOut ? "killed after the timeout" : "exited", CommandRun.STDOUT, CommandRun.STDERR));
        String firstBad = null;
        String firstEnd = null;
        int bad = 0;
        for (Map.Entry<Integer, JsonNode> e : ranks.entrySet()) {
            String status = e.getValue().path("status").asText("no status");
            boolean done = status.equals("finished");
            Integer rankCode = done
                    ? Integer.valueOf(0)
                    : e.getValue().path("exitCode").isInt()
                            ? e.getValue().path("exitCode").asInt()
                            : null;
            String ended = done ? "finished" : describe(e.getValue());
            exits.add(new RankExit(e.getKey(), rankCode, ended, CommandRun.STDOUT, CommandRun.STDERR));
            // The rank that failed first is the cause; the others usually fail because it left (a peer closed).
            String end = e.getValue().path("end").asText("~"); // no end time: it never said, so it sorts last
            if (!done) {
                bad++;
                if (firstBad == null || end.compareTo(firstEnd) < 0) {
                    firstBad = "rank " + e.getKey() + ": "
                            + ended.lines().findFirst().orElse(ended);
                    firstEnd = end;
                }
            }
        }
        if (bad > 1) {
            firstBad += " (first of " + bad + " ranks that did not finish)";
        }
        return new Ranks(exits, firstBad, ranks.isEmpty());
    }

    /**
     * The outcome of the command that exited with {@code code} (or was killed after {@code timeoutSec}), written to
     * the manifest in {@code home}, this launcher's directory.
     */
    static Runner.Result finish(Path dir, Path home, int node, long timeoutSec, int code, boolean timedOut) {
        // A command that built its DDP job more than once: the last session is the one that ended the command.
        List<Path> sessions = DdpSessions.later(dir);
        Ranks ranks = ranks(sessions.isEmpty() ? dir : sessions.get(sessions.size() - 1), node, code, timedOut);
        int exit;
        String msg;
        // No rank said how it ended: it failed before building DDP, and its own stderr says why.
        StderrCause cause = !timedOut && code != 0 && ranks.firstBad() == null
                ? StderrCause.of(home.resolve(CommandRun.STDERR))
                : null;
        if (timedOut) {
            exit = ExitCode.TIMEOUT;
            msg = "run: timed out after " + timeoutSec + " s; the command was killed; files kept in " + dir;
        } else if (cause != null) {
            exit = cause.noGpu() ? ExitCode.NO_GPU : ExitCode.RANK_FAILED;
            msg = "run: the command exited with status " + code
                    + (ranks.none()
                            ? " before any rank built its DDP model: "
                            : " after every rank's DDP session had finished: ")
                    + cause.describe(CommandRun.STDERR)
                    + (cause.noGpu()
                            ? "; the job asks for CUDA or NCCL, which this torch or machine does not have: run it on"
                                    + " GPUs, or with backend gloo on the CPU"
                            : "")
                    + "; see " + home.resolve(CommandRun.STDERR);
        } else if (code != 0) {
            exit = ExitCode.RANK_FAILED;
            msg = "run: the command exited with status " + code
                    + (ranks.firstBad() == null ? "" : "; " + ranks.firstBad()) + "; see "
                    + home.resolve(CommandRun.STDERR);
        } else if (ranks.none()) {
            exit = ExitCode.BAD_INPUT;
            msg =
                    "run: the command exited 0 but no rank built a DistributedDataParallel model: nothing was recorded in "
                            + dir;
        } else if (ranks.firstBad() != null) {
            exit = ExitCode.RANK_FAILED;
            msg = "run: the command exited 0 but " + ranks.firstBad() + "; see " + home.resolve(CommandRun.STDERR);
        } else {
            exit = ExitCode.OK;
            msg = null;
        }
        return RunDirectory.ended(home, dir, exit, msg, ranks.exits());
    }

    private static String describe(JsonNode status) {
        String s = status.path("status").asText("no status");
        if (status.hasNonNull("exception")) {
            return s + " (" + status.path("exception").asText() + ")";
        }
        if (status.hasNonNull("reason")) {
            return s + " (" + status.path("reason").asText() + ")";
        }
        return s.equals("running")
                ? "no exit record: the process ended without Python seeing it (killed, or a crash)"
                : s;
    }
}

package io.pathproof.rundir;

import java.util.List;

/**
 * The manifest's last turn, after every rank ended (or the launch failed first): the end time, whether the run is
 * complete, its exit code (one of {@code core.ExitCode}), one line of why when it is not, and each started process.
 */
public record RunOutcome(
        String end, Boolean complete, Integer exitCode, String incompleteReason, List<RankExit> ranks) {
    public RunOutcome {
        ranks = ranks == null ? null : List.copyOf(ranks);
    }

    /** The turn written before any rank starts: not complete (yet), and why when that is known. */
    public static RunOutcome pending(String reason) {
        return new RunOutcome(null, false, null, reason, null);
    }

    /** A launch that failed before (or while) starting processes: no rank to list. */
    public static RunOutcome failed(String end, int exitCode, String reason) {
        return new RunOutcome(end, false, exitCode, reason, null);
    }

    /**
     * How one started process ended: its rank (for a wrapped command, the launcher process has rank -1), its exit code
     * (null if it never started), how it ended, and its stdout/stderr files relative to the run directory.
     */
    public record RankExit(int rank, Integer exitCode, String ended, String stdout, String stderr) {}
}

package io.pathproof.run;

import io.pathproof.core.PathproofException;

/**
 * How the ranks of pathproof's own job are started: the backend and the launcher asked for (AUTO decides on the
 * machine), the Python with torch (null: found), and the seconds before every rank is killed (0 = never).
 */
public record RankStart(Runner.Backend backend, Runner.Launcher launcher, String python, long timeoutSec) {
    public RankStart {
        backend = backend == null ? Runner.Backend.AUTO : backend;
        launcher = launcher == null ? Runner.Launcher.AUTO : launcher;
        checkTimeout(timeoutSec);
    }

    /** A run's time limit, shared by both kinds of run: 0 = none. */
    static long checkTimeout(long timeoutSec) {
        if (timeoutSec < 0) {
            throw PathproofException.usage("--timeout: must be >= 0 (0 = none), got " + timeoutSec);
        }
        return timeoutSec;
    }
}

package io.pathproof.run;

import io.pathproof.core.PathproofException;

/**
 * The iterations a run counts: {@code measured} (null where the user's command decides how many it runs), the
 * {@code warmup} before them, and how many of the measured ones run under the profiler ({@code profiled}).
 */
public record Iterations(Integer measured, int warmup, int profiled) {
    public Iterations {
        if (measured != null && measured < 1) {
            throw PathproofException.usage("--iters: must be >= 1, got " + measured);
        }
        if (warmup < 0 || profiled < 0) {
            throw PathproofException.usage("--warmup/--profile-iters: must be >= 0");
        }
    }
}

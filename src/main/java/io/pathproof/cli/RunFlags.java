package io.pathproof.cli;

import picocli.CommandLine.Option;

/**
 * The flags that size and bound a run — steps, the profiler window, the Python, the timeout — shared by {@code run}
 * and {@code prove} (a picocli mixin, as jbang shares its script flags), so both read them the same way. Each verb
 * gives its own defaults (the constructor) and its own wording (its resource bundle: {@code run.properties},
 * {@code prove.properties} beside this class), since a proof's three runs and a lone run are sized differently.
 */
public final class RunFlags {
    @Option(names = "--iters", descriptionKey = "iters", description = "measured steps (default: ${DEFAULT-VALUE})")
    int iters;

    @Option(names = "--warmup", descriptionKey = "warmup", description = "warm-up steps (default: ${DEFAULT-VALUE})")
    int warmup;

    @Option(
            names = "--profile-iters",
            descriptionKey = "profile-iters",
            description = "measured steps under the profiler (default: ${DEFAULT-VALUE})")
    int profileIters;

    @Option(names = "--python", descriptionKey = "python", description = "Python with torch")
    String python;

    @Option(
            names = "--timeout",
            descriptionKey = "timeout",
            description = "seconds before the ranks are killed (0 = none)")
    long timeout;

    /** How each run is sized and bounded, as given: the flags' immutable value. */
    record Sizes(int warmup, int iters, int profileIters, String python, long timeout) {}

    /** The flags as given. */
    Sizes sizes() {
        return new Sizes(warmup, iters, profileIters, python, timeout);
    }

    /** Picocli's own instance (unused: each verb passes its defaults). */
    RunFlags() {
        this(5, 48, 3, 0);
    }

    /** A verb's defaults; picocli shows a field's initial value as ${DEFAULT-VALUE}. */
    RunFlags(int warmup, int iters, int profileIters, long timeout) {
        this.warmup = warmup;
        this.iters = iters;
        this.profileIters = profileIters;
        this.timeout = timeout;
    }
}

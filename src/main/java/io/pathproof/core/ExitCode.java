package io.pathproof.core;

/** Every exit code pathproof uses, in one place, so that scripts can rely on them. */
public final class ExitCode {
    /** Success; for accept: every row PASS. */
    public static final int OK = 0;
    /** accept: at least one row FAIL; diagnose/verify-fix: a regression or a fix that did not hold. */
    public static final int FAIL = 1;
    /** Wrong use of the command line (picocli's convention). */
    public static final int USAGE = 2;
    /** Input data that cannot be read or is inconsistent; ingest: nothing readable. */
    public static final int BAD_INPUT = 3;
    /** run: a rank exited with an error. */
    public static final int RANK_FAILED = 4;
    /** run: the job did not finish in time and was killed. */
    public static final int TIMEOUT = 5;
    /** run: no Python with torch was found. */
    public static final int TORCH_MISSING = 6;
    /** run: backend nccl asked for but no CUDA GPU is visible. */
    public static final int NO_GPU = 7;
    /** run: the rendezvous port is taken. */
    public static final int PORT_IN_USE = 8;
    /** A prediction whose seal is missing or broken. */
    public static final int SEAL_BROKEN = 9;
    /**
     * diagnose, verify-fix, prove: the step time is undecided at this noise — the data neither show a change nor exclude
     * one of the equivalence margin's size — and nothing else decides; more runs may (the output says about how many steps).
     */
    public static final int INCONCLUSIVE = 10;
    /** An internal error: a bug in pathproof. */
    public static final int INTERNAL = 70;

    private ExitCode() {}
}

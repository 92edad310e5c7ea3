package io.pathproof.diagnose;

/** Step-time comparisons for tests in any room: one run of 24 steps a side, no rule interval, margin or steps needed. */
public final class Regressions {
    private Regressions() {}

    /** {@code detected} follows from the verdict, as the record's constructor requires. */
    public static Diagnosis.Regression of(
            String verdict,
            double ratio,
            double ciLow,
            double ciHigh,
            double baselineMs,
            double variantMs,
            String rule) {
        return new Diagnosis.Regression(
                verdict.equals("regression"),
                ratio,
                ciLow,
                ciHigh,
                verdict,
                baselineMs,
                variantMs,
                24,
                24,
                rule,
                null,
                null,
                null,
                null,
                null,
                1,
                1,
                null);
    }
}

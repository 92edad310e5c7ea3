package io.pathproof.diagnose;

import io.pathproof.accept.Verdict;
import java.util.List;

/**
 * The outcome of {@code verify-fix}: {@code fixed} is true when the path fingerprint and the configuration equal the
 * baseline's, the fixed run is correct, its step is not slower than the baseline's (no regression by the diagnose rule,
 * median not above the baseline's band {@code bandLowMs}..{@code bandHighMs}, the 5th..95th percentile of the
 * baseline's steps; below it is only a note) and, where the variant is given and regressed, clearly faster than the
 * variant ({@code againstVariant}, fixed over variant). {@code onlyStepTime}: path, configuration and replicas are the
 * baseline's and only the step time failed, the case a re-measurement beside a new baseline can settle.
 * {@code verdict}: {@value #FIXED}, {@value #NOT_FIXED}, {@value #NOTHING_TO_FIX} where the variant is given and did
 * not regress against the baseline (diagnose: no change, or only the machine's load) — then no fix can be shown,
 * whatever the fixed run looks like, and {@code fixed} is false — or {@value #INCONCLUSIVE}: nothing is wrong with the
 * fixed run, but a step-time comparison the fix rests on is undecided at this noise (the variant against the baseline,
 * or the fixed run against the variant), so it is not shown fixed; more runs may decide ({@code reasons} say which).
 */
public record FixVerification(
        String schema,
        String baseline,
        String fixedRun,
        boolean fixed,
        boolean fingerprintEqual,
        List<Diagnosis.LayerDiff> differences,
        Verdict correctness,
        Double medianMs,
        Double bandLowMs,
        Double bandHighMs,
        Diagnosis.Regression regression,
        List<String> reasons,
        String variantRun,
        Diagnosis.Regression againstVariant,
        boolean onlyStepTime,
        List<String> notes,
        String verdict) {
    public static final String SCHEMA = "pathproof.verify-fix/1";
    public static final String FIXED = "fixed";
    public static final String NOT_FIXED = "not fixed";
    public static final String NOTHING_TO_FIX = "nothing to fix";
    public static final String INCONCLUSIVE = "inconclusive";

    /**
     * {@code verdict} is null only as read from a file of an older verify-fix that did not record one (such a file
     * says only {@code fixed}); every verification made here has one.
     */
    public FixVerification {
        if (verdict != null
                && !List.of(FIXED, NOT_FIXED, NOTHING_TO_FIX, INCONCLUSIVE).contains(verdict)) {
            throw new IllegalArgumentException("verify-fix verdict '" + verdict + "'");
        }
        if (verdict != null && fixed != verdict.equals(FIXED)) {
            throw new IllegalArgumentException("verify-fix: fixed=" + fixed + " but verdict " + verdict);
        }
        differences = differences == null ? List.of() : List.copyOf(differences);
        reasons = reasons == null ? List.of() : List.copyOf(reasons);
        notes = notes == null ? List.of() : List.copyOf(notes);
    }
}

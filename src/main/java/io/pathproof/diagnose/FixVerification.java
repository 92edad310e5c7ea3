package io.pathproof.diagnose;

import java.util.List;

/**
 * The outcome of {@code verify-fix}: {@code fixed} is true when the path fingerprint and the configuration equal the
 * baseline's, the fixed run is correct, its step is not slower than the baseline's (no regression by the diagnose rule,
 * median not above the baseline's band {@code bandLowMs}..{@code bandHighMs}, the 5th..95th percentile of the
 * baseline's steps; below it is only a note) and, where the variant is given and regressed, clearly faster than the
 * variant ({@code againstVariant}, fixed over variant). {@code onlyStepTime}: path, configuration and replicas are the
 * baseline's and only the step time failed, the case a re-measurement beside a new baseline can settle.
 */
public record FixVerification(
    String schema,
    String baseline,
    String fixedRun,
    boolean fixed,
    boolean fingerprintEqual,
    List<Diagnosis.LayerDiff> differences,
    String correctness,
    Double medianMs,
    Double bandLowMs,
    Double bandHighMs,
    Diagnosis.Regression regression,
    List<String> reasons,
    String variantRun,
    Diagnosis.Regression againstVariant,
    boolean onlyStepTime,
    List<String> notes) {
  public static final String SCHEMA = "pathproof.verify-fix/1";

  public FixVerification {
    differences = List.copyOf(differences);
    reasons = List.copyOf(reasons);
    notes = notes == null ? List.of() : List.copyOf(notes);
  }
}

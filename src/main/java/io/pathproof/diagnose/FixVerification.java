package io.pathproof.diagnose;

import java.util.List;

/**
 * The outcome of {@code verify-fix}: {@code fixed} is true when the path fingerprint equals the baseline's, the
 * variant is correct, and the step-time median is inside the baseline's band ({@code bandLowMs}..{@code bandHighMs},
 * the 5th..95th percentile of the baseline's steps) with no regression by the diagnose rule.
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
    List<String> reasons) {
  public static final String SCHEMA = "pathproof.verify-fix/1";

  public FixVerification {
    differences = List.copyOf(differences);
    reasons = List.copyOf(reasons);
  }
}

package io.pathproof.diagnose;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Step-time statistics: the ratio of medians (variant / baseline) with a percentile-bootstrap confidence interval.
 * Seeded, so the same samples always give the same interval.
 *
 * <p>Decision rule (measured by {@code DiagnosePowerBench}, see docs/PERFORMANCE.md): a regression is called when the
 * ratio is at least {@link #MIN_EFFECT} above 1 and the 99 % interval lies wholly above 1; an improvement
 * symmetrically. The 99 % interval keeps A/A false alarms near 0.5 % on one side; the minimum effect keeps a
 * statistically clear but practically tiny shift (a 1 % drift on very quiet samples) from being called a regression.
 * The reported interval ({@code ciLow}, {@code ciHigh}) is the 95 % one.
 */
final class StepStats {
  static final int RESAMPLES = 2000;
  static final double MIN_EFFECT = 0.02;
  static final long SEED = 0x5EEDL;

  private StepStats() {}

  /** The outcome of one comparison. */
  record Comparison(int nBaseline, int nVariant, double baselineMedian, double variantMedian, double ratio, double ciLow,
      double ciHigh, double ci99Low, double ci99High) {
    boolean regression() {
      return ratio >= 1 + MIN_EFFECT && ci99Low > 1;
    }

    boolean improvement() {
      return ratio <= 1 - MIN_EFFECT && ci99High < 1;
    }

    String verdict() {
      return regression() ? "regression" : improvement() ? "improvement" : "no change";
    }
  }

  static Comparison compare(double[] baseline, double[] variant) {
    return compare(baseline, variant, SEED, RESAMPLES);
  }

  static Comparison compare(double[] baseline, double[] variant, long seed, int resamples) {
    if (baseline.length == 0 || variant.length == 0) {
      throw new IllegalArgumentException("step-time comparison needs samples on both sides");
    }
    double mb = median(baseline.clone());
    double mv = median(variant.clone());
    SplittableRandom rnd = new SplittableRandom(seed ^ (31L * baseline.length + variant.length));
    double[] ratios = bootstrapRatios(baseline, variant, rnd, resamples);
    return new Comparison(baseline.length, variant.length, mb, mv, mv / mb, quantile(ratios, 0.025), quantile(ratios, 0.975),
        quantile(ratios, 0.005), quantile(ratios, 0.995));
  }

  /** Sorted bootstrap ratios of the variant's median to the baseline's, each side resampled with replacement. */
  private static double[] bootstrapRatios(double[] baseline, double[] variant, SplittableRandom rnd, int resamples) {
    double[] ratios = new double[resamples];
    double[] bb = new double[baseline.length];
    double[] vv = new double[variant.length];
    for (int i = 0; i < resamples; i++) {
      for (int j = 0; j < bb.length; j++) {
        bb[j] = baseline[rnd.nextInt(baseline.length)];
      }
      for (int j = 0; j < vv.length; j++) {
        vv[j] = variant[rnd.nextInt(variant.length)];
      }
      ratios[i] = median(vv) / median(bb);
    }
    Arrays.sort(ratios);
    return ratios;
  }

  /**
   * One look of the sequential rule for adaptive iterations (issue 11 §3): with {@code looks} planned looks (e.g. at
   * 48, 96, 192, 384 iterations) each look spends 1 %/looks of one-sided false-alarm rate (Bonferroni), so stopping at
   * the first decided look keeps A/A false alarms ≤ 1 %. "regression": ratio ≥ 1 + MIN_EFFECT and the lower bound above
   * 1; "no regression": the upper bound below 1 + {@code effect} (a regression that large is excluded); else
   * "undecided" (run more iterations, up to the cap).
   */
  static String sequential(double[] baseline, double[] variant, int looks, double effect) {
    double alpha = 0.01 / Math.max(1, looks);
    double mb = median(baseline.clone());
    double mv = median(variant.clone());
    SplittableRandom rnd = new SplittableRandom(SEED ^ (31L * baseline.length + variant.length));
    int resamples = Math.max(RESAMPLES, (int) Math.ceil(20 / alpha));
    double[] ratios = bootstrapRatios(baseline, variant, rnd, resamples);
    double lo = quantile(ratios, alpha);
    double hi = quantile(ratios, 1 - alpha);
    if (mv / mb >= 1 + MIN_EFFECT && lo > 1) {
      return "regression";
    }
    if (hi < 1 + effect) {
      return "no regression";
    }
    return "undecided";
  }

  /** Median; sorts {@code a} in place. */
  static double median(double[] a) {
    Arrays.sort(a);
    int n = a.length;
    return n % 2 == 1 ? a[n / 2] : (a[n / 2 - 1] + a[n / 2]) / 2;
  }

  /** Linear-interpolated quantile of sorted data. */
  static double quantile(double[] sorted, double q) {
    double pos = q * (sorted.length - 1);
    int lo = (int) Math.floor(pos);
    int hi = Math.min(sorted.length - 1, lo + 1);
    return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
  }
}

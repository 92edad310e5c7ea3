package io.pathproof.diagnose;

import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.TreeMap;

/**
 * Step-time statistics: the ratio of medians (variant / baseline) with percentile-bootstrap intervals, and the one
 * definition of a run's step time and its median ({@link #stepTimes}). Seeded, so the same samples always give the same
 * interval.
 *
 * <p>Decision rule (the rule's interval is the {@link Diagnosis.Rule#level()} one, 99 % for one look):
 * <ul>
 *   <li>regression: the ratio at least {@link #MIN_EFFECT} above 1 and the rule's interval wholly above 1;
 *   <li>improvement: symmetrically below;
 *   <li>no change: the rule's interval lies inside 1 ± the equivalence margin (5 % unless given): a change the reader
 *       would care about is excluded, not merely unproven (two one-sided tests at the look's error rate);
 *   <li>inconclusive: everything else — the data can neither show a change nor exclude one of the margin's size;
 *       {@link Comparison#stepsNeeded} says how many steps per side would decide at the observed noise.
 * </ul>
 * The minimum effect keeps a statistically clear but practically tiny shift (a 1 % drift on very quiet samples) from
 * being called a regression; it then is "no change" when the interval also lies inside the margin.
 *
 * <p>Several runs of one configuration are pooled like with like, each run a cluster: a bootstrap resample draws the
 * runs with replacement, then the steps inside each drawn run, so a difference between the runs of one side (the
 * machine's load drifting between them) widens the interval instead of being taken for precision. With one run per
 * side this is the plain step bootstrap, draw for draw.
 */
final class StepStats {
  static final int RESAMPLES = 2000;
  static final double MIN_EFFECT = 0.02;
  static final long SEED = 0x5EEDL;

  private StepStats() {}

  /**
   * The outcome of one comparison: {@code n} steps and {@code runs} runs per side, the pooled medians and their ratio,
   * the 95 % interval (shown), the rule's interval at {@code rule.level()} (decides) and the rule itself.
   */
  record Comparison(int nBaseline, int nVariant, int runsBaseline, int runsVariant, double baselineMedian, double variantMedian,
      double ratio, double ciLow, double ciHigh, double ruleLow, double ruleHigh, Diagnosis.Rule rule) {
    boolean regression() {
      return ratio >= 1 + MIN_EFFECT && ruleLow > 1;
    }

    boolean improvement() {
      return ratio <= 1 - MIN_EFFECT && ruleHigh < 1;
    }

    /** The rule's interval lies inside 1 ± margin: a change of the margin's size or more is excluded. */
    boolean equivalent() {
      return ruleLow > 1 - rule.margin() && ruleHigh < 1 + rule.margin();
    }

    String verdict() {
      return regression() ? "regression" : improvement() ? "improvement" : equivalent() ? "no change" : "inconclusive";
    }

    boolean decided() {
      return !"inconclusive".equals(verdict());
    }

    /**
     * Steps per side that would decide at the noise observed here, or null when decided. The rule's interval narrows
     * as 1/√n; it must shrink until it either clears 1 (when the ratio is at least the minimum effect away from 1) or fits
     * inside the margin around the observed ratio, whichever needs fewer steps. An estimate: it assumes the noise and
     * the ratio stay as observed.
     */
    Integer stepsNeeded() {
      if (decided()) {
        return null;
      }
      double halfWidth = (Math.log(ruleHigh) - Math.log(ruleLow)) / 2;
      double d = Math.abs(Math.log(ratio));
      double equivalence = (ratio >= 1 ? Math.log(1 + rule.margin()) : -Math.log(1 - rule.margin())) - d;
      double effect = Math.abs(ratio - 1) >= MIN_EFFECT ? d : 0;
      double target = Math.max(equivalence, effect);
      if (!(target > 0) || !(halfWidth > 0) || !Double.isFinite(halfWidth)) {
        return null;
      }
      // An interval skewed around the ratio can leave the estimate at or below the steps already taken: more are needed.
      double factor = Math.max(1.25, (halfWidth / target) * (halfWidth / target));
      return (int) Math.min(Integer.MAX_VALUE, Math.ceil(Math.max(nBaseline, nVariant) * factor));
    }
  }

  static Comparison compare(double[] baseline, double[] variant) {
    return compare(List.of(baseline), List.of(variant), Diagnosis.Rule.DEFAULT);
  }

  static Comparison compare(double[] baseline, double[] variant, Diagnosis.Rule rule) {
    return compare(List.of(baseline), List.of(variant), rule);
  }

  /** Each list holds one array per run (the runs of one configuration); empty runs are left out. */
  static Comparison compare(List<double[]> baseline, List<double[]> variant, Diagnosis.Rule rule) {
    List<double[]> b = nonEmpty(baseline);
    List<double[]> v = nonEmpty(variant);
    if (b.isEmpty() || v.isEmpty()) {
      throw new IllegalArgumentException("step-time comparison needs samples on both sides");
    }
    double[] pb = concat(b);
    double[] pv = concat(v);
    double mb = median(pb.clone());
    double mv = median(pv.clone());
    double tail = rule.lookAlpha() / 2;
    // Enough resamples that the rule's tail quantile rests on ten of them or more (2000 for one look at 1 %).
    int resamples = Math.max(RESAMPLES, (int) Math.ceil(10 / tail));
    SplittableRandom rnd = new SplittableRandom(SEED ^ (31L * pb.length + pv.length));
    double[] ratios = bootstrapRatios(b, v, rnd, resamples);
    return new Comparison(pb.length, pv.length, b.size(), v.size(), mb, mv, mv / mb, quantile(ratios, 0.025), quantile(ratios, 0.975),
        quantile(ratios, tail), quantile(ratios, 1 - tail), rule);
  }

  private static List<double[]> nonEmpty(List<double[]> runs) {
    List<double[]> out = new ArrayList<>();
    for (double[] r : runs) {
      if (r != null && r.length > 0) {
        out.add(r);
      }
    }
    return out;
  }

  static double[] concat(List<double[]> runs) {
    int n = 0;
    for (double[] r : runs) {
      n += r.length;
    }
    double[] out = new double[n];
    int i = 0;
    for (double[] r : runs) {
      System.arraycopy(r, 0, out, i, r.length);
      i += r.length;
    }
    return out;
  }

  /**
   * Sorted bootstrap ratios of the variant's median to the baseline's. One run per side: the steps resampled with
   * replacement. Several: the runs first, then the steps inside each drawn run (a cluster bootstrap).
   */
  private static double[] bootstrapRatios(List<double[]> baseline, List<double[]> variant, SplittableRandom rnd, int resamples) {
    double[] ratios = new double[resamples];
    double[] bb = new double[concat(baseline).length];
    double[] vv = new double[concat(variant).length];
    for (int i = 0; i < resamples; i++) {
      double[] xb = resample(baseline, bb, rnd);
      double[] xv = resample(variant, vv, rnd);
      ratios[i] = median(xv) / median(xb);
    }
    Arrays.sort(ratios);
    return ratios;
  }

  /** One resample of a side into {@code into} (sized for the pooled steps); returns the filled part. */
  private static double[] resample(List<double[]> runs, double[] into, SplittableRandom rnd) {
    if (runs.size() == 1) {
      double[] r = runs.get(0);
      for (int j = 0; j < r.length; j++) {
        into[j] = r[rnd.nextInt(r.length)];
      }
      return into;
    }
    int k = 0;
    double[] out = into;
    for (int c = 0; c < runs.size(); c++) {
      double[] r = runs.get(rnd.nextInt(runs.size()));
      if (k + r.length > out.length) {
        out = Arrays.copyOf(out, k + r.length);
      }
      for (int j = 0; j < r.length; j++) {
        out[k++] = r[rnd.nextInt(r.length)];
      }
    }
    return k == out.length ? out : Arrays.copyOf(out, k);
  }

  /**
   * One look of the sequential rule for adaptive iterations: with {@code looks} planned looks (e.g. at
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
    double[] ratios = bootstrapRatios(List.of(baseline), List.of(variant), rnd, resamples);
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

  /**
   * A run's step times, the one definition every figure of pathproof uses: per measured iteration, the slowest rank's
   * time (a synchronous DDP step ends when its slowest rank does), in iteration order. Its median is "the run's median".
   */
  static double[] stepTimes(Evidence e) {
    TreeMap<Integer, Double> perIt = new TreeMap<>();
    List<Evidence.Step> all = e == null || e.steps() == null ? List.of() : e.steps();
    List<Evidence.Step> m = all.stream().filter(Evidence.Step::measured).toList();
    for (Evidence.Step s : m.isEmpty() ? all : m) {
      perIt.merge(s.iteration(), s.ms(), Math::max);
    }
    return perIt.values().stream().mapToDouble(Double::doubleValue).toArray();
  }

  /** The 95 % percentile-bootstrap interval of the pooled median of these runs (runs, then steps, as {@link #compare}). */
  static double[] medianInterval(List<double[]> runs) {
    List<double[]> r = nonEmpty(runs);
    double[] pooled = concat(r);
    SplittableRandom rnd = new SplittableRandom(SEED ^ (31L * pooled.length));
    double[] med = new double[RESAMPLES];
    double[] into = new double[pooled.length];
    for (int i = 0; i < RESAMPLES; i++) {
      med[i] = median(resample(r, into, rnd));
    }
    Arrays.sort(med);
    return new double[] {quantile(med, 0.025), quantile(med, 0.975)};
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

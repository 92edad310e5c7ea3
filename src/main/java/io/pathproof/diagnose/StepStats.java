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
 * <p>Several runs per side: the run is the unit of replication, not the step. On a shared machine the load drifts
 * between runs (one run at load 3, the next at 9), and that drift, not the steps' noise, dominates; steps drawn as if
 * independent take it for a change of the code. Each run is reduced to the log of its median, and the i-th runs of the
 * two sides, made next to each other in time (prove makes them so, in ABBA order), form a pair: the estimate is the
 * mean of the pairs' log ratios, its interval Student's t over the pairs (k − 1 degrees of freedom, the spread between
 * pairs measured, not assumed). Sides of unequal counts: the difference of the sides' mean log medians, the spread of
 * runs around their side's mean pooled. The interval is never narrower than the one the steps give (runs, then steps
 * inside them, resampled). One run per side: the plain step bootstrap, which holds nothing of the drift between the
 * two runs; a rule asking for more pairs ({@link Diagnosis.Rule#pairs()}) leaves it inconclusive.
 */
final class StepStats {
    static final int RESAMPLES = 2000;
    static final double MIN_EFFECT = 0.02;
    static final long SEED = 0x5EEDL;

    private StepStats() {}

    /**
     * The outcome of one comparison: {@code n} steps and {@code runs} runs per side, the pooled medians, the ratio (one
     * run per side: of the medians; several: of the runs, as the mean of the pairs' log ratios), the 95 % interval
     * (shown), the rule's interval at {@code rule.level()} (decides) and the rule itself. {@code units}: the independent
     * replicates the interval rests on (1 for one run per side, the pairs, or the fewer runs of the two sides);
     * {@code unitSd}: the standard deviation of one unit's log ratio (between runs where there are several; the steps'
     * alone for one pair), from which {@link #stepsNeeded} extrapolates.
     */
    record Comparison(
            int nBaseline,
            int nVariant,
            int runsBaseline,
            int runsVariant,
            double baselineMedian,
            double variantMedian,
            double ratio,
            double ciLow,
            double ciHigh,
            double ruleLow,
            double ruleHigh,
            Diagnosis.Rule rule,
            int units,
            double unitSd) {
        /** Enough pairs of runs for the rule to decide at all ({@link Diagnosis.Rule#pairs()}). */
        boolean enoughPairs() {
            return units >= rule.pairs();
        }

        /** Whether the run is the unit (several runs on a side), not the step. */
        boolean runLevel() {
            return runsBaseline > 1 || runsVariant > 1;
        }

        boolean regression() {
            return enoughPairs() && ratio >= 1 + MIN_EFFECT && ruleLow > 1;
        }

        boolean improvement() {
            return enoughPairs() && ratio <= 1 - MIN_EFFECT && ruleHigh < 1;
        }

        /** The rule's interval lies inside 1 ± margin: a change of the margin's size or more is excluded. */
        boolean equivalent() {
            return enoughPairs() && ruleLow > 1 - rule.margin() && ruleHigh < 1 + rule.margin();
        }

        String verdict() {
            return regression()
                    ? "regression"
                    : improvement() ? "improvement" : equivalent() ? "no change" : "inconclusive";
        }

        boolean decided() {
            return !"inconclusive".equals(verdict());
        }

        /** Measured steps per run (the larger side's mean): what one more pair of runs adds per side. */
        int stepsPerRun() {
            return Math.max(1, Math.max(nBaseline / Math.max(1, runsBaseline), nVariant / Math.max(1, runsVariant)));
        }

        /**
         * Steps per side that would decide at the noise observed here, or null when decided. The rule's interval must
         * shrink until it either clears 1 (when the ratio is at least the minimum effect away from 1) or fits inside the
         * margin around the observed ratio, whichever needs less. One pair judged on its steps: its interval narrows as
         * 1/√n. Otherwise in whole pairs of runs (t over the pairs, {@code unitSd} per pair; for one pair where the rule
         * asks for more, the steps' own spread, a lower bound of a pair's), given as pairs × steps per run. An estimate: it
         * assumes the noise and the ratio stay as observed.
         */
        Integer stepsNeeded() {
            if (decided()) {
                return null;
            }
            double d = Math.abs(Math.log(ratio));
            double equivalence = (ratio >= 1 ? Math.log(1 + rule.margin()) : -Math.log(1 - rule.margin())) - d;
            double effect = Math.abs(ratio - 1) >= MIN_EFFECT ? d : 0;
            double target = Math.max(equivalence, effect);
            double halfWidth = (Math.log(ruleHigh) - Math.log(ruleLow)) / 2;
            if (!(target > 0) || !(halfWidth > 0) || !Double.isFinite(halfWidth)) {
                return null;
            }
            double tail = rule.lookAlpha() / 2;
            if (!runLevel() && rule.pairs() == 1) {
                // An interval skewed around the ratio can leave the estimate at or below the steps already taken: more
                // are
                // needed.
                double factor = Math.max(1.25, (halfWidth / target) * (halfWidth / target));
                return (int) Math.min(Integer.MAX_VALUE, Math.ceil(Math.max(nBaseline, nVariant) * factor));
            }
            double sd = Double.isFinite(unitSd) && unitSd > 0 ? unitSd : halfWidth / StudentT.quantile(1 - tail, 1e6);
            for (int k = Math.max(units + 1, Math.max(2, rule.pairs())); k <= MAX_PAIRS; k++) {
                if (StudentT.quantile(1 - tail, k - 1) * sd / Math.sqrt(k) <= target) {
                    return k * stepsPerRun();
                }
            }
            return null;
        }
    }

    /** The most pairs of runs {@link Comparison#stepsNeeded} counts up to: beyond it, more runs than is sensible. */
    static final int MAX_PAIRS = 1000;

    static Comparison compare(double[] baseline, double[] variant) {
        return compare(List.of(baseline), List.of(variant), Diagnosis.Rule.DEFAULT);
    }

    static Comparison compare(double[] baseline, double[] variant, Diagnosis.Rule rule) {
        return compare(List.of(baseline), List.of(variant), rule);
    }

    /**
     * Each list holds one array per run (the runs of one configuration, in the order they were made); empty runs are left
     * out. Equal counts: the i-th runs are a time-adjacent pair. For runs of two sides made apart in time,
     * {@link #compareUnpaired}.
     */
    static Comparison compare(List<double[]> baseline, List<double[]> variant, Diagnosis.Rule rule) {
        if (baseline.size() == variant.size()) {
            List<List<double[]>> pairs = wholePairs(baseline, variant);
            return compare(pairs.get(0), pairs.get(1), rule, true);
        }
        return compare(nonEmpty(baseline), nonEmpty(variant), rule, false);
    }

    /** The pairs whose two runs both have samples, as two lists in step: a run left out takes its partner with it. */
    private static List<List<double[]>> wholePairs(List<double[]> a, List<double[]> b) {
        List<double[]> x = new ArrayList<>();
        List<double[]> y = new ArrayList<>();
        for (int i = 0; i < Math.min(a.size(), b.size()); i++) {
            if (a.get(i) != null && a.get(i).length > 0 && b.get(i) != null && b.get(i).length > 0) {
                x.add(a.get(i));
                y.add(b.get(i));
            }
        }
        return List.of(x, y);
    }

    /** As {@link #compare(List, List, Diagnosis.Rule)}, never pairing the runs: the sides were not made side by side. */
    static Comparison compareUnpaired(List<double[]> baseline, List<double[]> variant, Diagnosis.Rule rule) {
        return compare(nonEmpty(baseline), nonEmpty(variant), rule, false);
    }

    private static Comparison compare(List<double[]> b, List<double[]> v, Diagnosis.Rule rule, boolean paired) {
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
        double ci95Low = quantile(ratios, 0.025);
        double ci95High = quantile(ratios, 0.975);
        double low = quantile(ratios, tail);
        double high = quantile(ratios, 1 - tail);
        if (b.size() == 1 && v.size() == 1) {
            // The steps' own spread of the log ratio, from the rule's interval: what one pair holds, a lower bound of a
            // pair's.
            double sd = (Math.log(high) - Math.log(low)) / 2 / StudentT.quantile(1 - tail, 1e6);
            return new Comparison(
                    pb.length, pv.length, 1, 1, mb, mv, mv / mb, ci95Low, ci95High, low, high, rule, 1, sd);
        }
        Runs r = runs(b, v, paired);
        double ratio = Math.exp(r.mean);
        if (r.df >= 1 && Double.isFinite(r.se)) {
            // Never narrower than the steps give: a spread between runs measured small by chance must not claim more.
            double t = StudentT.quantile(1 - tail, r.df);
            double t95 = StudentT.quantile(0.975, r.df);
            low = Math.min(low, Math.exp(r.mean - t * r.se));
            high = Math.max(high, Math.exp(r.mean + t * r.se));
            ci95Low = Math.min(ci95Low, Math.exp(r.mean - t95 * r.se));
            ci95High = Math.max(ci95High, Math.exp(r.mean + t95 * r.se));
        } else {
            // Nothing measures how runs differ (no degree of freedom left): no run-level verdict.
            low = Math.min(low, 0.0);
            high = Double.POSITIVE_INFINITY;
        }
        return new Comparison(
                pb.length, pv.length, b.size(), v.size(), mb, mv, ratio, ci95Low, ci95High, low, high, rule, r.units,
                r.sd);
    }

    /** The run-level estimate: mean log ratio, its standard error, degrees of freedom, the units and one unit's sd. */
    private record Runs(double mean, double se, double df, int units, double sd) {}

    private static Runs runs(List<double[]> b, List<double[]> v, boolean paired) {
        double[] lb = logMedians(b);
        double[] lv = logMedians(v);
        if (paired && lb.length == lv.length) {
            int k = lb.length;
            double[] d = new double[k];
            for (int i = 0; i < k; i++) {
                d[i] = lv[i] - lb[i];
            }
            double mean = mean(d);
            double sd = k > 1 ? Math.sqrt(sumSq(d, mean) / (k - 1)) : Double.NaN;
            return new Runs(mean, sd / Math.sqrt(k), k - 1, k, sd);
        }
        int df = lb.length + lv.length - 2;
        double mb = mean(lb);
        double mv = mean(lv);
        double sp = df > 0 ? Math.sqrt((sumSq(lb, mb) + sumSq(lv, mv)) / df) : Double.NaN;
        // One unit: a baseline run and a variant run, each with the runs' spread.
        return new Runs(
                mv - mb,
                sp * Math.sqrt(1.0 / lb.length + 1.0 / lv.length),
                df,
                Math.min(lb.length, lv.length),
                sp * Math.sqrt(2));
    }

    /**
     * Whether the {@code a} runs changed by a different ratio against their own baselines than the {@code b} runs did
     * against theirs, each side given as time-adjacent pairs ({@code baseA[i]} made next to {@code a[i]}): the drift
     * between the two phases cancels in each pair. The comparison's ratio is (a over baseA) over (b over baseB); an
     * "improvement" says a stands clearly lower against its baselines than b does against its. Welch's t on the two
     * sides' mean log ratios; a side with one pair borrows the other side's spread between pairs (the same machine).
     * Medians shown: the b runs' pooled (as the baseline of the comparison) and the a runs'.
     */
    static Comparison compareRatios(
            List<double[]> baseA, List<double[]> a, List<double[]> baseB, List<double[]> b, Diagnosis.Rule rule) {
        List<List<double[]>> pa0 =
                baseA.size() == a.size() ? wholePairs(baseA, a) : List.of(nonEmpty(baseA), nonEmpty(a));
        List<List<double[]>> pb0 =
                baseB.size() == b.size() ? wholePairs(baseB, b) : List.of(nonEmpty(baseB), nonEmpty(b));
        if (pa0.get(0).isEmpty()
                || pa0.get(1).isEmpty()
                || pb0.get(0).isEmpty()
                || pb0.get(1).isEmpty()) {
            throw new IllegalArgumentException("step-time comparison needs samples on both sides");
        }
        Runs ra = runs(pa0.get(0), pa0.get(1), baseA.size() == a.size());
        Runs rb = runs(pb0.get(0), pb0.get(1), baseB.size() == b.size());
        double sa = Double.isFinite(ra.sd) ? ra.sd : rb.sd;
        double sb = Double.isFinite(rb.sd) ? rb.sd : ra.sd;
        double va = sa * sa / ra.units;
        double vb = sb * sb / rb.units;
        double dfa = Double.isFinite(ra.sd) ? ra.units - 1 : rb.units - 1;
        double dfb = Double.isFinite(rb.sd) ? rb.units - 1 : ra.units - 1;
        double se = Math.sqrt(va + vb);
        double df = (va + vb) * (va + vb) / (va * va / Math.max(1, dfa) + vb * vb / Math.max(1, dfb));
        double mean = ra.mean - rb.mean;
        double tail = rule.lookAlpha() / 2;
        double[] pa = concat(pa0.get(1));
        double[] pb = concat(pb0.get(1));
        int units = Math.min(ra.units, rb.units);
        // Neither side measures a spread between its pairs: no run-level verdict, an interval without bounds.
        boolean spread = se > 0 && (dfa >= 1 || dfb >= 1);
        double[] ci95 = spread ? ratioInterval(mean, se, StudentT.quantile(0.975, df)) : UNBOUNDED;
        double[] decides = spread ? ratioInterval(mean, se, StudentT.quantile(1 - tail, df)) : UNBOUNDED;
        return new Comparison(
                pb.length,
                pa.length,
                rb.units,
                ra.units,
                median(pb.clone()),
                median(pa.clone()),
                Math.exp(mean),
                ci95[0],
                ci95[1],
                decides[0],
                decides[1],
                rule,
                units,
                spread ? se * Math.sqrt(units) : Double.NaN);
    }

    /** A ratio's interval that excludes nothing. */
    private static final double[] UNBOUNDED = {0, Double.POSITIVE_INFINITY};

    /** The ratio's interval from a mean log ratio, its standard error and the t quantile. */
    private static double[] ratioInterval(double meanLog, double se, double t) {
        return new double[] {Math.exp(meanLog - t * se), Math.exp(meanLog + t * se)};
    }

    private static double[] logMedians(List<double[]> runs) {
        double[] out = new double[runs.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = Math.log(median(runs.get(i).clone()));
        }
        return out;
    }

    private static double mean(double[] a) {
        double s = 0;
        for (double x : a) {
            s += x;
        }
        return s / a.length;
    }

    private static double sumSq(double[] a, double mean) {
        double s = 0;
        for (double x : a) {
            s += (x - mean) * (x - mean);
        }
        return s;
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
    private static double[] bootstrapRatios(
            List<double[]> baseline, List<double[]> variant, SplittableRandom rnd, int resamples) {
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

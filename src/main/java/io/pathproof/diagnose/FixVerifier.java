package io.pathproof.diagnose;

import static io.pathproof.diagnose.Diagnoser.any;
import static io.pathproof.diagnose.Diagnoser.compute;
import static io.pathproof.diagnose.Diagnoser.describe;
import static io.pathproof.diagnose.Diagnoser.jobCpu;
import static io.pathproof.diagnose.Diagnoser.pct;
import static io.pathproof.diagnose.Diagnoser.ratio;
import static io.pathproof.diagnose.Diagnoser.round;
import static io.pathproof.diagnose.Diagnoser.steps;
import static io.pathproof.diagnose.Diagnoser.undecided;

import io.pathproof.accept.Verdict;
import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * Fix verification: the fixed run(s) of a {@link Diagnoser} (its variant side) against its baseline(s), and against
 * the variant run(s) that showed the regression where given.
 */
final class FixVerifier {
    private final Diagnoser d;
    private final Evidence b;
    private final Evidence v;
    private final List<Evidence> bRuns;
    private final Fingerprint fb;
    private final Fingerprint fv;
    private final List<Fingerprint> bs;
    private final List<Fingerprint> vs;
    private final MachineLoad loadB;
    private final MachineLoad loadV;
    private final Diagnosis.Rule rule;
    /** The variant against the baseline, as diagnose judges it; set by the first look at the variant. */
    private Diagnosis variantDiagnosis;

    FixVerifier(Diagnoser d) {
        this.d = d;
        this.b = d.b;
        this.v = d.v;
        this.bRuns = d.bRuns;
        this.fb = d.fb;
        this.fv = d.fv;
        this.bs = d.bs;
        this.vs = d.vs;
        this.loadB = d.loadB;
        this.loadV = d.loadV;
        this.rule = d.rule;
    }

    private boolean emulated() {
        return d.emulated();
    }

    private Diagnosis.Correctness correctness() {
        return d.correctness();
    }

    private Diagnosis.Regression regression() {
        return d.regression();
    }

    private Diagnosis.Regression regression(StepStats.Comparison c, MachineLoad lb, MachineLoad lv, String what) {
        return d.regression(c, lb, lv, what);
    }

    /**
     * The fixed run(s) ({@code v} here) against the baseline(s), and against the variant(s) where given. What a fix must
     * show: the baseline's path and configuration, correct replicas, and on the step time (seed common error 14) that
     * the variant's regression is gone — the fixed runs clearly faster than the variant, by the diagnose rule, whenever
     * the variant regressed (a fix that undid nothing is never verified by noise that hides the fault), and not slower
     * than the baseline (no regression, median not above the baseline's band). A fixed run faster than the baseline's
     * band is no failure: the machine's load fell between the runs, or more than the fault was undone; it is noted.
     * A comparison the fix rests on that is inconclusive makes the verdict "inconclusive", never "fixed".
     */
    FixVerification verify(List<Evidence> variants, List<Evidence> again) {
        List<String> reasons = new ArrayList<>();
        List<String> undecided = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        List<Diagnosis.LayerDiff> differences = pathDifferences(reasons);
        boolean equal = differences.isEmpty();
        // A fix of a configuration root cause is checkable only if the configuration is the baseline's again.
        List<ConfigDiff.Change> still = ConfigDiff.diff(b, v);
        if (!still.isEmpty()) {
            reasons.add("configuration still differs from the baseline: " + describe(still));
        }
        Diagnosis.Correctness c = correctness();
        if (c.verdict() == Verdict.FAIL) {
            reasons.add("correctness: " + c.evidence());
        }
        if (fb.correctness.known() && vs.stream().anyMatch(f -> !f.correctness.known())) {
            reasons.add("correctness: the fixed run has no replica digests, the baseline had them");
        }
        String nothing = nothingToFix(variants, undecided);
        if (nothing != null) {
            reasons.add(nothing);
        }
        int structural = reasons.size();
        // The fixed runs were made after the diagnosis's baselines, apart in time: never paired with them.
        Diagnosis.Regression reg = emulated() || !any(steps(bs)) || !any(steps(vs))
                ? regression()
                : regression(
                        StepStats.compareUnpaired(steps(bs), steps(vs), rule),
                        loadB,
                        loadV,
                        "median of per-iteration step times (slowest rank)");
        Diagnosis.Regression againstVariant = null;
        Double median = null;
        Double lo = null;
        Double hi = null;
        if (!any(steps(bs)) || !any(steps(vs))) {
            reasons.add("step time: " + reg.rule());
        } else {
            median = round(StepStats.median(StepStats.concat(steps(vs))), 4);
            // Where the rule asks for pairs (prove), the fixed runs are judged only beside the baseline runs made next
            // to
            // them: against the first baselines, made minutes before at another load, the machine's drift is in the
            // step.
            List<String> slower = paired() ? List.of() : notSlower(bs, false, "the baseline", notes);
            double[] band = band(bs);
            List<Fingerprint> fa = again == null
                    ? List.of()
                    : again.stream()
                            .map(Fingerprint::new)
                            .filter(f -> f.steps.length > 0)
                            .toList();
            if (!fa.isEmpty() && paired()) {
                slower = notSlower(
                        fa,
                        true,
                        fa.size() == 1 ? "the baseline run beside it" : "the baseline runs beside them",
                        notes);
                band = band(fa);
                reg = compared(fa, vs, MachineLoad.of(again), loadV);
            } else if (!fa.isEmpty()) {
                // Judged beside the baseline run(s) made right after the fixed run(s); the first baseline bounds the
                // same
                // configuration's spread across runs: a fixed step inside it is not slower than "the baseline" on this
                // machine.
                List<String> first = slower;
                slower = notSlower(
                        fa,
                        true,
                        fa.size() == 1 ? "the baseline run beside it" : "the baseline runs beside them",
                        notes);
                band = band(fa);
                reg = compared(fa, vs, MachineLoad.of(again), loadV);
                if (!slower.isEmpty() && first.isEmpty()) {
                    notes.add("slower than the baseline run beside it (" + String.join("; ", slower)
                            + ") but not than the first baseline: "
                            + "inside the spread the baseline's own configuration showed across the two runs");
                    slower = List.of();
                }
            }
            lo = round(band[0], 4);
            hi = round(band[1], 4);
            reasons.addAll(slower);
            againstVariant = againstVariant(variants, fa, reasons, undecided, notes);
            if ("inconclusive".equals(reg.verdict()) && reasons.isEmpty() && undecided.isEmpty()) {
                notes.add("against the baseline the step time is inconclusive (" + reg.why()
                        + "): not slower by the rule; the fix rests on "
                        + (againstVariant != null && "improvement".equals(againstVariant.verdict())
                                ? "the variant's regression undone"
                                : "the path, the " + "configuration and the replicas being the baseline's"));
            }
        }
        boolean onlyStepTime = structural == 0 && (reasons.size() > structural || !undecided.isEmpty());
        String verdict = nothing != null
                ? FixVerification.NOTHING_TO_FIX
                : !reasons.isEmpty()
                        ? FixVerification.NOT_FIXED
                        : !undecided.isEmpty() ? FixVerification.INCONCLUSIVE : FixVerification.FIXED;
        List<String> why = new ArrayList<>(reasons);
        why.addAll(undecided);
        return new FixVerification(
                FixVerification.SCHEMA,
                b.runDir(),
                v.runDir(),
                verdict.equals(FixVerification.FIXED),
                equal,
                differences,
                c.verdict(),
                median,
                lo,
                hi,
                reg,
                why,
                variants == null || variants.isEmpty() ? null : variants.get(0).runDir(),
                againstVariant,
                onlyStepTime,
                notes,
                verdict);
    }

    /** The path layers whose value is not the baseline's, each also a reason the fix is not shown. */
    private List<Diagnosis.LayerDiff> pathDifferences(List<String> reasons) {
        List<Diagnosis.LayerDiff> differences = new ArrayList<>();
        for (Layer layer : Layer.PATH) {
            Fingerprint.Facet x = fb.path.get(layer);
            Fingerprint.Facet y = fv.path.get(layer);
            String vx = x == null ? null : x.value();
            String vy = y == null ? null : y.value();
            if (!Objects.equals(vx, vy)) {
                differences.add(new Diagnosis.LayerDiff(
                        layer,
                        vx == null ? "(no evidence)" : vx,
                        vy == null ? "(no evidence)" : vy,
                        true,
                        List.of(),
                        List.of()));
                reasons.add(layer + " differs from the baseline: " + (vx == null ? "(no evidence)" : vx) + " → "
                        + (vy == null ? "(no evidence)" : vy));
            }
        }
        return differences;
    }

    /**
     * Why there is nothing for a fix to undo, or null: the variant, diagnosed against the baseline as diagnose would, is
     * correct and shows no change of the job (no change, or a slower step the machine's load explains). A fixed run
     * that looks like the baseline then proves nothing; "FIXED" would claim a repair of a fault that never showed.
     * Where that diagnosis is inconclusive, no fix can be shown either, until more runs decide it ({@code undecided}).
     * Without the variant this cannot be told, and the fixed run is judged against the baseline alone.
     */
    private String nothingToFix(List<Evidence> variants, List<String> undecided) {
        if (variants == null || variants.isEmpty()) {
            return null;
        }
        Diagnosis d = new Diagnoser(bRuns, variants, rule).diagnose();
        variantDiagnosis = d;
        if ("inconclusive".equals(d.conclusion())) {
            undecided.add("the variant against the baseline is inconclusive ("
                    + d.regression().why() + "): whether there is a regression to "
                    + "undo is not decided, so no fixed run can show a fix yet");
            return null;
        }
        // Both conclusions come only with correct replicas and the baseline's configuration and path (see diagnose()).
        if (!"no change".equals(d.conclusion()) && !"confounded by machine load".equals(d.conclusion())) {
            return null;
        }
        return "nothing to fix: the variant did not regress against the baseline (diagnose: " + d.conclusion()
                + (d.regression().ratio() == null
                        ? ""
                        : String.format(
                                Locale.ROOT, ", step ratio %.3f", d.regression().ratio()))
                + "), so no fixed run can show that a fix undid anything";
    }

    /** The 5th and 95th percentile of the runs' steps, pooled. */
    private static double[] band(List<Fingerprint> fs) {
        double[] s = StepStats.concat(steps(fs));
        Arrays.sort(s);
        return new double[] {StepStats.quantile(s, 0.05), StepStats.quantile(s, 0.95)};
    }

    private Diagnosis.Regression compared(
            List<Fingerprint> base, List<Fingerprint> fixed, MachineLoad lb, MachineLoad lf) {
        return regression(
                StepStats.compare(steps(base), steps(fixed), rule),
                lb,
                lf,
                "median of per-iteration step times (slowest rank)");
    }

    /** The rule asks for time-adjacent pairs of runs (prove's sequence): drift is judged by pairs, not by bands. */
    private boolean paired() {
        return rule.pairs() > 1;
    }

    /**
     * Why the fixed runs' step is slower than {@code base}'s (empty when it is not): its median above the base's band
     * (a single pair's check: the steps of one run bound the other's; with the rule asking for pairs, the band moves
     * with the machine's drift and is left out), or a regression by the diagnose rule, {@code adjacent} when the i-th
     * base run was made next to the i-th fixed run. A median below the band is only noted. Emulated timings are never
     * judged.
     */
    private List<String> notSlower(List<Fingerprint> base, boolean adjacent, String what, List<String> notes) {
        List<String> out = new ArrayList<>();
        if (emulated()) {
            return out;
        }
        double[] band = band(base);
        double median = StepStats.median(StepStats.concat(steps(vs)));
        if (paired()) {
            band = new double[] {Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY};
        }
        if (median > band[1]) {
            out.add(String.format(
                    Locale.ROOT,
                    "step median %.3f ms is above %s's band %.3f..%.3f ms",
                    median,
                    what,
                    band[0],
                    band[1]));
        } else if (median < band[0]) {
            notes.add(String.format(
                    Locale.ROOT,
                    "step median %.3f ms is below %s's band %.3f..%.3f ms: faster than the baseline (the "
                            + "machine's load fell between the runs, or more than the fault was undone); not a failure of the fix",
                    median,
                    what,
                    band[0],
                    band[1]));
        }
        StepStats.Comparison r = adjacent
                ? StepStats.compare(steps(base), steps(vs), rule)
                : StepStats.compareUnpaired(steps(base), steps(vs), rule);
        if (r.regression()) {
            out.add(String.format(
                    Locale.ROOT,
                    "step time still regressed against %s: ratio %.4f (95%% CI %.4f..%.4f)",
                    what,
                    r.ratio(),
                    r.ciLow(),
                    r.ciHigh()));
        }
        return out;
    }

    /**
     * The fixed runs against the variant runs, for each regression the variant showed against the baseline (the pair
     * the diagnosis judged): its step time and, where it rose with the step, its compute outside communication. The fix
     * must make each clearly better than the variant (the diagnose rule's improvement), else it did not undo that
     * regression; where that comparison is inconclusive the fix is not yet shown ({@code undecided}). A load that fell
     * after the variant speeds the fixed run up as a fix would; that is why the fixed run is also judged beside a
     * baseline made under the same load (prove's A/B/A).
     */
    private Diagnosis.Regression againstVariant(
            List<Evidence> variants,
            List<Fingerprint> beside,
            List<String> reasons,
            List<String> undecided,
            List<String> notes) {
        if (variants == null
                || variants.isEmpty()
                || emulated()
                || variants.stream().anyMatch(Diagnoser::emulated)) {
            return null;
        }
        if (variantDiagnosis != null
                && variantDiagnosis.rootCause() != null
                && variantDiagnosis.rootCause().layer() == Layer.CORRECTNESS) {
            // The fault shown was the replicas diverging, not a step time: the fix undoes it when the fixed run's
            // replicas
            // agree (judged above). A step the variant lost meanwhile is the machine's drift or the fault's own small
            // cost,
            // and the fixed run is still held to a step not slower than the baseline beside it.
            notes.add(
                    "the variant's root cause is correctness (replicas diverged): the fix is judged on the replicas, the "
                            + "path and a step not slower than the baseline, not on the variant's step time");
            return null;
        }
        List<Fingerprint> fx = variants.stream().map(Fingerprint::new).toList();
        if (!any(steps(fx))) {
            notes.add("the variant has no step times: the fixed run is judged against the baseline alone");
            return null;
        }
        MachineLoad lx = MachineLoad.of(variants);
        StepStats.Comparison regressed = StepStats.compare(steps(bs), steps(fx), rule);
        // With pairs, each side against the baseline runs made next to it: the drift between the diagnosis and the fix
        // cancels in each pair, as it cannot in the fixed runs against variant runs made minutes earlier.
        boolean byPairs = paired() && !beside.isEmpty();
        StepStats.Comparison c = byPairs
                ? StepStats.compareRatios(steps(beside), steps(vs), steps(bs), steps(fx), rule)
                : StepStats.compareUnpaired(steps(fx), steps(vs), rule);
        Diagnosis.Regression r = regression(
                c,
                byPairs ? null : lx,
                byPairs ? null : loadV,
                (byPairs
                                ? "fixed against the variant, each over the "
                                        + "baseline runs made next to it: the ratio (fixed / baseline beside it) / (variant / baseline beside it)"
                                : "fixed against the variant: " + "median of per-iteration step times")
                        + "; the variant's regression is undone when the fixed run is an improvement on it (ratio <= "
                        + (1 - StepStats.MIN_EFFECT) + " and the rule's interval below 1)");
        StepStats.Comparison variantCompute =
                any(compute(bs)) && any(compute(fx)) ? StepStats.compare(compute(bs), compute(fx), rule) : null;
        boolean loadOnly = regressed.regression()
                && loadB != null
                && lx != null
                && new LoadComparison(
                                loadB,
                                lx,
                                StepStats.compare(loadB.stepsWithoutWait(), lx.stepsWithoutWait(), rule),
                                regressed.verdict(),
                                variantCompute,
                                jobCpu(loadB, lx, rule),
                                Math.abs(regressed.variantMedian() - regressed.baselineMedian()))
                        .explains();
        if (!regressed.regression()) {
            notes.add(String.format(
                    Locale.ROOT,
                    "the variant's step did not regress against the baseline (%s: %s): no step-time regression to "
                            + "undo, the fix is judged on the path, the replicas and a step not slower than the baseline",
                    ratio(regressed),
                    regressed.verdict()));
        } else if (loadOnly) {
            // As diagnose says of that pair: the machine, not the job, slowed the variant, so there is no job
            // regression to undo.
            notes.add(String.format(
                    Locale.ROOT,
                    "the variant's slower step against the baseline (%s) is confounded by machine load (the "
                            + "variant waited %.3f ms per step for a CPU, the baseline %.3f ms): no step-time regression of the job to undo",
                    ratio(regressed),
                    lx.runQueueMs(),
                    loadB.runQueueMs()));
        } else if (!c.improvement()) {
            String what = String.format(
                    Locale.ROOT,
                    "the fixed run's step median %.3f ms against the variant's %.3f ms (%s; %s interval %.3f..%.3f)",
                    c.variantMedian(),
                    c.baselineMedian(),
                    ratio(c),
                    pct(rule.level()),
                    c.ruleLow(),
                    c.ruleHigh());
            // Undecided against the variant but decidedly slower than the baseline: whatever the fixed run is, it kept
            // a
            // regression. Judged like with like: beside the baseline run(s) made right after the fixed run(s) where
            // there
            // are any; a load that rose since the first baseline slows the fixed run as a kept regression would.
            boolean stillSlower = (beside.isEmpty()
                            ? StepStats.compareUnpaired(steps(bs), steps(vs), rule)
                            : StepStats.compare(steps(beside), steps(vs), rule))
                    .regression();
            if (c.decided() || stillSlower) {
                reasons.add("the variant's regression is not undone: " + what + " is not clearly faster"
                        + (c.decided()
                                ? ""
                                : ", and the fixed run is still slower than the baseline"
                                        + (beside.isEmpty() ? "" : " run beside it")));
            } else {
                undecided.add("whether the variant's regression is undone is inconclusive: " + what + "; "
                        + undecided(c, c.stepsNeeded()));
            }
        }
        // As diagnose: a compute rise counts only with a step that rose with it (alone it is the load moving time
        // around),
        // or where diagnose named compute on its own rise with the step undecided (the step at least 2 % slower): the
        // fix of
        // that diagnosis must undo the compute it named.
        boolean computeNamed = !regressed.regression()
                && variantCompute != null
                && variantCompute.regression()
                && regressed.ratio() >= 1 + StepStats.MIN_EFFECT;
        if ((regressed.regression() && !loadOnly || computeNamed)
                && variantCompute != null
                && any(compute(vs))
                && variantCompute.regression()) {
            StepStats.Comparison k = byPairs
                    ? StepStats.compareRatios(compute(beside), compute(vs), compute(bs), compute(fx), rule)
                    : StepStats.compareUnpaired(compute(fx), compute(vs), rule);
            if (!k.improvement()) {
                String what = String.format(
                        Locale.ROOT,
                        "compute outside communication %.3f ms per step in the fixed run against the variant's "
                                + "%.3f ms (%s)",
                        k.variantMedian(),
                        k.baselineMedian(),
                        ratio(k));
                if (k.decided()) {
                    reasons.add("the variant's compute regression is not undone: " + what);
                } else {
                    undecided.add("whether the variant's compute regression is undone is inconclusive: " + what);
                }
            }
        }
        return r;
    }
}

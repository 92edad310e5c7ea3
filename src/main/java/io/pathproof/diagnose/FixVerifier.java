package io.pathproof.diagnose;

import static io.pathproof.diagnose.Diagnoser.any;
import static io.pathproof.diagnose.Diagnoser.describe;
import static io.pathproof.diagnose.Diagnoser.round;
import static io.pathproof.diagnose.Diagnoser.steps;

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
     * What a verification found, in three kinds: {@code reasons} the fix is not shown (it is "not fixed"),
     * {@code undecided} comparisons it rests on ("inconclusive"), and {@code notes} that change no verdict.
     */
    record Findings(List<String> reasons, List<String> undecided, List<String> notes) {
        Findings() {
            this(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        }
    }

    /** The step time as the verification judged it: against the baseline, the variant, and the fixed runs' band. */
    private record StepTime(
            Diagnosis.Regression regression,
            Diagnosis.Regression againstVariant,
            Double medianMs,
            Double bandLowMs,
            Double bandHighMs) {}

    /**
     * The fixed run(s) ({@code v} here) against the baseline(s), and against the variant(s) where given. What a fix must
     * show: the baseline's path and configuration, correct replicas, and on the step time (seed common error 14) that
     * the variant's regression is gone — the fixed runs clearly faster than the variant, by the diagnose rule, whenever
     * the variant regressed (a fix that undid nothing is never verified by noise that hides the fault), and not slower
     * than the baseline (no regression, median not above the baseline's band). A fixed run faster than the baseline's
     * band is no failure: the machine's load fell between the runs, or more than the fault was undone; it is noted.
     * A comparison the fix rests on that is inconclusive makes the verdict "inconclusive", never "fixed" — except the
     * step time of a variant whose root cause was compute, where that compute is decidedly undone beside the baseline
     * runs made next to the fixed runs ({@link VariantUndone}).
     */
    FixVerification verify(List<Evidence> variants, List<Evidence> again) {
        Findings found = new Findings();
        List<String> reasons = found.reasons();
        List<Diagnosis.LayerDiff> differences = pathDifferences(reasons);
        Diagnosis.Correctness c = correctness();
        reasons.addAll(notTheBaselines(c));
        String nothing = nothingToFix(variants, found.undecided());
        if (nothing != null) {
            reasons.add(nothing);
        }
        int structural = reasons.size();
        StepTime step = stepTime(variants, again, found);
        boolean onlyStepTime = structural == 0
                && (reasons.size() > structural || !found.undecided().isEmpty());
        String verdict = nothing != null
                ? FixVerification.NOTHING_TO_FIX
                : !reasons.isEmpty()
                        ? FixVerification.NOT_FIXED
                        : !found.undecided().isEmpty() ? FixVerification.INCONCLUSIVE : FixVerification.FIXED;
        List<String> why = new ArrayList<>(reasons);
        why.addAll(found.undecided());
        return new FixVerification(
                FixVerification.SCHEMA,
                b.runDir(),
                v.runDir(),
                verdict.equals(FixVerification.FIXED),
                differences.isEmpty(),
                differences,
                c.verdict(),
                step.medianMs(),
                step.bandLowMs(),
                step.bandHighMs(),
                step.regression(),
                why,
                variants == null || variants.isEmpty() ? null : variants.get(0).runDir(),
                step.againstVariant(),
                onlyStepTime,
                found.notes(),
                verdict);
    }

    /**
     * Why the fixed run is not the baseline's job again beside its path: a configuration that still differs (a fix of a
     * configuration root cause is checkable only if the configuration is the baseline's again), or replicas that
     * diverge or went unrecorded where the baseline recorded them.
     */
    private List<String> notTheBaselines(Diagnosis.Correctness c) {
        List<String> reasons = new ArrayList<>();
        List<ConfigDiff.Change> still = ConfigDiff.diff(b, v);
        if (!still.isEmpty()) {
            reasons.add("configuration still differs from the baseline: " + describe(still));
        }
        if (c.verdict() == Verdict.FAIL) {
            reasons.add("correctness: " + c.evidence());
        }
        if (fb.correctness.known() && vs.stream().anyMatch(f -> !f.correctness.known())) {
            reasons.add("correctness: the fixed run has no replica digests, the baseline had them");
        }
        return reasons;
    }

    /**
     * The fixed runs' step against the baseline and, where given, the variant. The fixed runs were made after the
     * diagnosis's baselines, apart in time: never paired with them.
     */
    private StepTime stepTime(List<Evidence> variants, List<Evidence> again, Findings found) {
        Diagnosis.Regression reg = emulated() || !any(steps(bs)) || !any(steps(vs))
                ? regression()
                : regression(
                        StepStats.compareUnpaired(steps(bs), steps(vs), rule),
                        loadB,
                        loadV,
                        "median of per-iteration step times (slowest rank)");
        if (!any(steps(bs)) || !any(steps(vs))) {
            found.reasons().add("step time: " + reg.rule());
            return new StepTime(reg, null, null, null, null);
        }
        Double median = round(StepStats.median(StepStats.concat(steps(vs))), 4);
        List<String> notes = found.notes();
        // Where the rule asks for pairs (prove), the fixed runs are judged only beside the baseline runs made next to
        // them: against the first baselines, made minutes before at another load, the machine's drift is in the step.
        List<String> slower = paired() ? List.of() : notSlower(bs, false, "the baseline", notes);
        double[] band = band(bs);
        List<Fingerprint> fa = again == null
                ? List.of()
                : again.stream()
                        .map(Fingerprint::new)
                        .filter(f -> f.steps.length > 0)
                        .toList();
        if (!fa.isEmpty()) {
            // Judged beside the baseline run(s) made right after the fixed run(s); without pairs, the first baseline
            // bounds the same configuration's spread across runs: a fixed step inside it is not slower than "the
            // baseline" on this machine.
            List<String> first = slower;
            slower = notSlower(
                    fa, true, fa.size() == 1 ? "the baseline run beside it" : "the baseline runs beside them", notes);
            band = band(fa);
            reg = compared(fa, vs, MachineLoad.of(again), loadV);
            if (!paired() && !slower.isEmpty() && first.isEmpty()) {
                notes.add("slower than the baseline run beside it (" + String.join("; ", slower)
                        + ") but not than the first baseline: "
                        + "inside the spread the baseline's own configuration showed across the two runs");
                slower = List.of();
            }
        }
        found.reasons().addAll(slower);
        Diagnosis.Regression againstVariant = againstVariant(variants, fa, found);
        if ("inconclusive".equals(reg.verdict())
                && found.reasons().isEmpty()
                && found.undecided().isEmpty()) {
            notes.add("against the baseline the step time is inconclusive (" + reg.why()
                    + "): not slower by the rule; the fix rests on "
                    + (againstVariant != null && "improvement".equals(againstVariant.verdict())
                            ? "the variant's regression undone"
                            : "the path, the " + "configuration and the replicas being the baseline's"));
        }
        return new StepTime(reg, againstVariant, median, round(band[0], 4), round(band[1], 4));
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
     * The fixed runs against the variant runs ({@link VariantUndone}), or null where there is no variant, where either
     * side's timings are emulated, where the variant's fault was the replicas, not a step time, and where the variant
     * has no step times.
     */
    private Diagnosis.Regression againstVariant(List<Evidence> variants, List<Fingerprint> beside, Findings found) {
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
            // replicas agree (judged above). A step the variant lost meanwhile is the machine's drift or the fault's
            // own
            // small cost, and the fixed run is still held to a step not slower than the baseline beside it.
            found.notes()
                    .add(
                            "the variant's root cause is correctness (replicas diverged): the fix is judged on the replicas, the "
                                    + "path and a step not slower than the baseline, not on the variant's step time");
            return null;
        }
        List<Fingerprint> fx = variants.stream().map(Fingerprint::new).toList();
        if (!any(steps(fx))) {
            found.notes().add("the variant has no step times: the fixed run is judged against the baseline alone");
            return null;
        }
        boolean computeNamed = variantDiagnosis != null
                && variantDiagnosis.rootCause() != null
                && variantDiagnosis.rootCause().layer() == Layer.COMPUTE;
        return new VariantUndone(d, fx, MachineLoad.of(variants), beside, computeNamed).judge(found);
    }
}

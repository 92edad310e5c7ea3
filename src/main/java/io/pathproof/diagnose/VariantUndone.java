package io.pathproof.diagnose;

import static io.pathproof.diagnose.Diagnoser.any;
import static io.pathproof.diagnose.Diagnoser.pct;
import static io.pathproof.diagnose.Diagnoser.ratio;
import static io.pathproof.diagnose.Diagnoser.steps;
import static io.pathproof.diagnose.Diagnoser.undecided;

import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;

/**
 * The fixed runs against the variant runs, for each regression the variant showed against the baseline (the pair the
 * diagnosis judged): its step time and, where it rose with the step, its compute outside communication. The fix must
 * make each clearly better than the variant (the diagnose rule's improvement), else it did not undo that regression;
 * where that comparison is inconclusive the fix is not yet shown ({@code undecided}). A load that fell after the
 * variant speeds the fixed run up as a fix would; that is why the fixed run is also judged beside a baseline made under
 * the same load (prove's A/B/A).
 */
final class VariantUndone {
    private final Diagnoser d;
    private final Diagnosis.Rule rule;
    /** The baseline runs the variant was diagnosed against. */
    private final List<Fingerprint> bs;
    /** The fixed runs. */
    private final List<Fingerprint> vs;
    /** The variant runs. */
    private final List<Fingerprint> fx;
    /** The baseline runs made beside the fixed runs; possibly none. */
    private final List<Fingerprint> beside;

    private final MachineLoad loadB;
    private final MachineLoad loadV;
    private final MachineLoad lx;
    /**
     * With pairs, each side against the baseline runs made next to it: the drift between the diagnosis and the fix
     * cancels in each pair, as it cannot in the fixed runs against variant runs made minutes earlier.
     */
    private final boolean byPairs;
    /** The variant's step against the baseline. */
    private final StepStats.Comparison regressed;
    /** The variant's compute outside communication against the baseline's; null where either has none. */
    private final StepStats.Comparison variantCompute;
    /** The one measure of compute all four kinds of run are compared on. */
    private final Fingerprint.ComputeKind kind;

    /** The variant's diagnosis named compute the root cause: the fix must undo that compute. */
    private final boolean computeNamed;

    VariantUndone(
            Diagnoser d,
            List<Fingerprint> variants,
            MachineLoad variantLoad,
            List<Fingerprint> beside,
            boolean computeNamed) {
        this.d = d;
        this.rule = d.rule;
        this.bs = d.bs;
        this.vs = d.vs;
        this.fx = variants;
        this.beside = beside;
        this.computeNamed = computeNamed;
        this.loadB = d.loadB;
        this.loadV = d.loadV;
        this.lx = variantLoad;
        this.byPairs = rule.pairs() > 1 && !beside.isEmpty();
        this.regressed = StepStats.compare(steps(bs), steps(fx), rule);
        this.kind = Fingerprint.ComputeKind.forRuns(
                Stream.of(bs, vs, variants, beside).flatMap(List::stream).toList());
        this.variantCompute =
                any(compute(bs)) && any(compute(fx)) ? StepStats.compare(compute(bs), compute(fx), rule) : null;
    }

    private List<double[]> compute(List<Fingerprint> runs) {
        return Diagnoser.compute(kind, runs);
    }

    /** The fixed runs' step against the variant's; what is not undone goes to {@code found}. */
    Diagnosis.Regression judge(FixVerifier.Findings found) {
        StepStats.Comparison c = byPairs
                ? StepStats.compareRatios(steps(beside), steps(vs), steps(bs), steps(fx), rule)
                : StepStats.compareUnpaired(steps(fx), steps(vs), rule);
        Diagnosis.Regression r = d.regression(
                c,
                byPairs ? null : lx,
                byPairs ? null : loadV,
                (byPairs
                                ? "fixed against the variant, each over the "
                                        + "baseline runs made next to it: the ratio (fixed / baseline beside it) / (variant / baseline beside it)"
                                : "fixed against the variant: " + "median of per-iteration step times")
                        + "; the variant's regression is undone when the fixed run is an improvement on it (ratio <= "
                        + (1 - StepStats.MIN_EFFECT) + " and the rule's interval below 1)");
        boolean loadOnly = loadOnly();
        StepStats.Comparison k = computeUndone(loadOnly, found);
        stepUndone(c, loadOnly, computeNamed && k != null && k.improvement() && computeBack() ? k : null, found);
        return r;
    }

    /**
     * The fixed runs' compute is back at the baseline's: beside the baseline runs made next to them (prove's A/B/A; a
     * baseline made at another time measures no drift), not decidedly above them and its ratio inside the margin.
     */
    private boolean computeBack() {
        if (!byPairs || !any(compute(beside))) {
            return false;
        }
        StepStats.Comparison k = StepStats.compare(compute(beside), compute(vs), rule);
        return !k.regression() && k.ratio() < 1 + rule.margin();
    }

    /** As diagnose says of that pair: the machine, not the job, slowed the variant. */
    private boolean loadOnly() {
        return regressed.regression()
                && loadB != null
                && lx != null
                && LoadComparison.of(
                                loadB,
                                lx,
                                regressed.verdict(),
                                variantCompute,
                                Math.abs(regressed.variantMedian() - regressed.baselineMedian()),
                                rule)
                        .explains();
    }

    /**
     * Whether the fixed run {@code c} is clearly faster than the variant, where the variant's step regressed. Where that
     * stays undecided but the compute the diagnosis named is decidedly undone ({@code causeUndone}) and the fixed runs
     * are not decidedly slower than the baseline, the fix is shown on its cause: on a machine whose load drifts between
     * runs the step, which holds the CPU-run AllReduce and every wait for a core, needs many more pairs than the
     * compute outside it (recorded beside two burners: fixed runs' forward 84..105 ms against the variants' 212..240
     * ms, their steps 226..336 ms against 412..493 ms, undecided over three pairs).
     */
    private void stepUndone(
            StepStats.Comparison c, boolean loadOnly, StepStats.Comparison causeUndone, FixVerifier.Findings found) {
        if (!regressed.regression()) {
            found.notes()
                    .add(String.format(
                            Locale.ROOT,
                            "the variant's step did not regress against the baseline (%s: %s): no step-time regression to "
                                    + "undo, the fix is judged on the path, the replicas and a step not slower than the baseline",
                            ratio(regressed),
                            regressed.verdict()));
        } else if (loadOnly) {
            // No job regression to undo.
            found.notes()
                    .add(String.format(
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
            // a regression. Judged like with like: beside the baseline run(s) made right after the fixed run(s) where
            // there are any; a load that rose since the first baseline slows the fixed run as a kept regression would.
            boolean stillSlower = (beside.isEmpty()
                            ? StepStats.compareUnpaired(steps(bs), steps(vs), rule)
                            : StepStats.compare(steps(beside), steps(vs), rule))
                    .regression();
            if (!c.decided() && !stillSlower && causeUndone != null) {
                found.notes()
                        .add("the step-time comparison is undecided at this noise (" + what + "), but the compute the "
                                + "diagnosis named is undone (" + kind.words + " " + ratio(causeUndone)
                                + " against the variant's) and the step is not slower than the baseline: the fix is "
                                + "shown on its cause");
            } else if (c.decided() || stillSlower) {
                found.reasons()
                        .add("the variant's regression is not undone: " + what + " is not clearly faster"
                                + (c.decided()
                                        ? ""
                                        : ", and the fixed run is still slower than the baseline"
                                                + (beside.isEmpty() ? "" : " run beside it")));
            } else {
                found.undecided()
                        .add("whether the variant's regression is undone is inconclusive: " + what + "; "
                                + undecided(c, c.stepsNeeded()));
            }
        }
    }

    /**
     * As diagnose: a compute rise counts only with a step that rose with it (alone it is the load moving time around),
     * or where diagnose named compute on its own rise with the step undecided (the step at least 2 % slower), or named
     * compute at all (the job's own time, which rose without the step): the fix of that diagnosis must undo the compute
     * it named.
     */
    private StepStats.Comparison computeUndone(boolean loadOnly, FixVerifier.Findings found) {
        boolean namedOnItsRise = !regressed.regression()
                && variantCompute != null
                && variantCompute.regression()
                && regressed.ratio() >= 1 + StepStats.MIN_EFFECT;
        if (!((regressed.regression() && !loadOnly || namedOnItsRise || computeNamed)
                && variantCompute != null
                && any(compute(vs))
                && variantCompute.regression())) {
            return null;
        }
        StepStats.Comparison k = byPairs
                ? StepStats.compareRatios(compute(beside), compute(vs), compute(bs), compute(fx), rule)
                : StepStats.compareUnpaired(compute(fx), compute(vs), rule);
        if (k.improvement()) {
            return k;
        }
        String what = String.format(
                Locale.ROOT,
                "%s %.3f ms per step in the fixed run against the variant's " + "%.3f ms (%s)",
                kind.words,
                k.variantMedian(),
                k.baselineMedian(),
                ratio(k));
        if (k.decided()) {
            found.reasons().add("the variant's compute regression is not undone: " + what);
        } else {
            found.undecided().add("whether the variant's compute regression is undone is inconclusive: " + what);
        }
        return k;
    }
}

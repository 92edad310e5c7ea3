package io.pathproof.prove;

import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.FixVerification;
import io.pathproof.evidence.Evidence;
import io.pathproof.proofdir.Proof.Look;
import java.util.ArrayList;
import java.util.List;

/**
 * prove's sequential extension. A comparison that is inconclusive is not settled by a longer run — a
 * user's job decides its own number of steps, prove can only run it again — but by more runs. On a shared machine
 * the load drifts between runs, so the run is the unit of replication and the runs are made in time-adjacent pairs,
 * each pair in the opposite order to the one before (ABBA: B V, V B, B V …), so that a load rising or falling steadily
 * slows each side of a pair in turn and cancels in their mean instead of reading as a change of the job:
 * <ul>
 *   <li>diagnosis: the baseline and the variant as pairs (B V | V B | B V …), diagnosed with the i-th runs of the two
 *       sides paired, up to {@code maxRuns} pairs;
 *   <li>fix verification: the fixed run first (what the path, the configuration and the replicas show needs no
 *       pair); where only the step time is left, a baseline run right after it, then pairs of the baseline run again
 *       and the fixed configuration in alternating order (F B' | B' F | F B' …), up to {@code maxRuns} pairs, each
 *       fixed run judged against the baseline run made next to it.
 * </ul>
 * The step-time rule asks for {@link Diagnosis.Rule#PROVE_PAIRS} pairs before any verdict (one pair cannot tell a
 * change from the machine's drift, two leave a t interval one degree of freedom) and puts an interval over the pairs.
 * The error rates hold across the looks by alpha spending over the looks that can decide (those with enough pairs):
 * each of K such looks judges with {@code alpha / K} (Bonferroni), so stopping at the first look that decides keeps a
 * false regression, improvement or no change at or below {@code alpha / 2} each, whatever look it stops at. A sequence
 * that ends undecided is reported inconclusive; prove never calls a fault diagnosed or a fix verified on it.
 */
final class Sequential {
    private Sequential() {}

    /** Makes one more run of a configuration: {@code role} (baseline, variant, fixed, baselineAgain) and its number. */
    interface Runs {
        Evidence run(String role, int number);
    }

    /** Told after each look. */
    interface Looks {
        void look(Look look);
    }

    /**
     * How a sequence runs: at most {@code maxRuns} pairs of runs, judged by {@code rule} (asking for prove's pairs),
     * another run made by {@code more}, each look told to {@code said} as it is made.
     */
    record Options(int maxRuns, Diagnosis.Rule rule, Runs more, Looks said) {
        /** The rule at the look made with {@code pairs} pairs, asking for prove's pairs. */
        Diagnosis.Rule ruleAt(int pairs) {
            return atPairs(paired(rule), pairs, maxRuns);
        }

        /** Keeps {@code look} among {@code looks} and tells it. */
        void record(List<Look> looks, Look look) {
            looks.add(look);
            said.look(look);
        }
    }

    /** One look, as the proof records it. */
    static Look look(String sequence, Diagnosis.Rule rule, Diagnosis.Regression r, String verdict) {
        // Steps to decide only where this look left something undecided (a fix verified on its variant comparison can
        // carry an undecided comparison beside the baseline; its steps would read as if the look were open).
        return new Look(
                sequence,
                rule.look(),
                rule.looks(),
                r.baselineRuns(),
                r.variantRuns(),
                verdict,
                r.ratio(),
                r.ruleLow(),
                r.ruleHigh(),
                r.level(),
                "inconclusive".equals(verdict) ? r.stepsNeeded() : null);
    }

    /** The diagnosis of the last look, the runs it pooled and every look made. */
    record Diagnosed(Diagnosis diagnosis, List<Evidence> baselines, List<Evidence> variants, List<Look> looks) {
        Diagnosed {
            baselines = List.copyOf(baselines);
            variants = List.copyOf(variants);
            looks = List.copyOf(looks);
        }

        boolean inconclusive() {
            return "inconclusive".equals(diagnosis.conclusion());
        }
    }

    /** The verification of the last look, the fixed and adjacent baseline runs it pooled, and every look. */
    record Verified(
            FixVerification verification, List<Evidence> fixed, List<Evidence> baselinesAgain, List<Look> looks) {
        Verified {
            fixed = List.copyOf(fixed);
            baselinesAgain = List.copyOf(baselinesAgain);
            looks = List.copyOf(looks);
        }
    }

    /** The rule prove judges with: {@code rule} asking for {@link Diagnosis.Rule#PROVE_PAIRS} time-adjacent pairs. */
    static Diagnosis.Rule paired(Diagnosis.Rule rule) {
        return rule.withPairs(Math.max(rule.pairs(), Diagnosis.Rule.PROVE_PAIRS));
    }

    /** The looks of a sequence of up to {@code maxPairs} pairs that can decide: those with at least the rule's pairs. */
    static int decidingLooks(Diagnosis.Rule rule, int maxPairs) {
        return Math.max(1, maxPairs - rule.pairs() + 1);
    }

    /** The rule at the look made with {@code pairs} pairs: looks with fewer than the rule's cannot decide, spend none. */
    static Diagnosis.Rule atPairs(Diagnosis.Rule rule, int pairs, int maxPairs) {
        int looks = decidingLooks(rule, maxPairs);
        return rule.at(Math.min(looks, Math.max(1, pairs - rule.pairs() + 1)), looks);
    }

    /**
     * Diagnoses {@code baseline} against {@code variant}; while the conclusion is inconclusive and fewer than
     * {@code maxRuns} pairs exist, makes another pair, in the order opposite to the last one's, and diagnoses all of them
     * paired.
     */
    static Diagnosed diagnose(Evidence baseline, Evidence variant, Options o) {
        Runs more = o.more();
        List<Evidence> bs = new ArrayList<>(List.of(baseline));
        List<Evidence> vs = new ArrayList<>(List.of(variant));
        List<Look> looks = new ArrayList<>();
        Diagnosis d = diagnoseAt(1, bs, vs, looks, o);
        for (int k = 2; k <= o.maxRuns() && "inconclusive".equals(d.conclusion()); k++) {
            if (k % 2 == 0) {
                vs.add(more.run("variant", k));
                bs.add(more.run("baseline", k));
            } else {
                bs.add(more.run("baseline", k));
                vs.add(more.run("variant", k));
            }
            d = diagnoseAt(k, bs, vs, looks, o);
        }
        return new Diagnosed(d, bs, vs, looks);
    }

    /** The diagnosis of the look made with {@code pairs} pairs, the look recorded. */
    private static Diagnosis diagnoseAt(
            int pairs, List<Evidence> baselines, List<Evidence> variants, List<Look> looks, Options o) {
        Diagnosis.Rule r = o.ruleAt(pairs);
        Diagnosis d = Diagnosis.diagnose(baselines, variants, r);
        o.record(looks, look("diagnosis", r, d.regression(), d.conclusion()));
        return d;
    }

    /**
     * Verifies {@code fixed} against the diagnosis's runs; while only the step time stands between it and "fixed" (not
     * fixed or inconclusive on the step time alone) and {@code extend} allows, makes the baseline run again right after
     * the fixed run, then further pairs of the baseline again and the fixed configuration in alternating order, each
     * look judging every fixed run beside the baseline run made next to it.
     */
    static Verified verify(Diagnosed dx, Evidence fixed, boolean extend, Options o) {
        Runs more = o.more();
        List<Evidence> fs = new ArrayList<>(List.of(fixed));
        List<Evidence> as = new ArrayList<>();
        List<Look> looks = new ArrayList<>();
        FixVerification fv = verifyAt(1, dx, fs, as, looks, o);
        for (int p = 1; p <= o.maxRuns() && extend && !fv.fixed() && fv.onlyStepTime(); p++) {
            if (p == 1) {
                as.add(more.run("baselineAgain", 1));
            } else if (p % 2 == 0) {
                as.add(more.run("baselineAgain", p));
                fs.add(more.run("fixed", p));
            } else {
                fs.add(more.run("fixed", p));
                as.add(more.run("baselineAgain", p));
            }
            fv = verifyAt(p, dx, fs, as, looks, o);
        }
        return new Verified(fv, fs, as, looks);
    }

    /** The fix verification of the look made with {@code pairs} pairs, the look recorded. */
    private static FixVerification verifyAt(
            int pairs, Diagnosed dx, List<Evidence> fixed, List<Evidence> baselinesAgain, List<Look> looks, Options o) {
        Diagnosis.Rule r = o.ruleAt(pairs);
        FixVerification fv = Diagnosis.verifyFix(dx.baselines(), dx.variants(), fixed, baselinesAgain, r);
        o.record(looks, look("fix", r, fv.regression(), fv.verdict()));
        return fv;
    }

    /**
     * "; 3 pairs of runs (look 1 of 1 that can decide)" where prove made more than one pair; the looks before the rule's
     * pairs cannot decide and are not counted among those that spend the error rate.
     */
    static String lookText(List<Look> looks) {
        Look l = looks.get(looks.size() - 1);
        return looks.size() == 1
                ? ""
                : "; " + Math.min(l.baselineRuns(), l.otherRuns()) + " pairs of runs (look " + l.look() + " of "
                        + l.looks() + " that can decide)";
    }

    /**
     * What would decide: the pairs of runs the steps needed come to (the step-time rule judges pairs of runs, so a longer
     * run does not stand in for another pair: the machine's drift between runs is measured only by more of them).
     */
    static String runsNeeded(Diagnosis.Regression r) {
        if (r.stepsNeeded() == null) {
            return "";
        }
        int perRun = Math.max(1, r.nBaseline() / Math.max(1, r.baselineRuns()));
        int runs = Math.max(Diagnosis.Rule.PROVE_PAIRS, (int) Math.ceil(r.stepsNeeded() / (double) perRun));
        return " (" + runs + " pairs of runs of " + perRun + " measured steps each; --max-runs " + runs
                + " lets prove make them)";
    }
}

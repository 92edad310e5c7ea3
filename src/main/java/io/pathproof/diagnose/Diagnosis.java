package io.pathproof.diagnose;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.pathproof.accept.Verdict;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A blind diagnosis of a variant run against a baseline run: correctness first, then the step-time effect with a
 * bootstrap interval, then the path fingerprint diff layer by layer, the elimination in that order, and a root cause
 * with its owner, the fix, mitigations that would not fix it and the re-run that proves the fix. Where the
 * configuration changed, a root cause needs the configuration diff, the path diff and the measured effect to agree
 * (seed: 唯一配置diff + path diff + effect); more than one changed variable is "confounded" (common error 11).
 *
 * <p>{@code conclusion} ∈ {@code root cause}, {@code confounded}, {@code confounded by machine load} (the variant waited
 * longer for a CPU and that wait explains the slower step), {@code no change}, {@code unexplained}, {@code unproven} (no
 * difference found, but step times missing). Layers ∈ correctness, ddp-buckets, algorithm, protocol, transport,
 * channels, threads, compute, configuration, ddp-config (DDP flags other than the bucket cap), machine-load, none; owners
 * ∈ PyTorch, NCCL host, NCCL device, CUDA+hardware, application. The public entry of the diagnose room is
 * {@link #diagnose} (and {@link #verifyFix}).
 */
public record Diagnosis(
        String schema,
        String baseline,
        String variant,
        String conclusion,
        Correctness correctness,
        Regression regression,
        List<LayerDiff> diffs,
        List<ConfigChange> configuration,
        List<Elimination> eliminated,
        List<Elimination> unexamined,
        RootCause rootCause,
        List<Candidate> candidates) {
    public static final String SCHEMA = "pathproof.diagnosis/1";

    /** A list a file of an older diagnose did not write reads as empty. */
    public Diagnosis {
        diffs = listOf(diffs);
        configuration = listOf(configuration);
        eliminated = listOf(eliminated);
        unexamined = listOf(unexamined);
        candidates = listOf(candidates);
    }

    private static <T> List<T> listOf(List<T> l) {
        return l == null ? List.of() : List.copyOf(l);
    }

    /** Correctness of the variant: PASS, FAIL or UNPROVEN, and why. */
    public record Correctness(Verdict verdict, String evidence) {}

    /**
     * Step time: ratio of medians variant/baseline with its 95 % bootstrap interval ({@code ciLow..ciHigh}, shown) and the
     * rule's interval at {@code level} ({@code ruleLow..ruleHigh}, decides); {@code verdict} is regression, improvement,
     * no change (the rule's interval inside 1 ± {@code margin}), inconclusive, or unknown (no step times, or emulated).
     * {@code detected} is true for a regression. The medians are each side's runs pooled ({@code baselineRuns},
     * {@code variantRuns}); {@code stepsNeeded}: for an inconclusive comparison, about how many steps per side would
     * decide at the observed noise; {@code why}: what left it inconclusive.
     */
    public record Regression(
            boolean detected,
            Double ratio,
            Double ciLow,
            Double ciHigh,
            String verdict,
            Double baselineMedianMs,
            Double variantMedianMs,
            int nBaseline,
            int nVariant,
            String rule,
            Double ruleLow,
            Double ruleHigh,
            Double level,
            Double margin,
            Integer stepsNeeded,
            int baselineRuns,
            int variantRuns,
            String why) {
        public Regression {
            if (!List.of("regression", "improvement", "no change", "inconclusive", "unknown")
                    .contains(verdict)) {
                throw new IllegalArgumentException("step-time verdict '" + verdict + "'");
            }
            if (detected != verdict.equals("regression")) {
                throw new IllegalArgumentException("step time: detected=" + detected + " but verdict " + verdict);
            }
        }

        /** No step-time judgement: {@code why} says what is missing (step times) or forbids it (emulated timings). */
        static Regression unknown(int nBaseline, int nVariant, String why) {
            return new Regression(
                    false, null, null, null, "unknown", null, null, nBaseline, nVariant, why, null, null, null, null,
                    null, 0, 0, why);
        }
    }

    /**
     * The step-time rule: regression or improvement when the ratio of medians is at least 2 % from 1 and
     * the rule's interval excludes 1; no change only when that interval lies inside 1 ± {@code margin} (the equivalence
     * margin: a change smaller than this is not worth a reader's attention, default {@value #MARGIN}); otherwise
     * inconclusive. {@code alpha} is the error rate of the whole sequence of looks (two-sided; half of it for each of a
     * false regression, a false improvement and a false "no change"), spent evenly over {@code looks} planned looks
     * (Bonferroni alpha spending: look {@code look} uses {@code alpha / looks}), so a caller that adds runs and looks
     * again until one look decides keeps those error rates whatever look it stops at. One look: the 99 % interval.
     *
     * <p>{@code pairs}: the fewest time-adjacent pairs of runs (a baseline run and the other side's run made next to it)
     * a verdict may rest on. One run per side holds the steps' noise but nothing of how far the machine moves between
     * two runs; with several runs per side the unit is the run ({@link StepStats}), and a rule of {@code pairs} ≥ 2
     * leaves every comparison with fewer pairs inconclusive. 1 (the default) judges a single pair on its steps, as
     * {@code diagnose A B} always did; prove asks for {@value #PROVE_PAIRS}.
     */
    public record Rule(double margin, double alpha, int look, int looks, int pairs) {
        public static final double MARGIN = 0.05;
        public static final double ALPHA = 0.01;
        /** prove's: the fewest pairs whose spread a t interval can use at prove's error rates (2 would leave 1 df). */
        public static final int PROVE_PAIRS = 3;

        public static final Rule DEFAULT = new Rule(MARGIN, ALPHA, 1, 1, 1);

        public Rule {
            if (!(margin > 0 && margin < 0.5)) {
                throw PathproofException.usage(String.format(
                        Locale.ROOT,
                        "--margin: the equivalence margin must lie between 0 and 50 %%, got %s %%",
                        Diagnoser.pct(margin).replace(" %", "")));
            }
            if (!(alpha > 0 && alpha < 0.5) || looks < 1 || look < 1 || look > looks || pairs < 1) {
                throw new IllegalArgumentException(
                        "step-time rule: alpha " + alpha + ", look " + look + " of " + looks + ", pairs " + pairs);
            }
        }

        /** A single pair judged on its steps ({@code pairs} 1). */
        public Rule(double margin, double alpha, int look, int looks) {
            this(margin, alpha, look, looks, 1);
        }

        /** One look with margin {@code margin} (a fraction: 0.05 for 5 %). */
        public static Rule withMargin(double margin) {
            return new Rule(margin, ALPHA, 1, 1, 1);
        }

        /** The same rule at look {@code look} of {@code looks} planned. */
        public Rule at(int look, int looks) {
            return new Rule(margin, alpha, look, looks, pairs);
        }

        /** The same rule asking for at least {@code pairs} time-adjacent pairs of runs before a verdict. */
        public Rule withPairs(int pairs) {
            return new Rule(margin, alpha, look, looks, pairs);
        }

        /** The error rate this look may spend. */
        public double lookAlpha() {
            return alpha / looks;
        }

        /** The confidence level of this look's interval. */
        public double level() {
            return 1 - lookAlpha();
        }

        /** The rule in one sentence, as every output states it. */
        public String describe() {
            return "regression (or improvement) when the ratio is >= " + Diagnoser.pct(StepStats.MIN_EFFECT)
                    + " from 1 and the " + Diagnoser.pct(level())
                    + " interval excludes 1; no change only when that interval lies inside ±" + Diagnoser.pct(margin)
                    + " (the equivalence margin); otherwise inconclusive; one run per side: a bootstrap of its steps; several: the run is the "
                    + "unit, the i-th runs of the two sides a time-adjacent pair, the interval over the pairs' ratios (Student t)"
                    + (pairs == 1
                            ? ""
                            : "; at least " + pairs
                                    + " pairs before a verdict (one pair cannot tell the change from the machine's drift)")
                    + (looks == 1
                            ? ""
                            : "; look " + look + " of " + looks
                                    + ", each look spending " + Diagnoser.pct(alpha) + "/" + looks
                                    + " of the error rate (Bonferroni alpha spending), so a false "
                                    + "regression, improvement or no change stays below " + Diagnoser.pct(alpha / 2)
                                    + " each over all looks");
        }
    }

    /**
     * A run's step times, defined once for every figure pathproof shows: per measured iteration, the slowest rank's time
     * (a synchronous DDP step ends when its slowest rank does). {@code median} is "the run's median" wherever a run's
     * median appears (diagnose, verify-fix, the report's tables, charts and text); {@code ciLow..ciHigh} its 95 %
     * bootstrap interval (seeded), {@code p5..p95} the band verify-fix judges a fixed run against. Over several runs,
     * the runs pooled. Null statistics where the run has no step times.
     */
    public record StepTimes(
            List<Double> perIteration,
            int n,
            int runs,
            Double median,
            Double ciLow,
            Double ciHigh,
            Double p5,
            Double p95) {
        public StepTimes {
            perIteration = List.copyOf(perIteration);
        }
    }

    /** The step times of one run ({@link StepTimes}). */
    public static StepTimes stepTimes(Evidence run) {
        return stepTimes(List.of(run));
    }

    /** The step times of the runs of one configuration, pooled. */
    public static StepTimes stepTimes(List<Evidence> runs) {
        List<double[]> per = runs.stream().map(StepStats::stepTimes).toList();
        double[] all = StepStats.concat(per);
        List<Double> list = Arrays.stream(all).boxed().toList();
        if (all.length == 0) {
            return new StepTimes(list, 0, runs.size(), null, null, null, null, null);
        }
        double[] ci = StepStats.medianInterval(per);
        double[] sorted = all.clone();
        Arrays.sort(sorted);
        return new StepTimes(
                list,
                all.length,
                runs.size(),
                StepStats.median(all.clone()),
                ci[0],
                ci[1],
                StepStats.quantile(sorted, 0.05),
                StepStats.quantile(sorted, 0.95));
    }

    /** One layer of the fingerprint in both runs. */
    public record LayerDiff(
            Layer layer,
            String baseline,
            String variant,
            boolean changed,
            List<EvidenceKind> evidence,
            List<String> provenance) {}

    /** One configuration fact that differs. */
    public record ConfigChange(
            String key, String baseline, String variant, String variable, Layer layer, List<EvidenceKind> evidence) {}

    /** A layer excluded (or left unexamined) and the evidence for it. */
    public record Elimination(Layer layer, String evidence) {}

    /** The root cause. */
    public record RootCause(
            Layer layer,
            String owner,
            String change,
            List<String> evidence,
            String fix,
            List<String> wrongMitigations,
            String rerun) {}

    /** One candidate of a confounded (or unexplained) diagnosis. */
    public record Candidate(String variable, Layer layer, String change, boolean pathAgrees) {}

    /**
     * Diagnoses {@code variant} against {@code baseline}; never reads the harness's fault-knob record. Refuses (exit 3)
     * a run whose per-rank evidence is not whole ({@link Evidence#integrity()}): a step time, a layout or a digest with
     * a rank's records cut short or missing is the story of some of the ranks, and a blind diagnosis would tell it as
     * the job's.
     */
    public static Diagnosis diagnose(Evidence baseline, Evidence variant) {
        return diagnose(List.of(baseline), List.of(variant), Rule.DEFAULT);
    }

    /**
     * As {@link #diagnose(Evidence, Evidence)} with each side given as the runs of one configuration, pooled like with
     * like (a run with another configuration or path than its side's first is refused, exit 2), judged by {@code rule}.
     */
    public static Diagnosis diagnose(List<Evidence> baselines, List<Evidence> variants, Rule rule) {
        given(baselines, "baseline");
        given(variants, "variant");
        Diagnoser.alike(baselines, "baseline");
        Diagnoser.alike(variants, "variant");
        return new Diagnoser(baselines, variants, rule).diagnose();
    }

    private static void given(List<Evidence> runs, String role) {
        if (runs == null || runs.isEmpty()) {
            throw PathproofException.usage("no " + role + " run given");
        }
        runs.forEach(e -> whole(e, role));
    }

    /** Throws, naming the first gap's file and line, when a run's per-rank evidence has a gap. */
    static void whole(Evidence e, String role) {
        if (e == null || e.integrity() == null || e.integrity().complete()) {
            return;
        }
        List<Evidence.Gap> gaps = e.integrity().gaps();
        Evidence.Gap g = gaps.get(0);
        throw PathproofException.badInput(g.where() + ": " + g.problem() + " ("
                + (g.rank() < 0 ? "" : "rank " + g.rank() + "'s ")
                + g.kind() + (gaps.size() > 1 ? "; " + (gaps.size() - 1) + " more gap(s)" : "")
                + "; pathproof accept --run " + e.runDir()
                + " lists every gap): the " + role + "'s evidence is incomplete, and a diagnosis needs every rank's");
    }

    /**
     * Checks a fixed run against the baseline (seed common error 14: re-run the same acceptance): the path
     * fingerprint and configuration equal the baseline's, the replicas are correct and the step is not slower than the
     * baseline's. Without the variant nothing shows that the fix undid a step-time regression; prefer
     * {@link #verifyFix(Evidence, Evidence, Evidence)}.
     */
    public static FixVerification verifyFix(Evidence baseline, Evidence fixed) {
        return verifyFix(List.of(baseline), List.of(), List.of(fixed), List.of(), Rule.DEFAULT);
    }

    /**
     * As {@link #verifyFix(Evidence, Evidence)}, and where the variant's step regressed against the baseline, the fixed
     * run must also be clearly faster than the variant: the regression is gone, not hidden by noise.
     */
    public static FixVerification verifyFix(Evidence baseline, Evidence variant, Evidence fixed) {
        return verifyFix(
                List.of(baseline),
                variant == null ? List.of() : List.of(variant),
                List.of(fixed),
                List.of(),
                Rule.DEFAULT);
    }

    /**
     * Like with like on a machine whose load drifts (prove's A/B/A): {@code baseline} is the run the variant was
     * diagnosed against, {@code baselineAgain} the same configuration run right after the fixed run. The variant's
     * regression is judged on its own pair; the fixed run's step beside {@code baselineAgain}, and a step slower than
     * that one but not than {@code baseline} lies inside the baseline configuration's own spread across runs.
     */
    public static FixVerification verifyFix(
            Evidence baseline, Evidence variant, Evidence fixed, Evidence baselineAgain) {
        return verifyFix(List.of(baseline), List.of(variant), List.of(fixed), List.of(baselineAgain), Rule.DEFAULT);
    }

    /**
     * The general form: each role as the runs of one configuration (pooled like with like), {@code variants} and
     * {@code baselinesAgain} possibly empty, judged by {@code rule} (a look of prove's sequence). The verdict is
     * "inconclusive" where a comparison the fix rests on is undecided: more runs may decide it.
     */
    public static FixVerification verifyFix(
            List<Evidence> baselines,
            List<Evidence> variants,
            List<Evidence> fixed,
            List<Evidence> baselinesAgain,
            Rule rule) {
        given(baselines, "baseline");
        given(fixed, "fixed run");
        variants.forEach(e -> whole(e, "variant"));
        baselinesAgain.forEach(e -> whole(e, "baseline run again"));
        Diagnoser.alike(baselines, "baseline");
        Diagnoser.alike(variants, "variant");
        Diagnoser.alike(fixed, "fixed");
        Diagnoser.alike(baselinesAgain, "baseline-again");
        return new Diagnoser(baselines, fixed, rule).verifyFix(variants, baselinesAgain);
    }

    /**
     * Adaptive iterations where pathproof runs both baseline and variant (prove): call after each look with all step
     * times so far (slowest rank per iteration) and the number of planned looks; "regression", "no regression" (a
     * slowdown of {@code effect} or more is excluded) or "undecided" (run more iterations, interleaved, up to the cap).
     * Stopping at the first decided look keeps A/A false alarms at ≤ 1 % (the looks share that rate).
     */
    public static String decideSteps(double[] baseline, double[] variant, int looks, double effect) {
        if (baseline.length == 0 || variant.length == 0) {
            return "undecided";
        }
        return StepStats.sequential(baseline, variant, looks, effect);
    }

    /** True when nothing is wrong: no regression, correctness not failed, no path change. */
    public boolean clean() {
        return !regression.detected() && correctness.verdict() != Verdict.FAIL && "no change".equals(conclusion);
    }

    public static String render(Diagnosis d, String format) {
        return switch (format == null ? "table" : format.toLowerCase(Locale.ROOT)) {
            case "table", "text" -> DiagnosisFormat.text(d);
            case "json" -> json(d);
            case "markdown", "md" -> DiagnosisFormat.markdown(d);
            default -> throw new IllegalArgumentException("unknown format '" + format + "' (table, json, markdown)");
        };
    }

    public static String render(FixVerification f, String format) {
        return switch (format == null ? "table" : format.toLowerCase(Locale.ROOT)) {
            case "table", "text" -> DiagnosisFormat.text(f);
            case "json" -> json(f);
            case "markdown", "md" -> DiagnosisFormat.markdown(f);
            default -> throw new IllegalArgumentException("unknown format '" + format + "' (table, json, markdown)");
        };
    }

    static String json(Object o) {
        try {
            return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(o) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}

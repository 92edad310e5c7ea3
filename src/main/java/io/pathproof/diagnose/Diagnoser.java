package io.pathproof.diagnose;

import io.pathproof.accept.Verdict;
import io.pathproof.core.PathproofException;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;

/**
 * The diagnosis procedure (seed, 回归根因推理): correctness, effect, fingerprint diff, elimination, root cause. Each side
 * may be several runs of one configuration (prove's extension, or {@code diagnose --baseline A --baseline B …}): the
 * structure is read from each side's first run and must be the same in the others (like with like); the measurements
 * are compared run by run, the i-th runs of the two sides a time-adjacent pair ({@link StepStats}).
 */
final class Diagnoser {
    /** Parameter samples of two runs agree when within this relative distance (summation order alone moves ~1e-7). */
    static final double NUMERICS_RTOL = 1e-3;

    final Evidence b;
    final Evidence v;
    final List<Evidence> bRuns;
    final List<Evidence> vRuns;
    final Fingerprint fb;
    final Fingerprint fv;
    final List<Fingerprint> bs;
    final List<Fingerprint> vs;
    /** Each side's load with its runs pooled; null where a run recorded none. */
    final MachineLoad loadB;

    final MachineLoad loadV;
    final Diagnosis.Rule rule;
    /** The one measure of compute both sides are compared on. */
    final Fingerprint.ComputeKind computeKind;

    Diagnoser(Evidence baseline, Evidence variant) {
        this(List.of(baseline), List.of(variant), Diagnosis.Rule.DEFAULT);
    }

    Diagnoser(List<Evidence> baselines, List<Evidence> variants, Diagnosis.Rule rule) {
        this.bRuns = List.copyOf(baselines);
        this.vRuns = List.copyOf(variants);
        this.b = bRuns.get(0);
        this.v = vRuns.get(0);
        this.bs = bRuns.stream().map(Fingerprint::new).toList();
        this.vs = vRuns.stream().map(Fingerprint::new).toList();
        this.fb = bs.get(0);
        this.fv = vs.get(0);
        this.loadB = MachineLoad.of(bRuns);
        this.loadV = MachineLoad.of(vRuns);
        this.rule = Objects.requireNonNull(rule, "rule");
        this.computeKind = Fingerprint.ComputeKind.forRuns(
                Stream.concat(bs.stream(), vs.stream()).toList());
    }

    /**
     * Refuses to pool runs that are not of one configuration: each run of a side must have the first run's configuration
     * (ConfigDiff finds no change) and path fingerprint. Pooling a run with another configuration would average two
     * different jobs and call it one.
     */
    static void alike(List<Evidence> runs, String role) {
        if (runs.size() < 2) {
            return;
        }
        Fingerprint first = new Fingerprint(runs.get(0));
        for (int i = 1; i < runs.size(); i++) {
            List<ConfigDiff.Change> changes = ConfigDiff.diff(runs.get(0), runs.get(i));
            Fingerprint f = new Fingerprint(runs.get(i));
            List<String> differ = new ArrayList<>();
            if (!changes.isEmpty()) {
                differ.add("configuration " + describe(changes));
            }
            for (Layer layer : Layer.PATH) {
                String x = first.path.get(layer) == null
                        ? null
                        : first.path.get(layer).value();
                String y = f.path.get(layer) == null ? null : f.path.get(layer).value();
                if (!Objects.equals(x, y)) {
                    differ.add(layer + " " + x + " → " + y);
                }
            }
            if (!differ.isEmpty()) {
                throw PathproofException.usage("the " + role + " runs "
                        + runs.get(0).runDir() + " and " + runs.get(i).runDir() + " are not like with like ("
                        + String.join("; ", differ) + "): pool only runs of one configuration");
            }
        }
    }

    static List<double[]> steps(List<Fingerprint> fs) {
        return fs.stream().map(f -> f.steps).toList();
    }

    List<double[]> compute(List<Fingerprint> fs) {
        return compute(computeKind, fs);
    }

    static List<double[]> compute(Fingerprint.ComputeKind kind, List<Fingerprint> fs) {
        return fs.stream().map(kind::of).toList();
    }

    static boolean any(List<double[]> runs) {
        return runs.stream().anyMatch(a -> a.length > 0);
    }

    // ------------------------------------------------------------------ parts
    /**
     * The variant's correctness; with several variant runs, every one is judged and the worst wins (a FAIL in any run is
     * the variant's FAIL, named by its run).
     */
    Diagnosis.Correctness correctness() {
        Diagnosis.Correctness first = correctness(fv);
        if (vs.size() == 1) {
            return first;
        }
        Diagnosis.Correctness unproven = null;
        for (Fingerprint f : vs) {
            Diagnosis.Correctness c = correctness(f);
            if (c.verdict() == Verdict.FAIL) {
                return new Diagnosis.Correctness(Verdict.FAIL, f.e.runDir() + ": " + c.evidence());
            }
            if (c.verdict() == Verdict.UNPROVEN && unproven == null) {
                unproven = new Diagnosis.Correctness(Verdict.UNPROVEN, f.e.runDir() + ": " + c.evidence());
            }
        }
        return unproven != null ? unproven : first;
    }

    private Diagnosis.Correctness correctness(Fingerprint variant) {
        Fingerprint.Correctness c = variant.correctness;
        if (!c.known()) {
            return new Diagnosis.Correctness(Verdict.UNPROVEN, "the variant has no replica digests");
        }
        Evidence.GradientGroups grads =
                variant.e.replicas() == null ? null : variant.e.replicas().averagedGradients();
        if (!c.broken() && grads != null && grads.differ()) {
            // Equal parameters cannot show it where the job ends before its optimizer steps: DDP's averaged gradients
            // are equal on every rank, or its synchronization failed.
            return new Diagnosis.Correctness(
                    Verdict.FAIL,
                    "the gradients DDP averaged in iteration " + grads.iteration() + " differ between ranks ("
                            + grads.groups().size() + " distinct digests, " + c.source() + "), though the parameters"
                            + " are equal");
        }
        if (c.broken()) {
            List<Integer> minority = c.minorityRanks();
            return new Diagnosis.Correctness(
                    Verdict.FAIL,
                    "replicas differ after training: rank(s) " + minority + " end with other parameters than "
                            + "the rest (" + c.digestGroups().size() + " distinct digests, " + c.source() + ")");
        }
        List<Double> sb = fb.correctness.samples();
        List<Double> sv = c.samples();
        // Another run ends on the same parameters only if it did the same arithmetic in the same order. A changed
        // bucket
        // layout, algorithm, protocol, transport, channel count or launch reorders the floating-point sums of the
        // AllReduce (not associative), and training amplifies that: then the samples of two runs are no evidence.
        List<Layer> reordered = pathDiffs().stream()
                .filter(Diagnosis.LayerDiff::changed)
                .map(Diagnosis.LayerDiff::layer)
                .toList();
        if (!reordered.isEmpty() && !sb.equals(sv)) {
            return samplesNoEvidence(
                    c,
                    "the reduction path changed (" + Layer.joined(reordered)
                            + "), which reorders the AllReduce's floating-point sums");
        }
        // Two runs of the baseline's own configuration that end on different parameters: this job is not bitwise
        // reproducible across runs (nondeterministic kernels, such as atomics in a GPU backward, or data that is not
        // seeded), so another run's samples cannot show a wrong gradient; the replicas within each run still can.
        String unsteady = unreproducible();
        if (unsteady != null && !sb.equals(sv)) {
            return samplesNoEvidence(c, unsteady);
        }
        if (!sb.isEmpty() && sb.size() == sv.size()) {
            for (int i = 0; i < sb.size(); i++) {
                double x = sb.get(i);
                double y = sv.get(i);
                if (differs(x, y)) {
                    return new Diagnosis.Correctness(
                            Verdict.FAIL,
                            "replicas agree with each other but parameter sample " + i + " is " + y + " against " + x
                                    + " in the baseline: every rank applied a wrong gradient (" + c.source() + ")");
                }
            }
        }
        return new Diagnosis.Correctness(
                Verdict.PASS,
                replicasEqual(c) + (sb.isEmpty() ? "" : " and parameter samples agree with the baseline") + " ("
                        + c.source() + ")");
    }

    private static String replicasEqual(Fingerprint.Correctness c) {
        return "replicas equal on "
                + c.digestGroups().values().stream().mapToInt(List::size).sum() + " rank(s)";
    }

    /** Replicas agree within the run; the samples differ from the baseline's for a reason that is not a fault. */
    private static Diagnosis.Correctness samplesNoEvidence(Fingerprint.Correctness c, String because) {
        return new Diagnosis.Correctness(
                Verdict.PASS,
                replicasEqual(c) + "; the parameter samples differ from the baseline's, but " + because
                        + ": no evidence of a wrong gradient (" + c.source() + ")");
    }

    private static boolean differs(double x, double y) {
        return Double.isNaN(y) != Double.isNaN(x)
                || Math.abs(x - y) > NUMERICS_RTOL * Math.max(Math.abs(x), Math.abs(y)) + 1e-6;
    }

    /** Why the baseline's runs show the job does not end on the same parameters twice, or null. */
    private String unreproducible() {
        List<Double> first = fb.correctness.samples();
        for (int r = 1; r < bs.size(); r++) {
            List<Double> other = bs.get(r).correctness.samples();
            if (first.isEmpty() || other.size() != first.size()) {
                continue;
            }
            for (int i = 0; i < first.size(); i++) {
                if (differs(first.get(i), other.get(i))) {
                    return "two runs of the baseline already end apart (sample " + i + ": " + first.get(i) + " and "
                            + other.get(i) + "), so this job does not end on the same parameters twice";
                }
            }
        }
        return null;
    }

    /** Either run was made under the NCCL emulator (manifest {@code emulation.emulated}): decisions real, timings not. */
    boolean emulated() {
        return emulated(b) || emulated(v);
    }

    static boolean emulated(Evidence e) {
        return e.manifest() != null
                && e.manifest().path("emulation").path("emulated").asBoolean(false);
    }

    static final String EMULATED_RULE =
            "emulated: NCCL decisions real, timings not physical: the step-time effect cannot be judged "
                    + "under emulation";

    Diagnosis.Regression regression() {
        if (emulated()) {
            // Never claim a step-time regression (or its absence) from emulated timings.
            return Diagnosis.Regression.unknown(fb.steps.length, fv.steps.length, EMULATED_RULE);
        }
        if (!any(steps(bs)) || !any(steps(vs))) {
            return Diagnosis.Regression.unknown(
                    fb.steps.length,
                    fv.steps.length,
                    "no step times on " + (!any(steps(bs)) ? "the baseline" : "the variant"));
        }
        return regression(
                StepStats.compare(steps(bs), steps(vs), rule),
                loadB,
                loadV,
                "median of per-iteration step times (slowest rank)");
    }

    /**
     * A comparison as the public record, with the rule in words. A "no change" is kept only where the load cannot have
     * made it: steps that waited for a CPU are evidence of load, not of the code, so when the steps with each rank's
     * run-queue wait taken out changed decidedly while the whole steps look equal, the equality is the machine's (the
     * calmer run hid a change of the job behind less waiting, as a sleeping variant frees the CPUs its peers wait for)
     * and the comparison is inconclusive.
     */
    Diagnosis.Regression regression(StepStats.Comparison c, MachineLoad lb, MachineLoad lv, String what) {
        String verdict = c.verdict();
        String why = null;
        Integer needed = c.stepsNeeded();
        if ("no change".equals(verdict) && lb != null && lv != null) {
            StepStats.Comparison ww = StepStats.compare(lb.stepsWithoutWait(), lv.stepsWithoutWait(), rule);
            if (ww.regression() || ww.improvement()) {
                verdict = "inconclusive";
                why = String.format(
                        Locale.ROOT,
                        "the whole steps look alike, but without each rank's run-queue wait the step %s (%s): the runs waited "
                                + "for a CPU %.3f and %.3f ms per step, so the machine's load, not the job, may have evened them out",
                        ww.regression() ? "regressed" : "improved",
                        ratio(ww),
                        lb.jobWaitMs(),
                        lv.jobWaitMs());
                needed = null;
            }
        }
        if ("inconclusive".equals(verdict) && why == null) {
            why = undecided(c, needed);
        }
        return new Diagnosis.Regression(
                "regression".equals(verdict),
                round(c.ratio(), 4),
                round(c.ciLow(), 4),
                round(c.ciHigh(), 4),
                verdict,
                round(c.baselineMedian(), 4),
                round(c.variantMedian(), 4),
                c.nBaseline(),
                c.nVariant(),
                what + "; " + rule.describe(),
                round(c.ruleLow(), 4),
                round(c.ruleHigh(), 4),
                rule.level(),
                rule.margin(),
                needed,
                c.runsBaseline(),
                c.runsVariant(),
                why);
    }

    /** Why a comparison is undecided, and what would decide it: more steps for one pair, more pairs of runs otherwise. */
    static String undecided(StepStats.Comparison c, Integer needed) {
        Diagnosis.Rule rule = c.rule();
        int perRun = c.stepsPerRun();
        String more = needed == null
                ? ""
                : !c.runLevel() && rule.pairs() == 1
                        ? String.format(
                                Locale.ROOT,
                                "; about %d steps per side would decide at this noise (%d and %d now)",
                                needed,
                                c.nBaseline(),
                                c.nVariant())
                        : String.format(
                                Locale.ROOT,
                                "; about %d time-adjacent pairs of runs (%d steps per side) would decide at this spread (%d now)",
                                (needed + perRun - 1) / perRun,
                                needed,
                                c.units());
        if (!c.enoughPairs()) {
            return String.format(
                            Locale.ROOT,
                            "%d time-adjacent pair(s) of runs, and the rule asks for %d before a verdict: one pair cannot tell a "
                                    + "change of the job from the machine's drift between two runs (its %s interval %.3f..%.3f holds the steps' noise only)",
                            c.units(),
                            rule.pairs(),
                            pct(rule.level()),
                            c.ruleLow(),
                            c.ruleHigh())
                    + more;
        }
        return String.format(
                        Locale.ROOT,
                        "the %s interval %.3f..%.3f neither excludes 1 nor lies inside ±%s",
                        pct(rule.level()),
                        c.ruleLow(),
                        c.ruleHigh(),
                        pct(rule.margin()))
                + (c.runLevel()
                        ? String.format(
                                Locale.ROOT,
                                " (over %d unit(s) of runs, the spread between " + "them measured)",
                                c.units())
                        : "")
                + more;
    }

    static String pct(double x) {
        String s = String.format(Locale.ROOT, "%.2f", x * 100);
        s = s.contains(".") ? s.replaceAll("0+$", "").replaceAll("\\.$", "") : s;
        return s + " %";
    }

    static Double round(double x, int digits) {
        double f = Math.pow(10, digits);
        return Math.round(x * f) / f;
    }

    List<Diagnosis.LayerDiff> pathDiffs() {
        List<Diagnosis.LayerDiff> out = new ArrayList<>();
        for (Layer layer : Layer.PATH) {
            Fingerprint.Facet x = fb.path.get(layer);
            Fingerprint.Facet y = fv.path.get(layer);
            if (x == null && y == null) {
                continue;
            }
            List<EvidenceKind> kinds = new ArrayList<>();
            List<String> prov = new ArrayList<>();
            for (Fingerprint.Facet f : new Fingerprint.Facet[] {x, y}) {
                if (f != null) {
                    f.kinds().forEach(k -> {
                        if (!kinds.contains(k)) {
                            kinds.add(k);
                        }
                    });
                    prov.addAll(f.provenance());
                }
            }
            String vx = x == null ? null : x.value();
            String vy = y == null ? null : y.value();
            boolean changed = x != null && y != null && !Objects.equals(vx, vy);
            out.add(new Diagnosis.LayerDiff(
                    layer, vx == null ? "(no evidence)" : vx, vy == null ? "(no evidence)" : vy, changed, kinds, prov));
        }
        return out;
    }

    /** Compute outside communication and NCCL kernel time: measurements, compared with the same bootstrap rule. */
    private StepStats.Comparison computeComparison() {
        if (emulated()) {
            return null;
        }
        return any(compute(bs)) && any(compute(vs)) ? StepStats.compare(compute(bs), compute(vs), rule) : null;
    }

    private StepStats.Comparison kernelComparison() {
        if (emulated()) {
            return null;
        }
        List<double[]> kb = bs.stream().map(f -> f.kernelUs).toList();
        List<double[]> kv = vs.stream().map(f -> f.kernelUs).toList();
        return any(kb) && any(kv) ? StepStats.compare(kb, kv, rule) : null;
    }

    private LoadComparison loadComparison(Diagnosis.Regression reg, StepStats.Comparison compute) {
        if (loadB == null || loadV == null || emulated()) {
            return null;
        }
        double change =
                reg.baselineMedianMs() == null ? Double.NaN : Math.abs(reg.variantMedianMs() - reg.baselineMedianMs());
        return LoadComparison.of(loadB, loadV, reg.verdict(), compute, change, rule);
    }

    static String loadNote(LoadComparison load) {
        return load == null
                ? null
                : "machine load: baseline " + load.baseline().describe() + "; variant "
                        + load.variant().describe() + "; without run-queue wait the step still regressed ("
                        + ratio(load.withoutWait()) + ")";
    }

    /** The step-time effect in one line: the medians (pooled where a side has several runs), the ratio, its intervals, the verdict. */
    static String effect(Diagnosis.Regression reg) {
        return String.format(
                Locale.ROOT,
                "step median %.3f → %.3f ms%s (ratio %.3f, 95%% CI %.3f..%.3f; %s interval %.3f..%.3f: %s)",
                reg.baselineMedianMs(),
                reg.variantMedianMs(),
                reg.baselineRuns() > 1 || reg.variantRuns() > 1
                        ? String.format(
                                Locale.ROOT,
                                " (%d and %d runs pooled; the ratio over the runs)",
                                reg.baselineRuns(),
                                reg.variantRuns())
                        : "",
                reg.ratio(),
                reg.ciLow(),
                reg.ciHigh(),
                pct(reg.level()),
                reg.ruleLow(),
                reg.ruleHigh(),
                reg.verdict());
    }

    /** The path layers that had evidence in both runs and did not change. */
    static List<Layer> examinedPath(List<Diagnosis.Elimination> eliminated) {
        List<Layer> out = new ArrayList<>();
        for (Diagnosis.Elimination e : eliminated) {
            if (Layer.PATH.contains(e.layer())) {
                out.add(e.layer());
            }
        }
        return out;
    }

    static String ms(double x) {
        return String.format(Locale.ROOT, "%.3f ms", x);
    }

    static String ratio(StepStats.Comparison c) {
        return String.format(Locale.ROOT, "ratio %.3f, 95%% CI %.3f..%.3f", c.ratio(), c.ciLow(), c.ciHigh());
    }

    // ------------------------------------------------------------------ diagnosis
    Diagnosis diagnose() {
        Diagnosis.Correctness correctness = correctness();
        Diagnosis.Regression reg = regression();
        List<Diagnosis.LayerDiff> diffs = pathDiffs();
        StepStats.Comparison compute = computeComparison();
        StepStats.Comparison kernels = kernelComparison();
        LoadComparison load = loadComparison(reg, compute);
        List<Diagnosis.LayerDiff> all = measuredDiffs(diffs, load, compute, computeKind, kernels);
        List<ConfigDiff.Change> changes = ConfigDiff.diff(b, v);
        List<Diagnosis.ConfigChange> config = new ArrayList<>();
        for (ConfigDiff.Change c : changes) {
            config.add(
                    new Diagnosis.ConfigChange(c.key(), c.baseline(), c.variant(), c.variable(), c.layer(), c.kinds()));
        }
        LayerElimination elimination = LayerElimination.of(correctness, diffs, compute, computeKind, changes);
        String effect = emulated()
                ? "step time not judged: " + EMULATED_RULE
                : reg.ratio() == null ? "step time unknown" : effect(reg);
        RootCauseDecision.Decision decision = new RootCauseDecision(
                        fb,
                        fv,
                        correctness,
                        reg,
                        diffs,
                        compute,
                        computeKind,
                        kernels,
                        load,
                        ConfigDiff.byVariable(changes),
                        elimination,
                        effect)
                .decide();
        return new Diagnosis(
                Diagnosis.SCHEMA,
                b.runDir(),
                v.runDir(),
                decision.conclusion(),
                correctness,
                reg,
                all,
                config,
                elimination.eliminated(),
                elimination.unexamined(),
                decision.root(),
                decision.candidates());
    }

    /** The path diffs, followed by the measured layers: machine load, compute and kernel time where measured. */
    private static List<Diagnosis.LayerDiff> measuredDiffs(
            List<Diagnosis.LayerDiff> diffs,
            LoadComparison load,
            StepStats.Comparison compute,
            Fingerprint.ComputeKind kind,
            StepStats.Comparison kernels) {
        List<Diagnosis.LayerDiff> all = new ArrayList<>(diffs);
        if (load != null) {
            all.add(new Diagnosis.LayerDiff(
                    Layer.MACHINE_LOAD,
                    load.baseline().describe(),
                    load.variant().describe() + " (steps without " + "run-queue wait: " + ratio(load.withoutWait())
                            + ")",
                    load.explains(),
                    List.of(EvidenceKind.MANIFEST),
                    List.of()));
        }
        if (compute != null) {
            all.add(new Diagnosis.LayerDiff(
                    Layer.COMPUTE,
                    "median " + ms(compute.baselineMedian()),
                    "median " + ms(compute.variantMedian()) + " (" + ratio(compute) + "; " + kind.words + ")",
                    changed(compute),
                    List.of(kind.kind),
                    List.of()));
        }
        if (kernels != null) {
            all.add(new Diagnosis.LayerDiff(
                    Layer.KERNEL_TIME,
                    String.format(Locale.ROOT, "median %.1f us", kernels.baselineMedian()),
                    String.format(Locale.ROOT, "median %.1f us (%s)", kernels.variantMedian(), ratio(kernels)),
                    changed(kernels),
                    List.of(EvidenceKind.KERNEL_TRACE),
                    List.of()));
        }
        return all;
    }

    /** A measured comparison changed when it decided a regression or an improvement; null (not measured) never did. */
    static boolean changed(StepStats.Comparison c) {
        return c != null && (c.regression() || c.improvement());
    }

    static String describe(List<ConfigDiff.Change> cs) {
        List<String> out = new ArrayList<>();
        for (ConfigDiff.Change c : cs) {
            out.add(c.key() + " " + c.baseline() + " → " + c.variant() + " (" + EvidenceKind.join(", ", c.kinds())
                    + ")");
        }
        return String.join(", ", out);
    }

    static String describe(Map<String, List<ConfigDiff.Change>> vars) {
        List<String> out = new ArrayList<>();
        vars.values().forEach(l -> out.add(describe(l)));
        return String.join("; ", out);
    }

    static List<String> evidence(
            String configDiff, List<Layer> changedLayers, List<Diagnosis.LayerDiff> diffs, String effect) {
        List<String> out = new ArrayList<>();
        out.add("configuration diff: " + (configDiff.isEmpty() ? "none" : configDiff));
        for (Layer l : changedLayers) {
            Diagnosis.LayerDiff d = find(diffs, l);
            out.add("path diff " + l + ": " + d.baseline() + " → " + d.variant() + " ("
                    + EvidenceKind.join(", ", d.evidence()) + ")");
        }
        out.add("effect: " + effect);
        return out;
    }

    static Diagnosis.LayerDiff find(List<Diagnosis.LayerDiff> diffs, Layer layer) {
        for (Diagnosis.LayerDiff d : diffs) {
            if (d.layer() == layer) {
                return d;
            }
        }
        return null;
    }

    /** The fixed run(s) (this diagnoser's variant side) against the baseline(s): see {@link FixVerifier}. */
    FixVerification verifyFix(List<Evidence> variants, List<Evidence> again) {
        return new FixVerifier(this).verify(variants, again);
    }
}

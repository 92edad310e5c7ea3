package io.pathproof.diagnose;

import io.pathproof.accept.Verdict;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The root-cause decision over what the comparison and the elimination left: a wrong result first, then the
 * configuration variables that changed (several confound, one is named where the path agrees), then a path change
 * nobody configured, machine load, compute, kernel time, and last what the step time alone allows.
 */
final class RootCauseDecision {
    /** The conclusion, the root cause and the candidates that were weighed. */
    record Decision(String conclusion, Diagnosis.RootCause root, List<Diagnosis.Candidate> candidates) {}

    private final Fingerprint fb;
    private final Fingerprint fv;
    private final Diagnosis.Correctness correctness;
    private final Diagnosis.Regression reg;
    private final List<Diagnosis.LayerDiff> diffs;
    private final StepStats.Comparison compute;
    private final Fingerprint.ComputeKind computeKind;
    private final StepStats.Comparison kernels;
    private final LoadComparison load;
    private final Map<String, List<ConfigDiff.Change>> variables;
    private final List<Layer> changedLayers;
    private final List<Diagnosis.Elimination> eliminated;
    private final String effect;
    private final boolean effectSeen;
    private final boolean computeChanged;
    /**
     * Compute explains a step change only in the step's own direction: a compute estimate that fell while the step rose
     * (two identical runs under drifting load) is no compute regression.
     */
    private final boolean computeWithStep;

    /**
     * The job's own time (the machine's load taken out, {@link Fingerprint.ComputeKind#ownTime}) rose decidedly and the
     * step did not decidedly fall: the job's, named even where the step did not move at this load.
     */
    private final boolean ownComputeRose;

    private final boolean kernelChanged;
    private final List<Diagnosis.Candidate> candidates = new ArrayList<>();

    RootCauseDecision(
            Fingerprint fb,
            Fingerprint fv,
            Diagnosis.Correctness correctness,
            Diagnosis.Regression reg,
            List<Diagnosis.LayerDiff> diffs,
            StepStats.Comparison compute,
            Fingerprint.ComputeKind computeKind,
            StepStats.Comparison kernels,
            LoadComparison load,
            Map<String, List<ConfigDiff.Change>> variables,
            LayerElimination elimination,
            String effect) {
        this.fb = fb;
        this.fv = fv;
        this.correctness = correctness;
        this.reg = reg;
        this.diffs = diffs;
        this.compute = compute;
        this.computeKind = computeKind;
        this.kernels = kernels;
        this.load = load;
        this.variables = variables;
        this.changedLayers = elimination.changedLayers();
        this.eliminated = elimination.eliminated();
        this.effect = effect;
        this.effectSeen = "regression".equals(reg.verdict()) || "improvement".equals(reg.verdict());
        this.computeChanged = Diagnoser.changed(compute);
        this.ownComputeRose = computeKind.ownTime()
                && compute != null
                && compute.regression()
                && !"improvement".equals(reg.verdict());
        this.computeWithStep = compute != null
                        && (compute.regression() && "regression".equals(reg.verdict())
                                || compute.improvement() && "improvement".equals(reg.verdict()))
                || ownComputeRose;
        this.kernelChanged = Diagnoser.changed(kernels);
    }

    Decision decide() {
        if (correctness.verdict() == Verdict.FAIL) {
            return decided(
                    "root cause",
                    Remedies.correctness(
                            correctness,
                            fv.correctness,
                            changedLayers.isEmpty(),
                            effect,
                            Diagnoser.describe(variables)));
        }
        if (variables.size() >= 2) {
            return confounded();
        }
        if (variables.size() == 1) {
            return oneVariable(variables.entrySet().iterator().next());
        }
        return unconfigured();
    }

    private Decision decided(String conclusion, Diagnosis.RootCause root) {
        return new Decision(conclusion, root, candidates);
    }

    /** Several variables changed at once: each is a candidate, none is named. */
    private Decision confounded() {
        for (Map.Entry<String, List<ConfigDiff.Change>> en : variables.entrySet()) {
            Layer layer = en.getValue().get(0).layer();
            candidates.add(
                    new Diagnosis.Candidate(en.getKey(), layer, Diagnoser.describe(en.getValue()), agrees(layer)));
        }
        return decided(
                "confounded",
                new Diagnosis.RootCause(
                        Layer.CONFIGURATION,
                        Layer.Owner.APPLICATION,
                        "confounded: " + variables.size() + " variables changed at once ("
                                + String.join("; ", variables.keySet()) + ")",
                        Diagnoser.evidence(Diagnoser.describe(variables), changedLayers, diffs, effect),
                        "change one variable at a time: re-run the baseline with each candidate alone and diagnose each against the baseline",
                        List.of(
                                "attributing the effect to one of the changes without a run that isolates it (common error 11)",
                                "a larger timeout or a larger bucket: neither explains a path change"),
                        "for each candidate: pathproof run with only that change, then pathproof diagnose --baseline B --variant THAT_RUN"));
    }

    /** One variable changed: named where the path agrees, else weighed against compute and the step time. */
    private Decision oneVariable(Map.Entry<String, List<ConfigDiff.Change>> only) {
        Layer layer = only.getValue().get(0).layer();
        String described = Diagnoser.describe(only.getValue());
        if (agrees(layer)) {
            Layer target = layer == Layer.CONFIGURATION ? changedLayers.get(0) : layer;
            return decided(
                    "root cause",
                    Remedies.configured(
                            layer,
                            target,
                            only.getKey(),
                            only.getValue(),
                            changedLayers,
                            diffs,
                            effect,
                            effectSeen,
                            fb));
        }
        if (computeWithStep) {
            Diagnosis.RootCause root = Remedies.compute(
                    computeKind,
                    compute,
                    withStep(effect),
                    "the one configuration change (" + described + ") left the path unchanged",
                    Diagnoser.loadNote(load));
            candidates.add(new Diagnosis.Candidate(only.getKey(), layer, described, false));
            return decided("root cause", root);
        }
        if (effectSeen || !changedLayers.isEmpty()) {
            candidates.add(new Diagnosis.Candidate(only.getKey(), layer, described, false));
            return decided(
                    "unexplained",
                    Remedies.unexplained(
                            "the one configuration change (" + described + ") acts on " + layer
                                    + ", which did not change",
                            changedLayers,
                            diffs,
                            effect));
        }
        if ("inconclusive".equals(reg.verdict())) {
            candidates.add(new Diagnosis.Candidate(only.getKey(), layer, described, false));
            return decided(
                    "inconclusive",
                    Remedies.inconclusive(
                            "the configuration changed (" + described + ") and the path did not; " + reg.why(),
                            effect,
                            reg));
        }
        return decided(
                "no change",
                Remedies.none(
                        "the configuration changed (" + described + ") but neither the path nor the step time did",
                        effect));
    }

    /** Nothing configured differently: a path change, the machine's load, compute, kernel time, or the step time alone. */
    private Decision unconfigured() {
        if (!changedLayers.isEmpty()) {
            return decided("root cause", Remedies.unconfigured(changedLayers.get(0), changedLayers, diffs, effect));
        }
        if (load != null && load.explains() && !kernelChanged && !ownComputeRose) {
            return decided("confounded by machine load", Remedies.machineLoad(load, effect));
        }
        if (computeWithStep) {
            return decided(
                    "root cause",
                    Remedies.compute(
                            computeKind,
                            compute,
                            withStep(effect),
                            "no configuration and no path change",
                            Diagnoser.loadNote(load)));
        }
        if (kernelChanged && effectSeen) {
            return decided("root cause", Remedies.slowerLinks(kernels, effect, fb));
        }
        if (computeChanged
                && compute.regression()
                && !effectSeen
                && reg.ratio() != null
                && reg.ratio() >= 1 + StepStats.MIN_EFFECT) {
            // On a busy machine the step is mostly waiting for the slowest rank, which the compute estimate leaves out:
            // the
            // compute rise is decided while the whole step is not yet. Name it, and say the step-time effect is
            // undecided.
            return decided(
                    "root cause",
                    Remedies.compute(
                            computeKind,
                            compute,
                            effect + "; the step-time effect is undecided at this noise (more "
                                    + "iterations decide it)",
                            "no configuration and no path change",
                            Diagnoser.loadNote(load)));
        }
        List<Layer> examined = Diagnoser.examinedPath(eliminated);
        if ("regression".equals(reg.verdict()) && !examined.isEmpty() && !(compute != null && compute.improvement())) {
            // Every path layer with evidence is unchanged, nothing was configured differently and the communication did
            // not
            // slow down: what is left of the step is compute, even where its own estimate is too noisy to decide alone.
            return decided(
                    "root cause",
                    Remedies.residualCompute(computeKind, compute, effect, examined, Diagnoser.loadNote(load)));
        }
        return fromStepTime();
    }

    /** The effect, and where the job's own time rose without the step, that the step did not show it at this load. */
    private String withStep(String effect) {
        return ownComputeRose && !"regression".equals(reg.verdict())
                ? effect + "; the step did not show it at this load (" + reg.verdict() + "): the job's own time is "
                        + "measured without its wait for a core, and the cores a sleep or stall leaves are taken by the "
                        + "machine's other work"
                : effect;
    }

    /** No layer explains anything: what the step time alone allows to conclude. */
    private Decision fromStepTime() {
        if (effectSeen) {
            return decided(
                    "unexplained",
                    Remedies.unexplained(
                            "no configuration, path, compute or kernel-time difference explains the " + "step time",
                            changedLayers,
                            diffs,
                            effect));
        }
        if ("inconclusive".equals(reg.verdict())) {
            // Thin or loaded data is never "no change": the step time could hide a change of the margin's size.
            return decided(
                    "inconclusive",
                    Remedies.inconclusive(
                            "no configuration, path, compute or kernel-time difference, and the "
                                    + "step time is undecided: " + reg.why(),
                            effect,
                            reg));
        }
        if ("unknown".equals(reg.verdict())) {
            // Missing evidence is never "no change": without step times the effect is unproven.
            return decided(
                    "unproven",
                    Remedies.none(
                            "no configuration or path difference in the evidence, but " + reg.rule()
                                    + ": the step-time effect is unproven",
                            effect));
        }
        return decided("no change", Remedies.none("no configuration, path, compute or step-time difference", effect));
    }

    /**
     * A configuration variable agrees with the path when its layer changed; a version/topology change with any path
     * change. Where the variable's own layer has no evidence in the runs (e.g. no TUNING lines, so no protocol), a change
     * of a layer it feeds counts (protocol → threads and channels, via maxThreads and the nc/nt loop of
     * enqueue.cc:1617-1658@v2.22.3-1); a layer with evidence that did not change never agrees.
     */
    private boolean agrees(Layer layer) {
        if (layer == Layer.CONFIGURATION) {
            return !changedLayers.isEmpty();
        }
        if (layer == Layer.DDP_CONFIG) {
            // The flag is itself the layer: DDP's logging data (_get_ddp_logging_data) records what the reducer ran
            // with.
            return true;
        }
        if (changedLayers.contains(layer)) {
            return true;
        }
        boolean unseen = fb.path.get(layer) == null || fv.path.get(layer) == null;
        if (!unseen) {
            return false;
        }
        for (Layer d : layer.feeds()) {
            if (changedLayers.contains(d)) {
                return true;
            }
        }
        return false;
    }
}

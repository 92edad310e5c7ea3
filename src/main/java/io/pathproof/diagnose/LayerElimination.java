package io.pathproof.diagnose;

import io.pathproof.accept.Verdict;
import io.pathproof.evidence.EvidenceKind;
import java.util.ArrayList;
import java.util.List;

/**
 * The elimination, in order: correctness, each path layer, compute, configuration. A layer with evidence in both runs
 * that did not change is eliminated; one without evidence on a side is left unexamined (missing evidence never clears
 * a layer); a path layer that changed is kept for the root-cause decision.
 */
record LayerElimination(
        List<Diagnosis.Elimination> eliminated, List<Diagnosis.Elimination> unexamined, List<Layer> changedLayers) {

    static LayerElimination of(
            Diagnosis.Correctness correctness,
            List<Diagnosis.LayerDiff> diffs,
            StepStats.Comparison compute,
            Fingerprint.ComputeKind kind,
            List<ConfigDiff.Change> changes) {
        List<Diagnosis.Elimination> eliminated = new ArrayList<>();
        List<Diagnosis.Elimination> unexamined = new ArrayList<>();
        if (correctness.verdict() == Verdict.PASS) {
            eliminated.add(
                    new Diagnosis.Elimination(Layer.CORRECTNESS, "wrong results excluded: " + correctness.evidence()));
        } else if (correctness.verdict() == Verdict.UNPROVEN) {
            unexamined.add(new Diagnosis.Elimination(Layer.CORRECTNESS, correctness.evidence()));
        }
        List<Layer> changedLayers = path(diffs, eliminated, unexamined);
        if (compute == null) {
            unexamined.add(new Diagnosis.Elimination(
                    Layer.COMPUTE, "no hook records with step times, and no host phases of every step, in both runs"));
        } else if (!Diagnoser.changed(compute)) {
            eliminated.add(new Diagnosis.Elimination(
                    Layer.COMPUTE,
                    kind.words + " " + Diagnoser.ms(compute.baselineMedian()) + " → "
                            + Diagnoser.ms(compute.variantMedian()) + " per step (" + Diagnoser.ratio(compute)
                            + "; " + kind.sources + ")"));
        }
        if (changes.isEmpty()) {
            eliminated.add(new Diagnosis.Elimination(
                    Layer.CONFIGURATION,
                    "no difference in env, versions, topology or DDP flags (manifest, NCCL env echo, DDP logging)"));
        }
        return new LayerElimination(eliminated, unexamined, changedLayers);
    }

    /** Each path layer eliminated, left unexamined or, when it changed, returned. */
    private static List<Layer> path(
            List<Diagnosis.LayerDiff> diffs,
            List<Diagnosis.Elimination> eliminated,
            List<Diagnosis.Elimination> unexamined) {
        List<Layer> changedLayers = new ArrayList<>();
        for (Layer layer : Layer.PATH) {
            Diagnosis.LayerDiff d = Diagnoser.find(diffs, layer);
            if (d == null && layer == Layer.NETWORK) {
                continue; // no communicator across nodes in either run: nothing to examine, not evidence missing
            }
            if (d == null || d.baseline().equals("(no evidence)") || d.variant().equals("(no evidence)")) {
                unexamined.add(new Diagnosis.Elimination(
                        layer,
                        d == null
                                ? "no evidence of this layer in either run"
                                : "evidence in only one run (baseline: " + d.baseline() + "; variant: " + d.variant()
                                        + ")"));
            } else if (!d.changed()) {
                eliminated.add(new Diagnosis.Elimination(
                        layer,
                        d.baseline() + " in both runs (" + EvidenceKind.join(", ", d.evidence())
                                + (d.provenance().isEmpty() ? "" : ": " + String.join(", ", d.provenance())) + ")"));
            } else {
                changedLayers.add(layer);
            }
        }
        return changedLayers;
    }
}

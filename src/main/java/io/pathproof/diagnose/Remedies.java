package io.pathproof.diagnose;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Root causes with their fix, the mitigations that would not fix them, and the re-run that proves the fix. The fix
 * undoes the change that the evidence points at; the wrong mitigations are the ones the seed warns about (a larger
 * timeout, a larger bucket, blaming NVLink for a configured channel cap — common errors 12 and 13).
 */
final class Remedies {
    private Remedies() {}

    static final String RERUN =
            "re-run the same canary with the fix, then: pathproof verify-fix --baseline BASELINE --fixed FIXED_RUN "
                    + "(fingerprint equal to the baseline's, step median back in the baseline's band) and pathproof accept on it";

    private static String undo(List<ConfigDiff.Change> cs) {
        List<String> out = new ArrayList<>();
        for (ConfigDiff.Change c : cs) {
            String name = c.key().startsWith("env.") ? c.key().substring(4) : c.key();
            if (name.endsWith("bucket_cap_bytes") && c.baseline().matches("\\d+")) {
                // DDP logs the cap in bytes; users pass bucket_cap_mb (distributed.py: int(bucket_cap_mb * 1024 *
                // 1024)).
                double mb = Long.parseLong(c.baseline()) / (1024.0 * 1024.0);
                String mbText = mb == Math.rint(mb) ? Long.toString((long) mb) : Double.toString(mb);
                out.add("restore bucket_cap_mb=" + mbText + " (DDP bucket_cap_bytes " + c.baseline() + ", now "
                        + c.variant() + ")");
                continue;
            }
            if (name.startsWith("ddp.") && c.baseline().matches("[01]") && !name.endsWith("bucket_cap_bytes")) {
                // DDP logs its boolean flags as 0/1; users pass them as Python booleans to the constructor.
                out.add("restore " + name.substring(4) + "=" + (c.baseline().equals("1") ? "True" : "False")
                        + " (DDP logging " + name.substring(4) + " " + c.baseline() + ", now " + c.variant() + ")");
                continue;
            }
            if (c.baseline().equals("unset")) {
                out.add("remove " + name + "=" + c.variant());
            } else if (c.variant().equals("unset")) {
                out.add("set " + name + "=" + c.baseline() + " again");
            } else {
                out.add("restore " + name + "=" + c.baseline() + " (now " + c.variant() + ")");
            }
        }
        return String.join(", ", dedupe(out));
    }

    private static List<String> dedupe(List<String> l) {
        List<String> out = new ArrayList<>();
        for (String s : l) {
            if (!out.contains(s)) {
                out.add(s);
            }
        }
        return out;
    }

    private static String base(Fingerprint fb, Layer layer) {
        Fingerprint.Facet f = fb.path.get(layer);
        return f == null ? "(unknown)" : f.value();
    }

    static Diagnosis.RootCause configured(
            Layer layer,
            Layer target,
            String variable,
            List<ConfigDiff.Change> changes,
            List<Layer> changedLayers,
            List<Diagnosis.LayerDiff> diffs,
            String effect,
            boolean effectSeen,
            Fingerprint fb) {
        String configDiff = Diagnoser.describe(changes);
        List<String> evidence = configuredEvidence(target, configDiff, changedLayers, diffs, effect, effectSeen);
        String change = variable + ": " + configDiff
                + (changedLayers.size() > 1
                        ? "; downstream of it: " + Layer.joined(changedLayers.subList(1, changedLayers.size()))
                                + " changed too"
                        : "");
        Remedy remedy = configuredRemedy(layer, target, changes, configDiff, changedLayers, fb);
        List<String> wrong = new ArrayList<>();
        wrong.add("a larger timeout (ProcessGroup / NCCL): the collective is slower or different, not hung");
        wrong.addAll(remedy.wouldNotFix());
        // A changed cluster description acting on the network (a NIC's speed or GPUDirect) is the hardware's, not
        // NCCL's.
        String owner = target == Layer.NETWORK && layer != Layer.NETWORK ? Layer.Owner.HARDWARE : target.owner();
        return new Diagnosis.RootCause(target, owner, change, evidence, remedy.fix(), wrong, RERUN);
    }

    /** A fix and the mitigations, beside the always wrong larger timeout, that would not fix the root cause. */
    private record Remedy(String fix, List<String> wouldNotFix) {}

    /** The diagnosis's evidence and the line that says which of configuration, path and effect agree. */
    private static List<String> configuredEvidence(
            Layer target,
            String configDiff,
            List<Layer> changedLayers,
            List<Diagnosis.LayerDiff> diffs,
            String effect,
            boolean effectSeen) {
        List<String> evidence = Diagnoser.evidence(configDiff, changedLayers, diffs, effect);
        if (target == Layer.DDP_CONFIG) {
            evidence.add("DDP's own logging data records the changed flag"
                    + (changedLayers.isEmpty() ? "; the path (bucket layout, collectives) " + "is unchanged" : "")
                    + (effectSeen ? "; the step time changed with it" : "; no step-time effect measured"));
        } else {
            evidence.add(
                    effectSeen
                            ? "configuration diff, path diff and effect agree"
                            : "configuration diff and path diff agree; no step-time effect measured");
        }
        return evidence;
    }

    /** The fix of a configured change of {@code target} (acted on by a variable of {@code layer}). */
    private static Remedy configuredRemedy(
            Layer layer,
            Layer target,
            List<ConfigDiff.Change> changes,
            String configDiff,
            List<Layer> changedLayers,
            Fingerprint fb) {
        return switch (target) {
            case CHANNELS ->
                backToBaseline(
                        changes,
                        " in the job's environment so that NCCL chooses the channel count again",
                        fb,
                        Layer.CHANNELS,
                        "a larger DDP bucket (bucket_cap_mb): the bucket is unchanged; a bigger message over fewer channels is still fewer channels",
                        "blaming or replacing NVLink: the transport is unchanged (" + base(fb, Layer.TRANSPORT)
                                + "); a channel cap is configuration, not a link fault",
                        "forcing NCCL_ALGO or NCCL_PROTO: algorithm and protocol did not change");
            case PROTOCOL ->
                backToBaseline(
                        changes,
                        " so that the tuner picks the protocol per message size again",
                        fb,
                        Layer.PROTOCOL,
                        "more channels (NCCL_MIN_NCHANNELS): the protocol, not the channel count, was forced",
                        "a larger DDP bucket: a forced protocol stays forced at every size");
            case ALGORITHM ->
                backToBaseline(
                        changes,
                        " so that the tuner picks the algorithm again",
                        fb,
                        Layer.ALGORITHM,
                        "more channels or another protocol: the algorithm was forced",
                        "a larger DDP bucket: a forced algorithm stays forced at every size");
            case TRANSPORT ->
                new Remedy(
                        undo(changes) + " so that peers connect over " + base(fb, Layer.TRANSPORT) + " again",
                        List.of(
                                "replacing NVLink or the GPUs: the configuration turned the peer path off; the links were never tried",
                                "more channels or a larger bucket: the data still goes through the fallback transport"));
            case NETWORK ->
                new Remedy(
                        network(changes, layer) + " (baseline: " + base(fb, Layer.NETWORK) + ")",
                        List.of(
                                "more channels or another NCCL_ALGO/NCCL_PROTO: they tune around a slower path between nodes; the "
                                        + "network path itself changed",
                                "blaming NVLink or the GPUs: the transport inside each node is unchanged ("
                                        + base(fb, Layer.TRANSPORT) + ")",
                                "a larger DDP bucket: every bucket still crosses the same network path"));
            case THREADS ->
                backToBaseline(
                        changes,
                        " so that NCCL sizes its thread blocks itself again",
                        fb,
                        Layer.THREADS,
                        "more channels: the block size, not the channel count, changed",
                        "a larger DDP bucket: the launch shape is set by the thread limit");
            case DDP_CONFIG ->
                new Remedy(
                        undo(changes)
                                + " in the DDP constructor (find_unused_parameters=True makes the reducer walk the autograd graph after "
                                + "every forward and keeps the buckets in construction order)",
                        List.of(
                                "NCCL tuning (NCCL_ALGO, NCCL_PROTO, channels): the collectives are not what changed",
                                "a larger DDP bucket: the flag, not the bucket size, changed"));
            case BUCKETS ->
                backToBaseline(
                        changes,
                        " in the DDP constructor so that the gradients are bucketed as before",
                        fb,
                        Layer.BUCKETS,
                        "NCCL tuning (NCCL_ALGO, NCCL_PROTO, channels): NCCL chose correctly for the new message sizes; the messages changed");
            default ->
                new Remedy(
                        "revert " + configDiff + " (it changed " + Layer.joined(changedLayers) + ")",
                        List.of("tuning the layers downstream of the change one by one instead of reverting it"));
        };
    }

    /** The change undone {@code how} the baseline had it, which names its value of {@code layer}. */
    private static Remedy backToBaseline(
            List<ConfigDiff.Change> changes, String how, Fingerprint fb, Layer layer, String... wouldNotFix) {
        return new Remedy(undo(changes) + how + " (baseline: " + base(fb, layer) + ")", List.of(wouldNotFix));
    }

    /**
     * The network's fix: a variable undone, or for a changed cluster description (a NIC's speed or GPUDirect support)
     * the NIC brought back, which is the cluster's owners' work, not the job's.
     */
    private static String network(List<ConfigDiff.Change> changes, Layer variableLayer) {
        if (variableLayer == Layer.NETWORK) {
            return undo(changes)
                    + " in the job's environment so that NCCL reaches the other nodes as before (GPUDirect RDMA "
                    + "where the NIC and distance allow it, its own NIC pairing and PXN)";
        }
        return "restore the nodes' network as the baseline had it (" + Diagnoser.describe(changes)
                + "): check the NICs' link "
                + "speed and state (ibstat / ethtool), GPUDirect RDMA (nvidia-peermem, dma-buf) and the topology NCCL read "
                + "(NCCL_TOPO_DUMP_FILE) on every node";
    }

    static Diagnosis.RootCause unconfigured(
            Layer layer, List<Layer> changedLayers, List<Diagnosis.LayerDiff> diffs, String effect) {
        List<String> evidence = Diagnoser.evidence("", changedLayers, diffs, effect);
        Diagnosis.LayerDiff d = Diagnoser.find(diffs, layer);
        String change =
                "the " + layer + " changed without any configuration change: " + d.baseline() + " → " + d.variant();
        String owner = layer == Layer.TRANSPORT || layer == Layer.CHANNELS || layer == Layer.NETWORK
                ? Layer.Owner.HARDWARE
                : layer.owner();
        String fix =
                switch (layer) {
                    case NETWORK ->
                        d.variant().contains(Fingerprint.SEARCHES_DISAGREE)
                                        && !d.baseline().contains(Fingerprint.SEARCHES_DISAGREE)
                                ? "the nodes no longer see the same network: the ranks whose own search found less bandwidth"
                                        + " (named above, before NCCL keeps every rank's minimum) sit on the node to fix;"
                                        + " check its NICs' link speed and state (ibstat / ethtool: an HDR port up at EDR,"
                                        + " a degraded cable or lane), its GPUDirect RDMA (nvidia-peermem, dma-buf) and the"
                                        + " topology NCCL read there (NCCL_TOPO_DUMP_FILE), then restore the link: every"
                                        + " node is held to the slowest one"
                                : "find why NCCL reached the other nodes differently on the same configuration: the NICs' link speed "
                                        + "and state (ibstat / ethtool), GPUDirect RDMA (nvidia-peermem, dma-buf), the topology NCCL read on each node "
                                        + "(NCCL_TOPO_DUMP_FILE)";
                    case TRANSPORT, CHANNELS ->
                        "find why NCCL saw a different topology on the same configuration (nvidia-smi topo -m, "
                                + "the peer-access matrix, NVLink state, driver / IOMMU / ACS settings) and restore the peer path";
                    case BUCKETS ->
                        "find why DDP formed other buckets with the same flags (model code, parameter order, unused parameters)";
                    default ->
                        "find why NCCL decided differently with the same configuration and versions (a tuner plugin, the topology it detected)";
                };
        return new Diagnosis.RootCause(
                layer,
                owner,
                change,
                evidence,
                fix,
                List.of(
                        "a larger timeout: nothing hangs",
                        "forcing the old choice with NCCL_* variables: it hides why the choice changed"),
                RERUN);
    }

    static Diagnosis.RootCause compute(
            Fingerprint.ComputeKind kind,
            StepStats.Comparison compute,
            String effect,
            String context,
            String loadNote) {
        String change = String.format(
                Locale.ROOT,
                "%s %s from %.3f to %.3f ms per step (ratio %.3f, 95%% CI %.3f..%.3f)",
                kind.words,
                compute.ratio() < 1 ? "fell" : "rose",
                compute.baselineMedian(),
                compute.variantMedian(),
                compute.ratio(),
                compute.ciLow(),
                compute.ciHigh());
        List<String> evidence = new ArrayList<>(List.of(
                "configuration / path: " + context,
                "compute: " + change + " (" + kind.source + ")",
                "effect: " + effect,
                "the bucket communication time did not change: the slowdown is outside the AllReduce"));
        if (loadNote != null) {
            evidence.add(loadNote);
        }
        return computeCause(change, evidence);
    }

    /** Every path layer with evidence is unchanged and nothing else explains the step: the residual is compute. */
    static Diagnosis.RootCause residualCompute(
            Fingerprint.ComputeKind kind,
            StepStats.Comparison compute,
            String effect,
            List<Layer> unchanged,
            String loadNote) {
        String change = "the step regressed with every examined path layer unchanged (" + Layer.joined(unchanged)
                + "), no configuration change and no slower communication: the residual is compute outside communication";
        List<String> evidence = new ArrayList<>(List.of(
                "configuration diff: none",
                "path diff: none (" + Layer.joined(unchanged) + " equal)",
                "effect: " + effect));
        if (compute != null) {
            evidence.add(String.format(
                    Locale.ROOT,
                    "compute estimate %.3f → %.3f ms per step (ratio %.3f, 95%% CI %.3f..%.3f; %s): too noisy to decide "
                            + "alone, consistent with the residual",
                    compute.baselineMedian(),
                    compute.variantMedian(),
                    compute.ratio(),
                    compute.ciLow(),
                    compute.ciHigh(),
                    kind.source));
        }
        if (loadNote != null) {
            evidence.add(loadNote);
        }
        return computeCause(change, evidence);
    }

    private static Diagnosis.RootCause computeCause(String change, List<String> evidence) {
        return new Diagnosis.RootCause(
                Layer.COMPUTE,
                Layer.Owner.APPLICATION,
                change,
                evidence,
                "find what slowed forward, backward or the optimizer step (model code, data loading, a sleep or sync, GPU clocks) and undo it; "
                        + "profile the compute kernels and CPU ranges of one step on each rank",
                List.of(
                        "NCCL tuning (channels, NCCL_ALGO, NCCL_PROTO): the communication path and its time are unchanged",
                        "a larger DDP bucket: communication is not what slowed down",
                        "a larger timeout: nothing hangs"),
                RERUN);
    }

    /** The variant waited longer for a CPU, and that wait explains the slower step: not a change of the job. */
    static Diagnosis.RootCause machineLoad(LoadComparison load, String effect) {
        boolean slower = "regression".equals(load.stepVerdict());
        String why = !load.computeStill() && load.sameWork()
                ? String.format(
                        Locale.ROOT,
                        "the job's CPU time per step did not change (%s): the same work, less of the machine",
                        ratioText(load.jobCpu()))
                : load.computeStill()
                        ? String.format(
                                Locale.ROOT,
                                "compute outside communication did not move with the step (%s): the time went into "
                                        + "communication (on gloo, CPU work a busier machine slows), not into the job's own compute",
                                ratioText(load.compute()))
                        : "without that wait the step time shows no " + (slower ? "regression" : "improvement") + " ("
                                + ratioText(load.withoutWait()) + ")";
        String change = String.format(
                Locale.ROOT,
                "confounded by machine load: the %s run's ranks waited %.3f ms per step for a CPU "
                        + "(the %s run's %.3f ms); %s",
                slower ? "variant" : "baseline",
                (slower ? load.variant() : load.baseline()).runQueueMs(),
                slower ? "baseline" : "variant",
                (slower ? load.baseline() : load.variant()).runQueueMs(),
                why);
        return new Diagnosis.RootCause(
                Layer.MACHINE_LOAD,
                Layer.Owner.HARDWARE,
                change,
                List.of(
                        "configuration diff: none",
                        "path diff: none",
                        "effect: " + effect,
                        "machine load: baseline " + load.baseline().describe(),
                        "machine load: variant " + load.variant().describe()),
                "nothing in the job to fix: re-run baseline and variant interleaved (or both on a quiet machine) and diagnose again",
                List.of(
                        "any change to the job (model, DDP, NCCL): the job did the same work; the machine gave it less CPU",
                        "a larger timeout: nothing hangs"),
                "re-run both runs back to back on the same quiet machine, then pathproof diagnose again");
    }

    private static String ratioText(StepStats.Comparison c) {
        return String.format(Locale.ROOT, "ratio %.3f, 95%% CI %.3f..%.3f", c.ratio(), c.ciLow(), c.ciHigh());
    }

    static Diagnosis.RootCause slowerLinks(StepStats.Comparison kernels, String effect, Fingerprint fb) {
        String change = String.format(
                Locale.ROOT,
                "same path (%s), but NCCL kernels take %.1f instead of %.1f us (ratio %.3f)",
                base(fb, Layer.TRANSPORT),
                kernels.variantMedian(),
                kernels.baselineMedian(),
                kernels.ratio());
        return new Diagnosis.RootCause(
                Layer.TRANSPORT,
                Layer.Owner.HARDWARE,
                change,
                List.of(
                        "configuration diff: none",
                        "path diff: none (buckets, algorithm, protocol, transport, channels, threads equal)",
                        "kernel time: " + change,
                        "effect: " + effect),
                "check the links and clocks of these GPUs (nvidia-smi nvlink -s / -e for errors and down links, clocks and throttling, other jobs on the GPUs)",
                List.of(
                        "NCCL tuning: NCCL made the same decisions as in the baseline",
                        "a larger timeout: nothing hangs",
                        "a larger DDP bucket: the same bytes go over the same, slower links"),
                RERUN);
    }

    static Diagnosis.RootCause correctness(
            Diagnosis.Correctness c,
            Fingerprint.Correctness fc,
            boolean pathUnchanged,
            String effect,
            String configDiff) {
        List<Integer> ranks = fc.minorityRanks();
        String change = ranks.isEmpty()
                ? c.evidence()
                : "rank(s) " + ranks + " diverge from the other replicas: " + c.evidence();
        List<String> evidence = new ArrayList<>();
        evidence.add("correctness: " + c.evidence());
        evidence.add("configuration diff: " + (configDiff.isEmpty() ? "none" : configDiff));
        evidence.add(
                pathUnchanged
                        ? "path diff: none — the AllReduce ran as in the baseline, so the wrong values entered outside it"
                        : "path diff present (see diffs)");
        evidence.add("effect: " + effect);
        String fix = ranks.isEmpty()
                ? "find where a wrong gradient enters before the AllReduce on every rank (loss, hook, data) and fix it; check it with the replica digests"
                : "find what writes the gradients or parameters of rank(s) " + ranks
                        + " outside the AllReduce (a per-rank hook or optimizer "
                        + "state, a data path that differs per rank) and fix it; if the code is identical on every rank, suspect the GPU of rank(s) "
                        + ranks + " (CUDA+hardware: memory errors, run the same canary pinned to another GPU)";
        return new Diagnosis.RootCause(
                Layer.CORRECTNESS,
                Layer.Owner.APPLICATION,
                change,
                evidence,
                fix,
                List.of(
                        "re-broadcasting parameters from rank 0 every step: hides the divergence, the wrong update still happens",
                        "a larger timeout or NCCL tuning: the collective completed and did what it was given",
                        "accepting the run because every NCCL kernel ran (common error 10)"),
                "re-run the same canary and require equal replica digests on every rank (pathproof accept, row replicas) and verify-fix");
    }

    static Diagnosis.RootCause unexplained(
            String why, List<Layer> changedLayers, List<Diagnosis.LayerDiff> diffs, String effect) {
        List<String> evidence = Diagnoser.evidence("", changedLayers, diffs, effect);
        evidence.set(0, "unexplained: " + why);
        return new Diagnosis.RootCause(
                changedLayers.isEmpty() ? Layer.NONE : changedLayers.get(0),
                Layer.Owner.APPLICATION,
                "unexplained: " + why,
                evidence,
                "collect the missing evidence and diagnose again: NCCL_DEBUG=INFO with NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,COLL,GRAPH,P2P, "
                        + "a profiler window (kernel trace) and the comm hook on both runs, with one variable changed at a time",
                List.of("acting on a guess: the evidence does not single out a cause"),
                RERUN);
    }

    static Diagnosis.RootCause none(String why, String effect) {
        return new Diagnosis.RootCause(
                Layer.NONE,
                Layer.Owner.APPLICATION,
                "no change: " + why,
                List.of("effect: " + effect),
                "nothing to fix",
                List.of("any tuning: there is no difference to correct"),
                "none needed");
    }

    /**
     * The step time is undecided and nothing structural was found: no fault is named, no fix proposed. What decides it is
     * more time-adjacent pairs of runs (one pair judged on its steps: longer runs).
     */
    static Diagnosis.RootCause inconclusive(String why, String effect, Diagnosis.Regression reg) {
        int perRun = Math.max(1, reg.nBaseline() / Math.max(1, reg.baselineRuns()));
        String more = reg.stepsNeeded() == null
                ? "more pairs of runs of both configurations, each pair made back to back"
                : "about " + (reg.stepsNeeded() + perRun - 1) / perRun + " pairs of runs of " + perRun + " steps ("
                        + reg.stepsNeeded() + " steps per configuration; " + reg.nBaseline() + " and " + reg.nVariant()
                        + " now), each pair made back to back";
        return new Diagnosis.RootCause(
                Layer.NONE,
                Layer.Owner.APPLICATION,
                "inconclusive: " + why,
                List.of("effect: " + effect, "rule: " + reg.rule()),
                "nothing to fix yet: measure more — " + more
                        + " — and diagnose them paired (diagnose --baseline A --variant B --baseline A2 "
                        + "--variant B2 …: the i-th of each made next to each other)",
                List.of(
                        "calling it no change: a change of the margin's size is not excluded",
                        "acting on the ratio alone: it is not shown to differ from 1"),
                "pathproof diagnose with more pairs of runs, or pathproof prove, which adds pairs in alternating order until the rule decides");
    }
}

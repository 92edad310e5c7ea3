package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.predict.Prediction;
import java.util.ArrayList;
import java.util.List;

/**
 * The checks of the acceptance table, in the order of the seed's data path (shape → bucket → collective → algorithm
 * → protocol → channels → launch shape → transport → kernel → numerics → completion → bandwidth). Each family of rows
 * lives in its own class ({@link SealChecks}, {@link BucketChecks}, {@link DecisionChecks}, {@link LaunchChecks},
 * {@link TuningTableChecks}, {@link ProfilerChecks}, {@link TransportChecks}, {@link ReplicaChecks},
 * {@link BandwidthChecks}) and builds its rows
 * with {@link Row}; this class only keeps the order. Each check states what it expected, what it observed, and on which kinds of evidence;
 * a check with no evidence is UNPROVEN.
 */
final class Checks {
    private final Prediction p;
    private final EvidenceView v;
    private final String glooReason;
    private final List<AcceptanceRow> rows = new ArrayList<>();

    Checks(Prediction p, Evidence e) {
        this.p = p;
        this.v = new EvidenceView(e);
        this.glooReason = glooReason();
    }

    /** "not applicable (backend gloo)" when the NCCL rows have no meaning for this run, else null. */
    private String glooReason() {
        if ("gloo".equalsIgnoreCase(p.backend())) {
            return "not applicable (backend gloo)";
        }
        if (!v.hasNcclLog() && "gloo".equals(v.backend())) {
            return "not applicable (backend gloo)";
        }
        return null;
    }

    String backend() {
        if (glooReason != null) {
            return "gloo";
        }
        return p.backend() != null ? p.backend() : v.backend();
    }

    List<AcceptanceRow> run() {
        CheckFamily.Context ctx = new CheckFamily.Context(p, v, glooReason, rows);
        SealChecks seal = new SealChecks(ctx);
        BucketChecks buckets = new BucketChecks(ctx);
        DecisionChecks decisions = new DecisionChecks(ctx);
        LaunchChecks launch = new LaunchChecks(ctx);
        ProfilerChecks profiler = new ProfilerChecks(ctx);
        TransportChecks transport = new TransportChecks(ctx);
        TuningTableChecks tuningTable = new TuningTableChecks(ctx);
        ReplicaChecks replicas = new ReplicaChecks(ctx);
        BandwidthChecks bandwidth = new BandwidthChecks(ctx);
        int nRanks = seal.nRanks();

        seal.seal();
        seal.predictedBeforeRun();
        seal.backendAndWorldSize();
        // Cited only where a manifest was read: a directory without one is cited as itself, never as a missing file.
        AcceptanceRow integrity = IntegrityChecks.row(
                v.evidence().integrity(),
                v.manifest() != null
                        ? v.manifestFile()
                        : v.evidence().runDir() + " (its per-rank files; no manifest.json)");
        if (integrity != null) {
            rows.add(integrity);
        }
        seal.versions();
        buckets.parameterBytes();
        buckets.buckets();
        List<CollectivePrediction> colls = p.collectives();
        if (colls.isEmpty()) {
            decisions.noCollectives();
        }
        for (CollectivePrediction c : colls) {
            decisions.collective(c);
            decisions.algorithm(c);
            decisions.protocol(c);
            decisions.tunerTime(c);
        }
        decisions.collChannels();
        decisions.ringOrder();
        tuningTable.tuningTable();
        for (CollectivePrediction c : colls) {
            for (int r = 0; r < nRanks; r++) {
                launch.launchShape(c, r);
            }
        }
        // The profiler's rows exist only when the run asked NCCL to load the plugin (see ProfilerChecks).
        for (CollectivePrediction c : colls) {
            for (int r = 0; r < nRanks; r++) {
                profiler.decision(c, r);
            }
        }
        transport.transport();
        for (int r = 0; r < nRanks; r++) {
            launch.kernelsPerCollective(r);
        }
        replicas.replicas();
        replicas.completionOrder();
        replicas.consistency();
        for (CollectivePrediction c : colls) {
            bandwidth.busBytes(c);
            bandwidth.busBandwidth(c);
        }
        return rows;
    }
}

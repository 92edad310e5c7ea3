package io.pathproof.predict;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.ddp.Bucket;
import io.pathproof.ddp.BucketPlan;
import io.pathproof.ddp.BucketPlanner;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.CommunicatorPrediction;
import io.pathproof.nccl.NcclModel;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Scenario;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The public entry of the predict room: a scenario in, an (unsealed) prediction out. It joins the DDP bucket plan
 * (ddp) with NCCL's decision for each bucket's AllReduce (nccl). Nothing here looks at a run.
 */
public final class Predictor {
    private Predictor() {}

    public static Prediction predict(Scenario scenario) {
        BucketPlan plan = BucketPlanner.plan(
                scenario.workload(),
                scenario.versions().torch(),
                scenario.env(),
                scenario.workload().readyOrder());
        long paramBytes = 0;
        int paramCount = 0;
        for (Parameter p : scenario.workload().parameters()) {
            if (p.requiresGrad()) {
                paramBytes += p.bytes();
                paramCount++;
            }
        }
        Prediction.Buckets buckets = new Prediction.Buckets(
                plan.construction(), plan.rebuilt(), plan.firstRebuiltIteration(), paramBytes, paramCount);
        List<String> assumptions = new ArrayList<>(plan.assumptions());
        // What the topology's reader inferred rather than read (a GPU model from its PCI id, a link speed NCCL's
        // table lacks, NVLinks a partial NCCL_TOPO_FILE leaves to NCCL): a prediction is only as given as its inputs.
        for (String note : scenario.topology().inferredGrouped()) {
            assumptions.add("topology: " + note);
        }
        JsonNode inputs = Json.mapper().valueToTree(scenario);

        String backend = backendOf(scenario);
        if (!backend.equals("nccl")) {
            assumptions.add(
                    "backend " + backend + ": no GPU in the topology, so DDP uses gloo and no NCCL prediction is made");
            return new Prediction(Prediction.SCHEMA, inputs, backend, buckets, null, List.of(), assumptions, null);
        }
        NcclModel model = NcclModel.of(scenario);
        CommunicatorPrediction comm = model.communicator();
        assumptions.addAll(comm.notes());
        List<CollectivePrediction> collectives = new ArrayList<>();
        // One AllReduce per distinct bucket of every phase (construction, then rebuilt), keyed by (index, bytes,
        // dtype):
        // a rebuilt bucket of the same index and size is the same collective to NCCL.
        Map<String, Bucket> distinct = new LinkedHashMap<>();
        for (Bucket b : plan.construction()) {
            distinct.putIfAbsent(b.index() + "/" + b.bytes() + "/" + b.dtype(), b);
        }
        for (Bucket b : plan.rebuilt()) {
            distinct.putIfAbsent(b.index() + "/" + b.bytes() + "/" + b.dtype(), b);
        }
        CommHooks.Effect hook = CommHooks.of(scenario.workload().commHook());
        if (hook.note() != null) {
            assumptions.add(hook.note());
        }
        for (Bucket b : hook.predictable() ? distinct.values() : List.<Bucket>of()) {
            DType wire = hook.wireDtype(b.dtype());
            CollectivePrediction c =
                    model.allReduce(b.index(), b.bytes() / b.dtype().elementSize() * wire.elementSize(), wire);
            collectives.add(wire == b.dtype() ? c : c.onTheWire(wire.torchName()));
        }
        if (scenario.workload().findUnusedParameters()) {
            // reducer.cpp: with find_unused_parameters the Reducer allreduces local_used_map (int32, one per parameter)
            // every iteration, besides the buckets; it is predicted as bucket -1.
            collectives.add(model.allReduce(-1, (long) paramCount * DType.INT32.elementSize(), DType.INT32));
            assumptions.add(
                    "bucket -1 is DDP's local_used_map AllReduce (find_unused_parameters=True), one per iteration");
        }
        return new Prediction(Prediction.SCHEMA, inputs, backend, buckets, comm, collectives, assumptions, null);
    }

    /**
     * {@code p} as an addendum of the sealed prediction {@code base} (the in-run prediction's second stage, made once
     * the gradient-ready order is known): its inputs name the base's file and seal, so the seal of the addendum covers
     * which prediction it completes.
     */
    public static Prediction addendumOf(Prediction p, Prediction base, String baseFile) {
        com.fasterxml.jackson.databind.node.ObjectNode in = p.inputs().deepCopy();
        in.putObject("addendumOf")
                .put("file", baseFile)
                .put("sha256", base.seal().sha256())
                .put("createdAt", base.seal().createdAt());
        return new Prediction(
                p.schema(), in, p.backend(), p.buckets(), p.communicator(), p.collectives(), p.assumptions(), p.seal());
    }

    /** The scenario's backend: nccl where the topology has GPUs, gloo on a CPU-only host. */
    static String backendOf(Scenario s) {
        return s.backend().name().toLowerCase(java.util.Locale.ROOT);
    }
}

package io.pathproof.accept;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.ddp.Bucket;
import io.pathproof.evidence.Evidence;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.CommunicatorPrediction;
import io.pathproof.predict.Prediction;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What every check family shares: the prediction, the evidence view, the reason NCCL rows are N/A on a gloo run, the
 * table the rows are added to, and look-ups several families need (ranks, communicators, dtypes, TUNING lines, a
 * bucket's kernels). The kinds of evidence a row may cite are {@link io.pathproof.evidence.EvidenceKind}. One family
 * per group of rows, so a new row has an obvious home.
 */
abstract class CheckFamily {
    /** The state shared by the families of one acceptance. */
    record Context(Prediction p, EvidenceView v, String glooReason, List<AcceptanceRow> rows) {}

    final Prediction p;
    final EvidenceView v;
    final String glooReason;
    final List<AcceptanceRow> rows;

    CheckFamily(Context ctx) {
        this.p = ctx.p();
        this.v = ctx.v();
        this.glooReason = ctx.glooReason();
        this.rows = ctx.rows();
    }

    /**
     * The cannot-predict note of the prediction that voids {@code field} (one of
     * {@link CommunicatorPrediction#VOIDABLE}), or null: a row whose expected value rests on an input the model declined
     * to predict is UNPROVEN with that note, never PASS, never FAIL.
     */
    String voided(String field) {
        CommunicatorPrediction cp = p.communicator();
        return cp == null ? null : cp.voidedBy(field);
    }

    /** The reason of rows whose truth is physical on an emulated run (manifest {@code emulation.emulated}). */
    static final String EMULATED = "not applicable (emulated: NCCL decisions real, timings not physical)";

    /** The run was made under the NCCL emulator: its decisions are real, its timings are not. */
    boolean emulated() {
        return v.manifestAt("emulation", "emulated").asBoolean(false);
    }

    /** The observed text of a row the prediction disclaimed. */
    static String disclaimed(String note) {
        return "not judged: the prediction disclaims it (" + note + ")";
    }

    DTypeInfo dtypeOf(CollectivePrediction c) {
        if (c.wireDtype() != null) {
            io.pathproof.scenario.DType w = io.pathproof.scenario.DType.parse(c.wireDtype());
            return new DTypeInfo(w.torchName(), w.elementSize(), w.ncclId());
        }
        Prediction.Buckets b = p.buckets();
        if (b != null) {
            List<Bucket> steady = b.rebuilt().isEmpty() ? b.construction() : b.rebuilt();
            for (Bucket bk : steady) {
                if (bk.index() == c.bucket() && bk.dtype() != null) {
                    return new DTypeInfo(
                            bk.dtype().torchName(),
                            bk.dtype().elementSize(),
                            bk.dtype().ncclId());
                }
            }
        }
        return new DTypeInfo("float32", 4, 7);
    }

    record DTypeInfo(String name, int size, int ncclId) {}

    List<Evidence.Tuning> tuningFor(long bytes) {
        List<Evidence.Tuning> out = new ArrayList<>();
        for (Evidence.Tuning t : v.tuning()) {
            if (t.bytes() == bytes && (t.op() == null || t.op().equalsIgnoreCase("AllReduce"))) {
                out.add(t);
            }
        }
        return out;
    }

    int nRanks() {
        CommunicatorPrediction cp = p.communicator();
        if (cp != null && cp.nRanks() > 0) {
            return cp.nRanks();
        }
        JsonNode in = p.inputs();
        if (in != null && in.path("ranks").canConvertToInt()) {
            return in.path("ranks").asInt();
        }
        return 1;
    }

    List<Evidence.Communicator> ourCommunicators() {
        List<Evidence.Communicator> out = new ArrayList<>();
        for (Evidence.Communicator c : v.communicators()) {
            if (c.nRanks() == null || c.nRanks() == nRanks()) {
                out.add(c);
            }
        }
        return out;
    }

    /** NCCL AllReduce kernels of this bucket on this rank: by element count where the trace records it, else by order. */
    List<Evidence.Kernel> kernelsOf(CollectivePrediction c, int rank, boolean single) {
        List<Evidence.Kernel> all = v.allReduceKernels(rank, single);
        List<CollectivePrediction> colls = p.collectives();
        if (all.isEmpty()) {
            return all;
        }
        long count = c.bytes() / dtypeOf(c).size();
        if (colls.size() == 1) {
            // One bucket: every AllReduce kernel is its kernel, except those whose element count says otherwise (an
            // emulator's launch lines also show torch's own small AllReduces, e.g. its barrier).
            List<Evidence.Kernel> mine = new ArrayList<>();
            for (Evidence.Kernel k : all) {
                Long n = nelems(k);
                if (n == null || n == count) {
                    mine.add(k);
                }
            }
            return mine;
        }
        List<Evidence.Kernel> byCount = new ArrayList<>();
        boolean anyCount = false;
        for (Evidence.Kernel k : all) {
            Long n = nelems(k);
            if (n != null) {
                anyCount = true;
                if (n == count) {
                    byCount.add(k);
                }
            }
        }
        if (anyCount) {
            return byCount;
        }
        // No element counts in the trace: DDP launches the buckets of an iteration in bucket-index order.
        int pos = colls.indexOf(c);
        List<Evidence.Kernel> byOrder = new ArrayList<>();
        for (int i = pos; i < all.size(); i += colls.size()) {
            byOrder.add(all.get(i));
        }
        return byOrder;
    }

    static Long nelems(Evidence.Kernel k) {
        if (k.collective() == null) {
            return null;
        }
        for (Map.Entry<String, String> en : k.collective().entrySet()) {
            String key = en.getKey().toLowerCase(Locale.ROOT).replace('_', ' ');
            if (key.contains("in msg nelems") || key.equals("nelems")) {
                try {
                    return Long.parseLong(en.getValue().trim());
                } catch (NumberFormatException ex) {
                    return null;
                }
            }
        }
        return null;
    }

    Integer observedRanks() {
        for (Evidence.Communicator c : ourCommunicators()) {
            if (c.nRanks() != null) {
                return c.nRanks();
            }
        }
        for (Evidence.Coll cl : v.colls()) {
            if (cl.nRanks() != null) {
                return cl.nRanks();
            }
        }
        return null;
    }

    static String summarize(List<String> obs, String common) {
        return obs.size() == 1
                ? obs.get(0)
                : common + " on " + obs.size() + " sources (" + String.join("; ", obs) + ")";
    }
}

package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.nccl.CollectivePrediction;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;

/**
 * Bytes and bandwidth rows: bus bytes of each bucket and the measured bus bandwidth against the model's ceiling.
 */
final class BandwidthChecks extends CheckFamily {
    BandwidthChecks(CheckFamily.Context ctx) {
        super(ctx);
    }

    /** A measured bus bandwidth may exceed the model's link ceiling by this much (timer granularity) before it FAILs. */
    static final double CEILING_SLACK = 1.05;

    /** Bus bytes: the bucket times the ring bus factor 2(n−1)/n (nccl-tests' busbw convention), not the parameter size. */
    void busBytes(CollectivePrediction c) {
        Row r = new Row("bus-bytes/bucket" + c.bucket(), "bus bytes of bucket " + c.bucket())
                .expected(c.busBytes() + " B (factor " + c.busFactor() + ")");
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        Integer n = observedRanks();
        DTypeInfo dt = dtypeOf(c);
        Long bytes = null;
        for (Evidence.Coll cl : v.colls()) {
            if (cl.op() != null && cl.op().equalsIgnoreCase("AllReduce") && cl.count() * dt.size() == c.bytes()) {
                bytes = cl.count() * dt.size();
                r.kind(EvidenceKind.NCCL_LOG).prov(EvidenceView.src(cl.source()));
                break;
            }
        }
        if (bytes == null) {
            for (Evidence.BucketRecord b : v.hooks()) {
                if (b.index() == c.bucket() && b.bytes() == c.bytes()) {
                    bytes = b.bytes();
                    r.kind(EvidenceKind.HOOK).prov(EvidenceView.src(b.source()));
                    break;
                }
            }
        }
        if (bytes == null) {
            // The flight recorder's AllReduce of this bucket (launch order = bucket index), in the element type it
            // sent.
            found:
            for (TreeMap<Integer, List<FlightBuckets.Collective>> byIt :
                    v.flightBuckets().values()) {
                for (List<FlightBuckets.Collective> it : byIt.values()) {
                    if (c.bucket() < it.size() && it.get(c.bucket()).wireBytes() == c.bytes()) {
                        bytes = it.get(c.bucket()).wireBytes();
                        r.kind(EvidenceKind.FLIGHT_RECORDER)
                                .prov(EvidenceView.src(it.get(c.bucket()).source()));
                        break found;
                    }
                }
            }
        }
        if (bytes == null || n == null) {
            rows.add(r.unproven(
                            bytes == null
                                    ? "no COLL line, hook record or flight-recorder AllReduce of " + c.bytes() + " B"
                                    : "number of ranks not in the evidence")
                    .build());
            return;
        }
        r.kind(EvidenceKind.NCCL_LOG);
        long bus = Math.round(bytes * 2.0 * (n - 1) / n);
        String obs = bus + " B (" + bytes + " B × 2(" + n + "−1)/" + n + ")";
        if (bus == c.busBytes()) {
            r.pass(obs);
        } else {
            r.fail(obs);
        }
        rows.add(r.build());
    }

    /**
     * Measured bus bandwidth (bus bytes / median NCCL kernel time) against the model's link ceiling (bus bytes / the
     * model's expected kernel time). The tuner estimate is not used here: it is a cost model, not a kernel time.
     */
    void busBandwidth(CollectivePrediction c) {
        Row r = new Row(
                "busbw/bucket" + c.bucket(), "bus bandwidth of bucket " + c.bucket() + " against the model's ceiling");
        BigDecimal exp = c.expectedTimeUs();
        double ceiling = exp == null || exp.signum() <= 0 ? Double.NaN : c.busBytes() / (exp.doubleValue() * 1000.0);
        r.expected(
                Double.isNaN(ceiling)
                        ? "(no ceiling predicted)"
                        : String.format(Locale.ROOT, "<= %.2f GB/s (model ceiling)", ceiling));
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        if (c.noKernel()) {
            rows.add(r.na("not applicable (1 rank: no bus traffic)").build());
            return;
        }
        if (emulated()) {
            // A bus bandwidth from emulated kernel times would pass or fail on timings that are not physical.
            rows.add(r.na(EMULATED).build());
            return;
        }
        if (voided("busbw") != null) {
            rows.add(r.unproven(disclaimed(voided("busbw"))).build());
            return;
        }
        List<Double> durs = new ArrayList<>();
        for (int rank = 0; rank < nRanks(); rank++) {
            for (Evidence.Kernel k : kernelsOf(c, rank, nRanks() == 1)) {
                if (k.durUs() != null && k.durUs().signum() > 0) {
                    durs.add(k.durUs().doubleValue());
                    if (r.provenanceSize() < 2) {
                        r.prov(EvidenceView.src(k.source()));
                    }
                }
            }
        }
        if (durs.isEmpty()) {
            rows.add(r.unproven("no NCCL kernel durations for this bucket").build());
            return;
        }
        if (Double.isNaN(ceiling)) {
            rows.add(r.kind(EvidenceKind.KERNEL_TRACE)
                    .unproven("the prediction holds no expected kernel time")
                    .build());
            return;
        }
        durs.sort(null);
        double med = durs.size() % 2 == 1
                ? durs.get(durs.size() / 2)
                : (durs.get(durs.size() / 2 - 1) + durs.get(durs.size() / 2)) / 2;
        double bw = c.busBytes() / (med * 1000.0);
        r.kind(EvidenceKind.KERNEL_TRACE);
        String obs = String.format(
                Locale.ROOT,
                "%.2f GB/s = %.0f%% of the ceiling (median kernel %.1f us of %d)",
                bw,
                100 * bw / ceiling,
                med,
                durs.size());
        if (bw <= ceiling * CEILING_SLACK) {
            r.pass(obs);
        } else {
            r.fail(obs + ": faster than the links allow, the model's ceiling is wrong");
        }
        rows.add(r.build());
    }
}

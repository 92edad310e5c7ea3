package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.CommunicatorPrediction;
import io.pathproof.nccl.NcclAlgorithm;
import io.pathproof.nccl.NcclProtocol;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * NCCL decision rows: the collective of each bucket, the algorithm and protocol from TUNING, the tuner's cost-model
 * time, and the communicator's coll channels.
 */
final class DecisionChecks extends CheckFamily {
    DecisionChecks(CheckFamily.Context ctx) {
        super(ctx);
    }

    /** A prediction with no collective: a gloo prediction has none by design (N/A); an NCCL one cannot be accepted. */
    void noCollectives() {
        Row r = new Row("collectives", "per-bucket collective predictions")
                .expected("one collective prediction per bucket");
        // A gloo prediction has no NCCL collective by design: listed, never counted as PASS, never a FAIL.
        rows.add(
                glooReason != null || "gloo".equalsIgnoreCase(p.backend())
                        ? r.na(glooReason != null ? glooReason : "not applicable (backend gloo)")
                                .build()
                        : r.fail("the prediction holds no collective; it cannot be accepted against NCCL evidence")
                                .build());
    }

    void collective(CollectivePrediction c) {
        DTypeInfo dt = dtypeOf(c);
        long count = c.bytes() / dt.size();
        Row r = new Row("collective/bucket" + c.bucket(), "collective of bucket " + c.bucket())
                .expected("AllReduce SUM " + dt.name() + " count " + count + " (" + c.bytes() + " B)");
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        List<Evidence.Coll> matching = new ArrayList<>();
        Set<Long> otherCounts = new TreeSet<>();
        for (Evidence.Coll cl : v.colls()) {
            if (cl.op() != null && cl.op().equalsIgnoreCase("AllReduce")) {
                if (cl.count() == count) {
                    matching.add(cl);
                } else {
                    otherCounts.add(cl.count());
                }
            }
        }
        if (!matching.isEmpty()) {
            r.kind(EvidenceKind.NCCL_LOG);
            List<String> bad = new ArrayList<>();
            Set<Integer> ranks = new TreeSet<>();
            for (Evidence.Coll cl : matching) {
                if (cl.rank() != null) {
                    ranks.add(cl.rank());
                }
                // ncclRedOp_t ncclSum = 0 and ncclDataType_t ids (nccl.h, identical in 2.22.3 and 2.30.7).
                if (cl.redOp() != 0 || cl.datatype() != dt.ncclId()) {
                    bad.add("op " + cl.redOp() + " datatype " + cl.datatype() + " at " + cl.source());
                    r.prov(EvidenceView.src(cl.source()));
                }
            }
            if (bad.isEmpty()) {
                r.prov(EvidenceView.src(matching.get(0).source()));
            }
            addFlightRecorder(r, count, dt);
            if (bad.isEmpty()) {
                r.pass("AllReduce op 0 (Sum) datatype " + dt.ncclId() + " (" + dt.name() + ") count " + count + " in "
                        + matching.size() + " distinct COLL line(s)" + (ranks.isEmpty() ? "" : ", ranks " + ranks));
            } else {
                r.fail("AllReduce count " + count + " with "
                        + String.join("; ", bad.subList(0, Math.min(3, bad.size()))));
            }
        } else if (!otherCounts.isEmpty()) {
            r.kind(EvidenceKind.NCCL_LOG)
                    .fail("no AllReduce of " + count + " elements; COLL lines show counts " + otherCounts);
        } else {
            boolean fr = addFlightRecorder(r, count, dt);
            if (fr) {
                r.unproven("AllReduce " + dt.name() + " of " + count
                        + " elements in the flight recorder, which does not record "
                        + "the reduction op; no NCCL COLL line (NCCL_DEBUG_SUBSYS without COLL?)");
            } else {
                r.unproven("no NCCL COLL line and no flight-recorder entry for this size");
            }
        }
        rows.add(r.build());
    }

    /** Adds flight-recorder entries of this size as a second kind; true when some were found. */
    private boolean addFlightRecorder(Row r, long count, DTypeInfo dt) {
        for (Evidence.FlightRecord fr : v.flightRecords()) {
            if (fr.profilingName() != null
                    && fr.profilingName().endsWith("all_reduce")
                    && fr.inputSizes() != null
                    && fr.inputSizes().size() == 1
                    && numel(fr.inputSizes().get(0)) == count) {
                r.kind(EvidenceKind.FLIGHT_RECORDER).prov(EvidenceView.src(fr.source()));
                return true;
            }
        }
        return false;
    }

    private static long numel(List<Long> shape) {
        long n = 1;
        for (Long d : shape) {
            n *= d == null ? 0 : d;
        }
        return n;
    }

    void algorithm(CollectivePrediction c) {
        String exp = NcclAlgorithm.canonical(c.algorithm(), c.algorithmId());
        Row r = new Row("algorithm/bucket" + c.bucket(), "algorithm of bucket " + c.bucket())
                .expected(exp + " (algo " + c.algorithmId() + ")");
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        if (c.noKernel()) {
            rows.add(r.expected("none: a 1-rank communicator copies, no algorithm is selected")
                    .na("not applicable (1 rank: NCCL prints no TUNING line and launches no kernel)")
                    .build());
            return;
        }
        if (voided("algorithm") != null) {
            rows.add(r.unproven(disclaimed(voided("algorithm"))).build());
            return;
        }
        tuningRow(r, c, true, exp);
    }

    /** Protocol comes from TUNING only, never from a kernel symbol (seed common error 7: the symbol always says LL). */
    void protocol(CollectivePrediction c) {
        String exp = NcclProtocol.canonical(c.protocol(), c.protocolId());
        Row r = new Row("protocol/bucket" + c.bucket(), "protocol of bucket " + c.bucket())
                .expected(exp + " (proto " + c.protocolId() + ")");
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        if (c.noKernel()) {
            rows.add(r.expected("none: a 1-rank communicator copies, no protocol is selected")
                    .na("not applicable (1 rank: NCCL prints no TUNING line and launches no kernel)")
                    .build());
            return;
        }
        if (voided("protocol") != null) {
            rows.add(r.unproven(disclaimed(voided("protocol"))).build());
            return;
        }
        tuningRow(r, c, false, exp);
    }

    private void tuningRow(Row r, CollectivePrediction c, boolean algo, String exp) {
        List<Evidence.Tuning> ts = tuningFor(c.bytes());
        if (ts.isEmpty()) {
            r.unproven("no TUNING line for " + c.bytes()
                    + " B (needs NCCL_DEBUG_SUBSYS with TUNING; the kernel name is no " + "evidence of "
                    + (algo ? "the algorithm's protocol" : "the protocol") + ")");
            rows.add(r.build());
            return;
        }
        Set<String> seen = new TreeSet<>();
        for (Evidence.Tuning t : ts) {
            String got = algo
                    ? NcclAlgorithm.canonical(t.algorithm(), t.algorithmId())
                    : NcclProtocol.canonical(t.protocol(), t.protocolId());
            seen.add(String.valueOf(got));
            if (!exp.equals(got)) {
                r.prov(EvidenceView.src(t.source()));
            }
        }
        r.kind(EvidenceKind.NCCL_LOG);
        if (seen.size() == 1 && seen.contains(exp)) {
            r.prov(EvidenceView.src(ts.get(0).source()));
            r.pass(exp + " in " + ts.size() + " distinct TUNING line(s)");
        } else {
            r.fail(String.join(", ", seen) + " in TUNING for " + c.bytes() + " B");
        }
        rows.add(r.build());
    }

    /**
     * The tuner's cost-model estimate against the TUNING line that prints it (NCCL ≤ 2.23). It is never compared with a
     * kernel duration (seed common error 6: the TUNING time is a cost model, not a measurement).
     */
    void tunerTime(CollectivePrediction c) {
        Row r = new Row(
                        "tuner-time/bucket" + c.bucket(),
                        "tuner cost-model time of bucket " + c.bucket() + " (not a kernel time)")
                .expected(
                        c.tunerTimeUs() == null
                                ? "(no estimate)"
                                : c.tunerTimeUs().toPlainString() + " us");
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        if (c.noKernel()) {
            rows.add(r.na("not applicable (1 rank: no tuning)").build());
            return;
        }
        if (voided("tuner-time") != null) {
            rows.add(r.unproven(disclaimed(voided("tuner-time"))).build());
            return;
        }
        if (c.tunerTimeUs() == null) {
            rows.add(r.unproven("the prediction holds no tuner estimate for this size")
                    .build());
            return;
        }
        List<Evidence.Tuning> ts = tuningFor(c.bytes());
        List<Evidence.Tuning> timed = new ArrayList<>();
        for (Evidence.Tuning t : ts) {
            if (t.timeUs() != null) {
                timed.add(t);
            }
        }
        if (timed.isEmpty()) {
            if (!ts.isEmpty()) {
                String ver = v.evidence().nccl() == null || v.evidence().nccl().version() == null
                        ? "this NCCL"
                        : "NCCL " + v.evidence().nccl().version();
                // From 2.24 the time moved to a TRACE-only line (enqueue.cc:2068@v2.30.7-1): nothing to compare at
                // INFO.
                rows.add(r.kind(EvidenceKind.NCCL_LOG)
                        .prov(EvidenceView.src(ts.get(0).source()))
                        .na("not applicable (" + ver + " prints no tuner time at INFO)")
                        .build());
            } else {
                rows.add(r.unproven("no TUNING line for " + c.bytes() + " B").build());
            }
            return;
        }
        r.kind(EvidenceKind.NCCL_LOG);
        // %f prints 6 decimals: equal when they agree to the printed precision.
        BigDecimal exp = c.tunerTimeUs().setScale(6, RoundingMode.HALF_EVEN);
        List<String> bad = new ArrayList<>();
        for (Evidence.Tuning t : timed) {
            if (t.timeUs()
                            .setScale(6, RoundingMode.HALF_EVEN)
                            .subtract(exp)
                            .abs()
                            .compareTo(new BigDecimal("0.000001"))
                    > 0) {
                bad.add(t.timeUs().toPlainString());
                r.prov(EvidenceView.src(t.source()));
            }
        }
        if (bad.isEmpty()) {
            r.prov(EvidenceView.src(timed.get(0).source()));
            r.pass(timed.get(0).timeUs().toPlainString() + " us in " + timed.size() + " distinct TUNING line(s)");
        } else {
            r.fail("TUNING prints " + String.join(", ", new TreeSet<>(bad)) + " us");
        }
        rows.add(r.build());
    }

    /**
     * The rank order of each ring channel ("Channel 00/24 : 0 1 2 3", INIT) against the model's graph search. A ring is
     * the same ring from whichever rank it is printed, so orders are compared as cycles (rotation, same direction).
     * Listed only where the prediction lists orders and there is a ring (more than one rank, NCCL).
     */
    void ringOrder() {
        CommunicatorPrediction cp = p.communicator();
        if (glooReason != null || cp == null || cp.ringOrders().isEmpty() || nRanks() <= 1) {
            return;
        }
        List<String> exp = cp.ringOrders();
        Row r = new Row("ring-order", "rank order of each ring channel (INIT)")
                .expected(exp.size() + " ring(s), channel 0: " + exp.get(0));
        if (voided("ring-order") != null) {
            rows.add(r.unproven(disclaimed(voided("ring-order"))).build());
            return;
        }
        List<String> seen = null;
        Evidence.Communicator printed = null;
        for (Evidence.Communicator c : ourCommunicators()) {
            if (!EvidenceView.list(c.rings()).isEmpty()) {
                seen = c.rings();
                printed = c;
                r.kind(EvidenceKind.NCCL_LOG).prov(EvidenceView.src(c.source()));
                break;
            }
        }
        if (seen == null) {
            rows.add(r.unproven("no 'Channel NN/MM : ranks' INIT line for a " + nRanks() + "-rank communicator")
                    .build());
            return;
        }
        // Each printed ring against the predicted ring of its own channel: a log may hold only some channels.
        List<String> bad = new ArrayList<>();
        int n = 0;
        int first = -1;
        for (int i = 0; i < seen.size(); i++) {
            int ch = printed.ringChannel(i);
            if (ch >= exp.size()) {
                continue; // a channel past the predicted rings: the channel-count rows judge how many there are
            }
            n++;
            first = first < 0 ? i : first;
            if (!sameCycle(exp.get(ch), seen.get(i))) {
                bad.add("channel " + ch + ": " + seen.get(i) + " (expected " + exp.get(ch) + ")");
            }
        }
        if (n == 0) {
            rows.add(r.unproven("the log prints rings only of channels past the " + exp.size() + " predicted")
                    .build());
            return;
        }
        if (bad.isEmpty()) {
            int ch0 = printed.ringChannel(first);
            r.pass(n + " ring(s) in the predicted order (channel " + ch0 + ": " + seen.get(first) + ")"
                    + (cut(exp.get(ch0), seen.get(first))
                            ? "; NCCL printed the first " + RING_PRINT_WIDTH_BEFORE_2_23 + " ranks of each ring"
                            : ""));
        } else {
            r.fail(String.join("; ", bad.subList(0, Math.min(3, bad.size())))
                    + (bad.size() > 3 ? " and " + (bad.size() - 3) + " more" : ""));
        }
        rows.add(r.build());
    }

    /**
     * NCCL before 2.23 prints at most 20 ranks of a ring (graph/rings.cc:9, 18@v2.21.5-1 and @v2.22.3-1, MAXWIDTH;
     * 2.23 prints them all, rings.cc:37@v2.23.4-1).
     */
    static final int RING_PRINT_WIDTH_BEFORE_2_23 = 20;

    /** NCCL's ring line is cut at 20 ranks while the ring holds more. */
    static boolean cut(String expected, String printed) {
        return cut(ranks(expected).length, ranks(printed).length);
    }

    private static boolean cut(int ring, int seen) {
        return seen == RING_PRINT_WIDTH_BEFORE_2_23 && ring > seen;
    }

    private static String[] ranks(String order) {
        return order.trim().split("\\s+");
    }

    /**
     * The printed rank order is the expected ring: the same ranks, each followed by the same next rank, read from
     * whichever rank printed it; a line cut at 20 ranks ({@link #cut}) must be the ring's first 20 from there.
     */
    static boolean sameCycle(String expected, String printed) {
        String[] ring = ranks(expected);
        String[] seen = ranks(printed);
        if (seen.length != ring.length && !cut(ring.length, seen.length)) {
            return false;
        }
        for (int shift = 0; shift < ring.length; shift++) {
            boolean ok = true;
            for (int i = 0; i < seen.length && ok; i++) {
                ok = seen[i].equals(ring[(i + shift) % ring.length]);
            }
            if (ok) {
                return true;
            }
        }
        return false;
    }

    void collChannels() {
        CommunicatorPrediction cp = p.communicator();
        Row r = new Row("coll-channels", "communicator coll channels (INIT)");
        if (cp == null) {
            r.expected("(no communicator prediction)");
        } else {
            r.expected(cp.collChannels() + " coll channels");
        }
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        if (cp == null) {
            rows.add(r.unproven("the model could not predict the communicator").build());
            return;
        }
        if (voided("coll-channels") != null) {
            rows.add(r.unproven(disclaimed(voided("coll-channels"))).build());
            return;
        }
        Set<Integer> seen = new TreeSet<>();
        for (Evidence.Communicator c : ourCommunicators()) {
            if (c.collChannels() != null) {
                seen.add(c.collChannels());
                r.kind(EvidenceKind.NCCL_LOG).prov(EvidenceView.src(c.source()));
            }
        }
        if (seen.isEmpty()) {
            r.unproven("no 'coll channels' INIT line for a " + nRanks() + "-rank communicator");
        } else if (seen.size() == 1 && seen.contains(cp.collChannels())) {
            r.pass(cp.collChannels() + " coll channels");
        } else {
            r.fail(seen + " coll channels");
        }
        rows.add(r.build());
    }
}

package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.nccl.CollectivePrediction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Kernel and launch-shape rows: gridX and blockX of each bucket's NCCL kernel per rank, and one NCCL kernel per
 * AllReduce call.
 */
final class LaunchChecks extends CheckFamily {
    LaunchChecks(CheckFamily.Context ctx) {
        super(ctx);
    }

    /**
     * gridX and blockX of the NCCL kernel of one bucket on one rank. gridX is the number of channels used for this size
     * (popcount of the plan's channel mask, enqueue.cc:1389-1392@v2.22.3-1), compared with the prediction's gridX —
     * never with the communicator's collChannels (seed common error 8). The TUNING channel range of NCCL ≥ 2.24
     * (channel{Lo..Hi}) is a second, log-side witness of the same number.
     */
    void launchShape(CollectivePrediction c, int rank) {
        Row r = new Row(
                "launch-shape/rank" + rank + "/bucket" + c.bucket(),
                "gridX and blockX of bucket " + c.bucket() + " on rank " + rank);
        if (c.noKernel()) {
            r.expected("no NCCL kernel (1-rank communicator: a copy)");
        } else {
            r.expected("gridX " + c.gridX() + " (channels used for " + c.bytes() + " B), blockX " + c.blockX());
        }
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        if (!c.noKernel() && voided("launch-shape") != null) {
            rows.add(r.unproven(disclaimed(voided("launch-shape"))).build());
            return;
        }
        boolean single = nRanks() == 1;
        List<Evidence.Kernel> mine = kernelsOf(c, rank, single);
        Verdict verdict = Verdict.NOT_APPLICABLE;
        List<String> obs = new ArrayList<>();
        if (c.noKernel()) {
            if (!v.hasKernelTrace()) {
                rows.add(r.unproven("no kernel trace for rank " + rank).build());
                return;
            }
            r.kind(EvidenceKind.KERNEL_TRACE);
            if (v.allReduceKernels(rank, single).isEmpty()) {
                r.pass("no NCCL AllReduce kernel on rank " + rank);
            } else {
                r.fail(v.allReduceKernels(rank, single).size() + " NCCL AllReduce kernel(s) on rank " + rank);
            }
            rows.add(r.build());
            return;
        }
        if (!mine.isEmpty()) {
            r.kind(EvidenceKind.KERNEL_TRACE);
            Map<String, Integer> shapes = new TreeMap<>();
            boolean bad = false;
            for (Evidence.Kernel k : mine) {
                int gx = k.grid() != null && k.grid().length > 0 ? k.grid()[0] : -1;
                int bx = k.block() != null && k.block().length > 0 ? k.block()[0] : -1;
                shapes.merge("gridX " + gx + " blockX " + bx, 1, Integer::sum);
                if (gx != c.gridX() || bx != c.blockX()) {
                    bad = true;
                    r.prov(EvidenceView.src(k.source()));
                }
            }
            if (!bad) {
                r.prov(EvidenceView.src(mine.get(0).source()));
            }
            List<String> parts = new ArrayList<>();
            shapes.forEach((s, n) -> parts.add(s + " (" + n + " kernel" + (n == 1 ? "" : "s") + ")"));
            obs.add(String.join(", ", parts));
            verdict = bad ? Verdict.FAIL : Verdict.PASS;
        } else {
            obs.add("blockX: no NCCL kernel of this bucket in a kernel trace of rank " + rank);
            verdict = Verdict.UNPROVEN;
        }
        // Log witness: TUNING channel{Lo..Hi} of NCCL >= 2.24 (printed on rank 0 only).
        Set<Integer> used = new TreeSet<>();
        for (Evidence.Tuning t : tuningFor(c.bytes())) {
            if (t.channelLo() != null && t.channelHi() != null && (t.rank() == null || t.rank() == rank)) {
                used.add(t.channelHi() - t.channelLo() + 1);
                r.kind(EvidenceKind.NCCL_LOG).prov(EvidenceView.src(t.source()));
            }
        }
        if (!used.isEmpty()) {
            boolean ok = used.size() == 1 && used.contains(c.gridX());
            obs.add("TUNING channel range gives " + used + " channel(s)");
            verdict = Verdict.worst(verdict, ok ? Verdict.PASS : Verdict.FAIL);
        }
        r.judged(verdict, String.join("; ", obs));
        rows.add(r.build());
    }

    /** One NCCL kernel per AllReduce call per rank: the trace's collective ranges against its NCCL kernels. */
    void kernelsPerCollective(int rank) {
        boolean single = nRanks() == 1;
        boolean oneRank = p.collectives().stream().allMatch(CollectivePrediction::noKernel)
                && !p.collectives().isEmpty();
        Row r = new Row("kernels/rank" + rank, "NCCL kernels per AllReduce call on rank " + rank)
                .expected(oneRank ? "0 kernels (1-rank communicator: a copy)" : "1 NCCL kernel per bucket AllReduce");
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        List<Evidence.Range> calls = v.allReduceRanges(rank, single);
        // Calls are counted in the trace's window: kernels from an emulator's launch lines cover the whole run.
        List<Evidence.Kernel> ks = new ArrayList<>(v.allReduceKernels(rank, single));
        ks.removeIf(k -> k.name() != null && k.name().startsWith(Evidence.Kernel.LAUNCH_LINE));
        if (!v.hasKernelTrace()) {
            rows.add(r.unproven("no kernel trace").build());
            return;
        }
        r.kind(EvidenceKind.KERNEL_TRACE);
        if (!ks.isEmpty()) {
            r.prov(EvidenceView.src(ks.get(0).source()));
        }
        if (calls.isEmpty()) {
            rows.add(r.unproven(ks.size()
                            + " NCCL AllReduce kernel(s), but no collective call ranges to count them against")
                    .build());
            return;
        }
        r.prov(EvidenceView.src(calls.get(0).source()));
        int expected = oneRank ? 0 : calls.size();
        String obs = ks.size() + " NCCL AllReduce kernel(s) for " + calls.size() + " all_reduce call(s)";
        if (ks.size() == expected) {
            r.pass(obs);
        } else {
            r.fail(obs);
        }
        rows.add(r.build());
    }
}

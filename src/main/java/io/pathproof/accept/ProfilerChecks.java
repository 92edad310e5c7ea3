package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.NcclAlgorithm;
import io.pathproof.nccl.NcclProtocol;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The third witness of a bucket's NCCL decision: what NCCL itself handed its profiler plugin for the collective
 * (algorithm, protocol, channels, warps: the task's fields at launch, src/plugin/profiler.cc:393-453@v2.28.9-1),
 * beside the TUNING line ({@link DecisionChecks}) and the kernel's launch shape ({@link LaunchChecks}). A run that did
 * not ask NCCL to load the plugin has no such rows at all, so older runs and their tables are unchanged.
 */
final class ProfilerChecks extends CheckFamily {
    ProfilerChecks(CheckFamily.Context ctx) {
        super(ctx);
    }

    /**
     * Algorithm, protocol, channels used (== the kernel's gridX) and threads (warps × 32 == blockX) of one bucket's
     * AllReduce on one rank, as NCCL's profiler saw it. Records are matched by function and bytes (count × the size of
     * NCCL's datatype), the same key the TUNING line uses.
     */
    void decision(CollectivePrediction c, int rank) {
        Evidence.NcclProfiler prof = v.evidence().ncclProfiler();
        if (prof == null) {
            return;
        }
        String algo = NcclAlgorithm.canonical(c.algorithm(), c.algorithmId());
        String proto = NcclProtocol.canonical(c.protocol(), c.protocolId());
        Row r = new Row(
                "profiler/rank" + rank + "/bucket" + c.bucket(),
                "NCCL profiler: algorithm, protocol, channels and threads of bucket " + c.bucket() + " on rank "
                        + rank);
        if (c.noKernel()) {
            r.expected("no collective (1-rank communicator: a copy)");
        } else {
            r.expected(shape(algo, proto, c.gridX(), c.blockX()) + " for " + c.bytes() + " B");
        }
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        if (c.noKernel()) {
            // NCCL copies before any profiler event exists: the plugin has nothing to report for a 1-rank communicator.
            rows.add(r.na("not applicable (1 rank: NCCL copies and reports no collective to its profiler)")
                    .build());
            return;
        }
        if (!"loaded".equals(prof.status())) {
            rows.add(r.unproven(prof.message() != null ? prof.message() : "profiler plugin not loaded")
                    .build());
            return;
        }
        List<Evidence.ProfiledColl> ofRank = new ArrayList<>();
        for (Evidence.ProfiledColl pc : EvidenceView.list(prof.colls())) {
            if ("coll".equals(pc.event()) && sameRank(pc.rank(), rank)) {
                ofRank.add(pc);
            }
        }
        List<Evidence.ProfiledColl> mine = new ArrayList<>();
        for (Evidence.ProfiledColl pc : ofRank) {
            if ("AllReduce".equalsIgnoreCase(pc.func()) && Objects.equals(pc.bytes(), c.bytes())) {
                mine.add(pc);
            }
        }
        if (mine.isEmpty()) {
            rows.add(r.unproven(unmatched(ofRank, c, rank)).build());
            return;
        }
        rows.add(judge(r, c, algo, proto, mine));
    }

    /** Why no record of the rank matches the bucket: none at all, or only AllReduces of other sizes. */
    private static String unmatched(List<Evidence.ProfiledColl> ofRank, CollectivePrediction c, int rank) {
        Set<Long> otherSizes = new TreeSet<>();
        for (Evidence.ProfiledColl pc : ofRank) {
            if ("AllReduce".equalsIgnoreCase(pc.func())
                    && !Objects.equals(pc.bytes(), c.bytes())
                    && pc.bytes() != null) {
                otherSizes.add(pc.bytes());
            }
        }
        return ofRank.isEmpty()
                ? "no NCCL profiler record of rank " + rank
                : "no AllReduce of " + c.bytes() + " B in NCCL's profiler records of rank " + rank
                        + (otherSizes.isEmpty() ? "" : " (AllReduce sizes seen: " + otherSizes + " B)");
    }

    /** Each matching record's algorithm, protocol, channels and threads against the prediction; the worst verdict. */
    private AcceptanceRow judge(
            Row r, CollectivePrediction c, String algo, String proto, List<Evidence.ProfiledColl> mine) {
        r.kind(EvidenceKind.NCCL_PROFILER);
        List<String> obs = new ArrayList<>();
        List<String> unknown = new ArrayList<>();
        Set<String> wrong = new TreeSet<>();
        Verdict verdict = Verdict.PASS;
        long calls = 0;
        for (Evidence.ProfiledColl pc : mine) {
            calls += pc.calls();
            Verdict one = Verdict.PASS;
            String gotAlgo = NcclAlgorithm.canonical(pc.algorithm(), null);
            String gotProto = NcclProtocol.canonical(pc.protocol(), null);
            one = Verdict.worst(one, field(unknown, wrong, "algorithm", gotAlgo, algo, voided("algorithm")));
            one = Verdict.worst(one, field(unknown, wrong, "protocol", gotProto, proto, voided("protocol")));
            one = Verdict.worst(
                    one, field(unknown, wrong, "channels", pc.channels(), c.gridX(), voided("launch-shape")));
            one = Verdict.worst(
                    one, field(unknown, wrong, "threads", pc.threads(), c.blockX(), voided("launch-shape")));
            if (one != Verdict.PASS) {
                r.prov(EvidenceView.src(pc.source()));
            }
            obs.add(shape(gotAlgo, gotProto, pc.channels(), pc.threads()) + " (" + pc.warps() + " warps) in "
                    + pc.calls() + " call(s)");
            verdict = Verdict.worst(verdict, one);
        }
        if (verdict == Verdict.PASS) {
            r.prov(EvidenceView.src(mine.get(0).source()));
        }
        String text = (mine.size() == 1 ? obs.get(0) : String.join("; ", obs) + " (" + calls + " calls)")
                + (wrong.isEmpty() ? "" : "; differs in " + String.join(", ", wrong))
                + (unknown.isEmpty() ? "" : "; not judged: " + String.join(", ", new TreeSet<>(unknown)));
        return r.judged(verdict, text).build();
    }

    /**
     * One field of one record: PASS when it equals the prediction, FAIL when it differs, UNPROVEN when the record lacks
     * it or the prediction disclaims it (a disclaimed field is never judged, not even FAIL).
     */
    private static Verdict field(
            List<String> unknown, Set<String> wrong, String name, Object got, Object exp, String voidedBy) {
        if (voidedBy != null) {
            unknown.add(name + " (" + disclaimed(voidedBy) + ")");
            return Verdict.UNPROVEN;
        }
        if (got == null || exp == null) {
            unknown.add(name + " (absent)");
            return Verdict.UNPROVEN;
        }
        if (got.equals(exp)) {
            return Verdict.PASS;
        }
        wrong.add(name + " (" + got + ", predicted " + exp + ")");
        return Verdict.FAIL;
    }

    /** A record without a rank belongs to rank 0 only in a one-rank run; otherwise ranks must be equal. */
    private boolean sameRank(Integer recordRank, int rank) {
        return recordRank == null ? nRanks() == 1 && rank == 0 : recordRank == rank;
    }

    private static String shape(String algo, String proto, Integer channels, Integer threads) {
        return algo + "/" + proto + ", " + channels + " channels, " + threads + " threads";
    }
}

package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.Source;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Replica and ordering rows: equal replicas after training, the hook-ready / future-done / GPU-done order of each
 * bucket, and cross-rank agreement of the NCCL facts.
 */
final class ReplicaChecks extends CheckFamily {
    ReplicaChecks(CheckFamily.Context ctx) {
        super(ctx);
    }

    /** Seed common error 10: a kernel that ran proves nothing about the result; the replicas must be equal. */
    void replicas() {
        Row r = new Row(
                        "replicas",
                        "parameter replicas equal on every rank after training, and the gradients of an averaged last"
                                + " backward too")
                .expected("equal on " + nRanks() + "/" + nRanks() + " ranks");
        Evidence.Replicas rep = v.evidence().replicas();
        if (rep == null
                || (rep.equal() == null && EvidenceView.list(rep.digests()).isEmpty())) {
            rows.add(r.unproven("no replica digests").build());
            return;
        }
        r.kind(EvidenceKind.REPLICAS).prov(EvidenceView.src(rep.source()));
        List<Evidence.Digest> ds = EvidenceView.list(rep.digests());
        Map<String, List<Integer>> byDigest = new TreeMap<>();
        for (Evidence.Digest d : ds) {
            byDigest.computeIfAbsent(String.valueOf(d.sha256()), k -> new ArrayList<>())
                    .add(d.rank());
        }
        boolean digestsEqual = byDigest.size() <= 1;
        GradientComparison grads = GradientComparison.of(rep.averagedGradients());
        if (Boolean.FALSE.equals(rep.equal()) || !digestsEqual) {
            r.fail("replicas differ: " + (byDigest.isEmpty() ? "harness says unequal" : groups(byDigest)));
        } else if (grads.differ() != null) {
            // DDP's contract broken where equal parameters cannot show it: a job that ends before its optimizer steps
            r.fail("parameters equal on " + ds.size() + "/" + nRanks() + " ranks, but " + grads.differ());
        } else if (ds.size() < nRanks()) {
            r.unproven(
                    "digests of " + ds.size() + " of " + nRanks() + " ranks" + (ds.isEmpty() ? " (only a flag)" : ""));
        } else {
            r.pass("equal on " + ds.size() + "/" + nRanks() + " ranks (sha256 "
                    + abbreviate(ds.get(0).sha256()) + ")" + grads.note());
        }
        rows.add(r.build());
    }

    /**
     * The ranks' gradients at their end, compared where DDP promises them equal: every rank's last backward was the
     * same iteration and DDP averaged it. {@code differ} says how they differ there (null: they do not, or cannot be
     * compared); {@code note} is what a PASS adds (empty where no rank wrote gradients).
     */
    private record GradientComparison(String differ, String note) {
        static GradientComparison of(Evidence.GradientGroups g) {
            if (g == null) {
                return new GradientComparison(null, "");
            }
            if (g.groups() == null) {
                return new GradientComparison(null, "; gradients not compared: " + g.notCompared());
            }
            return g.differ()
                    ? new GradientComparison(
                            "the gradients DDP averaged in iteration " + g.iteration() + " differ: "
                                    + groups(g.groups()),
                            "")
                    : new GradientComparison(
                            null, "; the gradients DDP averaged in iteration " + g.iteration() + " equal too");
        }
    }

    private static String groups(Map<String, List<Integer>> byDigest) {
        List<String> out = new ArrayList<>();
        byDigest.forEach((d, ranks) -> out.add("ranks " + ranks + " sha256 " + abbreviate(d)));
        return String.join(" vs ", out);
    }

    private static String abbreviate(String s) {
        return s == null ? "?" : s.length() > 12 ? s.substring(0, 12) + "…" : s;
    }

    /**
     * GPU-done is a CUDA event mapped onto the host clock through one anchor per step (host time taken, then the anchor
     * event recorded): the mapped time is early by the host's delay between the two, tens of µs and more on a loaded
     * host (seen: 72 µs on the real H200 run). A GPU-done up to this much before future-done is within the mapping's
     * uncertainty and is reported, not failed; more is a real inversion.
     */
    static final long GPU_CLOCK_SLACK_NS = 500_000L;

    /**
     * Three time boundaries of one bucket (seed common errors 4 and 5): hook entry ("ready"), future done, GPU done.
     * Hook-ready must precede future-done (same host clock, strict), and future-done ≤ GPU-done (a done future is not
     * a finished GPU). On CPU there is no GPU boundary.
     */
    void completionOrder() {
        boolean cpu = glooReason != null;
        Row r = new Row("completion-order", "hook-ready < future-done <= GPU-done per bucket")
                .expected(cpu ? "hook-ready < future-done (GPU: n/a on CPU)" : "hook-ready < future-done <= GPU-done");
        List<Evidence.BucketRecord> hs = v.hooks();
        int checked = 0;
        int bad = 0;
        int gpuChecked = 0;
        int gpuBad = 0;
        int withinSlack = 0;
        long worstEarlyNs = 0;
        for (Evidence.BucketRecord b : hs) {
            if (b.readyNs() == null || b.futureDoneNs() == null) {
                continue;
            }
            checked++;
            boolean ok = b.readyNs() < b.futureDoneNs();
            if (b.gpuDoneNs() != null) {
                gpuChecked++;
                long early = b.futureDoneNs() - b.gpuDoneNs();
                if (early > GPU_CLOCK_SLACK_NS) {
                    gpuBad++;
                    ok = false;
                } else if (early > 0) {
                    withinSlack++;
                    worstEarlyNs = Math.max(worstEarlyNs, early);
                }
            }
            if (!ok) {
                bad++;
                if (bad <= 3) {
                    r.prov(EvidenceView.src(b.source()));
                }
            }
        }
        if (checked == 0) {
            rows.add(r.unproven("no hook records with ready and future-done times"
                            + (v.manifestAt("hookEvery").asInt(-1) == 0
                                    ? " (the run recorded no comm hook: --hook-every 0, the default on NCCL; the buckets are proven from DDP's"
                                            + " logging data and the flight recorder, which do not see the hook's future)"
                                    : ""))
                    .build());
            return;
        }
        r.kind(EvidenceKind.HOOK);
        if (bad == 0) {
            r.prov(EvidenceView.src(hs.get(0).source()));
        }
        String obs = (checked - bad) + "/" + checked + " bucket records in order"
                + (gpuChecked > 0
                        ? " (" + (gpuChecked - gpuBad) + "/" + gpuChecked + " with GPU-done)"
                        : cpu ? "; GPU: n/a (CPU)" : "; no GPU-done times")
                + (withinSlack > 0
                        ? String.format(
                                Locale.ROOT,
                                "; %d GPU-done up to %.1f us before future-done, within the host-clock mapping of "
                                        + "CUDA events",
                                withinSlack,
                                worstEarlyNs / 1000.0)
                        : "");
        if (bad > 0) {
            r.fail(obs);
        } else if (!cpu && gpuChecked == 0) {
            r.unproven(obs);
        } else {
            r.pass(obs);
        }
        rows.add(r.build());
    }

    /**
     * The reader's cross-file findings: ranks of one communicator that disagree on channels or on a decision (NVIDIA/nccl
     * #1136), env or NCCL versions that differ between ranks, a channel count that changed mid-run, a TUNING line and
     * NCCL's profiler record of one call that name different decisions (one witness misread). A prediction for
     * "the" communicator cannot hold for a run that is not one configuration.
     */
    void consistency() {
        Row r = new Row("evidence-consistency", "ranks agree on versions, env, channels and decisions")
                .expected("no cross-rank disagreement");
        if (glooReason != null) {
            rows.add(r.na(glooReason).build());
            return;
        }
        List<String> bad = new ArrayList<>();
        for (Evidence.Finding f : EvidenceView.list(v.evidence().findings())) {
            if (f.kind() != null && INCONSISTENT.contains(f.kind())) {
                bad.add(f.kind() + ": " + f.message());
                if (f.kind().equals("witness-disagreement")) {
                    r.kind(EvidenceKind.NCCL_PROFILER);
                }
                for (Source s : EvidenceView.list(f.sources())) {
                    r.prov(EvidenceView.src(s));
                }
            }
        }
        if (!bad.isEmpty()) {
            rows.add(r.kind(EvidenceKind.NCCL_LOG).fail(String.join("; ", bad)).build());
            return;
        }
        Set<Integer> ranks = new TreeSet<>();
        for (Evidence.Communicator c : ourCommunicators()) {
            ranks.addAll(EvidenceView.list(c.ranks()));
            r.prov(EvidenceView.src(c.source()));
        }
        if (nRanks() <= 1) {
            rows.add(r.na("not applicable (1 rank: nothing to compare)").build());
            return;
        }
        if (ranks.size() < 2) {
            rows.add(r.unproven("NCCL facts of fewer than two ranks").build());
            return;
        }
        rows.add(r.kind(EvidenceKind.NCCL_LOG)
                .pass("no disagreement among the NCCL facts of " + ranks.size() + " ranks " + spans(ranks))
                .build());
    }

    /** "0-15, 17, 20-1023": a job of a thousand ranks is named in a line. */
    static String spans(Set<Integer> sorted) {
        StringBuilder sb = new StringBuilder();
        Integer start = null;
        Integer prev = null;
        for (Integer x : sorted) {
            if (prev != null && x == prev + 1) {
                prev = x;
                continue;
            }
            if (start != null) {
                sb.append(sb.length() == 0 ? "" : ", ").append(start.equals(prev) ? "" + start : start + "-" + prev);
            }
            start = x;
            prev = x;
        }
        if (start != null) {
            sb.append(sb.length() == 0 ? "" : ", ").append(start.equals(prev) ? "" + start : start + "-" + prev);
        }
        return sb.toString();
    }

    private static final Set<String> INCONSISTENT = Set.of(
            "cross-rank-disagreement",
            "env-mismatch",
            "nccl-version-mismatch",
            "channels-changed",
            "witness-disagreement");
}

package io.pathproof.accept;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.ddp.Bucket;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.predict.Prediction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * DDP bucket rows: the logical parameter bytes and the bucket layout per rank and iteration, from the comm hook, from
 * DDP's own logging data, and from DDP's own debug log (TORCH_DISTRIBUTED_DEBUG): its "DDP Initialized with" message
 * holds the construction buckets' sizes, a kind of evidence of its own; its "N buckets rebuilt with size limits" line
 * holds how many buckets the rebuild made and their limits, not their sizes, so it can refute a rebuilt layout but
 * never proves one.
 */
final class BucketChecks extends CheckFamily {
    BucketChecks(CheckFamily.Context ctx) {
        super(ctx);
    }

    void parameterBytes() {
        Prediction.Buckets b = p.buckets();
        Row r = new Row("parameter-bytes", "logical parameter bytes");
        if (b == null) {
            rows.add(r.expected("(no bucket prediction)")
                    .unproven("the prediction holds no buckets")
                    .build());
            return;
        }
        r.expected(b.parameterBytes() + " B in " + b.parameterCount() + " parameter(s)");
        List<String> obs = new ArrayList<>();
        boolean bad = false;
        // DDP's own count (logger.cpp total_parameter_size_bytes), per rank.
        for (Map.Entry<String, JsonNode> en : new TreeMap<>(v.ddpLogging()).entrySet()) {
            JsonNode t = en.getValue() == null ? null : en.getValue().get("total_parameter_size_bytes");
            if (t != null && t.canConvertToLong()) {
                r.kind(EvidenceKind.DDP_LOGGING).prov(v.ddpLoggingCite(en.getKey(), "total_parameter_size_bytes"));
                obs.add("rank " + en.getKey() + ": " + t.asLong() + " B (DDP logging)");
                bad |= t.asLong() != b.parameterBytes();
            }
        }
        // The same count as DDP printed it at construction (TORCH_DISTRIBUTED_DEBUG's "DDP Initialized with").
        for (Evidence.DdpLogMessage m : v.ddpLog("ddp-initialized")) {
            Long t = number(m.value("total_parameter_size_bytes"));
            if (t != null) {
                r.kind(EvidenceKind.DDP_LOG).prov(EvidenceView.src(m.source()));
                obs.add(rank(m) + ": " + t + " B (DDP's debug log)");
                bad |= t != b.parameterBytes();
            }
        }
        // The flat buckets of one iteration hold every gradient once: their sum is the logical gradient size.
        for (Map.Entry<Integer, TreeMap<Integer, List<Evidence.BucketRecord>>> en :
                v.hooksByRankIteration().entrySet()) {
            Map.Entry<Integer, List<Evidence.BucketRecord>> first =
                    en.getValue().firstEntry();
            long sum = 0;
            for (Evidence.BucketRecord br : first.getValue()) {
                sum += br.bytes();
            }
            r.kind(EvidenceKind.HOOK)
                    .prov(EvidenceView.src(first.getValue().get(0).source()));
            obs.add("rank " + en.getKey() + ": " + sum + " B in the buckets of iteration " + first.getKey()
                    + " (hook)");
            bad |= sum != b.parameterBytes();
        }
        if (obs.isEmpty()) {
            r.unproven("no hook records and no DDP logging data");
        } else if (bad) {
            r.fail(String.join("; ", obs));
        } else {
            r.pass(summarize(obs, b.parameterBytes() + " B"));
        }
        rows.add(r.build());
    }

    void buckets() {
        Prediction.Buckets b = p.buckets();
        if (b == null) {
            rows.add(new Row("buckets", "buckets per rank per iteration")
                    .expected("(no bucket prediction)")
                    .unproven("the prediction holds no buckets")
                    .build());
            return;
        }
        boolean rebuilds = !b.rebuilt().isEmpty() && b.firstRebuiltIteration() >= 0;
        if (rebuilds) {
            bucketPhase(
                    "buckets-construction",
                    "construction buckets per rank per iteration (iterations < " + b.firstRebuiltIteration() + ")",
                    b.construction(),
                    0,
                    b.firstRebuiltIteration(),
                    "bucket_sizes");
            bucketPhase(
                    "buckets-rebuilt",
                    "rebuilt buckets per rank per iteration (iterations >= " + b.firstRebuiltIteration() + ")",
                    b.rebuilt(),
                    b.firstRebuiltIteration(),
                    Integer.MAX_VALUE,
                    "rebuilt_bucket_sizes");
        } else {
            bucketPhase(
                    "buckets",
                    "buckets per rank per iteration (never rebuilt)",
                    b.construction(),
                    0,
                    Integer.MAX_VALUE,
                    "bucket_sizes");
        }
    }

    private void bucketPhase(String id, String check, List<Bucket> expected, int fromIt, int toIt, String loggingKey) {
        Phase ph = new Phase(id, check, expected, fromIt, toIt, loggingKey);
        hookPhase(ph);
        flightPhase(ph);
        loggingPhase(ph);
        if (loggingKey.equals("bucket_sizes")) {
            printedConstruction(ph);
        }
        if (loggingKey.equals("rebuilt_bucket_sizes")) {
            printedRebuild(ph);
        }
        rows.add(verdict(ph));
    }

    /** What one phase of the bucket layout predicts and what each kind of evidence has said of it so far. */
    private static final class Phase {
        final List<Bucket> expected;
        final int fromIt;
        final int toIt;
        final String loggingKey;
        final List<Long> exp = new ArrayList<>();
        final List<Long> expNumel = new ArrayList<>();
        final Row r;
        final List<String> bad = new ArrayList<>();
        final List<String> logBad = new ArrayList<>();
        final Set<String> ranks = new TreeSet<>();
        final Set<String> frRanks = new TreeSet<>();
        int groups;
        int frGroups;
        int logs;
        int printed;
        String rebuiltNote = "";

        Phase(String id, String check, List<Bucket> expected, int fromIt, int toIt, String loggingKey) {
            this.expected = expected;
            this.fromIt = fromIt;
            this.toIt = toIt;
            this.loggingKey = loggingKey;
            for (Bucket bk : expected) {
                exp.add(bk.bytes());
            }
            this.r = new Row(id, check).expected(expected.size() + " bucket(s) " + exp + " B");
            // The flight recorder counts elements, not bytes.
            for (Bucket bk : expected) {
                expNumel.add(bk.dtype() == null ? -1 : bk.bytes() / bk.dtype().elementSize());
            }
        }

        boolean outside(int iteration) {
            return iteration < fromIt || iteration >= toIt;
        }
    }

    /** The comm hook's buckets of each rank and iteration of the phase, by bytes and parameter names. */
    private void hookPhase(Phase ph) {
        Row r = ph.r;
        for (Map.Entry<Integer, TreeMap<Integer, List<Evidence.BucketRecord>>> en :
                v.hooksByRankIteration().entrySet()) {
            for (Map.Entry<Integer, List<Evidence.BucketRecord>> it :
                    en.getValue().entrySet()) {
                if (ph.outside(it.getKey())) {
                    continue;
                }
                ph.groups++;
                ph.ranks.add(String.valueOf(en.getKey()));
                List<Long> got = new ArrayList<>();
                String paramsProblem = null;
                for (Evidence.BucketRecord br : it.getValue()) {
                    got.add(br.bytes());
                    if (br.index() < ph.expected.size()) {
                        List<String> ep = ph.expected.get(br.index()).params();
                        if (br.params() != null
                                && !br.params().isEmpty()
                                && !ep.isEmpty()
                                && !paramNames(br.params()).equals(paramNames(ep))) {
                            paramsProblem =
                                    "bucket " + br.index() + " params " + br.params() + " (expected " + ep + ")";
                        }
                    }
                }
                if (!got.equals(ph.exp) || paramsProblem != null) {
                    if (ph.bad.size() < 4) {
                        ph.bad.add("rank " + en.getKey() + " iteration " + it.getKey() + ": " + got.size()
                                + " bucket(s) " + got
                                + " B"
                                + (paramsProblem == null ? "" : ", " + paramsProblem));
                        r.prov(EvidenceView.src(it.getValue().get(0).source()));
                    }
                } else if (r.provenanceSize() < 2) {
                    r.prov(EvidenceView.src(it.getValue().get(0).source()));
                }
            }
        }
        if (ph.groups > 0) {
            r.kind(EvidenceKind.HOOK);
        }
    }

    /** The flight recorder's AllReduces of each backward: the buckets of every iteration, hook or not, by elements. */
    private void flightPhase(Phase ph) {
        Row r = ph.r;
        for (Map.Entry<Integer, TreeMap<Integer, List<FlightBuckets.Collective>>> en :
                v.flightBuckets().entrySet()) {
            for (Map.Entry<Integer, List<FlightBuckets.Collective>> it :
                    en.getValue().entrySet()) {
                if (ph.outside(it.getKey())) {
                    continue;
                }
                ph.frGroups++;
                ph.frRanks.add(String.valueOf(en.getKey()));
                List<Long> got = new ArrayList<>();
                for (FlightBuckets.Collective c : it.getValue()) {
                    got.add(c.numel());
                }
                if (!got.equals(ph.expNumel)) {
                    if (ph.bad.size() < 4) {
                        ph.bad.add("rank " + en.getKey() + " iteration " + it.getKey() + ": " + got.size()
                                + " AllReduce(s) of " + got + " elements in its backward (flight recorder; predicted "
                                + ph.expNumel + ")");
                        r.kind(EvidenceKind.FLIGHT_RECORDER)
                                .prov(EvidenceView.src(it.getValue().get(0).source()));
                    }
                } else if (r.provenanceSize() < 3) {
                    r.kind(EvidenceKind.FLIGHT_RECORDER)
                            .prov(EvidenceView.src(it.getValue().get(0).source()));
                }
            }
        }
    }

    /** DDP's own record of the bucket sizes (logger.cpp): an independent second kind. */
    private void loggingPhase(Phase ph) {
        for (Map.Entry<String, JsonNode> en : new TreeMap<>(v.ddpLogging()).entrySet()) {
            JsonNode s = en.getValue() == null ? null : en.getValue().get(ph.loggingKey);
            if (s == null || s.isNull() || s.asText().isBlank()) {
                continue;
            }
            List<Long> got = new ArrayList<>();
            try {
                for (String part : s.asText().split(",")) {
                    got.add(Long.parseLong(part.trim()));
                }
            } catch (NumberFormatException ex) {
                continue;
            }
            ph.logs++;
            ph.r.kind(EvidenceKind.DDP_LOGGING).prov(v.ddpLoggingCite(en.getKey(), ph.loggingKey));
            if (!got.equals(ph.exp)) {
                ph.logBad.add("rank " + en.getKey() + " " + ph.loggingKey + " " + got);
            }
        }
    }

    /** DDP's debug log: the construction sizes as DDP printed them, a kind of evidence of its own. */
    private void printedConstruction(Phase ph) {
        for (Evidence.DdpLogMessage m : v.ddpLog("ddp-initialized")) {
            List<Long> got = sizes(m.value("bucket_sizes"));
            if (got == null) {
                continue;
            }
            ph.printed++;
            ph.r.kind(EvidenceKind.DDP_LOG).prov(EvidenceView.src(m.source()));
            if (!got.equals(ph.exp)) {
                ph.logBad.add(rank(m) + " DDP's debug log bucket_sizes " + got);
            }
        }
    }

    /** The rebuild as DDP printed it: how many buckets, and their limits; no sizes, so it refutes, never proves. */
    private void printedRebuild(Phase ph) {
        Row r = ph.r;
        List<Long> limits = new ArrayList<>();
        for (Bucket bk : ph.expected) {
            limits.add(bk.limitBytes());
        }
        int agree = 0;
        for (Evidence.DdpLogMessage m : v.ddpLog("buckets-rebuilt")) {
            List<Long> got = sizes(m.value("size_limits"));
            if (got == null) {
                continue;
            }
            if (got.size() != ph.expected.size() || !got.equals(limits)) {
                r.kind(EvidenceKind.DDP_LOG).prov(EvidenceView.src(m.source()));
                ph.logBad.add(rank(m) + " DDP's debug log: " + got.size() + " bucket(s) rebuilt with size limits " + got
                        + " (predicted " + ph.expected.size() + " with limits " + limits + ")");
            } else {
                agree++;
                if (r.provenanceSize() < 4) {
                    r.prov(EvidenceView.src(m.source()));
                }
            }
        }
        if (agree > 0) {
            ph.rebuiltNote = "; DDP's debug log: " + ph.expected.size() + " bucket(s) rebuilt with size limits "
                    + limits + " on " + agree + " rank(s), as predicted (it prints no sizes)";
        }
    }

    /** Any disagreement fails the row; no evidence at all leaves it unproven; else it passes, saying what agreed. */
    private static AcceptanceRow verdict(Phase ph) {
        Row r = ph.r;
        String loggingKey = ph.loggingKey;
        if (!ph.bad.isEmpty() || !ph.logBad.isEmpty()) {
            List<String> all = new ArrayList<>(ph.bad);
            all.addAll(ph.logBad);
            r.fail(String.join("; ", all));
        } else if (ph.groups == 0 && ph.frGroups == 0 && ph.logs == 0 && ph.printed == 0) {
            r.unproven("no hook records or flight-recorder AllReduces for these iterations and no DDP logging of "
                    + loggingKey
                    + (loggingKey.equals("bucket_sizes") ? " (nor DDP's debug log of it)" : "") + ph.rebuiltNote);
        } else {
            int n = ph.expected.size();
            String o = ph.groups > 0
                    ? n + " bucket(s) " + ph.exp + " B in each of " + ph.groups + " rank×iteration(s) (ranks "
                            + ph.ranks + ")"
                    : n + " bucket(s) " + ph.exp + " B";
            o += ph.frGroups > 0
                    ? "; " + (ph.groups > 0 ? "" : n + " AllReduce(s) of " + ph.expNumel + " elements ")
                            + "in the backward of each of " + ph.frGroups
                            + " rank×iteration(s) in the flight recorder (ranks "
                            + ph.frRanks + ")"
                    : "";
            r.pass(o
                    + (ph.logs > 0 ? "; DDP logging " + loggingKey + " agrees on " + ph.logs + " rank(s)" : "")
                    + (ph.printed > 0 ? "; DDP's debug log bucket_sizes agrees on " + ph.printed + " message(s)" : "")
                    + ph.rebuiltNote);
        }
        return r.build();
    }

    /** "rank 0", or "rank ?" where the log does not say whose message it is. */
    private static String rank(Evidence.DdpLogMessage m) {
        return "rank " + (m.rank() == null ? "?" : m.rank());
    }

    private static Long number(String s) {
        try {
            return s == null ? null : Long.valueOf(s.trim());
        } catch (NumberFormatException ex) {
            return null;
        }
    }

    /** "1048576, 262144" as DDP joins a list (c10::Join(", ", …)); null when it is not such a list. */
    private static List<Long> sizes(String s) {
        if (s == null || s.isBlank()) {
            return null;
        }
        List<Long> out = new ArrayList<>();
        for (String part : s.split(",")) {
            Long n = number(part);
            if (n == null) {
                return null;
            }
            out.add(n);
        }
        return out;
    }

    /**
     * Parameter names without the {@code module.} prefix that {@code DistributedDataParallel.named_parameters()} adds
     * (the wrapped model is its attribute {@code module}): a hook that names parameters through the DDP object and a
     * prediction that names them through the model mean the same parameter.
     */
    private static List<String> paramNames(List<String> names) {
        List<String> out = new ArrayList<>();
        for (String n : names) {
            out.add(n != null && n.startsWith("module.") ? n.substring("module.".length()) : n);
        }
        return out;
    }
}

package io.pathproof.accept;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.ddp.Bucket;
import io.pathproof.evidence.Evidence;
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
      rows.add(r.expected("(no bucket prediction)").unproven("the prediction holds no buckets").build());
      return;
    }
    r.expected(b.parameterBytes() + " B in " + b.parameterCount() + " parameter(s)");
    List<String> obs = new ArrayList<>();
    boolean bad = false;
    // DDP's own count (logger.cpp total_parameter_size_bytes), per rank.
    for (Map.Entry<String, JsonNode> en : new TreeMap<>(v.ddpLogging()).entrySet()) {
      JsonNode t = en.getValue() == null ? null : en.getValue().get("total_parameter_size_bytes");
      if (t != null && t.canConvertToLong()) {
        r.kind(DDP_LOGGING).prov(v.ddpLoggingCite(en.getKey(), "total_parameter_size_bytes"));
        obs.add("rank " + en.getKey() + ": " + t.asLong() + " B (DDP logging)");
        bad |= t.asLong() != b.parameterBytes();
      }
    }
    // The same count as DDP printed it at construction (TORCH_DISTRIBUTED_DEBUG's "DDP Initialized with").
    for (Evidence.DdpLogMessage m : v.ddpLog("ddp-initialized")) {
      Long t = number(m.value("total_parameter_size_bytes"));
      if (t != null) {
        r.kind(DDP_LOG).prov(EvidenceView.src(m.source()));
        obs.add(rank(m) + ": " + t + " B (DDP's debug log)");
        bad |= t != b.parameterBytes();
      }
    }
    // The flat buckets of one iteration hold every gradient once: their sum is the logical gradient size.
    for (Map.Entry<Integer, TreeMap<Integer, List<Evidence.BucketRecord>>> en : v.hooksByRankIteration().entrySet()) {
      Map.Entry<Integer, List<Evidence.BucketRecord>> first = en.getValue().firstEntry();
      long sum = 0;
      for (Evidence.BucketRecord br : first.getValue()) {
        sum += br.bytes();
      }
      r.kind(HOOK).prov(EvidenceView.src(first.getValue().get(0).source()));
      obs.add("rank " + en.getKey() + ": " + sum + " B in the buckets of iteration " + first.getKey() + " (hook)");
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
      rows.add(new Row("buckets", "buckets per rank per iteration").expected("(no bucket prediction)")
          .unproven("the prediction holds no buckets").build());
      return;
    }
    boolean rebuilds = !b.rebuilt().isEmpty() && b.firstRebuiltIteration() >= 0;
    if (rebuilds) {
      bucketPhase("buckets-construction", "construction buckets per rank per iteration (iterations < "
          + b.firstRebuiltIteration() + ")", b.construction(), 0, b.firstRebuiltIteration(), "bucket_sizes");
      bucketPhase("buckets-rebuilt", "rebuilt buckets per rank per iteration (iterations >= " + b.firstRebuiltIteration() + ")",
          b.rebuilt(), b.firstRebuiltIteration(), Integer.MAX_VALUE, "rebuilt_bucket_sizes");
    } else {
      bucketPhase("buckets", "buckets per rank per iteration (never rebuilt)", b.construction(), 0, Integer.MAX_VALUE,
          "bucket_sizes");
    }
  }

  private void bucketPhase(String id, String check, List<Bucket> expected, int fromIt, int toIt, String loggingKey) {
    TreeMap<Integer, TreeMap<Integer, List<FlightBuckets.Collective>>> flight = v.flightBuckets();
    List<Long> exp = new ArrayList<>();
    for (Bucket bk : expected) {
      exp.add(bk.bytes());
    }
    Row r = new Row(id, check).expected(expected.size() + " bucket(s) " + exp + " B");
    int groups = 0;
    List<String> bad = new ArrayList<>();
    Set<String> ranks = new TreeSet<>();
    for (Map.Entry<Integer, TreeMap<Integer, List<Evidence.BucketRecord>>> en : v.hooksByRankIteration().entrySet()) {
      for (Map.Entry<Integer, List<Evidence.BucketRecord>> it : en.getValue().entrySet()) {
        if (it.getKey() < fromIt || it.getKey() >= toIt) {
          continue;
        }
        groups++;
        ranks.add(String.valueOf(en.getKey()));
        List<Long> got = new ArrayList<>();
        String paramsProblem = null;
        for (Evidence.BucketRecord br : it.getValue()) {
          got.add(br.bytes());
          if (br.index() < expected.size()) {
            List<String> ep = expected.get(br.index()).params();
            if (br.params() != null && !br.params().isEmpty() && !ep.isEmpty() && !paramNames(br.params()).equals(paramNames(ep))) {
              paramsProblem = "bucket " + br.index() + " params " + br.params() + " (expected " + ep + ")";
            }
          }
        }
        if (!got.equals(exp) || paramsProblem != null) {
          if (bad.size() < 4) {
            bad.add("rank " + en.getKey() + " iteration " + it.getKey() + ": " + got.size() + " bucket(s) " + got + " B"
                + (paramsProblem == null ? "" : ", " + paramsProblem));
            r.prov(EvidenceView.src(it.getValue().get(0).source()));
          }
        } else if (r.provenanceSize() < 2) {
          r.prov(EvidenceView.src(it.getValue().get(0).source()));
        }
      }
    }
    if (groups > 0) {
      r.kind(HOOK);
    }
    // The flight recorder's AllReduces of each backward: the buckets of every iteration, hook or not, by elements.
    List<Long> expNumel = new ArrayList<>();
    for (Bucket bk : expected) {
      expNumel.add(bk.dtype() == null ? -1 : bk.bytes() / bk.dtype().elementSize());
    }
    int frGroups = 0;
    Set<String> frRanks = new TreeSet<>();
    for (Map.Entry<Integer, TreeMap<Integer, List<FlightBuckets.Collective>>> en : flight.entrySet()) {
      for (Map.Entry<Integer, List<FlightBuckets.Collective>> it : en.getValue().entrySet()) {
        if (it.getKey() < fromIt || it.getKey() >= toIt) {
          continue;
        }
        frGroups++;
        frRanks.add(String.valueOf(en.getKey()));
        List<Long> got = new ArrayList<>();
        for (FlightBuckets.Collective c : it.getValue()) {
          got.add(c.numel());
        }
        if (!got.equals(expNumel)) {
          if (bad.size() < 4) {
            bad.add("rank " + en.getKey() + " iteration " + it.getKey() + ": " + got.size() + " AllReduce(s) of " + got
                + " elements in its backward (flight recorder; predicted " + expNumel + ")");
            r.kind(FR).prov(EvidenceView.src(it.getValue().get(0).source()));
          }
        } else if (r.provenanceSize() < 3) {
          r.kind(FR).prov(EvidenceView.src(it.getValue().get(0).source()));
        }
      }
    }
    // DDP's own record of the bucket sizes (logger.cpp): an independent second kind.
    List<String> logBad = new ArrayList<>();
    int logs = 0;
    for (Map.Entry<String, JsonNode> en : new TreeMap<>(v.ddpLogging()).entrySet()) {
      JsonNode s = en.getValue() == null ? null : en.getValue().get(loggingKey);
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
      logs++;
      r.kind(DDP_LOGGING).prov(v.ddpLoggingCite(en.getKey(), loggingKey));
      if (!got.equals(exp)) {
        logBad.add("rank " + en.getKey() + " " + loggingKey + " " + got);
      }
    }
    // DDP's debug log: the construction sizes as DDP printed them, a kind of evidence of its own.
    int printed = 0;
    if (loggingKey.equals("bucket_sizes")) {
      for (Evidence.DdpLogMessage m : v.ddpLog("ddp-initialized")) {
        List<Long> got = sizes(m.value("bucket_sizes"));
        if (got == null) {
          continue;
        }
        printed++;
        r.kind(DDP_LOG).prov(EvidenceView.src(m.source()));
        if (!got.equals(exp)) {
          logBad.add(rank(m) + " DDP's debug log bucket_sizes " + got);
        }
      }
    }
    // ... and the rebuild as DDP printed it: how many buckets, and their limits; no sizes, so it refutes, never proves.
    String rebuiltNote = "";
    if (loggingKey.equals("rebuilt_bucket_sizes")) {
      List<Long> limits = new ArrayList<>();
      for (Bucket bk : expected) {
        limits.add(bk.limitBytes());
      }
      int agree = 0;
      for (Evidence.DdpLogMessage m : v.ddpLog("buckets-rebuilt")) {
        List<Long> got = sizes(m.value("size_limits"));
        if (got == null) {
          continue;
        }
        if (got.size() != expected.size() || !got.equals(limits)) {
          r.kind(DDP_LOG).prov(EvidenceView.src(m.source()));
          logBad.add(rank(m) + " DDP's debug log: " + got.size() + " bucket(s) rebuilt with size limits " + got
              + " (predicted " + expected.size() + " with limits " + limits + ")");
        } else {
          agree++;
          if (r.provenanceSize() < 4) {
            r.prov(EvidenceView.src(m.source()));
          }
        }
      }
      if (agree > 0) {
        rebuiltNote = "; DDP's debug log: " + expected.size() + " bucket(s) rebuilt with size limits " + limits + " on "
            + agree + " rank(s), as predicted (it prints no sizes)";
      }
    }
    if (!bad.isEmpty() || !logBad.isEmpty()) {
      List<String> all = new ArrayList<>(bad);
      all.addAll(logBad);
      r.fail(String.join("; ", all));
    } else if (groups == 0 && frGroups == 0 && logs == 0 && printed == 0) {
      r.unproven("no hook records or flight-recorder AllReduces for these iterations and no DDP logging of " + loggingKey
          + (loggingKey.equals("bucket_sizes") ? " (nor DDP's debug log of it)" : "") + rebuiltNote);
    } else {
      String o = groups > 0
          ? expected.size() + " bucket(s) " + exp + " B in each of " + groups + " rank×iteration(s) (ranks " + ranks + ")"
          : expected.size() + " bucket(s) " + exp + " B";
      o += frGroups > 0 ? "; " + (groups > 0 ? "" : expected.size() + " AllReduce(s) of " + expNumel + " elements ")
          + "in the backward of each of " + frGroups + " rank×iteration(s) in the flight recorder (ranks " + frRanks + ")" : "";
      r.pass(o + (logs > 0 ? "; DDP logging " + loggingKey + " agrees on " + logs + " rank(s)" : "")
          + (printed > 0 ? "; DDP's debug log bucket_sizes agrees on " + printed + " message(s)" : "") + rebuiltNote);
    }
    rows.add(r.build());
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

package io.pathproof.accept;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.PathproofException;
import io.pathproof.ddp.Bucket;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Source;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.CommunicatorPrediction;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The checks of the acceptance table, in the order of the seed's data path (shape → bucket → collective → algorithm
 * → protocol → channels → launch shape → transport → kernel → numerics → completion → bandwidth). Each check states
 * what it expected, what it observed, and on which kinds of evidence; a check with no evidence is UNPROVEN.
 */
final class Checks {
  static final String HOOK = "hook";
  static final String NCCL_LOG = "nccl-log";
  static final String KERNEL = "kernel-trace";
  static final String REPLICAS = "replicas";
  static final String MANIFEST = "manifest";
  static final String FR = "flight-recorder";
  static final String DDP_LOGGING = "ddp-logging";
  static final String SEAL = "seal";

  /** A measured bus bandwidth may exceed the model's link ceiling by this much (timer granularity) before it FAILs. */
  static final double CEILING_SLACK = 1.05;

  private static final int MAX_PROVENANCE = 8;

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
    seal();
    predictedBeforeRun();
    backendAndWorldSize();
    parameterBytes();
    buckets();
    List<CollectivePrediction> colls = p.collectives();
    if (colls.isEmpty()) {
      Row r = new Row("collectives", "per-bucket collective predictions").expected("one collective prediction per bucket");
      // A gloo prediction has no NCCL collective by design: listed, never counted as PASS, never a FAIL.
      rows.add(glooReason != null || "gloo".equalsIgnoreCase(p.backend())
          ? r.na(glooReason != null ? glooReason : "not applicable (backend gloo)").build()
          : r.fail("the prediction holds no collective; it cannot be accepted against NCCL evidence").build());
    }
    for (CollectivePrediction c : colls) {
      collective(c);
      algorithm(c);
      protocol(c);
      tunerTime(c);
    }
    collChannels();
    for (CollectivePrediction c : colls) {
      for (int r = 0; r < nRanks(); r++) {
        launchShape(c, r);
      }
    }
    transport();
    for (int r = 0; r < nRanks(); r++) {
      kernelsPerCollective(r);
    }
    replicas();
    completionOrder();
    consistency();
    for (CollectivePrediction c : colls) {
      busBytes(c);
      busBandwidth(c);
    }
    return rows;
  }

  // ---------------------------------------------------------------- prediction
  private void seal() {
    Row r = new Row("seal", "prediction seal intact").expected("SHA-256 over the prediction, its creation time and tool");
    try {
      PredictionIo.verify(p, "prediction");
 r.kind(SEAL).prov("prediction seal (sha256 over content + createdAt + tool)");
      r.pass("sha256 " + p.seal().sha256() + " matches (created " + p.seal().createdAt() + " by " + p.seal().tool() + ")");
    } catch (PathproofException ex) {
      r.kind(SEAL).prov("prediction seal").fail(ex.getMessage());
    }
    rows.add(r.build());
  }

  /** Seed common error 1: a prediction written after the run is not a prediction. */
  private void predictedBeforeRun() {
    Row r = new Row("predicted-before-run", "prediction created before the run's first evidence");
    Instant created = null;
    if (p.seal() != null && p.seal().createdAt() != null) {
      try {
        created = Instant.parse(p.seal().createdAt());
      } catch (DateTimeParseException ex) {
        r.expected("seal.createdAt readable").fail("seal.createdAt '" + p.seal().createdAt() + "' is not an ISO-8601 instant");
        rows.add(r.build());
        return;
      }
    }
    EvidenceView.Dated start = v.runStart();
    r.expected(created == null ? "a sealed creation time" : "created " + created + " < run start");
    if (created == null) {
      r.fail("the prediction carries no creation time (unsealed)");
    } else if (start == null) {
      r.unproven("run start unknown: no manifest start time, no flight-recorder timestamps");
    } else {
      r.kind(start.what().startsWith("manifest") ? MANIFEST : FR).prov(start.where() + " (" + start.what() + ")");
      if (created.isBefore(start.time())) {
        r.pass("run started " + start.time() + " (" + start.what() + ")");
      } else {
        r.fail("run started " + start.time() + " (" + start.what() + "), before the prediction was created: "
            + "a prediction written after the run is not a prediction (common error 1)");
      }
    }
    rows.add(r.build());
    recordedSeal();
  }

  /**
   * The run harness records the seal of the prediction it was started with (manifest, issue 4). Listed only when the
   * manifest names one: a run made for another prediction does not test this one.
   */
  private void recordedSeal() {
    if (p.seal() == null || p.seal().sha256() == null) {
      return;
    }
    List<String> found = new ArrayList<>();
    findPredictionSeal(v.manifest(), "", false, found);
    if (found.isEmpty()) {
      return;
    }
    Row r = new Row("run-made-for-prediction", "the run records this prediction's seal").expected("sha256 " + p.seal().sha256())
        .kind(MANIFEST);
    boolean match = false;
    for (String f : found) {
      String[] kv = f.split("=", 2);
      r.prov(v.manifestFile() + " (" + kv[0] + ")");
      match |= kv[1].equalsIgnoreCase(p.seal().sha256());
    }
    if (match) {
      r.pass("the manifest names this seal");
    } else {
      r.fail("the manifest names another prediction: " + found);
    }
    rows.add(r.build());
  }

  private static void findPredictionSeal(JsonNode n, String path, boolean underPrediction, List<String> out) {
    if (n == null) {
      return;
    }
    if (n.isObject()) {
      n.fields().forEachRemaining(en -> {
        if (!en.getKey().equals("inject")) {
          findPredictionSeal(en.getValue(), path.isEmpty() ? en.getKey() : path + "." + en.getKey(),
              underPrediction || en.getKey().toLowerCase(Locale.ROOT).contains("prediction"), out);
        }
      });
    } else if (n.isTextual() && underPrediction && n.asText().matches("[0-9a-fA-F]{64}")) {
      out.add(path + "=" + n.asText());
    }
  }

  // ---------------------------------------------------------------- DDP
  private void parameterBytes() {
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
        r.kind(DDP_LOGGING).prov("ddp logging rank " + en.getKey() + " total_parameter_size_bytes");
        obs.add("rank " + en.getKey() + ": " + t.asLong() + " B (DDP logging)");
        bad |= t.asLong() != b.parameterBytes();
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

  private void buckets() {
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
      r.kind(DDP_LOGGING).prov("ddp logging rank " + en.getKey() + " " + loggingKey);
      if (!got.equals(exp)) {
        logBad.add("rank " + en.getKey() + " " + loggingKey + " " + got);
      }
    }
    if (groups == 0 && logs == 0) {
      r.unproven("no hook records for these iterations and no DDP logging of " + loggingKey);
    } else if (!bad.isEmpty() || !logBad.isEmpty()) {
      List<String> all = new ArrayList<>(bad);
      all.addAll(logBad);
      r.fail(String.join("; ", all));
    } else {
      String o = groups > 0
          ? expected.size() + " bucket(s) " + exp + " B in each of " + groups + " rank×iteration(s) (ranks " + ranks + ")"
          : expected.size() + " bucket(s) " + exp + " B";
      r.pass(o + (logs > 0 ? "; DDP logging " + loggingKey + " agrees on " + logs + " rank(s)" : ""));
    }
    rows.add(r.build());
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

  // ---------------------------------------------------------------- collective
  private DTypeInfo dtypeOf(CollectivePrediction c) {
    Prediction.Buckets b = p.buckets();
    if (b != null) {
      List<Bucket> steady = b.rebuilt().isEmpty() ? b.construction() : b.rebuilt();
      for (Bucket bk : steady) {
        if (bk.index() == c.bucket() && bk.dtype() != null) {
          return new DTypeInfo(bk.dtype().torchName(), bk.dtype().elementSize(), bk.dtype().ncclId());
        }
      }
    }
    return new DTypeInfo("float32", 4, 7);
  }

  private record DTypeInfo(String name, int size, int ncclId) {}

  private void collective(CollectivePrediction c) {
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
      r.kind(NCCL_LOG);
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
        r.fail("AllReduce count " + count + " with " + String.join("; ", bad.subList(0, Math.min(3, bad.size()))));
      }
    } else if (!otherCounts.isEmpty()) {
      r.kind(NCCL_LOG).fail("no AllReduce of " + count + " elements; COLL lines show counts " + otherCounts);
    } else {
      boolean fr = addFlightRecorder(r, count, dt);
      if (fr) {
        r.unproven("AllReduce " + dt.name() + " of " + count + " elements in the flight recorder, which does not record "
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
      if (fr.profilingName() != null && fr.profilingName().endsWith("all_reduce") && fr.inputSizes() != null
          && fr.inputSizes().size() == 1 && numel(fr.inputSizes().get(0)) == count) {
        r.kind(FR).prov(EvidenceView.src(fr.source()));
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

  private List<Evidence.Tuning> tuningFor(long bytes) {
    List<Evidence.Tuning> out = new ArrayList<>();
    for (Evidence.Tuning t : v.tuning()) {
      if (t.bytes() == bytes && (t.op() == null || t.op().equalsIgnoreCase("AllReduce"))) {
        out.add(t);
      }
    }
    return out;
  }

  private void algorithm(CollectivePrediction c) {
    String exp = NcclNames.algorithm(c.algorithm(), c.algorithmId());
    Row r = new Row("algorithm/bucket" + c.bucket(), "algorithm of bucket " + c.bucket())
        .expected(exp + " (algo " + c.algorithmId() + ")");
    if (glooReason != null) {
      rows.add(r.na(glooReason).build());
      return;
    }
    if (c.noKernel()) {
      rows.add(r.expected("none: a 1-rank communicator copies, no algorithm is selected")
          .na("not applicable (1 rank: NCCL prints no TUNING line and launches no kernel)").build());
      return;
    }
    tuningRow(r, c, true, exp);
  }

  /** Protocol comes from TUNING only, never from a kernel symbol (seed common error 7: the symbol always says LL). */
  private void protocol(CollectivePrediction c) {
    String exp = NcclNames.protocol(c.protocol(), c.protocolId());
    Row r = new Row("protocol/bucket" + c.bucket(), "protocol of bucket " + c.bucket())
        .expected(exp + " (proto " + c.protocolId() + ")");
    if (glooReason != null) {
      rows.add(r.na(glooReason).build());
      return;
    }
    if (c.noKernel()) {
      rows.add(r.expected("none: a 1-rank communicator copies, no protocol is selected")
          .na("not applicable (1 rank: NCCL prints no TUNING line and launches no kernel)").build());
      return;
    }
    tuningRow(r, c, false, exp);
  }

  private void tuningRow(Row r, CollectivePrediction c, boolean algo, String exp) {
    List<Evidence.Tuning> ts = tuningFor(c.bytes());
    if (ts.isEmpty()) {
      r.unproven("no TUNING line for " + c.bytes() + " B (needs NCCL_DEBUG_SUBSYS with TUNING; the kernel name is no "
          + "evidence of " + (algo ? "the algorithm's protocol" : "the protocol") + ")");
      rows.add(r.build());
      return;
    }
    Set<String> seen = new TreeSet<>();
    for (Evidence.Tuning t : ts) {
      String got = algo ? NcclNames.algorithm(t.algorithm(), t.algorithmId()) : NcclNames.protocol(t.protocol(), t.protocolId());
      seen.add(String.valueOf(got));
      if (!exp.equals(got)) {
        r.prov(EvidenceView.src(t.source()));
      }
    }
    r.kind(NCCL_LOG);
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
  private void tunerTime(CollectivePrediction c) {
    Row r = new Row("tuner-time/bucket" + c.bucket(), "tuner cost-model time of bucket " + c.bucket() + " (not a kernel time)")
        .expected(c.tunerTimeUs() == null ? "(no estimate)" : c.tunerTimeUs().toPlainString() + " us");
    if (glooReason != null) {
      rows.add(r.na(glooReason).build());
      return;
    }
    if (c.noKernel()) {
      rows.add(r.na("not applicable (1 rank: no tuning)").build());
      return;
    }
    if (c.tunerTimeUs() == null) {
      rows.add(r.unproven("the prediction holds no tuner estimate for this size").build());
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
        String ver = v.evidence().nccl() == null || v.evidence().nccl().version() == null ? "this NCCL" : "NCCL " + v.evidence().nccl().version();
        // From 2.24 the time moved to a TRACE-only line (enqueue.cc:2068@v2.30.7-1): nothing to compare at INFO.
        rows.add(r.kind(NCCL_LOG).prov(EvidenceView.src(ts.get(0).source()))
            .na("not applicable (" + ver + " prints no tuner time at INFO)").build());
      } else {
        rows.add(r.unproven("no TUNING line for " + c.bytes() + " B").build());
      }
      return;
    }
    r.kind(NCCL_LOG);
    // %f prints 6 decimals: equal when they agree to the printed precision.
    BigDecimal exp = c.tunerTimeUs().setScale(6, RoundingMode.HALF_EVEN);
    List<String> bad = new ArrayList<>();
    for (Evidence.Tuning t : timed) {
      if (t.timeUs().setScale(6, RoundingMode.HALF_EVEN).subtract(exp).abs().compareTo(new BigDecimal("0.000001")) > 0) {
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

  // ---------------------------------------------------------------- channels, launch shape
  private int nRanks() {
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

  private List<Evidence.Communicator> ourCommunicators() {
    List<Evidence.Communicator> out = new ArrayList<>();
    for (Evidence.Communicator c : v.communicators()) {
      if (c.nRanks() == null || c.nRanks() == nRanks()) {
        out.add(c);
      }
    }
    return out;
  }

  private void collChannels() {
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
    if (cp == null || cp.cannotPredict() != null) {
      rows.add(r.unproven("the model could not predict the communicator" + (cp == null ? "" : ": " + cp.cannotPredict())).build());
      return;
    }
    Set<Integer> seen = new TreeSet<>();
    for (Evidence.Communicator c : ourCommunicators()) {
      if (c.collChannels() != null) {
        seen.add(c.collChannels());
        r.kind(NCCL_LOG).prov(EvidenceView.src(c.source()));
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

  /**
   * gridX and blockX of the NCCL kernel of one bucket on one rank. gridX is the number of channels used for this size
   * (popcount of the plan's channel mask, enqueue.cc:1389-1392@v2.22.3-1), compared with the prediction's gridX —
   * never with the communicator's collChannels (seed common error 8). The TUNING channel range of NCCL ≥ 2.24
   * (channel{Lo..Hi}) is a second, log-side witness of the same number.
   */
  private void launchShape(CollectivePrediction c, int rank) {
    Row r = new Row("launch-shape/rank" + rank + "/bucket" + c.bucket(), "gridX and blockX of bucket " + c.bucket() + " on rank " + rank);
    if (c.noKernel()) {
      r.expected("no NCCL kernel (1-rank communicator: a copy)");
    } else {
      r.expected("gridX " + c.gridX() + " (channels used for " + c.bytes() + " B), blockX " + c.blockX());
    }
    if (glooReason != null) {
      rows.add(r.na(glooReason).build());
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
      r.kind(KERNEL);
      if (v.allReduceKernels(rank, single).isEmpty()) {
        r.pass("no NCCL AllReduce kernel on rank " + rank);
      } else {
        r.fail(v.allReduceKernels(rank, single).size() + " NCCL AllReduce kernel(s) on rank " + rank);
      }
      rows.add(r.build());
      return;
    }
    if (!mine.isEmpty()) {
      r.kind(KERNEL);
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
        r.kind(NCCL_LOG).prov(EvidenceView.src(t.source()));
      }
    }
    if (!used.isEmpty()) {
      boolean ok = used.size() == 1 && used.contains(c.gridX());
      obs.add("TUNING channel range gives " + used + " channel(s)");
      verdict = Verdict.worst(verdict, ok ? Verdict.PASS : Verdict.FAIL);
    }
    r.observed(String.join("; ", obs));
    r.verdict(verdict);
    rows.add(r.build());
  }

  /** NCCL AllReduce kernels of this bucket on this rank: by element count where the trace records it, else by order. */
  private List<Evidence.Kernel> kernelsOf(CollectivePrediction c, int rank, boolean single) {
    List<Evidence.Kernel> all = v.allReduceKernels(rank, single);
    List<CollectivePrediction> colls = p.collectives();
    if (colls.size() == 1 || all.isEmpty()) {
      return all;
    }
    long count = c.bytes() / dtypeOf(c).size();
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

  private static Long nelems(Evidence.Kernel k) {
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

  // ---------------------------------------------------------------- transport
  /**
   * Transport per peer from the connector lines. A P2P connector (CUDA IPC / cuMem / direct pointer over NVLink or
   * PCIe) is GPU↔GPU inside a node; GPUDirect RDMA is GPU↔NIC for NET transports (seed common error 9): a P2P
   * connection is reported as P2P even where a reader flagged GDR on it.
   */
  private void transport() {
    CommunicatorPrediction cp = p.communicator();
    String exp = cp == null ? null : cp.transport();
    if (glooReason != null) {
      rows.add(new Row("transport", "transport per peer").expected(exp == null ? "(none predicted)" : exp).na(glooReason).build());
      return;
    }
    if (nRanks() <= 1) {
      rows.add(new Row("transport", "transport per peer").expected("no peer (1 rank)")
          .na("not applicable (1 rank: no peer connection)").build());
      return;
    }
    TreeMap<String, Set<String>> perPeer = new TreeMap<>();
    TreeMap<String, List<Source>> sources = new TreeMap<>();
    Set<String> gdrOnP2p = new TreeSet<>();
    for (Evidence.Communicator c : ourCommunicators()) {
      for (Evidence.Connection cn : EvidenceView.list(c.connections())) {
        String key = String.format("%d->%d", cn.fromRank(), cn.toRank());
        String t = cn.transport() == null ? "?" : cn.transport();
        if ("P2P".equals(NcclNames.transportFamily(t)) && cn.gdr()) {
          gdrOnP2p.add(key);
        }
        perPeer.computeIfAbsent(key, k -> new TreeSet<>()).add(t);
        sources.computeIfAbsent(key, k -> new ArrayList<>()).add(cn.source());
      }
    }
    if (perPeer.isEmpty()) {
      Set<String> ts = new TreeSet<>();
      Row r = new Row("transport", "transport per peer").expected(exp == null ? "(none predicted)" : exp);
      for (Evidence.Communicator c : ourCommunicators()) {
        ts.addAll(EvidenceView.list(c.transports()));
        if (!EvidenceView.list(c.transports()).isEmpty()) {
          r.prov(EvidenceView.src(c.source()));
        }
      }
      if (ts.isEmpty()) {
        r.unproven("no connector lines (NCCL_DEBUG_SUBSYS without P2P/INIT, or connections made after the log ended)");
      } else {
        r.kind(NCCL_LOG);
        r.unproven("transports " + ts + " seen, but no per-peer connector line");
      }
      rows.add(r.build());
      return;
    }
    for (Map.Entry<String, Set<String>> en : perPeer.entrySet()) {
      Row r = new Row("transport/" + en.getKey(), "transport from rank " + en.getKey().replace("->", " to rank "))
          .expected(exp == null ? "(none predicted)" : exp).kind(NCCL_LOG);
      for (Source s : sources.get(en.getKey())) {
        if (r.provenanceSize() >= 2) {
          break;
        }
        r.prov(EvidenceView.src(s));
      }
      String obs = String.join(", ", en.getValue()) + describe(en.getValue());
      if (gdrOnP2p.contains(en.getKey())) {
        obs += " (a GDR flag on a P2P connector is ignored: P2P is GPU-to-GPU, never GPUDirect RDMA)";
      }
      if (exp == null) {
        r.unproven(obs + "; the prediction names no transport");
      } else if (matches(exp, en.getValue())) {
        r.pass(obs);
      } else if (sameKind(exp, en.getValue())) {
        // P2P/CUMEM vs P2P/IPC: the same GPU-to-GPU transport; only how the peer buffer is mapped differs (cuMem
        // support of the driver, NCCL_CUMEM_ENABLE), which the prediction can only assume. Not a path difference.
        r.pass(obs + "; predicted " + exp + ": same " + NcclNames.transportFamily(exp) + " transport, other buffer mapping");
      } else {
        r.fail(obs);
      }
      rows.add(r.build());
    }
  }

  private static String describe(Set<String> ts) {
    for (String t : ts) {
      if ("P2P".equals(NcclNames.transportFamily(t))) {
        return " (P2P: GPU-to-GPU peer access, not GPUDirect RDMA)";
      }
    }
    return "";
  }

  /** Every observed transport is P2P, as predicted, differing only in the mapping mechanism (CUMEM, IPC, direct pointer). */
  private static boolean sameKind(String expected, Set<String> observed) {
    if (!"P2P".equals(NcclNames.transportFamily(expected)) || expected.toUpperCase(Locale.ROOT).contains("GDR")) {
      return false;
    }
    for (String o : observed) {
      if (!"P2P".equals(NcclNames.transportFamily(o))) {
        return false;
      }
    }
    return true;
  }

  /** Every observed transport of a peer is of the predicted kind; a prediction may name just the family ("P2P"). */
  private static boolean matches(String expected, Set<String> observed) {
    String e = expected.trim().toUpperCase(Locale.ROOT);
    boolean expectsGdr = e.contains("GDR");
    for (String o : observed) {
      String u = o.toUpperCase(Locale.ROOT);
      if (!NcclNames.transportFamily(e).equals(NcclNames.transportFamily(u))) {
        return false;
      }
      if (expectsGdr && !u.contains("GDR")) {
        return false;
      }
      String eNoGdr = e.replace("/GDRDMA", "").replace("/GDR", "");
      if (!u.startsWith(eNoGdr)) {
        return false;
      }
    }
    return true;
  }

  // ---------------------------------------------------------------- kernels
  /** One NCCL kernel per AllReduce call per rank: the trace's collective ranges against its NCCL kernels. */
  private void kernelsPerCollective(int rank) {
    boolean single = nRanks() == 1;
    boolean oneRank = p.collectives().stream().allMatch(CollectivePrediction::noKernel) && !p.collectives().isEmpty();
    Row r = new Row("kernels/rank" + rank, "NCCL kernels per AllReduce call on rank " + rank)
        .expected(oneRank ? "0 kernels (1-rank communicator: a copy)" : "1 NCCL kernel per bucket AllReduce");
    if (glooReason != null) {
      rows.add(r.na(glooReason).build());
      return;
    }
    List<Evidence.Range> calls = v.allReduceRanges(rank, single);
    List<Evidence.Kernel> ks = v.allReduceKernels(rank, single);
    if (!v.hasKernelTrace()) {
      rows.add(r.unproven("no kernel trace").build());
      return;
    }
    r.kind(KERNEL);
    if (!ks.isEmpty()) {
      r.prov(EvidenceView.src(ks.get(0).source()));
    }
    if (calls.isEmpty()) {
      rows.add(r.unproven(ks.size() + " NCCL AllReduce kernel(s), but no collective call ranges to count them against").build());
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

  // ---------------------------------------------------------------- numerics and completion
  /** Seed common error 10: a kernel that ran proves nothing about the result; the replicas must be equal. */
  /**
   * The run must be the job the prediction was made for: same backend, same number of ranks. Without these rows a
   * gloo run, or a run of another world size, could pass the rows that do not depend on them.
   */
  private void backendAndWorldSize() {
    Row b = new Row("backend", "process-group backend of the run").expected(String.valueOf(p.backend()));
    String observed = v.backend();
    if (observed == null || p.backend() == null) {
      b.unproven("backend not in the evidence (no manifest backend, no DDP logging backend_name)");
    } else {
      b.kind(MANIFEST).prov(v.manifestFile() + " (backend)");
      if (observed.equalsIgnoreCase(p.backend())) {
        b.pass(observed);
      } else {
        b.fail(observed + ": the run used another backend than the one predicted");
      }
    }
    rows.add(b.build());

    Row w = new Row("world-size", "number of ranks of the run").expected(Integer.toString(nRanks()));
    Integer ws = null;
    String from = null;
    JsonNode m = v.manifestAt("worldSize");
    if (m.canConvertToInt()) {
      ws = m.asInt();
      from = v.manifestFile() + " (worldSize)";
    } else {
      for (Map.Entry<String, JsonNode> log : v.ddpLogging().entrySet()) {
        JsonNode x = log.getValue() == null ? null : log.getValue().get("world_size");
        if (x != null && x.canConvertToInt()) {
          ws = x.asInt();
          from = "DDP logging " + log.getKey() + " (world_size)";
          break;
        }
      }
    }
    if (ws == null) {
      w.unproven("world size not in the evidence");
    } else {
      w.kind(from.startsWith("DDP") ? DDP_LOGGING : MANIFEST).prov(from);
      if (ws == nRanks()) {
        w.pass(ws + " rank(s)");
      } else {
        w.fail(ws + " rank(s): the run is not the job that was predicted");
      }
    }
    rows.add(w.build());
  }

  private void replicas() {
    Row r = new Row("replicas", "parameter replicas equal on every rank after training").expected("equal on " + nRanks() + "/" + nRanks() + " ranks");
    Evidence.Replicas rep = v.evidence().replicas();
    if (rep == null || (rep.equal() == null && EvidenceView.list(rep.digests()).isEmpty())) {
      rows.add(r.unproven("no replica digests").build());
      return;
    }
    r.kind(REPLICAS).prov(EvidenceView.src(rep.source()));
    List<Evidence.Digest> ds = EvidenceView.list(rep.digests());
    Map<String, List<Integer>> byDigest = new TreeMap<>();
    for (Evidence.Digest d : ds) {
      byDigest.computeIfAbsent(String.valueOf(d.sha256()), k -> new ArrayList<>()).add(d.rank());
    }
    boolean digestsEqual = byDigest.size() <= 1;
    if (Boolean.FALSE.equals(rep.equal()) || !digestsEqual) {
      r.fail("replicas differ: " + (byDigest.isEmpty() ? "harness says unequal" : groups(byDigest)));
    } else if (ds.size() < nRanks()) {
      r.unproven("digests of " + ds.size() + " of " + nRanks() + " ranks" + (ds.isEmpty() ? " (only a flag)" : ""));
    } else {
      r.pass("equal on " + ds.size() + "/" + nRanks() + " ranks (sha256 " + abbreviate(ds.get(0).sha256()) + ")");
    }
    rows.add(r.build());
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
  private void completionOrder() {
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
      rows.add(r.unproven("no hook records with ready and future-done times").build());
      return;
    }
    r.kind(HOOK);
    if (bad == 0) {
      r.prov(EvidenceView.src(hs.get(0).source()));
    }
    String obs = (checked - bad) + "/" + checked + " bucket records in order"
        + (gpuChecked > 0 ? " (" + (gpuChecked - gpuBad) + "/" + gpuChecked + " with GPU-done)" : cpu ? "; GPU: n/a (CPU)" : "; no GPU-done times")
        + (withinSlack > 0 ? String.format(Locale.ROOT, "; %d GPU-done up to %.1f us before future-done, within the host-clock mapping of "
            + "CUDA events", withinSlack, worstEarlyNs / 1000.0) : "");
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
   * #1136), env or NCCL versions that differ between ranks, a channel count that changed mid-run. A prediction for
   * "the" communicator cannot hold for a run that is not one configuration.
   */
  private void consistency() {
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
        for (Source s : EvidenceView.list(f.sources())) {
          r.prov(EvidenceView.src(s));
        }
      }
    }
    if (!bad.isEmpty()) {
      rows.add(r.kind(NCCL_LOG).fail(String.join("; ", bad)).build());
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
    rows.add(r.kind(NCCL_LOG).pass("no disagreement among the NCCL facts of ranks " + ranks).build());
  }

  private static final Set<String> INCONSISTENT =
      Set.of("cross-rank-disagreement", "env-mismatch", "nccl-version-mismatch", "channels-changed");

  // ---------------------------------------------------------------- bandwidth
  /** Bus bytes: the bucket times the ring bus factor 2(n−1)/n (nccl-tests' busbw convention), not the parameter size. */
  private void busBytes(CollectivePrediction c) {
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
        r.kind(NCCL_LOG).prov(EvidenceView.src(cl.source()));
        break;
      }
    }
    if (bytes == null) {
      for (Evidence.BucketRecord b : v.hooks()) {
        if (b.index() == c.bucket() && b.bytes() == c.bytes()) {
          bytes = b.bytes();
          r.kind(HOOK).prov(EvidenceView.src(b.source()));
          break;
        }
      }
    }
    if (bytes == null || n == null) {
      rows.add(r.unproven(bytes == null ? "no COLL line or hook record of " + c.bytes() + " B" : "number of ranks not in the evidence").build());
      return;
    }
    r.kind(NCCL_LOG);
    long bus = Math.round(bytes * 2.0 * (n - 1) / n);
    String obs = bus + " B (" + bytes + " B × 2(" + n + "−1)/" + n + ")";
    if (bus == c.busBytes()) {
      r.pass(obs);
    } else {
      r.fail(obs);
    }
    rows.add(r.build());
  }

  private Integer observedRanks() {
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

  /**
   * Measured bus bandwidth (bus bytes / median NCCL kernel time) against the model's link ceiling (bus bytes / the
   * model's expected kernel time). The tuner estimate is not used here: it is a cost model, not a kernel time.
   */
  private void busBandwidth(CollectivePrediction c) {
    Row r = new Row("busbw/bucket" + c.bucket(), "bus bandwidth of bucket " + c.bucket() + " against the model's ceiling");
    BigDecimal exp = c.expectedTimeUs();
    double ceiling = exp == null || exp.signum() <= 0 ? Double.NaN : c.busBytes() / (exp.doubleValue() * 1000.0);
    r.expected(Double.isNaN(ceiling) ? "(no ceiling predicted)" : String.format(Locale.ROOT, "<= %.2f GB/s (model ceiling)", ceiling));
    if (glooReason != null) {
      rows.add(r.na(glooReason).build());
      return;
    }
    if (c.noKernel()) {
      rows.add(r.na("not applicable (1 rank: no bus traffic)").build());
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
      rows.add(r.kind(KERNEL).unproven("the prediction holds no expected kernel time").build());
      return;
    }
    durs.sort(null);
    double med = durs.size() % 2 == 1 ? durs.get(durs.size() / 2) : (durs.get(durs.size() / 2 - 1) + durs.get(durs.size() / 2)) / 2;
    double bw = c.busBytes() / (med * 1000.0);
    r.kind(KERNEL);
    String obs = String.format(Locale.ROOT, "%.2f GB/s = %.0f%% of the ceiling (median kernel %.1f us of %d)", bw, 100 * bw / ceiling, med, durs.size());
    if (bw <= ceiling * CEILING_SLACK) {
      r.pass(obs);
    } else {
      r.fail(obs + ": faster than the links allow, the model's ceiling is wrong");
    }
    rows.add(r.build());
  }

  private static String summarize(List<String> obs, String common) {
    return obs.size() == 1 ? obs.get(0) : common + " on " + obs.size() + " sources (" + String.join("; ", obs) + ")";
  }

  /** A row under construction. */
  static final class Row {
    private final String id;
    private final String check;
    private String expected = "";
    private String observed = "";
    private Verdict verdict = Verdict.UNPROVEN;
    private final Set<String> kinds = new LinkedHashSet<>();
    private final List<String> provenance = new ArrayList<>();
    private int dropped;

    Row(String id, String check) {
      this.id = id;
      this.check = check;
    }

    Row expected(String s) {
      expected = s;
      return this;
    }

    Row observed(String s) {
      observed = s;
      return this;
    }

    Row verdict(Verdict v) {
      verdict = v;
      return this;
    }

    Row kind(String k) {
      kinds.add(k);
      return this;
    }

    Row prov(String s) {
      if (s == null || provenance.contains(s)) {
        return this;
      }
      if (provenance.size() < MAX_PROVENANCE) {
        provenance.add(s);
      } else {
        dropped++;
      }
      return this;
    }

    int provenanceSize() {
      return provenance.size();
    }

    Row pass(String obs) {
      observed = obs;
      verdict = Verdict.PASS;
      return this;
    }

    Row fail(String obs) {
      observed = obs;
      verdict = Verdict.FAIL;
      return this;
    }

    Row unproven(String obs) {
      observed = obs;
      verdict = Verdict.UNPROVEN;
      return this;
    }

    Row na(String obs) {
      observed = obs;
      verdict = Verdict.NOT_APPLICABLE;
      return this;
    }

    AcceptanceRow build() {
      List<String> prov = new ArrayList<>(provenance);
      if (dropped > 0) {
        prov.add("… and " + dropped + " more");
      }
      Verdict vd = verdict;
      if (vd == Verdict.PASS && kinds.isEmpty()) {
        vd = Verdict.UNPROVEN;
      }
      return new AcceptanceRow(id, check, expected, observed, vd, new ArrayList<>(kinds), prov);
    }
  }
}

package io.pathproof.evidence;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * Reads a torch.profiler (Kineto) chrome trace, streaming with Jackson's {@link JsonParser}: the modern object
 * ({@code {"schemaVersion":1, "distributedInfo":…, "traceEvents":[…]}}) and the legacy bare array of torch 1.13.
 * {@code ts}/{@code dur} are µs printed with 3 decimals; they are read as decimal text and moved to ns exactly
 * (a value finer than 1 ns is rounded once, half-even). {@code startNs} is on the trace's own clock.
 */
final class KinetoReader {
  /** Non-NCCL kernels kept per file; NCCL kernels are always kept. */
  static final int MAX_OTHER_KERNELS = 100_000;

  static final int MAX_RANGES = 200_000;

  static final JsonFactory FACTORY =
      JsonFactory.builder()
          .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(200).build())
          .build();

  private final FileFacts ff;
  private long index = -1;
  private long otherKernels;
  private long droppedKernels;
  private long droppedRanges;
  private Integer traceRank;

  // The event being read (reused).
  private String cat;
  private String name;
  private Integer pid;
  private Integer tid;
  private String ts;
  private String dur;
  private Integer device;
  private Integer stream;
  private Long bytes;
  private int[] grid;
  private int[] block;
  private Map<String, String> collective;

  private KinetoReader(FileFacts ff) {
    this.ff = ff;
  }

  static void read(InputStream in, FileFacts ff) throws IOException {
    new KinetoReader(ff).run(in);
  }

  private void run(InputStream in) throws IOException {
    TraceScanner s = new TraceScanner(in);
    try {
      int c = s.peekNonWs();
      if (c == '{') {
        s.pos++;
        members(s);
      } else if (c == '[') {
        s.pos++;
        events(s);
      } else {
        ff.problem(s.line, "not a chrome trace: expected { or [ at the start");
      }
    } catch (TraceScanner.Broken e) {
      ff.problem(e.line, "trace JSON broken after " + (index + 1) + " events: " + e.getMessage());
    }
    finish();
  }

  private void members(TraceScanner s) throws IOException, TraceScanner.Broken {
    while (true) {
      int c = s.peekNonWs();
      if (c == '}') {
        s.pos++;
        return;
      }
      if (c != '"') {
        throw new TraceScanner.Broken(c < 0 ? "trace ends before its closing }" : "expected a member name", s.line);
      }
      String key = s.key();
      if (s.peekNonWs() != ':') {
        throw new TraceScanner.Broken("expected : after \"" + key + "\"", s.line);
      }
      s.pos++;
      c = s.peekNonWs();
      if (key.equals("traceEvents") && c == '[') {
        s.pos++;
        events(s);
      } else if (key.equals("distributedInfo")) {
        long line = s.line;
        s.value(true);
        try {
          distributedInfo(Json.mapper().readTree(s.buf, s.rangeStart(), s.pos - s.rangeStart()), line);
        } catch (JsonProcessingException e) {
          ff.problem(line, "distributedInfo is not valid JSON: " + io.pathproof.core.Messages.json(e));
        }
        s.release();
      } else if (key.equals("baseTimeNanoseconds")) {
        long line = s.line;
        s.value(true);
        String v = new String(s.buf, s.rangeStart(), s.pos - s.rangeStart(), java.nio.charset.StandardCharsets.US_ASCII).trim();
        s.release();
        try {
          ff.traceBaseNs = Long.parseLong(v);
          ff.traceBaseSource = Source.line(ff.file, line);
        } catch (NumberFormatException e) {
          ff.problem(line, "baseTimeNanoseconds " + v + " is not a whole number of ns");
        }
      } else {
        s.value(false);
      }
      c = s.peekNonWs();
      if (c == ',') {
        s.pos++;
      } else if (c == '}') {
        s.pos++;
        return;
      } else {
        throw new TraceScanner.Broken(c < 0 ? "trace ends before its closing }" : "expected , or }", s.line);
      }
    }
  }

  private void events(TraceScanner s) throws IOException, TraceScanner.Broken {
    while (true) {
      int c = s.peekNonWs();
      if (c == ']') {
        s.pos++;
        return;
      }
      if (c < 0) {
        throw new TraceScanner.Broken("trace ends before its closing ]", s.line);
      }
      index++;
      long line = s.line;
      if (c != '{') {
        ff.problem(line, "event #" + index + " is not an object");
        s.value(false);
      } else {
        s.value(true);
        event(s.buf, s.rangeStart(), s.pos, line);
        s.release();
      }
      c = s.peekNonWs();
      if (c == ',') {
        s.pos++;
      } else if (c == ']') {
        s.pos++;
        return;
      } else {
        throw new TraceScanner.Broken(c < 0 ? "trace ends before its closing ]" : "expected , or ] after an event", s.line);
      }
    }
  }

  private static final byte[] CAT_KEY = Bytes.ascii("\"cat\"");
  private static final byte[] NCCL_NAME = Bytes.ascii("\"nccl:");
  private static final byte[] GLOO_NAME = Bytes.ascii("\"gloo:");
  /** The event being parsed has no category (torch 1.13's legacy array). */
  private boolean legacy;
  private static final byte[] PARAM_COMMS = Bytes.ascii("\"record_param_comms\"");
  private static final byte[][] KEEP = {
    Bytes.ascii("kernel"), Bytes.ascii("Kernel"), Bytes.ascii("gpu_memcpy"), Bytes.ascii("gpu_memset"),
    Bytes.ascii("Memcpy"), Bytes.ascii("Memset")
  };
  private static final byte[][] NCCL_RANGES = {Bytes.ascii("user_annotation"), Bytes.ascii("gpu_user_annotation")};
  private static final byte[] CPU_OP_BYTES = Bytes.ascii("cpu_op");

  /**
   * One event, {@code b[s, e)}: its category is looked up on the bytes; only kernels, memcpy/memset, nccl:* ranges
   * and record_param_comms ops are parsed (by Jackson). Events of other categories are skipped unvalidated: they
   * give no fact.
   */
  private void event(byte[] b, int s, int e, long line) throws IOException {
    int ci = Bytes.indexOfBySecond(b, s, e, CAT_KEY);
    legacy = false;
    if (ci < 0) {
      // torch 1.13's legacy profiler writes no categories; its collective calls (gloo:all_reduce, nccl:all_reduce on
      // the backend's worker thread) are the only facts such a trace holds.
      if (Bytes.indexOfBySecond(b, s, e, GLOO_NAME) < 0 && Bytes.indexOfBySecond(b, s, e, NCCL_NAME) < 0) {
        return;
      }
      legacy = true;
      parse(b, s, e, line);
      return;
    }
    int v = ci + CAT_KEY.length;
    while (v < e && (b[v] == ' ' || b[v] == ':' || b[v] == '\n' || b[v] == '\t' || b[v] == '\r')) {
      v++;
    }
    if (v >= e || b[v] != '"') {
      return;
    }
    int ve = Bytes.indexOfByte(b, v + 1, e, (byte) '"');
    if (ve < 0) {
      return;
    }
    boolean keep = false;
    for (byte[] k : KEEP) {
      keep |= ve - v - 1 == k.length && Bytes.startsWith(b, v + 1, ve, k);
    }
    if (!keep) {
      for (byte[] k : NCCL_RANGES) {
        keep |= ve - v - 1 == k.length && Bytes.startsWith(b, v + 1, ve, k)
            && (Bytes.indexOfBySecond(b, s, e, NCCL_NAME) >= 0 || Bytes.indexOfBySecond(b, s, e, GLOO_NAME) >= 0);
      }
      keep |= ve - v - 1 == CPU_OP_BYTES.length && Bytes.startsWith(b, v + 1, ve, CPU_OP_BYTES)
          && Bytes.indexOfBySecond(b, s, e, PARAM_COMMS) >= 0;
    }
    if (!keep) {
      return;
    }
    parse(b, s, e, line);
  }

  private void parse(byte[] b, int s, int e, long line) throws IOException {
    try (JsonParser p = FACTORY.createParser(b, s, e - s)) {
      p.nextToken();
      event(p);
      if (p.nextToken() != null) {
        ff.problem(line, "event #" + index + " has trailing content");
        return;
      }
      use(line);
    } catch (JsonProcessingException ex) {
      long at = ex.getLocation() != null ? line + Math.max(0, ex.getLocation().getLineNr() - 1) : line;
      ff.problem(at, "event #" + index + " is not valid JSON: " + io.pathproof.core.Messages.json(ex));
    }
  }

  private void distributedInfo(JsonNode di, long line) {
    if (di == null || !di.isObject()) {
      return;
    }
    if (di.path("rank").canConvertToInt() && di.path("rank").isIntegralNumber()) {
      traceRank = di.get("rank").intValue();
      ff.rank = traceRank;
    }
    if (di.path("world_size").isIntegralNumber() && di.path("world_size").canConvertToInt()) {
      ff.worldSize = di.get("world_size").intValue();
    }
    if (di.path("nccl_version").isTextual()) {
      ff.ncclVersion = di.get("nccl_version").textValue();
      ff.ncclVersionSource = Source.line(ff.file, line);
    }
    String backend = di.path("backend").isTextual() ? di.get("backend").textValue() : null;
    ff.backend = backend;
    java.util.List<Evidence.ProcessGroup> groups = new java.util.ArrayList<>();
    for (JsonNode g : di.path("pg_config")) {
      java.util.List<Integer> ranks = null;
      if (g.path("ranks").isArray()) {
        ranks = new java.util.ArrayList<>();
        for (JsonNode r : g.get("ranks")) {
          if (r.isIntegralNumber() && r.canConvertToInt()) {
            ranks.add(r.intValue());
          } else {
            ranks = null;
            ff.problem(line, "distributedInfo.pg_config ranks holds a non-integer");
            break;
          }
        }
      }
      groups.add(new Evidence.ProcessGroup(
          g.path("pg_name").isValueNode() ? g.get("pg_name").asText() : null,
          g.path("pg_desc").isTextual() ? g.get("pg_desc").textValue() : null,
          g.path("pg_size").isIntegralNumber() && g.get("pg_size").canConvertToInt() ? g.get("pg_size").intValue() : null,
          ranks == null ? null : java.util.List.copyOf(ranks)));
    }
    ff.distributed.add(new Evidence.Distributed(traceRank, ff.worldSize, backend,
        di.path("nccl_version").isTextual() ? di.get("nccl_version").textValue() : null, java.util.List.copyOf(groups),
        Source.line(ff.file, line)));
    ff.facts++;
  }

  private void event(JsonParser p) throws IOException {
    cat = name = ts = dur = null;
    tsNs = durNs = NO_NS;
    pid = tid = device = stream = null;
    bytes = null;
    grid = block = null;
    collective = null;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken v = p.nextToken();
      switch (field) {
        case "cat" -> cat = v == JsonToken.VALUE_STRING ? category(p) : null;
        case "name" -> {
          // The name is kept only for kernels, ranges and collective ops; cat precedes name in Kineto's output, so
          // most events never make a String of it.
          if (v == JsonToken.VALUE_STRING && (cat == null || cat != OTHER)) {
            name = cat == CPU_OP ? (same(p, "record_param_comms") ? "record_param_comms" : null) : canonical(p.getText());
          }
        }
        case "pid" -> pid = intOrNull(p, v);
        case "tid" -> tid = intOrNull(p, v);
        case "ts" -> {
          if (v.isNumeric()) {
            tsNs = fastNs(p);
            ts = tsNs == NO_NS ? p.getText() : null;
          }
        }
        case "dur" -> {
          if (v.isNumeric()) {
            durNs = fastNs(p);
            dur = durNs == NO_NS ? p.getText() : null;
          }
        }
        case "args" -> {
          if (v == JsonToken.START_OBJECT && interesting()) {
            args(p);
          } else {
            p.skipChildren();
          }
        }
        default -> p.skipChildren();
      }
    }
  }

  private static final long NO_NS = Long.MIN_VALUE;
  private static final String OTHER = "other";
  private static final String CPU_OP = "cpu_op";
  private static final String[] CATEGORIES = {
    "kernel", "Kernel", "gpu_memcpy", "gpu_memset", "Memcpy", "Memset", "user_annotation", "gpu_user_annotation", CPU_OP
  };
  private final java.util.Map<String, String> names = new java.util.HashMap<>();
  private long tsNs;
  private long durNs;

  /** The category as one of a few constants (no String made for the common ones), OTHER for the rest. */
  private static String category(JsonParser p) throws IOException {
    for (String c : CATEGORIES) {
      if (same(p, c)) {
        return c;
      }
    }
    return OTHER;
  }

  private static boolean same(JsonParser p, String s) throws IOException {
    int len = p.getTextLength();
    if (len != s.length()) {
      return false;
    }
    char[] c = p.getTextCharacters();
    int off = p.getTextOffset();
    for (int i = 0; i < len; i++) {
      if (c[off + i] != s.charAt(i)) {
        return false;
      }
    }
    return true;
  }

  /** Kernel names repeat: keep one String per distinct name (bounded), so 100 000 kernels do not hold 100 000 copies. */
  private String canonical(String n) {
    String c = names.get(n);
    if (c != null) {
      return c;
    }
    if (names.size() < 50_000) {
      names.put(n, n);
    }
    return n;
  }

  /**
   * Plain decimal µs with at most 3 decimals ("5354382075105.754") → ns in exact long arithmetic; NO_NS when the text
   * has another shape (exponent, more decimals, too long), which then goes through BigDecimal.
   */
  private static long fastNs(JsonParser p) throws IOException {
    char[] c = p.getTextCharacters();
    int off = p.getTextOffset();
    int len = p.getTextLength();
    if (len == 0 || len > 19) {
      return NO_NS;
    }
    long v = 0;
    int frac = -1;
    int i = 0;
    boolean neg = c[off] == '-';
    if (neg) {
      i = 1;
    }
    for (; i < len; i++) {
      char ch = c[off + i];
      if (ch >= '0' && ch <= '9') {
        if (frac >= 0 && ++frac > 3) {
          return NO_NS;
        }
        v = v * 10 + (ch - '0');
      } else if (ch == '.' && frac < 0) {
        frac = 0;
      } else {
        return NO_NS;
      }
    }
    for (int k = Math.max(frac, 0); k < 3; k++) {
      v *= 10;
    }
    return neg ? -v : v;
  }

  /** Args are read only for kernels, memcpys and collective ops (cat and name come first in Kineto's output). */
  private boolean interesting() {
    return cat == null || cat.equalsIgnoreCase("kernel") || "record_param_comms".equals(name)
        || cat.equals("gpu_memcpy") || cat.equals("gpu_memset") || cat.equals("Memcpy") || cat.equals("Memset");
  }

  private void args(JsonParser p) throws IOException {
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String field = p.currentName();
      JsonToken v = p.nextToken();
      switch (field) {
        case "device" -> device = intOrNull(p, v);
        case "bytes" -> bytes = v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() != JsonParser.NumberType.BIG_INTEGER
            ? Long.valueOf(p.getLongValue()) : null;
        case "stream" -> stream = intOrNull(p, v);
        case "grid" -> grid = dims(p, v);
        case "block" -> block = dims(p, v);
        case "Collective name", "In msg nelems", "Out msg nelems", "Group size", "dtype", "Process Group Name",
            "Process Group Description", "Process Group Ranks", "In split size", "Out split size", "Rank",
            "Seq" -> {
          if (v.isScalarValue()) {
            if (collective == null) {
              collective = new LinkedHashMap<>();
            }
            collective.put(field, p.getText());
          } else {
            p.skipChildren();
          }
        }
        default -> p.skipChildren();
      }
    }
  }

  private static Integer intOrNull(JsonParser p, JsonToken v) throws IOException {
    if (v == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT) {
      return p.getIntValue();
    }
    p.skipChildren();
    return null;
  }

  private int[] dims(JsonParser p, JsonToken v) throws IOException {
    if (v != JsonToken.START_ARRAY) {
      p.skipChildren();
      return null;
    }
    int[] d = new int[3];
    int n = 0;
    JsonToken t;
    boolean ok = true;
    while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
      if (t == null) {
        return null;
      }
      if (t == JsonToken.VALUE_NUMBER_INT && p.getNumberType() == JsonParser.NumberType.INT && n < 3) {
        d[n++] = p.getIntValue();
      } else {
        ok = false;
        p.skipChildren();
      }
    }
    return ok && n == 3 ? d : null;
  }

  private void use(long line) {
    if (legacy && cat == null && name != null && (name.startsWith("gloo:") || name.startsWith("nccl:"))) {
      if (ff.ranges.size() >= MAX_RANGES) {
        droppedRanges++;
      } else {
        ff.ranges.add(new Evidence.Range(ff.rank, name, "legacy", tsNs != NO_NS ? Long.valueOf(tsNs) : ns(ts, line, "ts"),
            durNs != NO_NS ? Long.valueOf(durNs) : ns(dur, line, "dur"), Source.event(ff.file, index)));
      }
      ff.facts++;
      return;
    }
    if (cat == null || name == null || cat == OTHER) {
      return;
    }
    String c = cat == OTHER ? cat : cat.toLowerCase(Locale.ROOT);
    Source src = Source.event(ff.file, index);
    if (c.equals("kernel")) {
      boolean nccl = KernelNames.isNccl(name);
      if (!nccl && ++otherKernels > MAX_OTHER_KERNELS) {
        droppedKernels++;
        ff.facts++;
        return;
      }
      Long startNs = tsNs != NO_NS ? Long.valueOf(tsNs) : ns(ts, line, "ts");
      Long kDurNs = durNs != NO_NS ? Long.valueOf(durNs) : ns(dur, line, "dur");
      BigDecimal durUs = durNs != NO_NS ? BigDecimal.valueOf(durNs, 3).stripTrailingZeros() : dur == null ? null : decimal(dur);
      ff.kernels.add(
          new Evidence.Kernel(
              ff.rank, name, grid, block, durUs, startNs, kDurNs, device != null ? device : pid,
              stream != null ? stream : tid, nccl, collective, src));
      ff.facts++;

    } else if (c.equals("gpu_memcpy") || c.equals("memcpy") || c.equals("gpu_memset") || c.equals("memset")
        || ((c.equals("user_annotation") || c.equals("gpu_user_annotation"))
            && (name.startsWith("nccl:") || name.startsWith("gloo:")))) {
      Long start = tsNs != NO_NS ? Long.valueOf(tsNs) : ns(ts, line, "ts");
      Long length = durNs != NO_NS ? Long.valueOf(durNs) : ns(dur, line, "dur");
      if (ff.ranges.size() >= MAX_RANGES) {
        droppedRanges++;
      } else {
        ff.ranges.add(new Evidence.Range(ff.rank, name, cat, start, length, src));
      }
      if (!c.endsWith("annotation") && ff.copies.size() < MAX_RANGES) {
        ff.copies.add(new Evidence.Copy(ff.rank, copyKind(name), bytes, start, length, device, stream, src));
      }
      ff.facts++;
      if (c.equals("user_annotation") && name.startsWith("nccl:")) {
        marker(src);
      }
    } else if (c.equals("cpu_op") && name.equals("record_param_comms")) {
      if (ff.paramCommsOps++ == 0 && ff.firstCollectiveMarker == null) {
        ff.firstCollectiveMarker = src;
      }
      ff.facts++;
    }
  }

  /** "Memcpy DtoD (Device -> Device)" → "DtoD"; "Memset (Device)" → "memset" (names as Kineto prints them). */
  static String copyKind(String name) {
    if (name.startsWith("Memset")) {
      return "memset";
    }
    if (name.startsWith("Memcpy ")) {
      int end = name.indexOf(' ', 7);
      return end < 0 ? name.substring(7) : name.substring(7, end);
    }
    return name;
  }

  private void marker(Source src) {
    if (ff.collectiveMarkers++ == 0) {
      ff.firstCollectiveMarker = src;
    }
  }

  private static BigDecimal decimal(String text) {
    try {
      return new BigDecimal(text);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** µs text → ns, exactly: BigDecimal, move the point 3 places, round once if finer than 1 ns. */
  private Long ns(String us, long line, String field) {
    if (us == null) {
      return null;
    }
    BigDecimal d = decimal(us);
    try {
      if (d == null || d.abs().compareTo(BigDecimal.valueOf(Long.MAX_VALUE / 1000)) > 0) {
        throw new ArithmeticException("out of range");
      }
      return d.movePointRight(3).setScale(0, RoundingMode.HALF_EVEN).longValueExact();
    } catch (ArithmeticException e) {
      ff.problem(line, "event #" + index + ": " + field + " " + us + " is not a time in µs");
      return null;
    }
  }

  private void finish() {
    if (traceRank != null) {
      // distributedInfo may follow the events: give them the trace's rank.
      ff.kernels.replaceAll(
          k -> java.util.Objects.equals(k.rank(), traceRank)
              ? k
              : new Evidence.Kernel(traceRank, k.name(), k.grid(), k.block(), k.durUs(), k.startNs(), k.durNs(),
                  k.device(), k.stream(), k.nccl(), k.collective(), k.source()));
      ff.ranges.replaceAll(
          r -> java.util.Objects.equals(r.rank(), traceRank)
              ? r
              : new Evidence.Range(traceRank, r.name(), r.category(), r.startNs(), r.durNs(), r.source()));
      ff.copies.replaceAll(
          c -> java.util.Objects.equals(c.rank(), traceRank)
              ? c
              : new Evidence.Copy(traceRank, c.kind(), c.bytes(), c.startNs(), c.durNs(), c.device(), c.stream(),
                  c.source()));
    }
    if (droppedKernels > 0 || droppedRanges > 0) {
      ff.findings.add(
          new Evidence.Finding(
              "not-all-kept",
              droppedKernels + " non-NCCL kernels beyond the first " + MAX_OTHER_KERNELS + " and " + droppedRanges
                  + " ranges beyond the first " + MAX_RANGES + " were counted but not kept (memory bound);"
                  + " every NCCL kernel was kept",
              java.util.List.of(Source.file(ff.file))));
    }
  }
}

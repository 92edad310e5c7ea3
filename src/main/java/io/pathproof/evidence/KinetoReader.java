package io.pathproof.evidence;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;

/**
 * Reads a torch.profiler (Kineto) chrome trace, streaming with Jackson's {@link JsonParser}: the modern object
 * ({@code {"schemaVersion":1, "distributedInfo":…, "traceEvents":[…]}}) and the legacy bare array of torch 1.13.
 * {@code ts}/{@code dur} are µs printed with 3 decimals; they are read as decimal text and moved to ns exactly
 * (a value finer than 1 ns is rounded once, half-even). {@code startNs} is on the trace's own clock.
 */
final class KinetoReader implements FormatReader {
    /** Non-NCCL kernels kept per file; NCCL kernels are always kept. */
    static final int MAX_OTHER_KERNELS = 100_000;

    static final int MAX_RANGES = 200_000;

    static final JsonFactory FACTORY = JsonFactory.builder()
            .streamReadConstraints(
                    StreamReadConstraints.builder().maxNestingDepth(200).build())
            .build();

    private final Reading in;
    private final Facts.Trace.Builder t = new Facts.Trace.Builder();
    private long index = -1;
    private long otherKernels;
    private long droppedKernels;
    private long droppedRanges;
    private Integer traceRank;

    private final KinetoEvent ev = new KinetoEvent();

    KinetoReader(Reading in) {
        this.in = in;
    }

    @Override
    public Facts.Trace facts() {
        return t.build();
    }

    @Override
    public void read(InputStream stream) throws IOException {
        TraceScanner s = new TraceScanner(stream);
        try {
            int c = s.peekNonWs();
            if (c == '{') {
                s.pos++;
                members(s);
            } else if (c == '[') {
                s.pos++;
                events(s);
            } else {
                in.problem(s.line, "not a chrome trace: expected { or [ at the start");
            }
        } catch (TraceScanner.Broken e) {
            in.problem(e.line, "trace JSON broken after " + (index + 1) + " events: " + e.getMessage());
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
                throw new TraceScanner.Broken(
                        c < 0 ? "trace ends before its closing }" : "expected a member name", s.line);
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
                    in.problem(line, "distributedInfo is not valid JSON: " + io.pathproof.core.Messages.json(e));
                }
                s.release();
            } else if (key.equals("baseTimeNanoseconds")) {
                long line = s.line;
                s.value(true);
                String v = new String(
                                s.buf,
                                s.rangeStart(),
                                s.pos - s.rangeStart(),
                                java.nio.charset.StandardCharsets.US_ASCII)
                        .trim();
                s.release();
                try {
                    t.baseNs = Long.parseLong(v);
                    t.baseSource = Source.line(in.file, line);
                } catch (NumberFormatException e) {
                    in.problem(line, "baseTimeNanoseconds " + v + " is not a whole number of ns");
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
                in.problem(line, "event #" + index + " is not an object");
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
                throw new TraceScanner.Broken(
                        c < 0 ? "trace ends before its closing ]" : "expected , or ] after an event", s.line);
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
        Bytes.ascii("kernel"),
        Bytes.ascii("Kernel"),
        Bytes.ascii("gpu_memcpy"),
        Bytes.ascii("gpu_memset"),
        Bytes.ascii("Memcpy"),
        Bytes.ascii("Memset")
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
            // torch 1.13's legacy profiler writes no categories; its collective calls (gloo:all_reduce, nccl:all_reduce
            // on
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
                keep |= ve - v - 1 == k.length
                        && Bytes.startsWith(b, v + 1, ve, k)
                        && (Bytes.indexOfBySecond(b, s, e, NCCL_NAME) >= 0
                                || Bytes.indexOfBySecond(b, s, e, GLOO_NAME) >= 0);
            }
            keep |= ve - v - 1 == CPU_OP_BYTES.length
                    && Bytes.startsWith(b, v + 1, ve, CPU_OP_BYTES)
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
            ev.read(p);
            if (p.nextToken() != null) {
                in.problem(line, "event #" + index + " has trailing content");
                return;
            }
            use(line);
        } catch (JsonProcessingException ex) {
            long at = ex.getLocation() != null
                    ? line + Math.max(0, ex.getLocation().getLineNr() - 1)
                    : line;
            in.problem(at, "event #" + index + " is not valid JSON: " + io.pathproof.core.Messages.json(ex));
        }
    }

    private void distributedInfo(JsonNode di, long line) {
        if (di == null || !di.isObject()) {
            return;
        }
        if (di.path("rank").canConvertToInt() && di.path("rank").isIntegralNumber()) {
            traceRank = di.get("rank").intValue();
            in.rank = traceRank;
        }
        if (di.path("world_size").isIntegralNumber() && di.path("world_size").canConvertToInt()) {
            t.worldSize = di.get("world_size").intValue();
        }
        String backend = di.path("backend").isTextual() ? di.get("backend").textValue() : null;
        t.backend = backend;
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
                        in.problem(line, "distributedInfo.pg_config ranks holds a non-integer");
                        break;
                    }
                }
            }
            groups.add(new Evidence.ProcessGroup(
                    g.path("pg_name").isValueNode() ? g.get("pg_name").asText() : null,
                    g.path("pg_desc").isTextual() ? g.get("pg_desc").textValue() : null,
                    g.path("pg_size").isIntegralNumber() && g.get("pg_size").canConvertToInt()
                            ? g.get("pg_size").intValue()
                            : null,
                    ranks == null ? null : java.util.List.copyOf(ranks)));
        }
        t.distributed.add(new Evidence.Distributed(
                traceRank,
                t.worldSize,
                backend,
                di.path("nccl_version").isTextual() ? di.get("nccl_version").textValue() : null,
                java.util.List.copyOf(groups),
                Source.line(in.file, line)));
        in.facts++;
    }

    private void use(long line) {
        if (legacy
                && ev.cat == null
                && ev.name != null
                && (ev.name.startsWith("gloo:") || ev.name.startsWith("nccl:"))) {
            if (t.ranges.size() >= MAX_RANGES) {
                droppedRanges++;
            } else {
                Long start = start(line);
                t.ranges.add(new Evidence.Range(
                        in.rank, ev.name, "legacy", start, length(line), Source.event(in.file, index)));
            }
            in.facts++;
            return;
        }
        if (ev.cat == null || ev.name == null || ev.cat == KinetoEvent.OTHER) {
            return;
        }
        String c = ev.cat == KinetoEvent.OTHER ? ev.cat : ev.cat.toLowerCase(Locale.ROOT);
        Source src = Source.event(in.file, index);
        if (c.equals("kernel")) {
            boolean nccl = KernelNames.isNccl(ev.name);
            if (!nccl && ++otherKernels > MAX_OTHER_KERNELS) {
                droppedKernels++;
                in.facts++;
                return;
            }
            Long startNs = start(line);
            Long kDurNs = length(line);
            BigDecimal durUs = ev.durNs != KinetoEvent.NO_NS
                    ? BigDecimal.valueOf(ev.durNs, 3).stripTrailingZeros()
                    : ev.dur == null ? null : decimal(ev.dur);
            t.kernels.add(new Evidence.Kernel(
                    in.rank,
                    ev.name,
                    ev.grid,
                    ev.block,
                    durUs,
                    startNs,
                    kDurNs,
                    ev.device != null ? ev.device : ev.pid,
                    ev.stream != null ? ev.stream : ev.tid,
                    nccl,
                    ev.collective,
                    src,
                    null,
                    null));
            in.facts++;

        } else if (c.equals("gpu_memcpy")
                || c.equals("memcpy")
                || c.equals("gpu_memset")
                || c.equals("memset")
                || ((c.equals("user_annotation") || c.equals("gpu_user_annotation"))
                        && (ev.name.startsWith("nccl:") || ev.name.startsWith("gloo:")))) {
            Long start = start(line);
            Long length = length(line);
            if (t.ranges.size() >= MAX_RANGES) {
                droppedRanges++;
            } else {
                t.ranges.add(new Evidence.Range(in.rank, ev.name, ev.cat, start, length, src));
            }
            if (!c.endsWith("annotation") && t.copies.size() < MAX_RANGES) {
                t.copies.add(new Evidence.Copy(
                        in.rank, copyKind(ev.name), ev.bytes, start, length, ev.device, ev.stream, src));
            }
            in.facts++;
            if (c.equals("user_annotation") && ev.name.startsWith("nccl:")) {
                t.marker(src);
            }
        } else if (c.equals("cpu_op") && ev.name.equals("record_param_comms")) {
            if (t.paramCommsOps++ == 0 && t.firstCollectiveMarker == null) {
                t.firstCollectiveMarker = src;
            }
            in.facts++;
        }
    }

    /** The event's ts in ns, exact: from the fast path, else from its text (a problem when it is not a time). */
    private Long start(long line) {
        return ev.tsNs != KinetoEvent.NO_NS ? Long.valueOf(ev.tsNs) : ns(ev.ts, line, "ts");
    }

    /** The event's dur in ns, as {@link #start}. */
    private Long length(long line) {
        return ev.durNs != KinetoEvent.NO_NS ? Long.valueOf(ev.durNs) : ns(ev.dur, line, "dur");
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
            in.problem(line, "event #" + index + ": " + field + " " + us + " is not a time in µs");
            return null;
        }
    }

    private void finish() {
        if (traceRank != null) {
            // distributedInfo may follow the events: give them the trace's rank.
            t.kernels.replaceAll(k -> java.util.Objects.equals(k.rank(), traceRank)
                    ? k
                    : new Evidence.Kernel(
                            traceRank,
                            k.name(),
                            k.grid(),
                            k.block(),
                            k.durUs(),
                            k.startNs(),
                            k.durNs(),
                            k.device(),
                            k.stream(),
                            k.nccl(),
                            k.collective(),
                            k.source(),
                            null,
                            null));
            t.ranges.replaceAll(r -> java.util.Objects.equals(r.rank(), traceRank)
                    ? r
                    : new Evidence.Range(traceRank, r.name(), r.category(), r.startNs(), r.durNs(), r.source()));
            t.copies.replaceAll(c -> java.util.Objects.equals(c.rank(), traceRank)
                    ? c
                    : new Evidence.Copy(
                            traceRank,
                            c.kind(),
                            c.bytes(),
                            c.startNs(),
                            c.durNs(),
                            c.device(),
                            c.stream(),
                            c.source()));
        }
        if (droppedKernels > 0 || droppedRanges > 0) {
            t.findings.add(Evidence.Finding.once(
                    "not-all-kept",
                    droppedKernels + " non-NCCL kernels beyond the first " + MAX_OTHER_KERNELS + " and " + droppedRanges
                            + " ranges beyond the first " + MAX_RANGES + " were counted but not kept (memory bound);"
                            + " every NCCL kernel was kept",
                    java.util.List.of(Source.file(in.file))));
        }
    }
}

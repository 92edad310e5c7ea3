package io.pathproof.evidence;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a PyTorch flight-recorder dump: the JSON one ({@code _dump_nccl_trace_json}, FlightRecorder::dump_json) and
 * the pickle torch writes by default (TORCH_NCCL_DEBUG_INFO_TEMP_FILE, FlightRecorder::dump → pickle_str, read by
 * {@link PickleReader}, which never loads code). Schema "2.3" … "2.10": {@code version}, {@code comm_lib_version},
 * {@code pg_config} (name → {name, desc, ranks "[0,1]"}), {@code pg_status} (pg id → last enqueued/started/completed
 * collective), {@code entries} (keys of FlightRecorderDetail.hpp getCollectiveTrace; the process group as
 * {@code process_group} = [name, desc]). JSON entries are streamed; a pickle is read whole (its size is bounded).
 */
final class FlightRecorderReader implements FormatReader {
    /** torch keeps 2 000 entries by default (TORCH_NCCL_TRACE_BUFFER_SIZE); a pickle beyond this is not a dump. */
    static final int MAX_PICKLE = 256 << 20;

    private final Reading ff;
    private final List<Evidence.FlightDump> dumps = new ArrayList<>();
    private final List<Evidence.FlightRecord> records = new ArrayList<>();
    /** Where the dump names its NCCL version (comm_lib_version). */
    private Source ncclVersionSource;

    private final List<Pending> entries = new ArrayList<>();
    private final Map<String, Evidence.ProcessGroup> groups = new LinkedHashMap<>();
    private final Map<String, Evidence.PgStatus> status = new LinkedHashMap<>();
    private String version;
    private String ncclVersion;
    private Source dumpSource;

    private record Pending(long index, long line, JsonNode entry) {}

    FlightRecorderReader(Reading ff) {
        this.ff = ff;
    }

    @Override
    public Facts.Flight facts() {
        return new Facts.Flight(dumps, records, ncclVersion, ncclVersionSource);
    }

    @Override
    public void read(InputStream in) throws IOException {
        InputStream s = in.markSupported() ? in : new BufferedInputStream(in);
        s.mark(1);
        int first = s.read();
        s.reset();
        if (first == 0x80) {
            pickle(s);
        } else {
            json(s);
        }
    }

    private void pickle(InputStream in) throws IOException {
        byte[] bytes = in.readNBytes(MAX_PICKLE + 1);
        if (bytes.length > MAX_PICKLE) {
            ff.problem(0, "pickle larger than " + (MAX_PICKLE >> 20) + " MiB: not a flight-recorder dump, not read");
            return;
        }
        JsonNode root;
        try {
            root = PickleReader.read(bytes);
        } catch (PickleReader.Refused e) {
            ff.problem(0, "flight-recorder pickle, byte " + e.offset + ": " + e.getMessage());
            return;
        }
        if (!root.isObject() || !(root.has("entries") || root.has("pg_config") || root.has("version"))) {
            ff.problem(0, "a pickle of plain data, but not a flight-recorder dump (no version, pg_config or entries)");
            return;
        }
        dumpSource = Source.file(ff.file);
        header(root);
        long index = 0;
        for (JsonNode e : root.path("entries")) {
            entries.add(new Pending(index++, 0, e));
        }
        finish("pickle");
    }

    private void json(InputStream in) throws IOException {
        JsonParser p = KinetoReader.FACTORY.createParser(in);
        try (p) {
            if (p.nextToken() != JsonToken.START_OBJECT) {
                ff.problem(line(p), "not a flight-recorder dump: expected a JSON object");
                return;
            }
            dumpSource = Source.line(ff.file, line(p));
            Map<String, JsonNode> head = new LinkedHashMap<>();
            while (p.nextToken() == JsonToken.FIELD_NAME) {
                String field = p.currentName();
                JsonToken v = p.nextToken();
                if (field.equals("entries") && v == JsonToken.START_ARRAY) {
                    entries(p);
                } else if (field.equals("version")
                        || field.equals("comm_lib_version")
                        || field.equals("pg_config")
                        || field.equals("pg_status")) {
                    if (field.equals("comm_lib_version") && v == JsonToken.VALUE_STRING) {
                        ncclVersionSource = Source.line(ff.file, line(p));
                    }
                    head.put(field, Json.mapper().readTree(p));
                } else {
                    p.skipChildren();
                }
            }
            header(Json.mapper().valueToTree(head));
        } catch (JsonProcessingException e) {
            long line = e.getLocation() != null ? e.getLocation().getLineNr() : line(p);
            ff.problem(Math.max(1, line), "flight-recorder JSON broken: " + io.pathproof.core.Messages.json(e));
        }
        finish("json");
    }

    private static long line(JsonParser p) {
        return Math.max(1, p.currentLocation().getLineNr());
    }

    private void entries(JsonParser p) throws IOException {
        long index = -1;
        JsonToken t;
        while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
            if (t == null) {
                ff.problem(line(p), "entries end before their closing ]");
                return;
            }
            index++;
            long line = line(p);
            entries.add(new Pending(index, line, Json.mapper().readTree(p)));
        }
    }

    /** version, comm_lib_version, pg_config and pg_status; JSON prints pg_status numbers as strings, pickle as ints. */
    private void header(JsonNode root) {
        if (root.path("version").isTextual()) {
            version = root.get("version").textValue();
        }
        if (root.path("comm_lib_version").isTextual()) {
            ncclVersion = root.get("comm_lib_version").textValue();
            if (ncclVersionSource == null) {
                ncclVersionSource = dumpSource;
            }
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.path("pg_config").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode g = e.getValue();
            List<Integer> ranks = ranks(g.path("ranks"));
            groups.put(
                    e.getKey(),
                    new Evidence.ProcessGroup(
                            g.path("name").isTextual() ? g.get("name").textValue() : e.getKey(),
                            g.path("desc").isTextual() ? g.get("desc").textValue() : null,
                            ranks == null ? null : ranks.size(),
                            ranks));
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = root.path("pg_status").fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode s = e.getValue();
            status.put(
                    e.getKey(),
                    new Evidence.PgStatus(
                            seq(s.get("last_enqueued_collective")),
                            seq(s.get("last_started_collective")),
                            seq(s.get("last_completed_collective"))));
        }
    }

    /** "[0,1,2]" (getPgConfig's ranks_str), or a list of integers; null when neither. */
    private static List<Integer> ranks(JsonNode n) {
        List<Integer> out = new ArrayList<>();
        if (n.isArray()) {
            for (JsonNode r : n) {
                if (!r.canConvertToInt() || !r.isIntegralNumber()) {
                    return null;
                }
                out.add(r.intValue());
            }
            return out;
        }
        if (!n.isTextual()) {
            return null;
        }
        String t = n.textValue().strip();
        if (!t.startsWith("[") || !t.endsWith("]")) {
            return null;
        }
        String body = t.substring(1, t.length() - 1).strip();
        if (body.isEmpty()) {
            return out;
        }
        for (String part : body.split(",")) {
            try {
                out.add(Integer.valueOf(part.strip()));
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return out;
    }

    private static Long seq(JsonNode n) {
        if (n == null) {
            return null;
        }
        if (n.isIntegralNumber() && n.canConvertToLong()) {
            return n.longValue();
        }
        if (n.isTextual()) {
            try {
                return Long.valueOf(n.textValue().strip());
            } catch (NumberFormatException e) {
                return null;
            }
        }
        return null;
    }

    private void finish(String format) {
        if (version != null || ncclVersion != null || !groups.isEmpty() || !status.isEmpty()) {
            dumps.add(new Evidence.FlightDump(
                    ff.rank, version, ncclVersion, List.copyOf(groups.values()), status, format, dumpSource));
            ff.facts++;
        }
        for (Pending p : entries) {
            entry(p.entry, p.index, p.line);
        }
    }

    private void entry(JsonNode e, long index, long line) {
        if (e == null || !e.isObject()) {
            ff.problem(line, "entry #" + index + " is not an object");
            return;
        }
        JsonNode id = e.get("record_id");
        JsonNode name = e.get("profiling_name");
        if (id == null || !id.canConvertToLong() || !id.isIntegralNumber() || name == null || !name.isTextual()) {
            ff.problem(line, "entry #" + index + ": record_id (integer) and profiling_name (text) are required");
            return;
        }
        List<List<Long>> sizes = null;
        JsonNode is = e.get("input_sizes");
        if (is != null && is.isArray()) {
            sizes = new ArrayList<>();
            for (JsonNode shape : is) {
                List<Long> dims = new ArrayList<>();
                if (shape.isArray()) {
                    for (JsonNode d : shape) {
                        if (d.isIntegralNumber() && d.canConvertToLong()) {
                            dims.add(d.longValue());
                        } else {
                            ff.problem(line, "entry #" + index + ": input_sizes holds a non-integer");
                            dims = null;
                            break;
                        }
                    }
                }
                sizes.add(dims);
            }
        }
        List<String> dtypes = null;
        JsonNode dt = e.get("input_dtypes");
        if (dt != null && dt.isArray()) {
            dtypes = new ArrayList<>();
            for (JsonNode d : dt) {
                dtypes.add(d.asText());
            }
        }
        JsonNode dur = e.get("duration_ms");
        records.add(new Evidence.FlightRecord(
                ff.rank,
                id.longValue(),
                name.textValue(),
                longOrNull(e.get("collective_seq_id")),
                sizes,
                dtypes,
                e.path("state").isTextual() ? e.get("state").textValue() : null,
                longOrNull(e.get("time_created_ns")),
                dur != null && dur.isNumber() ? dur.doubleValue() : null,
                Source.event(ff.file, index),
                processGroup(e.get("process_group"))));
        ff.facts++;
    }

    /** The entry's [name, desc] joined with pg_config's ranks; without pg_config, name and desc only. */
    private Evidence.ProcessGroup processGroup(JsonNode pg) {
        if (pg == null || !pg.isArray() || pg.size() < 1 || !pg.get(0).isTextual()) {
            return null;
        }
        String name = pg.get(0).textValue();
        Evidence.ProcessGroup known = groups.get(name);
        if (known != null) {
            return known;
        }
        String desc = pg.size() > 1 && pg.get(1).isTextual() ? pg.get(1).textValue() : null;
        return new Evidence.ProcessGroup(name, desc, null, null);
    }

    private static Long longOrNull(JsonNode n) {
        return n != null && n.isIntegralNumber() && n.canConvertToLong() ? n.longValue() : null;
    }
}

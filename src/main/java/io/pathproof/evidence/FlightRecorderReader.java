package io.pathproof.evidence;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a PyTorch flight-recorder JSON dump ({@code _dump_nccl_trace_json}, schema "2.3" … "2.10": keys
 * {@code version}, {@code comm_lib_version}, {@code pg_config}, {@code pg_status}, {@code entries}; entry keys from
 * FlightRecorder.hpp). Entries are streamed one at a time. Pickle dumps are never loaded.
 */
final class FlightRecorderReader {
  private FlightRecorderReader() {}

  static void read(InputStream in, FileFacts ff) throws IOException {
    JsonParser p = KinetoReader.FACTORY.createParser(in);
    try (p) {
      if (p.nextToken() != JsonToken.START_OBJECT) {
        ff.problem(line(p), "not a flight-recorder dump: expected a JSON object");
        return;
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String field = p.currentName();
        JsonToken v = p.nextToken();
        if (field.equals("entries") && v == JsonToken.START_ARRAY) {
          entries(p, ff);
        } else if (field.equals("comm_lib_version") && v == JsonToken.VALUE_STRING) {
          ff.ncclVersion = p.getText();
          ff.ncclVersionSource = Source.line(ff.file, line(p));
        } else {
          p.skipChildren();
        }
      }
    } catch (JsonProcessingException e) {
      long line = e.getLocation() != null ? e.getLocation().getLineNr() : line(p);
      ff.problem(Math.max(1, line), "flight-recorder JSON broken: " + e.getOriginalMessage());
    }
  }

  private static long line(JsonParser p) {
    return Math.max(1, p.currentLocation().getLineNr());
  }

  private static void entries(JsonParser p, FileFacts ff) throws IOException {
    long index = -1;
    JsonToken t;
    while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
      if (t == null) {
        ff.problem(line(p), "entries end before their closing ]");
        return;
      }
      index++;
      long line = line(p);
      JsonNode e = Json.mapper().readTree(p);
      if (e == null || !e.isObject()) {
        ff.problem(line, "entry #" + index + " is not an object");
        continue;
      }
      entry(e, index, line, ff);
    }
  }

  private static void entry(JsonNode e, long index, long line, FileFacts ff) {
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
    ff.flight.add(
        new Evidence.FlightRecord(
            ff.rank, id.longValue(), name.textValue(), longOrNull(e.get("collective_seq_id")), sizes, dtypes,
            e.path("state").isTextual() ? e.get("state").textValue() : null, longOrNull(e.get("time_created_ns")),
            dur != null && dur.isNumber() ? dur.doubleValue() : null, Source.event(ff.file, index)));
    ff.facts++;
  }

  private static Long longOrNull(JsonNode n) {
    return n != null && n.isIntegralNumber() && n.canConvertToLong() ? n.longValue() : null;
  }
}

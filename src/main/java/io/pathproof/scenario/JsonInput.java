package io.pathproof.scenario;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Reads JSON input with errors that name the source, the line and column (malformed text) or the field path (a
 * missing or wrong field). Only values are read; nothing in the input is executed.
 */
final class JsonInput {
    private JsonInput() {}

    /** Parses one JSON document; a syntax error names source, line and column. */
    static JsonNode parse(String text, String source) {
        return parse(text, source, 0);
    }

    /** As {@link #parse(String, String)}, for a piece of a file that starts after {@code lineOffset} lines. */
    static JsonNode parse(String text, String source, int lineOffset) {
        try {
            JsonNode n = Json.mapper().readTree(text);
            if (n == null || n.isMissingNode()) {
                throw PathproofException.badInput(source + ":" + (lineOffset + 1) + ": empty, expected JSON");
            }
            return n;
        } catch (JsonProcessingException e) {
            JsonLocation loc = e.getLocation();
            String where = loc == null ? "" : ":" + (loc.getLineNr() + lineOffset) + ":" + loc.getColumnNr();
            // Jackson appends where an object started, with a "[Source: REDACTED …]" note; the line and column say
            // enough.
            throw new PathproofException(
                    io.pathproof.core.ExitCode.BAD_INPUT,
                    source + where + ": malformed JSON: " + io.pathproof.core.Messages.json(e),
                    e);
        }
    }

    /** A JSON object with its path in the document, e.g. {@code topology.nodes[0].gpus[2]}. */
    record Obj(JsonNode node, String path, String source) {
        Obj {
            if (node == null || !node.isObject()) {
                throw bad(source, path, "expected an object");
            }
        }

        String where(String field) {
            return path.isEmpty() ? field : path + "." + field;
        }

        boolean has(String field) {
            JsonNode v = node.get(field);
            return v != null && !v.isNull();
        }

        JsonNode raw(String field) {
            return node.get(field);
        }

        String str(String field) {
            JsonNode v = node.get(field);
            if (v == null || v.isNull()) {
                throw bad(source, where(field), "missing");
            }
            if (!v.isTextual()) {
                throw bad(
                        source,
                        where(field),
                        "expected a string, got " + v.getNodeType().name().toLowerCase());
            }
            return v.asText();
        }

        String optStr(String field, String dflt) {
            return has(field) ? str(field) : dflt;
        }

        long lng(String field) {
            JsonNode v = node.get(field);
            if (v == null || v.isNull()) {
                throw bad(source, where(field), "missing");
            }
            if (!v.isIntegralNumber() || !v.canConvertToLong()) {
                throw bad(source, where(field), "expected an integer, got " + v);
            }
            return v.asLong();
        }

        int integer(String field) {
            long l = lng(field);
            if (l < Integer.MIN_VALUE || l > Integer.MAX_VALUE) {
                throw bad(source, where(field), "out of range: " + l);
            }
            return (int) l;
        }

        Integer optInt(String field) {
            return has(field) ? integer(field) : null;
        }

        Double optNumber(String field) {
            if (!has(field)) {
                return null;
            }
            JsonNode v = node.get(field);
            if (!v.isNumber()) {
                throw bad(source, where(field), "expected a number, got " + v);
            }
            return v.asDouble();
        }

        boolean bool(String field, boolean dflt) {
            if (!has(field)) {
                return dflt;
            }
            JsonNode v = node.get(field);
            if (!v.isBoolean()) {
                throw bad(source, where(field), "expected true or false, got " + v);
            }
            return v.asBoolean();
        }

        Obj obj(String field) {
            if (!has(field)) {
                throw bad(source, where(field), "missing");
            }
            return new Obj(node.get(field), where(field), source);
        }

        /** The elements of an array field (empty when absent). */
        List<JsonNode> array(String field, boolean required) {
            JsonNode v = node.get(field);
            if (v == null || v.isNull()) {
                if (required) {
                    throw bad(source, where(field), "missing");
                }
                return List.of();
            }
            if (!v.isArray()) {
                throw bad(
                        source,
                        where(field),
                        "expected an array, got " + v.getNodeType().name().toLowerCase());
            }
            List<JsonNode> out = new ArrayList<>();
            v.forEach(out::add);
            return out;
        }

        List<Obj> objects(String field, boolean required) {
            List<Obj> out = new ArrayList<>();
            List<JsonNode> xs = array(field, required);
            for (int i = 0; i < xs.size(); i++) {
                out.add(new Obj(xs.get(i), where(field) + "[" + i + "]", source));
            }
            return out;
        }

        /** An object of string values ({@code env}). */
        Map<String, String> strings(String field) {
            Map<String, String> out = new TreeMap<>();
            if (!has(field)) {
                return out;
            }
            Obj o = obj(field);
            Iterator<Map.Entry<String, JsonNode>> it = o.node().fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> e = it.next();
                JsonNode v = e.getValue();
                if (!(v.isTextual() || v.isNumber() || v.isBoolean())) {
                    throw bad(source, o.where(e.getKey()), "expected a string value, got " + v);
                }
                out.put(e.getKey(), v.asText());
            }
            return out;
        }
    }

    static PathproofException bad(String source, String path, String what) {
        return PathproofException.badInput(source + ": " + path + ": " + what);
    }

    /** Runs a record constructor and puts the source in front of its message. */
    static <T> T build(String source, java.util.function.Supplier<T> ctor) {
        try {
            return ctor.get();
        } catch (PathproofException e) {
            if (e.getMessage().startsWith(source + ":")) {
                throw e;
            }
            throw new PathproofException(e.exitCode(), source + ": " + e.getMessage(), e);
        } catch (ArithmeticException e) {
            throw PathproofException.badInput(source + ": a size overflows 64 bits");
        }
    }
}

package io.pathproof.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.PathproofException;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads a workload in one of two formats, told apart by content:
 *
 * <ul>
 *   <li>workload JSON: one object with {@code parameters} ({@code name, shape, dtype, requiresGrad}) and the DDP
 *       flags {@code bucketCapMb} (absent = torch's default), {@code findUnusedParameters}, {@code staticGraph}
 *       (and {@code staticGraphAfterConstruction}: set by {@code _set_static_graph()} after DDP's construction),
 *       {@code gradientAsBucketView};
 *   <li>a parameter dump made from a real model: one JSON object per line with {@code name, shape, dtype,
 *       requires_grad} (the order of {@code model.named_parameters()}, which is the order DDP numbers parameters
 *       in), or a JSON array of such objects. The DDP flags then take torch's defaults.
 * </ul>
 */
final class WorkloadReader {
    private WorkloadReader() {}

    static Workload read(String text, String source, String defaultName) {
        String trimmed = text.strip();
        if (trimmed.isEmpty()) {
            throw PathproofException.badInput(source + ": empty workload file");
        }
        if (trimmed.startsWith("[")) {
            JsonNode arr = JsonInput.parse(text, source);
            List<Parameter> ps = new ArrayList<>();
            for (int i = 0; i < arr.size(); i++) {
                ps.add(dumpParameter(new JsonInput.Obj(arr.get(i), "[" + i + "]", source)));
            }
            return JsonInput.build(source, () -> new Workload(defaultName, ps, null, false, false, false));
        }
        // One object (possibly spread over many lines) or one object per line: read the first line alone first.
        String[] lines = text.split("\r?\n", -1);
        int first = 0;
        while (first < lines.length && lines[first].isBlank()) {
            first++;
        }
        JsonNode firstLine = tryParse(lines[first]);
        if (firstLine != null && firstLine.isObject() && firstLine.has("shape") && !firstLine.has("parameters")) {
            return readDump(lines, source, defaultName);
        }
        JsonNode doc = JsonInput.parse(text, source);
        JsonInput.Obj o = new JsonInput.Obj(doc, "workload", source);
        if (!o.has("parameters")) {
            if (o.has("shape")) {
                throw PathproofException.badInput(
                        source + ": a parameter dump needs one JSON object per line (found a multi-line object)");
            }
            throw JsonInput.bad(source, o.where("parameters"), "missing (not a workload JSON nor a parameter dump)");
        }
        List<Parameter> ps = new ArrayList<>();
        for (JsonInput.Obj p : o.objects("parameters", true)) {
            ps.add(parameter(p, "requiresGrad"));
        }
        String name = o.optStr("name", defaultName);
        Double cap = o.optNumber("bucketCapMb");
        boolean fu = o.bool("findUnusedParameters", false);
        boolean sg = o.bool("staticGraph", false);
        boolean late = o.bool("staticGraphAfterConstruction", false);
        boolean gv = o.bool("gradientAsBucketView", false);
        List<Integer> ready = null;
        if (o.has("readyOrder")) {
            ready = new ArrayList<>();
            List<JsonNode> xs = o.array("readyOrder", true);
            for (int i = 0; i < xs.size(); i++) {
                if (!xs.get(i).canConvertToInt() || !xs.get(i).isIntegralNumber()) {
                    throw JsonInput.bad(
                            source,
                            o.where("readyOrder") + "[" + i + "]",
                            "expected a parameter index, got " + xs.get(i));
                }
                ready.add(xs.get(i).asInt());
            }
        }
        List<Integer> order = ready;
        String hook = o.optStr("commHook", null);
        return JsonInput.build(source, () -> new Workload(name, ps, cap, fu, sg, gv, order, hook, late));
    }

    private static Workload readDump(String[] lines, String source, String defaultName) {
        List<Parameter> ps = new ArrayList<>();
        java.util.Set<String> names = new java.util.HashSet<>();
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].isBlank()) {
                continue;
            }
            String where = source + ":" + (i + 1);
            JsonNode n = JsonInput.parse(lines[i], source, i);
            ps.add(dumpParameter(new JsonInput.Obj(n, "", source + ":" + (i + 1))));
            if (!names.add(ps.get(ps.size() - 1).name())) {
                throw PathproofException.badInput(
                        where + ": parameter '" + ps.get(ps.size() - 1).name() + "' repeated");
            }
        }
        return JsonInput.build(source, () -> new Workload(defaultName, ps, null, false, false, false));
    }

    private static JsonNode tryParse(String line) {
        try {
            return io.pathproof.core.Json.mapper().readTree(line);
        } catch (Exception e) {
            return null;
        }
    }

    private static Parameter dumpParameter(JsonInput.Obj p) {
        return parameter(p, p.has("requires_grad") ? "requires_grad" : "requiresGrad");
    }

    private static Parameter parameter(JsonInput.Obj p, String gradField) {
        String name = p.str("name");
        List<Long> shape = new ArrayList<>();
        List<JsonNode> dims = p.array("shape", true);
        for (int i = 0; i < dims.size(); i++) {
            JsonNode d = dims.get(i);
            if (!d.isIntegralNumber() || d.asLong() < 0) {
                throw JsonInput.bad(
                        p.source(), p.where("shape") + "[" + i + "]", "expected a non-negative integer, got " + d);
            }
            shape.add(d.asLong());
        }
        DType dtype;
        try {
            dtype = DType.parse(p.str("dtype"));
        } catch (PathproofException e) {
            throw JsonInput.bad(p.source(), p.where("dtype"), e.getMessage().replaceFirst("^dtype: ", ""));
        }
        boolean grad = p.bool(gradField, true);
        return JsonInput.build(p.source(), () -> new Parameter(name, shape, dtype, grad));
    }
}

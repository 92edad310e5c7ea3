package io.pathproof.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Path;

/**
 * Reads a scenario JSON: {@code {"name", "workload": NAME|FILE|{inline}, "topology": NAME|FILE|{inline},
 * "versions": {"torch", "nccl", "cuda"}, "ranks", "env": {…}, "backend": "nccl"|"gloo"}}. A string names a preset or
 * a file (relative to the scenario file). {@code ranks} defaults to the topology's GPU count; {@code backend} to
 * nccl with GPUs, gloo without.
 */
final class ScenarioReader {
    private ScenarioReader() {}

    static Scenario read(String text, String source, Path baseDir, String defaultName) {
        JsonInput.Obj o = new JsonInput.Obj(JsonInput.parse(text, source), "scenario", source);
        String name = o.optStr("name", defaultName);
        Workload workload = part(o, "workload", baseDir, true);
        Topology topology = part(o, "topology", baseDir, false);
        JsonInput.Obj v = o.obj("versions");
        Version torch = version(v, "torch", true);
        Version nccl = version(v, "nccl", false);
        Version cuda = version(v, "cuda", false);
        Versions versions = JsonInput.build(source, () -> new Versions(torch, nccl, cuda));
        int ranks;
        if (o.has("ranks")) {
            ranks = o.integer("ranks");
        } else if (topology.gpuCount() > 0) {
            ranks = topology.gpuCount();
        } else {
            throw JsonInput.bad(source, o.where("ranks"), "missing (the topology has no GPUs to count)");
        }
        Backend backend = o.has("backend") ? Backend.parse(o.str("backend"), source + ": " + o.where("backend")) : null;
        var env = o.strings("env");
        int r = ranks;
        return JsonInput.build(source, () -> new Scenario(name, workload, topology, versions, r, env, backend));
    }

    private static Version version(JsonInput.Obj v, String field, boolean required) {
        if (!v.has(field)) {
            if (required) {
                throw JsonInput.bad(v.source(), v.where(field), "missing");
            }
            return null;
        }
        String s = v.str(field);
        try {
            return Version.parse(s);
        } catch (io.pathproof.core.PathproofException e) {
            throw JsonInput.bad(v.source(), v.where(field), "cannot read version '" + s + "' (expected e.g. 2.28.9)");
        }
    }

    @SuppressWarnings("unchecked")
    private static <T> T part(JsonInput.Obj o, String field, Path baseDir, boolean workload) {
        JsonNode n = o.raw(field);
        if (n == null || n.isNull()) {
            throw JsonInput.bad(o.source(), o.where(field), "missing");
        }
        if (n.isTextual()) {
            String ref = n.asText();
            Presets.Kind kind = workload ? Presets.Kind.WORKLOAD : Presets.Kind.TOPOLOGY;
            if (!Presets.exists(kind, ref)) {
                Path p = baseDir == null ? Path.of(ref) : baseDir.resolve(ref);
                if (!java.nio.file.Files.isRegularFile(p)) {
                    throw JsonInput.bad(
                            o.source(),
                            o.where(field),
                            "'" + ref + "' is neither a preset (" + String.join(", ", Presets.names(kind))
                                    + ") nor a file");
                }
                ref = p.toString();
            }
            return (T) (workload ? Scenarios.workload(ref) : Scenarios.topology(ref));
        }
        if (!n.isObject()) {
            throw JsonInput.bad(o.source(), o.where(field), "expected a preset name, a file or an object");
        }
        if (workload) {
            return (T) WorkloadReader.read(n.toString(), o.source() + " (" + o.where(field) + ")", o.where(field));
        }
        return (T) TopologyJsonReader.read(new JsonInput.Obj(n, o.where(field), o.source()), o.where(field));
    }
}

package io.pathproof.diagnose;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The configuration of a run as flat {@code key → value} facts, from three independent places: the manifest's
 * {@code env}, {@code versions}, {@code topology}, {@code workload}, {@code ddp}, backend and world size; NCCL's own
 * echo of the variables it read ({@code "… set by environment to …"}, nccl-log); and DDP's own record of its
 * constructor flags ({@code _get_ddp_logging_data()}: bucket_cap_bytes, find_unused_parameters …). The harness's
 * fault-knob record ({@code manifest.inject}) is never read: a diagnosis must stand on what the job itself ran with.
 */
final class ConfigDiff {
    private ConfigDiff() {}

    /** One changed fact; {@code variable} names the mechanism it acts on (several keys can be one variable). */
    record Change(
            String key, String baseline, String variant, List<EvidenceKind> kinds, String variable, Layer layer) {}

    private static final List<String> MANIFEST_TREES =
            List.of("env", "environment", "versions", "topology", "workload", "ddp", "gpus");
    /** Top-level manifest values that are configuration (the run harness's names and common synonyms). */
    private static final List<String> MANIFEST_SCALARS =
            List.of("backend", "nproc", "nnodes", "worldSize", "world_size", "workloadName", "nvidiaSmiTopoM");

    private static final List<String> DDP_LOGGING_KEYS = List.of(
            "bucket_cap_bytes",
            "find_unused_parameters",
            "gradient_as_bucket_view",
            "static_graph",
            "broadcast_buffers",
            "world_size",
            "backend_name",
            "dtypes");

    /**
     * Variables that record where the instrumentation writes or how a job rendezvouses: they differ between any two
     * runs and change nothing on the data path.
     */
    static boolean noise(String name) {
        String n = name.toUpperCase(Locale.ROOT);
        return n.startsWith("NCCL_DEBUG")
                || n.endsWith("_FILE")
                || n.endsWith("_DIR")
                || n.startsWith("MASTER_")
                || n.endsWith("_PORT")
                || n.startsWith("PATHPROOF_")
                || n.equals("TORCH_NCCL_TRACE_BUFFER_SIZE")
                || n.equals("TORCH_NCCL_DUMP_ON_TIMEOUT")
                || n.equals("TORCH_NCCL_ENABLE_TIMING")
                || n.equals("TORCH_NCCL_DEBUG_INFO_TEMP_FILE")
                || n.equals("TORCH_DISTRIBUTED_DEBUG")
                || n.equals("RANK")
                || n.equals("LOCAL_RANK")
                || n.equals("WORLD_SIZE")
                || n.equals("LOCAL_WORLD_SIZE")
                || n.equals("HOSTNAME")
                || n.equals("HOST")
                || n.startsWith("TORCHELASTIC_");
    }

    /** Facts with the kinds of evidence each was seen in. */
    static Map<String, Fact> facts(Evidence e) {
        Map<String, Fact> out = new TreeMap<>();
        JsonNode m = e.manifest();
        if (m != null && m.isObject()) {
            for (String t : MANIFEST_TREES) {
                JsonNode n = m.get(t);
                if (n != null) {
                    String prefix = t.equals("environment") ? "env" : t;
                    flatten(prefix, n, out);
                }
            }
            for (String s : MANIFEST_SCALARS) {
                JsonNode n = m.get(s);
                if (n != null && n.isValueNode()) {
                    String key =
                            switch (s) {
                                case "nproc", "worldSize" -> "world_size";
                                case "workloadName" -> "workload.name";
                                case "nvidiaSmiTopoM" -> "topology.nvidiaSmiTopoM";
                                default -> s;
                            };
                    put(out, key, n.asText(), EvidenceKind.MANIFEST);
                }
            }
        }
        if (e.nccl() != null && e.nccl().envOverrides() != null) {
            for (Map.Entry<String, String> en : e.nccl().envOverrides().entrySet()) {
                if (!noise(en.getKey())) {
                    put(out, "env." + en.getKey(), normalize(en.getValue()), EvidenceKind.NCCL_LOG);
                }
            }
        }
        if (e.ddp() != null && e.ddp().logging() != null && !e.ddp().logging().isEmpty()) {
            JsonNode first = new TreeMap<>(e.ddp().logging()).firstEntry().getValue();
            if (first != null) {
                for (String k : DDP_LOGGING_KEYS) {
                    JsonNode n = first.get(k);
                    if (n != null && n.isValueNode()) {
                        String key = k.equals("world_size")
                                ? "world_size"
                                : k.equals("backend_name") ? "backend" : "ddp." + k;
                        put(out, key, n.asText(), EvidenceKind.DDP_LOGGING);
                    }
                }
            }
        }
        return out;
    }

    /** A fact and the kinds of evidence that carried it. */
    record Fact(String value, List<EvidenceKind> kinds) {}

    private static void put(Map<String, Fact> out, String key, String value, EvidenceKind kind) {
        Fact f = out.get(key);
        if (f == null) {
            out.put(key, new Fact(value, new ArrayList<>(List.of(kind))));
        } else if (!f.kinds().contains(kind)) {
            f.kinds().add(kind);
        }
    }

    /** NCCL echoes integers with a final period ("set by environment to 1."). */
    private static String normalize(String v) {
        return v != null && v.endsWith(".") ? v.substring(0, v.length() - 1) : v;
    }

    private static void flatten(String prefix, JsonNode n, Map<String, Fact> out) {
        if (n.isObject()) {
            Iterator<Map.Entry<String, JsonNode>> it = n.fields();
            while (it.hasNext()) {
                Map.Entry<String, JsonNode> en = it.next();
                if (prefix.equals("env") && noise(en.getKey())) {
                    continue;
                }
                if (en.getKey().equalsIgnoreCase("hostname") || en.getKey().equalsIgnoreCase("hostnames")) {
                    continue;
                }
                flatten(prefix + "." + en.getKey(), en.getValue(), out);
            }
        } else if (n.isArray()) {
            for (int i = 0; i < n.size(); i++) {
                flatten(prefix + "[" + i + "]", n.get(i), out);
            }
        } else if (!n.isNull()) {
            put(out, prefix, n.asText(), EvidenceKind.MANIFEST);
        }
    }

    static List<Change> diff(Evidence baseline, Evidence variant) {
        Map<String, Fact> b = facts(baseline);
        Map<String, Fact> v = facts(variant);
        List<Change> out = new ArrayList<>();
        Set<String> keys = new java.util.TreeSet<>(b.keySet());
        keys.addAll(v.keySet());
        for (String k : keys) {
            Fact fb = b.get(k);
            Fact fv = v.get(k);
            String vb = fb == null ? null : fb.value();
            String vv = fv == null ? null : fv.value();
            if (java.util.Objects.equals(vb, vv)) {
                continue;
            }
            // A fact one side's tooling did not record at all is not a change of the job: absent vs absent-source.
            if (fb == null && fv != null && !sourcePresent(baseline, k, fv.kinds())) {
                continue;
            }
            if (fv == null && fb != null && !sourcePresent(variant, k, fb.kinds())) {
                continue;
            }
            List<EvidenceKind> kinds = new ArrayList<>();
            for (Fact f : new Fact[] {fb, fv}) {
                if (f != null) {
                    for (EvidenceKind kd : f.kinds()) {
                        if (!kinds.contains(kd)) {
                            kinds.add(kd);
                        }
                    }
                }
            }
            Knobs.Knob knob = Knobs.classify(k);
            out.add(new Change(
                    k, vb == null ? "unset" : vb, vv == null ? "unset" : vv, kinds, knob.variable(), knob.layer()));
        }
        return out;
    }

    /** Whether {@code e} recorded the part of the configuration that {@code key} belongs to, in one of {@code kinds}. */
    private static boolean sourcePresent(Evidence e, String key, List<EvidenceKind> kinds) {
        for (EvidenceKind k : kinds) {
            boolean recorded =
                    switch (k) {
                        case MANIFEST ->
                            e.manifest() != null && e.manifest().isObject() && manifestHas(e.manifest(), key);
                        case NCCL_LOG -> e.nccl() != null;
                        case DDP_LOGGING ->
                            e.ddp() != null
                                    && e.ddp().logging() != null
                                    && !e.ddp().logging().isEmpty();
                        default -> false;
                    };
            if (recorded) {
                return true;
            }
        }
        return false;
    }

    /** The manifest holds the tree or value a flattened key came from (env.X needs an env object, and so on). */
    private static boolean manifestHas(JsonNode m, String key) {
        int cut = key.length();
        for (char c : new char[] {'.', '['}) {
            int i = key.indexOf(c);
            if (i >= 0) {
                cut = Math.min(cut, i);
            }
        }
        String head = key.substring(0, cut);
        return switch (head) {
            case "env" -> m.has("env") || m.has("environment");
            case "world_size" -> m.has("nproc") || m.has("worldSize") || m.has("world_size");
            case "workload" -> m.has("workload") || m.has("workloadName");
            case "topology" -> m.has("topology") || m.has("nvidiaSmiTopoM");
            default -> m.has(head);
        };
    }

    /** Changes grouped by variable, in first-seen order. */
    static Map<String, List<Change>> byVariable(List<Change> changes) {
        Map<String, List<Change>> out = new LinkedHashMap<>();
        for (Change c : changes) {
            out.computeIfAbsent(c.variable(), x -> new ArrayList<>()).add(c);
        }
        return out;
    }
}

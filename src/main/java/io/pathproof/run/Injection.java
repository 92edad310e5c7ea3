package io.pathproof.run;

import io.pathproof.core.PathproofException;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * The deliberate faults of a variant run, from {@code --inject K=V}: environment variables ({@code NCCL_*},
 * {@code TORCH_*}) and harness knobs. Kept apart from everything else so that the manifest records them under their
 * own key and diagnose never needs them.
 */
record Injection(Map<String, String> env, Map<String, String> knobs) {
    /**
     * A variable name as NCCL and torch spell theirs: upper case, digits, underscores. DDP_* is torch's too
     * ({@code DDP_SET_LAST_BUCKET_CAP}, reducer.cpp), and scenarios may set it.
     */
    private static final Pattern ENV_NAME = Pattern.compile("^(NCCL|TORCH|DDP)_[A-Z0-9_]+$");

    /** The harness and instrumentation knobs (vocabulary.json, which the ranks read too). */
    static final List<String> KNOBS = io.pathproof.rundir.Vocabulary.knobs();

    Injection {
        env = Collections.unmodifiableMap(new TreeMap<>(env));
        knobs = Collections.unmodifiableMap(new TreeMap<>(knobs));
    }

    static Injection none() {
        return new Injection(Map.of(), Map.of());
    }

    /** Parses and validates every {@code K=V}; the first bad one is a usage error naming it. */
    static Injection parse(List<String> items, int nproc) {
        Map<String, String> env = new TreeMap<>();
        Map<String, String> knobs = new TreeMap<>();
        for (String item : items == null ? List.<String>of() : items) {
            int eq = item.indexOf('=');
            if (eq <= 0) {
                throw PathproofException.usage("--inject '" + item + "': expected K=V");
            }
            String k = item.substring(0, eq).trim();
            String v = item.substring(eq + 1).trim();
            if (k.startsWith("NCCL_") || k.startsWith("TORCH_") || k.startsWith("DDP_")) {
                if (!ENV_NAME.matcher(k).matches()) {
                    throw PathproofException.usage(
                            "--inject '" + k + "': not a valid NCCL_*/TORCH_*/DDP_* variable name");
                }
                if (v.indexOf('\0') >= 0 || v.indexOf('\n') >= 0) {
                    throw PathproofException.usage("--inject " + k + ": value must be one line");
                }
                env.put(k, v);
                continue;
            }
            if (!KNOBS.contains(k)) {
                throw PathproofException.usage(
                        "--inject '" + k + "': unknown name (an NCCL_*/TORCH_*/DDP_* variable or one of "
                                + String.join(", ", KNOBS) + ")");
            }
            knobs.put(k, checkKnob(k, v, nproc));
        }
        return new Injection(env, knobs);
    }

    private static String checkKnob(String k, String v, int nproc) {
        String where = "--inject " + k + "=" + v;
        try {
            switch (k) {
                case "bucket_cap_mb":
                case "compute_delay_ms": {
                    double d = Double.parseDouble(v);
                    if (!(d >= 0) || Double.isInfinite(d) || (k.equals("bucket_cap_mb") && d == 0)) {
                        throw PathproofException.usage(where + ": must be a positive number");
                    }
                    return v;
                }
                case "find_unused_parameters":
                    if (!v.equals("true") && !v.equals("false")) {
                        throw PathproofException.usage(where + ": must be true or false");
                    }
                    return v;
                case "corrupt_grad_rank":
                    rankIn(Integer.parseInt(v), nproc, where);
                    return v;
                case "exit_rank": {
                    int at = v.indexOf('@');
                    if (at < 0) {
                        throw PathproofException.usage(where + ": expected R@I (rank R exits at iteration I)");
                    }
                    rankIn(Integer.parseInt(v.substring(0, at)), nproc, where);
                    if (Integer.parseInt(v.substring(at + 1)) < 0) {
                        throw PathproofException.usage(where + ": iteration must be >= 0");
                    }
                    return v;
                }
                case "node_nic_mbps": {
                    int colon = v.indexOf(':');
                    if (colon <= 0
                            || Integer.parseInt(v.substring(0, colon)) < 0
                            || Long.parseLong(v.substring(colon + 1)) <= 0) {
                        throw PathproofException.usage(
                                where + ": expected N:MBPS (node N >= 0 of the emulated cluster, MBPS > 0)");
                    }
                    return v;
                }
                default:
                    throw new IllegalStateException(k);
            }
        } catch (NumberFormatException e) {
            throw PathproofException.usage(where + ": not a number");
        }
    }

    private static void rankIn(int r, int nproc, String where) {
        if (r < 0 || (nproc > 0 && r >= nproc)) {
            throw PathproofException.usage(where + ": rank must be in 0.." + (nproc - 1));
        }
    }

    /**
     * The emulated machine as this injection leaves it: {@code node_nic_mbps=N:MBPS} slows every NIC of node N (the
     * launcher's knob; the ranks do nothing with it). Refused off an emulated cluster: a real NIC cannot be slowed.
     */
    Runner.Emulate emulated(Runner.Emulate emu) {
        String v = knobs.get("node_nic_mbps");
        if (v == null) {
            return emu;
        }
        if (emu == null || !emu.cluster()) {
            throw PathproofException.usage("--inject node_nic_mbps=" + v
                    + ": slows a node of an emulated cluster (run --emulate TOPOLOGY --nodes N); here there is none");
        }
        int colon = v.indexOf(':');
        int node = Integer.parseInt(v.substring(0, colon));
        if (node >= emu.nodes()) {
            throw PathproofException.usage(
                    "--inject node_nic_mbps=" + v + ": the emulated cluster has nodes 0.." + (emu.nodes() - 1));
        }
        return new Runner.Emulate(
                emu.topologyLabel(),
                emu.topology().withNodeNicSpeed(node, Long.parseLong(v.substring(colon + 1))),
                emu.ncclLib(),
                emu.compCap(),
                emu.ranksPerNode(),
                emu.netPlugin());
    }

    /** The file that holds what was injected; the harness and prove's reveal read it, ingest and diagnose never do. */
    static final String SEALED_FILE = "fault.sealed.json";

    static final String SEALED_SCHEMA = "pathproof.fault/1";

    /** Writes {@code {"schema":"pathproof.fault/1","env":{…},"knobs":{…}}} to the run directory (also when empty). */
    void writeSealed(java.nio.file.Path dir) {
        com.fasterxml.jackson.databind.node.ObjectNode o =
                io.pathproof.core.Json.mapper().createObjectNode();
        o.put("schema", SEALED_SCHEMA);
        o.set("env", io.pathproof.core.Json.mapper().valueToTree(env));
        o.set("knobs", io.pathproof.core.Json.mapper().valueToTree(knobs));
        try {
            java.nio.file.Files.writeString(
                    dir.resolve(SEALED_FILE),
                    io.pathproof.core.Json.mapper()
                                    .writerWithDefaultPrettyPrinter()
                                    .writeValueAsString(o) + "\n");
        } catch (java.io.IOException e) {
            throw PathproofException.badInput("run: cannot write " + dir.resolve(SEALED_FILE) + ": " + e.getMessage());
        }
    }

    /** {@code argv} without {@code flag VALUE} and {@code flag=VALUE}: a record of a command line that names no fault. */
    static List<String> blind(List<String> argv, String flag) {
        List<String> out = new java.util.ArrayList<>();
        for (int i = 0; i < argv.size(); i++) {
            String a = argv.get(i);
            if (a.equals(flag)) {
                i++;
            } else if (!a.startsWith(flag + "=")) {
                out.add(a);
            }
        }
        return out;
    }

    /** The harness's {@code --knob K=V} arguments. */
    List<String> knobArgs() {
        return knobs.entrySet().stream()
                .flatMap(e -> java.util.stream.Stream.of("--knob", e.getKey() + "=" + e.getValue()))
                .toList();
    }
}

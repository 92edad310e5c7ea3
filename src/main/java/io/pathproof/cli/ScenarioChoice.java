package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Topology;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Versions;
import io.pathproof.scenario.Workload;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The scenario {@link ScenarioOptions}' flags name, as given (each null where not given): a preset or file, or its
 * parts, and the env overrides; {@link #resolve()} makes it one immutable {@link Scenario}.
 */
record ScenarioChoice(
        String scenario,
        String workload,
        String topology,
        String gpuModel,
        Integer gpuCc,
        Long nicSpeed,
        String peerAccess,
        Integer nodes,
        String nccl,
        String torch,
        Integer ranks,
        List<String> env) {
    private static final Pattern ENV_NAME = Pattern.compile("[A-Z][A-Z0-9_]*");

    ScenarioChoice {
        env = env == null ? List.of() : List.copyOf(env);
    }

    /** True when any flag names a scenario or a part of one. */
    boolean given() {
        return scenario != null || workload != null || topology != null;
    }

    /** Resolves the flags into one immutable scenario; a missing part is a usage error naming the flag. */
    Scenario resolve() {
        Map<String, String> overrides = parseEnv(env);
        Scenario base = scenario == null ? null : Scenarios.load(scenario);
        Workload w = workload != null ? Scenarios.workload(workload) : base == null ? null : base.workload();
        Topology t = topology != null
                ? Scenarios.topology(topology, new io.pathproof.scenario.TopologyHints(gpuModel, gpuCc, nicSpeed))
                : base == null ? null : base.topology();
        if (w == null) {
            throw PathproofException.usage("give --scenario NAME|FILE, or --workload and --topology");
        }
        if (t == null) {
            throw PathproofException.usage("--topology NAME|FILE is required with --workload");
        }
        if (peerAccess != null) {
            t = t.withP2pDenied(
                    io.pathproof.scenario.PeerAccessReader.read(
                            Scenarios.readFile(peerAccess, "--peer-access"), peerAccess),
                    peerAccess);
        }
        if (nodes != null) {
            t = Scenarios.cluster(t, nodes);
        }
        Version nv = nccl != null
                ? Version.parse(nccl)
                : base == null ? null : base.versions().nccl();
        Version tv = torch != null
                ? Version.parse(torch)
                : base == null ? null : base.versions().torch();
        if (nv == null && t.gpuCount() > 0) {
            throw PathproofException.usage("--nccl VERSION is required for a topology with GPUs");
        }
        if (tv == null) {
            throw PathproofException.usage("--torch VERSION is required without --scenario");
        }
        Version cuda = base == null ? null : base.versions().cuda();
        if (ranks == null && base == null && t.gpuCount() == 0) {
            throw PathproofException.usage("--ranks N is required: topology '" + t.name() + "' has no GPUs to count");
        }
        // A cluster made here has one rank per GPU of all its nodes; otherwise the scenario's ranks, else one per GPU.
        int n = ranks != null
                ? ranks
                : base != null && (nodes == null || base.topology() == t) ? base.ranks() : t.gpuCount();
        Map<String, String> e = new LinkedHashMap<>(base == null ? Map.of() : base.env());
        e.putAll(overrides);
        String name = base != null ? base.name() : w.name() + "@" + t.name();
        // The preset's backend holds while its topology does; a new topology lets the backend follow it.
        var backend = base != null && topology == null ? base.backend() : null;
        return new Scenario(name, w, t, new Versions(tv, nv, cuda), n, e, backend);
    }

    static Map<String, String> parseEnv(List<String> pairs) {
        Map<String, String> m = new LinkedHashMap<>();
        for (String p : pairs) {
            int i = p.indexOf('=');
            if (i <= 0) {
                throw PathproofException.usage("--env " + p + ": expected NAME=VALUE");
            }
            String k = p.substring(0, i);
            if (!ENV_NAME.matcher(k).matches()) {
                throw PathproofException.usage("--env " + p + ": '" + k + "' is not an environment variable name");
            }
            m.put(k, p.substring(i + 1));
        }
        return m;
    }
}

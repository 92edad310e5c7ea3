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
import picocli.CommandLine.Option;

/**
 * Shared flags that name a scenario: a preset or file, or its parts, plus env overrides. A mixin, so that predict,
 * run and prove read them the same way.
 */
public final class ScenarioOptions {
    private static final Pattern ENV_NAME = Pattern.compile("[A-Z][A-Z0-9_]*");

    @Option(names = "--scenario", paramLabel = "NAME|FILE", description = "A scenario preset (e.g. seed) or JSON file.")
    String scenario;

    @Option(
            names = "--workload",
            paramLabel = "NAME|FILE",
            description = "A workload preset, JSON file, or parameter dump (one JSON object per line).")
    String workload;

    @Option(
            names = "--topology",
            paramLabel = "NAME|FILE",
            description = "A topology preset, JSON file, NCCL topology dump (XML) or `nvidia-smi topo -m` text.")
    String topology;

    @Option(
            names = "--gpu-model",
            paramLabel = "NAME",
            description =
                    "GPU model for a topology file that does not name it (nvidia-smi topo -m), e.g. \"NVIDIA H200\".")
    String gpuModel;

    @Option(names = "--gpu-cc", paramLabel = "CC", description = "Compute capability for such GPUs, e.g. 90.")
    Integer gpuCc;

    @Option(
            names = "--nic-speed",
            paramLabel = "MBPS",
            description = "NIC speed in Mb/s where the topology file lacks it.")
    Long nicSpeed;

    @Option(
            names = "--nodes",
            paramLabel = "N",
            description = "The topology is one node; the machine is N such nodes (a cluster: ranks node by node).")
    Integer nodes;

    @Option(names = "--nccl", paramLabel = "VERSION", description = "NCCL version, e.g. 2.22.3.")
    String nccl;

    @Option(names = "--torch", paramLabel = "VERSION", description = "PyTorch version, e.g. 2.5.0.")
    String torch;

    @Option(
            names = "--ranks",
            paramLabel = "N",
            description = "Number of ranks (default: the scenario's, or one per GPU).")
    Integer ranks;

    @Option(
            names = "--env",
            paramLabel = "K=V",
            description = "An environment override such as NCCL_MAX_NCHANNELS=1 (repeatable).")
    List<String> env = List.of();

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

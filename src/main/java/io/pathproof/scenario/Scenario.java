package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.util.Map;
import java.util.TreeMap;

/**
 * Everything a prediction depends on: workload, topology, versions, number of ranks (one per GPU, node by node) and
 * the environment overrides ({@code NCCL_*}, {@code TORCH_*}, {@code DDP_*}) in force, and the torch.distributed
 * backend (nccl on GPUs, gloo on a CPU-only host).
 */
public record Scenario(
        String name,
        Workload workload,
        Topology topology,
        Versions versions,
        int ranks,
        Map<String, String> env,
        Backend backend) {
    /** A scenario with the backend torch would pick: nccl where the topology has GPUs, gloo on a CPU-only host. */
    public Scenario(
            String name, Workload workload, Topology topology, Versions versions, int ranks, Map<String, String> env) {
        this(name, workload, topology, versions, ranks, env, null);
    }

    public Scenario {
        if (workload == null || topology == null || versions == null) {
            throw PathproofException.badInput("scenario: workload, topology and versions are required");
        }
        if (ranks < 1) {
            throw PathproofException.badInput("scenario.ranks: must be >= 1, got " + ranks);
        }
        if (ranks > topology.gpuCount() && topology.gpuCount() > 0) {
            throw PathproofException.badInput("scenario.ranks: " + ranks + " ranks but topology '" + topology.name()
                    + "' has " + topology.gpuCount() + " GPUs (one rank per GPU)");
        }
        env = env == null ? Map.of() : java.util.Collections.unmodifiableMap(new TreeMap<>(env));
        name = name == null ? "scenario" : name;
        if (backend == null) {
            backend = topology.gpuCount() > 0 ? Backend.NCCL : Backend.GLOO;
        }
        if (backend == Backend.NCCL && topology.gpuCount() == 0) {
            throw PathproofException.badInput(
                    "scenario.backend: nccl needs GPUs but topology '" + topology.name() + "' has none (use gloo)");
        }
        if (backend == Backend.NCCL && versions.nccl() == null) {
            throw PathproofException.badInput("scenario.versions.nccl: required with backend nccl");
        }
    }

    public Scenario withEnv(Map<String, String> extra) {
        TreeMap<String, String> m = new TreeMap<>(env);
        m.putAll(extra);
        return new Scenario(name, workload, topology, versions, ranks, m, backend);
    }

    public Scenario withTopology(Topology t) {
        return new Scenario(name, workload, t, versions, ranks, env, backend);
    }

    public Scenario withWorkload(Workload w) {
        return new Scenario(name, w, topology, versions, ranks, env, backend);
    }
}

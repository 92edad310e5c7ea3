package io.pathproof.cli;

import java.util.List;
import picocli.CommandLine.Option;

/**
 * Shared flags that name a scenario: a preset or file, or its parts, plus env overrides. A mixin, so that predict,
 * explain and prove read them the same way; {@link #choice()} is what they say, as a {@link ScenarioChoice}.
 */
public final class ScenarioOptions {
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
            names = "--peer-access",
            paramLabel = "FILE",
            description = "The output of `nvidia-smi topo -p2p r` on a node: the GPU pairs whose peer access the driver"
                    + " denies get no P2P, as in NCCL (GeForce GPUs, many virtual machines).")
    String peerAccess;

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

    /** The flags as given. */
    ScenarioChoice choice() {
        return new ScenarioChoice(
                scenario, workload, topology, gpuModel, gpuCc, nicSpeed, peerAccess, nodes, nccl, torch, ranks, env);
    }
}

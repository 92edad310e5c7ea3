package io.pathproof.diagnose;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.List;

/**
 * The layers a diagnosis names: the structural layers of the path (the fingerprint compares them, {@link #PATH}),
 * the job's own layers (correctness, compute, DDP's flags), the measurements beside them, and the verdict words
 * "configuration" and "none". One vocabulary for the diagnose room, prove's faults and fix, and every file they
 * write: {@link #id()} is the layer's name in each JSON file and printed line. A new layer is a constant here, the
 * rule that reads it in {@code Fingerprint}, its remedy in {@code Remedies}, and the variables that act on it in
 * {@code Knobs}.
 */
public enum Layer {
    CORRECTNESS("correctness", Owner.APPLICATION),
    BUCKETS("ddp-buckets", Owner.PYTORCH),
    ALGORITHM("algorithm", Owner.NCCL),
    PROTOCOL("protocol", Owner.NCCL),
    TRANSPORT("transport", Owner.NCCL),
    /**
     * Between nodes: how NCCL reaches the other nodes (the NET connectors, GPUDirect RDMA on them) and the inter-node
     * graph its search found on each node (path type to the NIC, inter-node bandwidth, crossNic, channels). Only a
     * multi-node communicator has it.
     */
    NETWORK("network", Owner.NCCL),
    CHANNELS("channels", Owner.NCCL),
    THREADS("threads", Owner.NCCL),
    COMPUTE("compute", Owner.APPLICATION),
    /** A change of the configuration whose layer is none of the path's (versions, topology, world size, the workload). */
    CONFIGURATION("configuration", Owner.APPLICATION),
    /**
     * DDP's constructor flags that are not the bucket layout (find_unused_parameters, static_graph,
     * gradient_as_bucket_view): DDP's own logging data records them, so a change is seen on that layer itself.
     */
    DDP_CONFIG("ddp-config", Owner.PYTORCH),
    /** No layer: nothing changed, or nothing is decided yet. */
    NONE("none", Owner.APPLICATION),
    /** Not a layer of the job: the machine was busier during one run (run-queue wait), which explains the change. */
    MACHINE_LOAD("machine-load", Owner.APPLICATION),
    /** A measurement beside the path: NCCL's AllReduce kernel durations. */
    KERNEL_TIME("kernel-time", Owner.APPLICATION);

    /** The structural layers, upstream first: the order of elimination (seed, 回归根因推理). */
    static final List<Layer> PATH = List.of(BUCKETS, NETWORK, ALGORITHM, PROTOCOL, TRANSPORT, CHANNELS, THREADS);

    /** Who owns a layer's decisions when nothing else is known (seed, 所有权边界). */
    public static final class Owner {
        static final String APPLICATION = "application";
        static final String PYTORCH = "PyTorch";
        static final String NCCL = "NCCL host";
        public static final String HARDWARE = "CUDA+hardware";

        private Owner() {}
    }

    private final String id;
    private final String owner;

    Layer(String id, String owner) {
        this.id = id;
        this.owner = owner;
    }

    /** The layer's name as every file and output writes it. */
    @JsonValue
    public String id() {
        return id;
    }

    /** Who owns the layer's decisions (application, PyTorch, NCCL host). */
    String owner() {
        return owner;
    }

    /**
     * The path layers whose outcome this layer's decision feeds (NCCL: tuning → launch shape; topology → graph →
     * channels): a change of one of them agrees with a variable of this layer where this layer itself left no evidence.
     */
    List<Layer> feeds() {
        return switch (this) {
            case BUCKETS -> List.of(ALGORITHM, PROTOCOL, CHANNELS, THREADS);
            case ALGORITHM -> List.of(PROTOCOL, CHANNELS, THREADS);
            case PROTOCOL -> List.of(CHANNELS, THREADS);
            case TRANSPORT -> List.of(CHANNELS, ALGORITHM, PROTOCOL);
            // The inter-node graph's bandwidth and path type enter the tuner's model (tuning.cc@v2.28.9-1
            // ncclTopoTuneModel:
            // busBw from bwInter, the latency of the net), and its channel count the coll channels.
            // On one node a net module change shows only where NCCL fell back to NET between local GPUs: the transport.
            case NETWORK -> List.of(ALGORITHM, PROTOCOL, CHANNELS, THREADS, TRANSPORT);
            case CHANNELS -> List.of(THREADS);
            default -> List.of();
        };
    }

    /**
     * The layer a run setting acts on, as the diagnose room's knob table gives it: an NCCL_*, TORCH_* or DDP_*
     * variable (the job's environment) or a DDP constructor argument (bucket_cap_mb, find_unused_parameters).
     */
    public static Layer actedOnBy(String setting) {
        boolean variable = !setting.isEmpty() && Character.isUpperCase(setting.charAt(0));
        return Knobs.classify((variable ? "env." : "ddp.") + setting).layer();
    }

    /** The ids of {@code layers}, comma-separated, as a diagnosis lists them. */
    static String joined(List<Layer> layers) {
        return String.join(", ", layers.stream().map(Layer::id).toList());
    }

    /** The id, so that a layer reads the same in every message it is part of. */
    @Override
    public String toString() {
        return id;
    }
}

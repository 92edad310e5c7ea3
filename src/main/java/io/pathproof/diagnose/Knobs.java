package io.pathproof.diagnose;

import java.util.Locale;
import java.util.Set;

/**
 * Which layer of the path a configuration fact acts on: the mechanism, read from the source that consumes each
 * variable, not a table of known outcomes. Checked in NCCL v2.22.3-1: NCCL_MIN/MAX_NCHANNELS clamp the channel count
 * after the graph search (src/graph/connect.cc:326-327, ncclTopoPostset), NCCL_MIN/MAX_CTAS likewise (src/init.cc:1285-1286);
 * NCCL_ALGO / NCCL_PROTO mask the tuning table (src/graph/tuning.cc:270-280); NCCL_NTHREADS sets maxThreads, hence
 * blockX (src/graph/tuning.cc:12, 119-131); NCCL_P2P_DISABLE / NCCL_P2P_LEVEL decide whether peers may use P2P
 * (src/graph/paths.cc:285), NCCL_SHM_DISABLE the SHM fallback (src/transport/shm.cc:41), NCCL_NET the network module
 * (src/init.cc:1492). PyTorch: bucket_cap_mb and the DDP flags decide the bucket layout
 * (torch/nn/parallel/distributed.py _ddp_init_helper, reducer.cpp compute_bucket_assignment_by_size).
 */
final class Knobs {
    private Knobs() {}

    record Knob(String variable, Layer layer) {}

    private static final Set<String> CHANNELS = Set.of(
            "NCCL_MIN_NCHANNELS",
            "NCCL_MAX_NCHANNELS",
            "NCCL_MIN_CTAS",
            "NCCL_MAX_CTAS",
            "NCCL_NCHANNELS_PER_PEER",
            "NCCL_MIN_NRINGS",
            "NCCL_MAX_NRINGS");
    private static final Set<String> TRANSPORT = Set.of(
            "NCCL_P2P_DISABLE",
            "NCCL_P2P_LEVEL",
            "NCCL_SHM_DISABLE",
            "NCCL_CUMEM_ENABLE",
            "NCCL_P2P_USE_CUDA_MEMCPY",
            "NCCL_P2P_READ_ENABLE",
            "NCCL_P2P_DIRECT_DISABLE",
            "NCCL_SHM_USE_CUDA_MEMCPY");
    /**
     * What NCCL reaches other nodes with and how: GPUDirect RDMA (ncclTopoCheckGdr, paths.cc@v2.28.9-1:418-484), the
     * NICs the search may pair (NCCL_CROSS_NIC, search.cc), PXN (paths.cc:708-740), the net module and its devices
     * (init.cc ncclNetInit, net_ib.cc / net_socket.cc), the channels per net peer (init.cc, p2p schedule).
     */
    private static final Set<String> NETWORK = Set.of(
            "NCCL_NET_GDR_LEVEL",
            "NCCL_NET_GDR_READ",
            "NCCL_NET_GDR_C2C",
            "NCCL_CROSS_NIC",
            "NCCL_PXN_DISABLE",
            "NCCL_NET",
            "NCCL_NET_PLUGIN",
            "NCCL_IB_DISABLE",
            "NCCL_IB_HCA",
            "NCCL_SOCKET_IFNAME",
            "NCCL_NCHANNELS_PER_NET_PEER",
            "NCCL_NET_SHARED_BUFFERS",
            "NCCL_IB_GID_INDEX",
            "NCCL_IB_TC",
            "NCCL_IB_SL",
            "NCCL_IB_QPS_PER_CONNECTION",
            "NCCL_SOCKET_NTHREADS",
            "NCCL_NSOCKS_PERTHREAD");

    private static final Set<String> ALGORITHM =
            Set.of("NCCL_ALGO", "NCCL_NVLS_ENABLE", "NCCL_COLLNET_ENABLE", "NCCL_TUNER_PLUGIN");
    private static final Set<String> THREADS = Set.of("NCCL_NTHREADS", "NCCL_LL128_NTHREADS");
    private static final Set<String> PROTOCOL = Set.of("NCCL_PROTO", "NCCL_LL128_ENABLE");

    static Knob classify(String key) {
        String k = key;
        int dot = k.indexOf('.');
        String scope = dot < 0 ? "" : k.substring(0, dot);
        String name = dot < 0 ? k : k.substring(dot + 1);
        String upper = name.toUpperCase(Locale.ROOT);
        if (scope.equals("env")) {
            if (CHANNELS.contains(upper)) {
                return new Knob("NCCL channel limits", Layer.CHANNELS);
            }
            if (NETWORK.contains(upper)) {
                return new Knob("NCCL network", Layer.NETWORK);
            }
            if (TRANSPORT.contains(upper)) {
                return new Knob("NCCL transport selection", Layer.TRANSPORT);
            }
            if (ALGORITHM.contains(upper)) {
                return new Knob("NCCL algorithm selection", Layer.ALGORITHM);
            }
            if (PROTOCOL.contains(upper)) {
                return new Knob("NCCL protocol selection", Layer.PROTOCOL);
            }
            if (THREADS.contains(upper)) {
                return new Knob("NCCL threads per block", Layer.THREADS);
            }
            return new Knob(name, Layer.CONFIGURATION);
        }
        String lower = name.toLowerCase(Locale.ROOT).replace("_", "");
        if ((scope.equals("ddp") || scope.equals("workload")) && lower.contains("bucketcap")) {
            return new Knob("DDP bucket cap", Layer.BUCKETS);
        }
        if ((scope.equals("ddp") || scope.equals("workload"))
                && (lower.contains("findunused")
                        || lower.contains("staticgraph")
                        || lower.contains("gradientasbucketview"))) {
            return new Knob("DDP flags", Layer.DDP_CONFIG);
        }
        if (scope.equals("workload") || scope.equals("ddp")) {
            return new Knob("workload", Layer.CONFIGURATION);
        }
        if (scope.equals("versions")) {
            return new Knob(
                    name.toLowerCase(Locale.ROOT).startsWith("nccl")
                            ? "NCCL version"
                            : name.toLowerCase(Locale.ROOT).startsWith("torch") ? "torch version" : name + " version",
                    Layer.CONFIGURATION);
        }
        if (scope.equals("topology") || scope.equals("gpus")) {
            return new Knob("topology", Layer.CONFIGURATION);
        }
        if (key.equals("world_size")) {
            return new Knob("world size", Layer.CONFIGURATION);
        }
        if (key.equals("backend")) {
            return new Knob("backend", Layer.CONFIGURATION);
        }
        return new Knob(key, Layer.CONFIGURATION);
    }
}

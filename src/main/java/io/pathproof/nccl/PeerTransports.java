package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.PATH_NVL;

import io.pathproof.scenario.Topology;
import io.pathproof.scenario.Version;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The transport NCCL connects each peer with. selectTransport tries, per connection, P2P, SHM, NET and CollNet in this
 * order and takes the first whose canConnect says yes (transport.cc@v2.28.9-1:14-20, 23-42): between two GPUs of a
 * host, P2P when ncclTopoCheckP2p allows the pair (transport/p2p.cc:123-131, the path within the P2P level and NVML's
 * peer access, graph/paths.cc:272-365), else SHM (transport/shm.cc:75-96, same host and /dev/shm), else the network;
 * between hosts NET. The choice is the pair's, not the communicator's: on a host whose driver denies some pairs peer
 * access only those pairs go over SHM. The communicator-wide string names each kind once, joined by " + " (the grammar
 * accept reads); where the host's pairs do not all take the same transport, {@link Result#perPair} says which pair
 * takes which, keyed "from->to" by rank as the connector lines print them ("Channel 00/0 : 0[0] -> 1[1] via ...",
 * p2p.cc:386-399: the sender's line, its own GPU towards the peer's).
 */
final class PeerTransports {
    /** The local transport where cuMem's support is not an input: either mechanism may be printed. */
    static final String CUMEM_OR_IPC = "P2P/CUMEM or P2P/IPC";

    static final String CUMEM_OR_IPC_READ = "P2P/CUMEM/read or P2P/IPC/read";

    private static final String CUMEM_UNKNOWN = ": cuMem support unknown";

    /** NCCL's transport order, which selectTransport tries first to last (transport.cc@v2.28.9-1:14-20). */
    private static final List<String> ORDER = List.of("P2P", "SHM", "NET");

    /**
     * {@code summary}: every kind once ("P2P/CUMEM or P2P/IPC + SHM: cuMem support unknown"); {@code perPair}: the
     * transport of each directed pair of GPUs on one host, by rank ("0->1"), only where those pairs differ, else empty.
     */
    record Result(String summary, Map<String, String> perPair) {}

    private PeerTransports() {}

    /**
     * The transports of the communicator: each host's GPU pairs on that host's system (the search's, with its P2P and
     * NVML decisions), and NET between hosts as rank 0's host reaches its NICs.
     */
    static Result of(
            List<CommInit.Host> hosts,
            List<CommInit.HostGraphs> perHost,
            Map<String, String> env,
            Version cuda,
            int nNodes,
            List<String> notes) {
        Map<String, String> perPair = new LinkedHashMap<>();
        Set<String> local = new LinkedHashSet<>();
        for (int h = 0; h < hosts.size(); h++) {
            TopoSystem sys = perHost.get(h).sys();
            int[] ranks = hosts.get(h).ranks();
            // system GPU i holds the host's i-th rank (TopoBuilder adds them in rank order; a host that shares another
            // host's structure has its GPUs at the same indices)
            for (int g = 0; g < sys.count(TopoSystem.GPU); g++) {
                for (int p = 0; p < sys.count(TopoSystem.GPU); p++) {
                    if (g != p) {
                        String t = local(sys, g, p, env, cuda);
                        local.add(t);
                        perPair.put(ranks[g] + "->" + ranks[p], t);
                    }
                }
            }
        }
        if (local.contains("NET")) {
            notes.add("P2P and SHM both unavailable between local GPUs: NCCL falls back to the network transport");
        }
        List<String> kinds = new ArrayList<>();
        for (String family : ORDER) {
            for (String t : local) {
                if (t.startsWith(family)) {
                    kinds.add(t);
                }
            }
        }
        boolean unknownCumem = local.contains(CUMEM_OR_IPC) || local.contains(CUMEM_OR_IPC_READ);
        if (nNodes > 1) {
            kinds.add(netTransport(perHost.get(0).sys(), env, hosts.get(0).node(), notes));
        }
        String summary = kinds.isEmpty() ? "none" : String.join(" + ", kinds) + (unknownCumem ? CUMEM_UNKNOWN : "");
        if (local.size() <= 1) {
            return new Result(summary, Map.of());
        }
        perPair.replaceAll((k, t) -> t.equals(CUMEM_OR_IPC) || t.equals(CUMEM_OR_IPC_READ) ? t + CUMEM_UNKNOWN : t);
        return new Result(summary, perPair);
    }

    /**
     * From system GPU {@code g} to {@code p} of one host: P2P where ncclTopoCheckP2p allowed the pair when the paths
     * were computed (its path within the P2P level, NVML's peer access OK: {@link TopoSystem#p2p}; a denied pair's
     * path now goes through the CPU, paths.cc@v2.28.9-1:667-678, so p2pCanConnect's own check refuses it too), CUMEM
     * when cuMem is on, IPC otherwise (DDP runs one process per GPU), {@code /read} for two cc 80 GPUs over NVLink
     * (paths.cc:368-372); else SHM unless NCCL_SHM_DISABLE=1 (shm.cc:79); else the network.
     */
    static String local(TopoSystem sys, int g, int p, Map<String, String> env, Version cuda) {
        TopoSystem.Path path = sys.node(TopoSystem.GPU, g).paths[TopoSystem.GPU][p];
        boolean p2p = sys.p2p != null ? sys.p2p[g][p] : path.type <= sys.p2pLevel;
        if (p2p) {
            boolean read = path.type == PATH_NVL
                    && sys.node(TopoSystem.GPU, g).cc == 80
                    && sys.node(TopoSystem.GPU, p).cc == 80;
            String cumemEnv = NcclEnv.get(env, "NCCL_CUMEM_ENABLE");
            boolean cumem = cumemEnv != null ? NcclEnv.longOr(cumemEnv, 1) != 0 : cuda == null || cuda.major() >= 12;
            if (cumemEnv == null && cumem) {
                // Unset, NCCL enables cuMem only where the driver supports it, which is not an input: say so, so that
                // accept judges the P2P family and leaves the mechanism unproven (no evidence here can tell which one).
                return read ? CUMEM_OR_IPC_READ : CUMEM_OR_IPC;
            }
            return (cumem ? "P2P/CUMEM" : "P2P/IPC") + (read ? "/read" : "");
        }
        if (NcclEnv.longOr(NcclEnv.get(env, "NCCL_SHM_DISABLE"), 0) != 1) {
            return "SHM";
        }
        return "NET";
    }

    /** Between hosts: the net module NCCL_NET names, else the NIC's kind; GPUDirect RDMA where a GPU may use it. */
    private static String netTransport(
            TopoSystem sys, Map<String, String> env, Topology.Node host, List<String> notes) {
        String kind = host.nics().isEmpty() || host.nics().get(0).kind() == null
                ? ""
                : host.nics().get(0).kind();
        // GPUDirect as the net transport asks for it per connection (transport/net.cc@v2.28.9-1:301, 344 through
        // ncclTopoCheckGdr): the NIC's support, and the GPU within NCCL_NET_GDR_LEVEL of it.
        boolean gdr = false;
        for (int g = 0; g < sys.count(TopoSystem.GPU) && !gdr; g++) {
            for (int n = 0; n < sys.count(TopoSystem.NET) && !gdr; n++) {
                gdr = sys.gdr(g, n);
            }
        }
        String k = kind.toLowerCase(Locale.ROOT);
        String module = NcclEnv.get(env, "NCCL_NET");
        if (module != null && !module.isBlank()) {
            // NCCL_NET picks the net module by name, case aside (src/plugin/net.cc:360@v2.28.9-1, the comm's netName
            // from NCCL_NET), and the connector prints that module's own name (transport/net.cc:313, 359): a
            // plugin's, or IB / Socket.
            String name =
                    module.equalsIgnoreCase("ib") ? "IB" : module.equalsIgnoreCase("socket") ? "Socket" : module.trim();
            return "NET/" + name + (gdr && !name.equals("Socket") ? "/GDRDMA" : "");
        }
        if (k.equals("net")) {
            // An NCCL topology dump or nvidia-smi matrix names the port, not the net plugin that drives it: NCCL prints
            // that plugin's own name (transport/net.cc@v2.28.9-1:313, 359: "via NET/%s/%d", ncclNet->name), so only
            // the family and GPUDirect follow.
            notes.add("network plugin not named by the topology file: the NET transport is predicted by family"
                    + (gdr ? " and GPUDirect RDMA (the NIC's gdr=\"1\")" : ""));
            return "NET" + (gdr ? "/GDRDMA" : "");
        }
        String net = k.contains("ib") || k.contains("roce") || k.isEmpty() ? "NET/IB" : "NET/Socket";
        return net + (gdr && net.equals("NET/IB") ? "/GDRDMA" : "");
    }
}

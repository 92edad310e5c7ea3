package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A cluster as NCCL sees it when its nodes are emulated on one machine (every rank process on the one real GPU, each
 * node's ranks with their own host hash): only the ranks' GPUs, and each node's network as what reaches NCCL.
 *
 * <p>Without a net plugin the nodes reach each other through NCCL's Socket transport over the loopback interface
 * ({@code NCCL_NET=Socket NCCL_SOCKET_IFNAME=lo}). That transport offers exactly one device, named {@code lo}, and
 * moves host memory only, so each emulated node has one NIC named {@code lo} and no GPUDirect RDMA. NCCL matches the
 * topology file's {@code <net>} to that device by name (ncclTopoFillNet, graph/xml.cc:910@v2.28.9-1) and keeps the
 * speed written there (attributes are only initialised when absent, graph/topo.cc:1351-1358@v2.28.9-1), so the
 * node's NIC speed is the cluster's. A node of several NICs or with GPUDirect cannot be emulated faithfully that
 * way: it is refused, unless a net plugin that exposes the topology's own NICs carries the bytes (then the NICs stay
 * as given).
 */
final class EmulatedCluster {
    /** The loopback interface: the one device NCCL's Socket transport finds with NCCL_SOCKET_IFNAME=lo. */
    static final String LOOPBACK = "lo";
    /** What {@link Topology.Nic#kind()} says for it: the model's transport is then NET/Socket. */
    static final String SOCKET = "socket";

    private EmulatedCluster() {}

    static Topology of(Topology cluster, int ranksPerNode, Long nicSpeedMbps, boolean netPlugin) {
        int n = cluster.nodes().size();
        if (n < 2) {
            throw PathproofException.usage(
                    "--emulate " + cluster.name() + ": one node; an emulated cluster has at least 2");
        }
        if (ranksPerNode < 1) {
            throw PathproofException.usage("--nproc-per-node: must be >= 1, got " + ranksPerNode);
        }
        List<Topology.Node> nodes = new ArrayList<>(n);
        List<String> inferred = new ArrayList<>(cluster.inferred());
        Set<String> hosts = new HashSet<>();
        for (Topology.Node node : cluster.nodes()) {
            if (!hosts.add(node.hostname())) {
                // The host name becomes the node's NCCL_HOSTID: two nodes of one name would be one host to NCCL.
                throw PathproofException.badInput("--emulate " + cluster.name() + ": two nodes named '"
                        + node.hostname() + "'; each emulated node needs its own name (it is the node's NCCL_HOSTID)");
            }
            if (node.gpus().size() < ranksPerNode) {
                throw PathproofException.badInput("--emulate " + cluster.name() + ": node " + node.hostname() + " has "
                        + node.gpus().size() + " GPU(s) but " + ranksPerNode
                        + " rank(s) per node: one rank per emulated GPU");
            }
            List<Topology.Nic> nics = netPlugin ? node.nics() : List.of(loopback(cluster, node, nicSpeedMbps));
            nodes.add(firstGpus(node, ranksPerNode, nics));
        }
        if (!netPlugin) {
            inferred.add("each node's network emulated by NCCL's Socket transport over loopback: one NIC '" + LOOPBACK
                    + "' per node at " + nodes.get(0).nics().get(0).speedMbps() + " Mb/s, no GPUDirect RDMA");
        }
        return new Topology(cluster.name(), nodes, inferred);
    }

    /** The node's one NIC as the Socket transport over lo presents it, or a refusal naming why it cannot be. */
    private static Topology.Nic loopback(Topology cluster, Topology.Node node, Long nicSpeedMbps) {
        String at = "--emulate " + cluster.name() + ": node " + node.hostname();
        String plugin = "; NCCL's Socket transport over lo gives each emulated node one NIC without GPUDirect (a net"
                + " plugin that exposes the topology's NICs, --net-plugin, would emulate it)";
        if (node.nics().size() > 1) {
            throw PathproofException.badInput(at + " has " + node.nics().size() + " NICs" + plugin);
        }
        if (node.nics().size() == 1) {
            Topology.Nic nic = node.nics().get(0);
            if (nic.gdr()) {
                throw PathproofException.badInput(at + ": NIC " + nic.name() + " has GPUDirect RDMA" + plugin);
            }
            return new Topology.Nic(
                    LOOPBACK, nic.pciParent(), nic.speedMbps(), false, SOCKET, nic.pciGen(), nic.pciWidth());
        }
        if (nicSpeedMbps == null) {
            throw PathproofException.usage(at + " has no NIC: give --nic-speed MBPS, the speed of the one NIC ('"
                    + LOOPBACK + "') each emulated node gets");
        }
        if (nicSpeedMbps <= 0) {
            throw PathproofException.usage("--nic-speed " + nicSpeedMbps + ": must be > 0 Mb/s");
        }
        return new Topology.Nic(LOOPBACK, null, nicSpeedMbps, false, SOCKET);
    }

    /**
     * The node with only its first {@code count} GPUs and the NVLinks among them: NCCL keeps only the GPUs that hold a
     * rank (ncclTopoTrimXml, graph/topo.cc:1450-1454@v2.28.9-1), and the model assigns ranks node by node in list
     * order, so the cluster it is given must hold exactly the ranks' GPUs.
     */
    private static Topology.Node firstGpus(Topology.Node node, int count, List<Topology.Nic> nics) {
        List<Topology.Gpu> gpus = node.gpus().subList(0, count);
        Set<Integer> kept = new HashSet<>();
        gpus.forEach(g -> kept.add(g.index()));
        List<Topology.NvLink> links = node.nvlinks().stream()
                .filter(l -> kept.contains(l.gpuA()) && kept.contains(l.gpuB()))
                .toList();
        List<List<Integer>> denied = node.p2pDenied() == null
                ? null
                : node.p2pDenied().stream()
                        .filter(p -> kept.contains(p.get(0)) && kept.contains(p.get(1)))
                        .toList();
        return new Topology.Node(node.hostname(), node.cpus(), node.pciSwitches(), gpus, links, nics, denied);
    }
}

package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;
import static io.pathproof.nccl.TopoSystem.*;

import java.util.ArrayList;
import java.util.List;

/**
 * The paths between a system's nodes (graph/paths.cc): the breadth-first search that types and rates every path, then
 * the rerouting of ncclTopoComputePaths' second half, through the CPU where P2P or GPUDirect RDMA may not be used and
 * through an NVLink peer where PXN reaches a NIC better.
 */
final class TopoPaths {
    private final TopoSystem sys;

    TopoPaths(TopoSystem sys) {
        this.sys = sys;
    }

    private Path pathOf(Node node, Node base) {
        Path[] ps = node.paths[base.type];
        if (ps == null) {
            ps = new Path[sys.nodes[base.type].size()];
            for (int i = 0; i < ps.length; i++) {
                ps[i] = new Path();
            }
            node.paths[base.type] = ps;
        }
        return ps[base.index];
    }

    /** ncclTopoSetPaths (graph/paths.cc@v2.28.9-1:36-113): breadth-first search towards baseNode. */
    private void setPaths(Node base, boolean nvbDisable) {
        Path basePath = pathOf(base, base);
        basePath.count = 0;
        basePath.bw = LOC_BW;
        basePath.type = PATH_LOC;
        List<Node> list = new ArrayList<>();
        list.add(base);
        while (!list.isEmpty()) {
            List<Node> next = new ArrayList<>();
            for (Node node : list) {
                Path path = pathOf(node, base);
                for (Link link : node.links) {
                    Node rem = link.rem;
                    Path remPath = pathOf(rem, base);
                    float bw = Math.min(path.bw, link.bw);
                    // allow routing through a GPU only as 1 hop
                    if (node != base
                            && node.type == GPU
                            && (nvbDisable || link.type != LINK_NVL || rem.type != GPU || path.count > 1)) {
                        continue;
                    }
                    if ((remPath.bw == 0 || remPath.count > path.count) && remPath.bw < bw) {
                        Link rev = rem.linkTo(node, link.type);
                        if (rev == null) {
                            throw new IllegalStateException("no reverse link " + rem.name + " -> " + node.name);
                        }
                        Link[] l = new Link[path.count + 1];
                        l[0] = rev;
                        System.arraycopy(path.list, 0, l, 1, path.count);
                        remPath.list = l;
                        remPath.count = path.count + 1;
                        remPath.bw = bw;
                        int type = link.type == LINK_NET ? LINK_LOC : link.type;
                        if (node.type == PCI && rem.type == PCI) {
                            type = PATH_PXB;
                        }
                        if (link.type == LINK_PCI && (node.type == CPU || link.rem.type == CPU)) {
                            type = PATH_PHB;
                        }
                        if (node.type == GPU && path.type == PATH_NVL && type == PATH_NVL && remPath.count > 1) {
                            type = PATH_NVB;
                        }
                        remPath.type = Math.max(path.type, type);
                        if (!next.contains(rem)) {
                            next.add(rem);
                        }
                    }
                }
            }
            list = next;
        }
    }

    /** Marks every path unset (PATH_DIS) before a (re)computation. */
    private void clearPaths() {
        for (int t = 0; t < 6; t++) {
            for (Node n : sys.nodes[t]) {
                for (int t2 = 0; t2 < 6; t2++) {
                    Path[] ps = new Path[sys.nodes[t2].size()];
                    for (int i = 0; i < ps.length; i++) {
                        ps[i] = new Path();
                    }
                    n.paths[t2] = ps;
                }
            }
        }
    }

    /**
     * ncclTopoComputePaths (graph/paths.cc@v2.28.9-1:641-764): paths to CPUs, GPUs, NETs, NVSwitches; GPU pairs that
     * may not use P2P (NCCL_P2P_LEVEL / NCCL_P2P_DISABLE, or further apart than PXB) are routed through the CPU.
     */
    void computePaths(boolean nvbDisable) {
        clearPaths();
        for (Node c : sys.nodes[CPU]) {
            setPaths(c, nvbDisable);
        }
        for (Node g : sys.nodes[GPU]) {
            setPaths(g, nvbDisable);
        }
        for (Node n : sys.nodes[NET]) {
            setPaths(n, nvbDisable);
        }
        for (Node n : sys.nodes[NVS]) {
            setPaths(n, nvbDisable);
        }
    }

    /**
     * Applies the P2P level (default PXB; AMD with ≤ 2 GPUs: SYS; the user's NCCL_P2P_LEVEL/DISABLE wins), then PXN and
     * GPUDirect RDMA per NIC; {@code pxnDisable} is NCCL_PXN_DISABLE=1, {@code userGdrLevel} NCCL_NET_GDR_LEVEL (null:
     * unset, PXB).
     */
    List<String> applyP2pLevel(Integer userLevel, boolean pxnDisable, Integer userGdrLevel, long ignoreDisabled) {
        List<String> denied = new ArrayList<>();
        if (userGdrLevel != null) {
            sys.gdrLevel = userGdrLevel;
        }
        int level = PATH_PXB;
        Node cpu0 = sys.nodes[CPU].get(0);
        if (cpu0.arch == ARCH_X86 && cpu0.vendor == VENDOR_AMD && sys.count(GPU) <= 2) {
            level = PATH_SYS;
        }
        if (userLevel != null) {
            level = userLevel;
        }
        sys.p2pLevel = level;
        sys.p2p = new boolean[sys.count(GPU)][sys.count(GPU)];
        for (int g = 0; g < sys.count(GPU); g++) {
            for (int p = 0; p < sys.count(GPU); p++) {
                Path path = sys.node(GPU, p).paths[GPU][g];
                boolean p2p = path.type <= level;
                if (p2p && p != g && ignoreDisabled != 2 && nvmlDenies(p, g)) {
                    // ncclTopoCheckP2p's NVML check (paths.cc@v2.28.9-1:337-365): a pair whose P2P read or write
                    // status is not OK gets no P2P; over NVLink NCCL stops instead, unless told to ignore it.
                    if (path.type <= PATH_NVB && ignoreDisabled == 0) {
                        throw io.pathproof.core.PathproofException.badInput("topology."
                                + sys.host.hostname() + ".p2pDenied: GPUs "
                                + Math.min(sys.node(GPU, p).dev, sys.node(GPU, g).dev) + " and "
                                + Math.max(sys.node(GPU, p).dev, sys.node(GPU, g).dev)
                                + " are connected by NVLink, yet their peer access is denied:"
                                + " NCCL stops its init here (\"P2P is disabled between NVLINK connected GPUs\","
                                + " paths.cc:356@v2.28.9-1) unless NCCL_IGNORE_DISABLED_P2P=1");
                    }
                    p2p = false;
                    if (p < g) {
                        denied.add(sys.node(GPU, p).dev + "-" + sys.node(GPU, g).dev);
                    }
                }
                sys.p2p[p][g] = p2p || p == g;
                if (!p2p) {
                    int cpu = sys.localCpu(g);
                    addInterStep(CPU, cpu, GPU, p, GPU, g);
                }
            }
        }
        // Per NIC and GPU: PXN (reach the NIC through an NVLink peer that sits next to it), then GPU Direct RDMA
        // (paths.cc@v2.28.9-1:708-747): without it traffic goes through the CPU.
        for (int n = 0; n < sys.count(NET); n++) {
            Node net = sys.node(NET, n);
            sys.forgetLocalNets(); // ncclTopoGetLocalGpu sees the paths as changed for the previous NICs
            int localGpuIndex = pxnDisable ? -1 : sys.localGpu(n);
            for (int g = 0; g < sys.count(GPU); g++) {
                Node gpu = sys.node(GPU, g);
                if (localGpuIndex != g && localGpuIndex != -1) {
                    Node peer = sys.node(GPU, localGpuIndex);
                    if (peer.paths[NET][n].type <= sys.table.pxnPeerMaxType()
                            && peer.paths[GPU][g].type <= PATH_NVL
                            && (peer.paths[NET][n].bw > gpu.paths[NET][n].bw
                                    || gpu.paths[NET][n].type > sys.table.pxnSelfMinType())) {
                        addInterStep(GPU, localGpuIndex, GPU, g, NET, n);
                    }
                }
                if (gpu.paths[NET][n].type < PATH_PHB && !sys.gdr(g, n)) {
                    int cpu = sys.localCpu(g);
                    addInterStep(CPU, cpu, NET, n, GPU, g);
                    addInterStep(CPU, cpu, GPU, g, NET, n);
                }
            }
        }
        sys.forgetLocalNets();
        for (int n = 0; n < sys.count(NET); n++) {
            sys.node(NET, n).localGpu = sys.localGpu(n);
        }
        sys.searchInit();
        return denied;
    }

    private static int mergePathType(int t0, int t1) {
        int max = Math.max(t0, t1);
        int min = Math.min(t0, t1);
        return max == PATH_PHB && min == PATH_C2C ? PATH_P2C : max;
    }

    /** Whether the host's NVML denies peer access between the GPUs at system indices {@code a} and {@code b}. */
    private boolean nvmlDenies(int a, int b) {
        return sys.host != null && Boolean.TRUE.equals(sys.host.p2pDenied(sys.node(GPU, a).dev, sys.node(GPU, b).dev));
    }

    /** addInterStep (paths.cc@v2.28.9-1:185-202). */
    private void addInterStep(int tx, int ix, int t1, int i1, int t2, int i2) {
        Node cpuNode = sys.node(tx, ix);
        Node src = sys.node(t1, i1);
        Path p1 = src.paths[tx][ix];
        Path p2 = cpuNode.paths[t2][i2];
        Path dst = src.paths[t2][i2];
        Link[] l = new Link[p1.count + p2.count];
        System.arraycopy(p1.list, 0, l, 0, p1.count);
        System.arraycopy(p2.list, 0, l, p1.count, p2.count);
        dst.list = l;
        dst.count = l.length;
        dst.type = mergePathType(p1.type, p2.type);
        if (tx == GPU) {
            dst.type = PATH_PXN;
        }
        dst.bw = Math.min(p1.bw, p2.bw);
    }
}

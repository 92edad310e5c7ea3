package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Topology;
import java.util.ArrayList;
import java.util.List;

/**
 * NCCL's view of one node (ncclTopoSystem, graph/topo.h): GPU, PCI, NVS, CPU, NIC and NET nodes joined by typed
 * links with a bandwidth, and the paths between them (graph/paths.cc ncclTopoComputePaths). Only the GPUs that hold a
 * rank of the communicator are in it, as in ncclTopoGetSystem; NET nodes only when the communicator spans nodes
 * (ncclTopoTrimSystem@v2.22.3-1 removes them otherwise, 2.28 sets system->inter = 0). {@link TopoBuilder} adds the
 * nodes and links, {@link TopoPaths} computes the paths; this class holds them and answers what the search asks of
 * them (local NICs and GPUs, GPUDirect RDMA, path bounds, bandwidth bounds).
 */
final class TopoSystem {
    static final int GPU = 0;
    static final int PCI = 1;
    static final int NVS = 2;
    static final int CPU = 3;
    static final int NIC = 4;
    static final int NET = 5;
    static final String[] TYPE_NAMES = {"GPU", "PCI", "NVS", "CPU", "NIC", "NET"};

    // Link types share the numbering of path types (graph/topo.h "We want link types and path types to match").
    static final int LINK_LOC = PATH_LOC;
    static final int LINK_NVL = PATH_NVL;
    static final int LINK_C2C = PATH_C2C;
    static final int LINK_PCI = PATH_PIX;
    static final int LINK_SYS = PATH_SYS;
    static final int LINK_NET = PATH_NET;

    static final int ARCH_X86 = 1;
    static final int ARCH_POWER = 2;
    static final int ARCH_ARM = 3;
    static final int VENDOR_INTEL = 1;
    static final int VENDOR_AMD = 2;
    static final int VENDOR_ZHAOXIN = 3;
    // include/graph.h@v2.24.3-1:52-56: what a communicator records from 2.24 on when its hosts' CPUs differ.
    static final int ARCH_MIXED = 4;
    static final int VENDOR_MIXED = 4;

    static final class Link {
        final int type;
        float bw;
        final Node rem;

        Link(int type, float bw, Node rem) {
            this.type = type;
            this.bw = bw;
            this.rem = rem;
        }
    }

    static final class Path {
        Link[] list = new Link[0];
        int count;
        float bw;
        int type = PATH_DIS;
    }

    static final class Node {
        final int type;
        int index;
        final String name;
        final List<Link> links = new ArrayList<>();
        final Path[][] paths = new Path[6][];
        long used;
        // GPU
        int cc;
        int rank = -1;
        int dev;
        /** The PCI bus id as NCCL numbers it (busIdToInt64), -1 where the topology gives none. */
        long busId = -1;
        // CPU
        int arch;
        int vendor;
        String model = "";
        // NET
        float netBw;
        long asic;
        int port;
        boolean gdr;
        int localGpu = -1;
        float latency;
        int pciGen;
        int pciWidth;

        Node(int type, String name) {
            this.type = type;
            this.name = name;
        }

        Link linkTo(Node rem, int type) {
            for (Link l : links) {
                if (l.rem == rem && l.type == type) {
                    return l;
                }
            }
            return null;
        }
    }

    final NcclVersionTable table;

    @SuppressWarnings("unchecked")
    final List<Node>[] nodes = new List[6];

    final boolean inter;
    float maxBw;
    float totalBw;

    /** p2p level of ncclTopoCheckP2p (paths.cc@v2.28.9-1:272-389) without the NVML check. */
    int p2pLevel = PATH_PXB;

    /** The host the system was built from: its GPUs' peer access as NVML reports it, where known. */
    Topology.Node host;

    /** Per GPU pair (by system index): whether P2P may be used, once {@link #applyP2pLevel} has run; else null. */
    boolean[][] p2p;

    /** GPUDirect RDMA's farthest path type (NCCL_NET_GDR_LEVEL, default PXB; graph/paths.cc@v2.28.9-1:452-454). */
    int gdrLevel = PATH_PXB;

    private TopoSystem(NcclVersionTable table, boolean inter) {
        this.table = table;
        this.inter = inter;
        for (int t = 0; t < 6; t++) {
            nodes[t] = new ArrayList<>();
        }
    }

    /**
     * Builds the system of one host for the given GPUs (the ones holding ranks, in rank order), with its paths.
     * {@code inter}: the communicator spans more than this host (NET nodes are kept). Notes collect every input the
     * model had to assume.
     */
    static TopoSystem build(
            NcclVersionTable table,
            Topology.Node host,
            List<Topology.Gpu> gpus,
            int[] ranks,
            boolean inter,
            boolean nvbDisable,
            List<String> notes) {
        TopoSystem s = new TopoSystem(table, inter);
        s.host = host;
        TopoBuilder.add(s, host, gpus, ranks, notes);
        new TopoPaths(s).computePaths(nvbDisable);
        s.searchInit();
        return s;
    }

    /**
     * The P2P, PXN and GPUDirect RDMA rules over the computed paths ({@link TopoPaths#applyP2pLevel}); the search runs
     * after them.
     */
    void applyP2pLevel(Integer userLevel, boolean pxnDisable, Integer userGdrLevel) {
        applyP2pLevel(userLevel, pxnDisable, userGdrLevel, 0);
    }

    /** As above, with NCCL_IGNORE_DISABLED_P2P (0: the NVML check as NCCL does it; 2: no check). */
    List<String> applyP2pLevel(Integer userLevel, boolean pxnDisable, Integer userGdrLevel, long ignoreDisabledP2p) {
        return new TopoPaths(this).applyP2pLevel(userLevel, pxnDisable, userGdrLevel, ignoreDisabledP2p);
    }

    int count(int type) {
        return nodes[type].size();
    }

    Node node(int type, int i) {
        return nodes[type].get(i);
    }

    Node create(int type, String name) {
        Node n = new Node(type, name);
        n.index = nodes[type].size();
        nodes[type].add(n);
        return n;
    }

    /**
     * ncclTopoCheckGdr (paths.cc@v2.28.9-1:418-484) for a write: GDR needs the NIC's support and a distance no longer
     * than NCCL_NET_GDR_LEVEL ({@link #gdrLevel}); over PXN the distance is the relay GPU's.
     */
    boolean gdr(int g, int n) {
        Node gpu = node(GPU, g);
        if (!node(NET, n).gdr) {
            return false;
        }
        int distance = gpu.paths[NET][n].type;
        if (distance == PATH_PXN) {
            // ncclTopoGetIntermediateRank: the first node past any NVSwitch on the path is the relay GPU.
            Path px = gpu.paths[NET][n];
            Node relay = null;
            for (int i = 0; i < px.count && (relay == null || relay.type == NVS); i++) {
                relay = px.list[i].rem;
            }
            if (relay != null && relay.type == GPU) {
                distance = relay.paths[NET][n].type;
            }
        }
        return distance <= gdrLevel;
    }

    /** ncclGetLocalCpu: the CPU closest to a GPU (paths.cc). */
    int localCpu(int g) {
        Path[] ps = node(GPU, g).paths[CPU];
        int best = 0;
        for (int c = 1; c < ps.length; c++) {
            if (ps[c].count < ps[best].count) {
                best = c;
            }
        }
        return best;
    }

    /** ncclTopoGetLocal (topo.cc@v2.28.9-1): the nodes of resultType with the best bandwidth, then path type. */
    int[] local(int type, int index, int resultType) {
        Path[] paths = node(type, index).paths[resultType];
        int minType = PATH_DIS;
        float maxBw = 0;
        int[] out = new int[count(resultType)];
        int cnt = 0;
        for (int i = 0; i < count(resultType); i++) {
            if (paths[i].bw > maxBw || (paths[i].bw == maxBw && paths[i].type < minType)) {
                maxBw = paths[i].bw;
                minType = paths[i].type;
                cnt = 0;
            }
            if (paths[i].bw == maxBw && paths[i].type == minType) {
                out[cnt++] = i;
            }
        }
        return java.util.Arrays.copyOf(out, cnt);
    }

    private int[][] localNetCache;

    /** Drops the memoized local NETs: the paths they were read from have changed. */
    void forgetLocalNets() {
        localNetCache = null;
    }

    /** ncclTopoGetLocalNet, memoized: the paths no longer change once the P2P level is applied. */
    int localNet(int g, int channel) {
        if (localNetCache == null) {
            localNetCache = new int[count(GPU)][];
        }
        int[] row = localNetCache[g];
        if (row == null) {
            row = new int[table.maxChannels()];
            for (int c = 0; c < row.length; c++) {
                row[c] = computeLocalNet(g, c);
            }
            localNetCache[g] = row;
        }
        return row[channel % row.length];
    }

    /** ncclTopoGetLocalNet (topo.cc@v2.28.9-1), NCCL_NETDEVS_POLICY=AUTO: the NET index for a GPU and channel. */
    private int computeLocalNet(int g, int channel) {
        int[] nets = local(GPU, g, NET);
        if (nets.length == 0) {
            return -1;
        }
        int[] gpusOfNet = local(NET, nets[0], GPU);
        int netsPerGpu = (nets.length + gpusOfNet.length - 1) / gpusOfNet.length;
        int net = node(GPU, g).dev;
        if (Integer.bitCount(nets.length) == 1) {
            net = mirrorBits(net, nets.length);
        }
        net += channel % netsPerGpu;
        return nets[net % nets.length];
    }

    static int mirrorBits(int val, int pow2) {
        int mirror = 0;
        for (int b = 1, mb = pow2 >> 1; b < pow2; b <<= 1, mb >>= 1) {
            if ((val & b) != 0) {
                mirror |= mb;
            }
        }
        return mirror;
    }

    /** ncclTopoGetLocalGpu: the first local GPU whose channel rotation lands on this NET. */
    int localGpu(int n) {
        int[] gpus = local(NET, n, GPU);
        for (int c = 0; c < table.maxChannels(); c++) {
            for (int g : gpus) {
                if (localNet(g, c) == n) {
                    return g;
                }
            }
        }
        return -1;
    }

    /** ncclTopoSearchInit (graph/search.cc@v2.28.9-1:38-54): maxBw and totalBw. */
    void searchInit() {
        maxBw = 0;
        totalBw = 0;
        if (!inter && count(GPU) == 1) {
            maxBw = LOC_BW;
            totalBw = LOC_BW;
            return;
        }
        for (Node gpu : nodes[GPU]) {
            int type = inter ? NET : GPU;
            float m = 0;
            Path[] ps = gpu.paths[type];
            for (Path p : ps) {
                if (p.count == 0) {
                    continue;
                }
                m = Math.max(m, p.bw);
            }
            maxBw = Math.max(maxBw, m);
            float nvl = 0;
            float pci = 0;
            for (Link l : gpu.links) {
                if (l.type == LINK_NVL) {
                    nvl += l.bw;
                }
                if (l.type == LINK_PCI) {
                    pci = l.bw;
                }
            }
            totalBw = Math.max(totalBw, Math.max(pci, nvl));
        }
    }

    int minCc() {
        int m = Integer.MAX_VALUE;
        for (Node g : nodes[GPU]) {
            m = Math.min(m, g.cc);
        }
        return m;
    }

    int maxCc() {
        int m = 0;
        for (Node g : nodes[GPU]) {
            m = Math.max(m, g.cc);
        }
        return m;
    }

    /** ncclTopoGetGpuMinPath / MaxPath (paths.cc@v2.28.9-1:911-937). */
    int gpuPathBound(int type, boolean max) {
        int bound = max ? PATH_LOC : PATH_SYS;
        for (int i = 0; i < count(GPU); i++) {
            Path[] ps = node(GPU, i).paths[type];
            for (int j = 0; j < count(type); j++) {
                if (type == GPU && i == j) {
                    continue;
                }
                bound = max ? Math.max(bound, ps[j].type) : Math.min(bound, ps[j].type);
            }
        }
        return bound;
    }

    /** ncclTopoSplitNvLink (paths.cc@v2.28.9-1:948-): two NVLink domains joined by something slower. */
    boolean splitNvLink() {
        int n = count(GPU);
        int[] domain = new int[n];
        for (int g = 0; g < n; g++) {
            domain[g] = g;
        }
        for (int g = 0; g < n; g++) {
            for (int p = g + 1; p < n; p++) {
                if (node(GPU, g).paths[GPU][p].type == PATH_NVL) {
                    domain[p] = domain[g];
                }
            }
        }
        int[] size = new int[n];
        for (int g = 0; g < n; g++) {
            size[domain[g]]++;
        }
        int domains = 0;
        for (int g = 0; g < n; g++) {
            if (size[g] > 1) {
                domains++;
            }
        }
        return domains == 2;
    }

    /** The first GPU pair with no path at all, or null. */
    String disconnected() {
        for (int g = 0; g < count(GPU); g++) {
            for (int p = 0; p < count(GPU); p++) {
                if (g != p && node(GPU, g).paths[GPU][p].type == PATH_DIS) {
                    return node(GPU, g).name + " and " + node(GPU, p).name;
                }
            }
        }
        return null;
    }

    static PathproofException noPath(String host, String pair) {
        return PathproofException.badInput(
                "topology." + host + ": no path between " + pair + " (no shared CPU, PCIe switch or NVLink)");
    }
}

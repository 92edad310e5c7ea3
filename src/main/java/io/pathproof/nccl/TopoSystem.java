package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Topology;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * NCCL's view of one node (ncclTopoSystem, graph/topo.h): GPU, PCI, NVS, CPU, NIC and NET nodes joined by typed
 * links with a bandwidth, and the paths between them (graph/paths.cc ncclTopoComputePaths). Only the GPUs that hold a
 * rank of the communicator are in it, as in ncclTopoGetSystem; NET nodes only when the communicator spans nodes
 * (ncclTopoTrimSystem@v2.22.3-1 removes them otherwise, 2.28 sets system->inter = 0).
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

    private TopoSystem(NcclVersionTable table, boolean inter) {
        this.table = table;
        this.inter = inter;
        for (int t = 0; t < 6; t++) {
            nodes[t] = new ArrayList<>();
        }
    }

    int count(int type) {
        return nodes[type].size();
    }

    Node node(int type, int i) {
        return nodes[type].get(i);
    }

    private Node create(int type, String name) {
        Node n = new Node(type, name);
        n.index = nodes[type].size();
        nodes[type].add(n);
        return n;
    }

    /**
     * ncclTopoConnectNodes (graph/topo.cc@v2.28.9-1:163-189): links to the same remote of the same type aggregate their
     * bandwidth, and a node's links stay sorted by bandwidth, descending (stable).
     */
    static void connect(Node node, Node rem, int type, float bw) {
        Link link = node.linkTo(rem, type);
        if (link == null) {
            link = new Link(type, 0f, rem);
            node.links.add(link);
        }
        link.bw += bw;
        node.links.remove(link);
        int pos = 0;
        while (pos < node.links.size() && node.links.get(pos).bw >= link.bw) {
            pos++;
        }
        node.links.add(pos, link);
    }

    /**
     * Builds the system of one host for the given GPUs (the ones holding ranks, in rank order). {@code inter}: the
     * communicator spans more than this host (NET nodes are kept). Notes collect every input the model had to assume.
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
        Map<String, Node> byId = new HashMap<>();
        s.addCpus(host, byId, notes);
        Node firstCpu = s.node(CPU, 0);
        s.addPciSwitches(host, byId, firstCpu);
        Map<Integer, Node> gpuByIndex = s.addGpus(gpus, ranks, byId, firstCpu);
        if (inter) {
            s.addNets(host, byId, firstCpu);
        }
        s.addNvLinks(host, gpus, gpuByIndex);
        s.connectCpus();
        s.sortPciTree();
        s.computePaths(nvbDisable);
        s.searchInit();
        return s;
    }

    /** CPUs first (the XML root's children). A host without CPU records gets one socket of unknown make. */
    private void addCpus(Topology.Node host, Map<String, Node> byId, List<String> notes) {
        if (host.cpus().isEmpty()) {
            Node cpu = create(CPU, "cpu0");
            cpu.arch = ARCH_X86;
            byId.put("", cpu);
            notes.add(host.hostname() + ": no CPU given; assumed one x86 socket of unknown vendor");
        }
        for (Topology.Cpu c : host.cpus()) {
            Node cpu = create(CPU, c.id());
            cpu.arch = arch(c.arch());
            cpu.vendor = vendor(c.vendor());
            cpu.model = c.vendor() == null ? "" : c.vendor().toLowerCase(Locale.ROOT);
            byId.put(c.id(), cpu);
        }
    }

    /** PCI switches in list order; parents resolved after creation. */
    private void addPciSwitches(Topology.Node host, Map<String, Node> byId, Node firstCpu) {
        for (Topology.PciSwitch p : host.pciSwitches()) {
            Node pci = create(PCI, p.id());
            pci.pciGen = p.gen();
            pci.pciWidth = p.width();
            byId.put(p.id(), pci);
        }
        for (Topology.PciSwitch p : host.pciSwitches()) {
            Node pci = byId.get(p.id());
            Node parent = p.parent() == null ? firstCpu : byId.get(p.parent());
            float bw = pciBw(table, p.gen(), p.width());
            connect(pci, parent, LINK_PCI, bw);
            connect(parent, pci, LINK_PCI, bw);
        }
    }

    /** GPUs holding ranks, in rank order (ncclTopoFillGpu per local rank); returns them by device index. */
    private Map<Integer, Node> addGpus(List<Topology.Gpu> gpus, int[] ranks, Map<String, Node> byId, Node firstCpu) {
        Map<Integer, Node> gpuByIndex = new HashMap<>();
        for (int i = 0; i < gpus.size(); i++) {
            Topology.Gpu g = gpus.get(i);
            Node gpu = create(GPU, "gpu" + g.index());
            gpu.cc = g.computeCapability();
            gpu.rank = ranks[i];
            gpu.dev = g.index();
            gpuByIndex.put(g.index(), gpu);
            Node parent = g.pciParent() == null ? firstCpu : byId.get(g.pciParent());
            float bw = pciBw(table, g.pciGen(), g.pciWidth());
            connect(gpu, parent, LINK_PCI, bw);
            connect(parent, gpu, LINK_PCI, bw);
        }
        return gpuByIndex;
    }

    /** NICs and their NET ports (ncclTopoAddNic / ncclTopoAddNet), only for a communicator that spans hosts. */
    private void addNets(Topology.Node host, Map<String, Node> byId, Node firstCpu) {
        Map<String, Topology.PciSwitch> switches = new HashMap<>();
        for (Topology.PciSwitch p : host.pciSwitches()) {
            switches.put(p.id(), p);
        }
        int dev = 0;
        for (Topology.Nic n : host.nics()) {
            Node nic = create(NIC, n.name());
            Node parent = n.pciParent() == null ? firstCpu : byId.get(n.pciParent());
            Topology.PciSwitch sw = n.pciParent() == null ? null : switches.get(n.pciParent());
            // The NIC's own PCIe link is not an input; it is taken to be as wide as the switch it hangs off. A NIC
            // right
            // under a socket is a bare <nic> there, as NCCL attaches a device without a PCI path (graph/xml.cc:939-940)
            // and as pathproof writes one: joined to its CPU at LOC_BW (graph/topo.cc:556-557@v2.28.9-1).
            float pbw = sw == null ? LOC_BW : pciBw(table, sw.gen(), sw.width());
            connect(nic, parent, LINK_PCI, pbw);
            connect(parent, nic, LINK_PCI, pbw);
            Node net = create(NET, n.name());
            // topo.cc@v2.28.9-1:371-373 net->net.bw = mbps / 8000.0
            net.netBw = (float) (n.speedMbps() / 8000.0);
            net.asic = dev;
            net.port = 0;
            net.gdr = n.gdr();
            net.dev = dev++;
            connect(nic, net, LINK_NET, net.netBw);
            connect(net, nic, LINK_NET, net.netBw);
        }
    }

    /** NVLinks (ncclTopoAddNvLinks): GPU pairs and the NVSwitch fabric (all switches collapse into one NVS node). */
    private void addNvLinks(Topology.Node host, List<Topology.Gpu> gpus, Map<Integer, Node> gpuByIndex) {
        for (Topology.NvLink l : host.nvlinks()) {
            Node a = gpuByIndex.get(l.gpuA());
            Node b = gpuByIndex.get(l.gpuB());
            if (a == null || b == null) {
                continue; // a GPU without a rank of this communicator is not in the system (topo.cc: remote == NULL)
            }
            connect(a, b, LINK_NVL, l.count() * table.nvlBw(a.cc));
            connect(b, a, LINK_NVL, l.count() * table.nvlBw(b.cc));
        }
        Node nvs = null;
        for (int i = 0; i < gpus.size(); i++) {
            Topology.Gpu g = gpus.get(i);
            if (g.nvswitchLinks() > 0) {
                if (nvs == null) {
                    nvs = create(NVS, "nvs");
                }
                Node gpu = gpuByIndex.get(g.index());
                float bw = g.nvswitchLinks() * table.nvlBw(gpu.cc);
                connect(gpu, nvs, LINK_NVL, bw);
                connect(nvs, gpu, LINK_NVL, bw);
            }
        }
    }

    /** ncclTopoConnectCpus: every pair of sockets, bandwidth by CPU make. */
    private void connectCpus() {
        for (Node c1 : nodes[CPU]) {
            for (Node c2 : nodes[CPU]) {
                if (c1 != c2) {
                    connect(c1, c2, LINK_SYS, interCpuBw(table, c1));
                }
            }
        }
    }

    static int arch(String a) {
        if (a == null) {
            return ARCH_X86;
        }
        String k = a.toLowerCase(Locale.ROOT);
        if (k.contains("arm") || k.contains("aarch64")) {
            return ARCH_ARM;
        }
        if (k.contains("ppc") || k.contains("power")) {
            return ARCH_POWER;
        }
        return ARCH_X86;
    }

    static int vendor(String v) {
        if (v == null) {
            return 0;
        }
        String k = v.toLowerCase(Locale.ROOT);
        if (k.contains("intel")) {
            return VENDOR_INTEL;
        }
        if (k.contains("amd")) {
            return VENDOR_AMD;
        }
        if (k.contains("zhaoxin") || k.contains("centaur")) {
            return VENDOR_ZHAOXIN;
        }
        return 0;
    }

    /**
     * graph/topo.cc@v2.28.9-1:70-94 ncclTopoGetInterCpuBw; the Intel generation is read from the vendor text. Before
     * 2.26 only Skylake is told apart (topo.cc@v2.22.3-1:80: SKL 10, else QPI 6), and "Skylake" is every family-6 model
     * from 0x55 on (topo.cc@v2.21.5-1:502, @v2.22.3-1:507, @v2.25.1-1:514), so a Sapphire or Emerald Rapids socket is
     * SKL there: 10 GB/s, not 6 (NCCL 2.21.5 logged SYS[10.0] between two model-207 sockets, samples/emulation-sweep).
     */
    static float interCpuBw(NcclVersionTable table, Node cpu) {
        if (cpu.arch == ARCH_POWER) {
            return P9_BW;
        }
        if (cpu.arch == ARCH_ARM) {
            return ARM_BW;
        }
        if (cpu.vendor == VENDOR_INTEL) {
            boolean erp = cpu.model.contains("erp") || cpu.model.contains("emerald");
            boolean srp = cpu.model.contains("srp") || cpu.model.contains("sapphire");
            boolean sklOrLater = erp || srp || cpu.model.contains("skl") || cpu.model.contains("skylake");
            return !table.intelSrpErp()
                    ? (sklOrLater ? SKL_QPI_BW : BDW_QPI_BW)
                    : erp ? ERP_QPI_BW : srp ? SRP_QPI_BW : sklOrLater ? SKL_QPI_BW : BDW_QPI_BW;
        }
        if (cpu.vendor == VENDOR_AMD) {
            return AMD_BW;
        }
        if (cpu.vendor == VENDOR_ZHAOXIN) {
            return ZPI_BW;
        }
        return LOC_BW;
    }

    /**
     * graph/topo.cc@v2.28.9-1:423-492: bandwidth of a PCIe link in GB/s = width × speed / 80, speed from kvDictPciGen
     * (x100 Mb/s per lane), width 0 read as 16 and an unknown generation as the fallback 60 (Gen3).
     */
    static float pciBw(NcclVersionTable table, int gen, int width) {
        int w = width == 0 ? 16 : width;
        int speed = gen >= 1 && gen <= table.pciGenSpeeds().length ? table.pciGenSpeeds()[gen - 1] : 60;
        return (float) (w * speed / 80.0);
    }

    /** ncclTopoSortSystem (topo.cc@v2.28.9-1:330-354): in the PCI tree, each node's up link goes last. */
    private void sortPciTree() {
        for (Node cpu : nodes[CPU]) {
            sortRec(cpu, null);
        }
    }

    private static void sortRec(Node node, Node up) {
        if (up != null) {
            Link upLink = node.linkTo(up, LINK_PCI);
            if (upLink != null) {
                node.links.remove(upLink);
                node.links.add(upLink);
            }
        }
        for (Link l : new ArrayList<>(node.links)) {
            if (l.type == LINK_PCI && l.rem != up && l.rem.type != CPU) {
                sortRec(l.rem, node);
            }
        }
    }

    // ------------------------------------------------------------------------------------------------ paths

    private Path pathOf(Node node, Node base) {
        Path[] ps = node.paths[base.type];
        if (ps == null) {
            ps = new Path[nodes[base.type].size()];
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
            for (Node n : nodes[t]) {
                for (int t2 = 0; t2 < 6; t2++) {
                    Path[] ps = new Path[nodes[t2].size()];
                    for (int i = 0; i < ps.length; i++) {
                        ps[i] = new Path();
                    }
                    n.paths[t2] = ps;
                }
            }
        }
    }

    /** p2p level of ncclTopoCheckP2p (paths.cc@v2.28.9-1:272-389) without the NVML check. */
    int p2pLevel = PATH_PXB;

    /**
     * ncclTopoComputePaths (graph/paths.cc@v2.28.9-1:641-764): paths to CPUs, GPUs, NETs, NVSwitches; GPU pairs that
     * may not use P2P (NCCL_P2P_LEVEL / NCCL_P2P_DISABLE, or further apart than PXB) are routed through the CPU.
     */
    private void computePaths(boolean nvbDisable) {
        clearPaths();
        for (Node c : nodes[CPU]) {
            setPaths(c, nvbDisable);
        }
        for (Node g : nodes[GPU]) {
            setPaths(g, nvbDisable);
        }
        for (Node n : nodes[NET]) {
            setPaths(n, nvbDisable);
        }
        for (Node n : nodes[NVS]) {
            setPaths(n, nvbDisable);
        }
    }

    /** Applies the P2P level (default PXB; AMD with ≤ 2 GPUs: SYS; the user's NCCL_P2P_LEVEL/DISABLE wins). */
    void applyP2pLevel(Integer userLevel) {
        applyP2pLevel(userLevel, false, null);
    }

    /** GPUDirect RDMA's farthest path type (NCCL_NET_GDR_LEVEL, default PXB; graph/paths.cc@v2.28.9-1:452-454). */
    int gdrLevel = PATH_PXB;

    /**
     * As {@link #applyP2pLevel(Integer)}; {@code pxnDisable} is NCCL_PXN_DISABLE=1, {@code userGdrLevel}
     * NCCL_NET_GDR_LEVEL (null: unset, PXB).
     */
    void applyP2pLevel(Integer userLevel, boolean pxnDisable, Integer userGdrLevel) {
        if (userGdrLevel != null) {
            gdrLevel = userGdrLevel;
        }
        int level = PATH_PXB;
        Node cpu0 = nodes[CPU].get(0);
        if (cpu0.arch == ARCH_X86 && cpu0.vendor == VENDOR_AMD && count(GPU) <= 2) {
            level = PATH_SYS;
        }
        if (userLevel != null) {
            level = userLevel;
        }
        p2pLevel = level;
        for (int g = 0; g < count(GPU); g++) {
            for (int p = 0; p < count(GPU); p++) {
                Path path = node(GPU, p).paths[GPU][g];
                boolean p2p = path.type <= level;
                if (!p2p) {
                    int cpu = localCpu(g);
                    addInterStep(CPU, cpu, GPU, p, GPU, g);
                }
            }
        }
        // Per NIC and GPU: PXN (reach the NIC through an NVLink peer that sits next to it), then GPU Direct RDMA
        // (paths.cc@v2.28.9-1:708-747): without it traffic goes through the CPU.
        for (int n = 0; n < count(NET); n++) {
            Node net = node(NET, n);
            localNetCache = null; // ncclTopoGetLocalGpu sees the paths as changed for the previous NICs
            int localGpuIndex = pxnDisable ? -1 : localGpu(n);
            for (int g = 0; g < count(GPU); g++) {
                Node gpu = node(GPU, g);
                if (localGpuIndex != g && localGpuIndex != -1) {
                    Node peer = node(GPU, localGpuIndex);
                    if (peer.paths[NET][n].type <= table.pxnPeerMaxType()
                            && peer.paths[GPU][g].type <= PATH_NVL
                            && (peer.paths[NET][n].bw > gpu.paths[NET][n].bw
                                    || gpu.paths[NET][n].type > table.pxnSelfMinType())) {
                        addInterStep(GPU, localGpuIndex, GPU, g, NET, n);
                    }
                }
                if (gpu.paths[NET][n].type < PATH_PHB && !gdr(g, n)) {
                    int cpu = localCpu(g);
                    addInterStep(CPU, cpu, NET, n, GPU, g);
                    addInterStep(CPU, cpu, GPU, g, NET, n);
                }
            }
        }
        localNetCache = null;
        for (int n = 0; n < count(NET); n++) {
            node(NET, n).localGpu = localGpu(n);
        }
        searchInit();
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

    private static int mergePathType(int t0, int t1) {
        int max = Math.max(t0, t1);
        int min = Math.min(t0, t1);
        return max == PATH_PHB && min == PATH_C2C ? PATH_P2C : max;
    }

    /** addInterStep (paths.cc@v2.28.9-1:185-202). */
    private void addInterStep(int tx, int ix, int t1, int i1, int t2, int i2) {
        Node cpuNode = node(tx, ix);
        Node src = node(t1, i1);
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

package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;
import static io.pathproof.nccl.TopoSystem.*;

import io.pathproof.scenario.Topology;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The nodes and links of one host's system from the scenario's topology, as ncclTopoGetSystem turns the topology XML
 * into an ncclTopoSystem (graph/topo.cc): CPUs, PCI switches, the GPUs holding ranks, NICs and their NET ports,
 * NVLinks, and the bandwidth of each link by its kind and generation.
 */
final class TopoBuilder {
    private final TopoSystem sys;
    private final NcclVersionTable table;

    private TopoBuilder(TopoSystem sys) {
        this.sys = sys;
        this.table = sys.table;
    }

    /** Adds the host's nodes and links to an empty system, for the given GPUs (the ones holding ranks, in rank order). */
    static void add(TopoSystem sys, Topology.Node host, List<Topology.Gpu> gpus, int[] ranks, List<String> notes) {
        TopoBuilder b = new TopoBuilder(sys);
        Map<String, Node> byId = new HashMap<>();
        b.addCpus(host, byId, notes);
        Node firstCpu = sys.node(CPU, 0);
        b.addPciSwitches(host, byId, firstCpu);
        Map<Integer, Node> gpuByIndex = b.addGpus(gpus, ranks, byId, firstCpu);
        if (sys.inter) {
            b.addNets(host, byId, firstCpu);
        }
        b.addNvLinks(host, gpus, gpuByIndex);
        b.connectCpus();
        b.sortPciTree();
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

    /** CPUs first (the XML root's children). A host without CPU records gets one socket of unknown make. */
    private void addCpus(Topology.Node host, Map<String, Node> byId, List<String> notes) {
        if (host.cpus().isEmpty()) {
            Node cpu = sys.create(CPU, "cpu0");
            cpu.arch = ARCH_X86;
            byId.put("", cpu);
            notes.add(host.hostname() + ": no CPU given; assumed one x86 socket of unknown vendor");
        }
        for (Topology.Cpu c : host.cpus()) {
            Node cpu = sys.create(CPU, c.id());
            cpu.arch = arch(c.arch());
            cpu.vendor = vendor(c.vendor());
            cpu.model = c.vendor() == null ? "" : c.vendor().toLowerCase(Locale.ROOT);
            byId.put(c.id(), cpu);
        }
    }

    /** PCI switches in list order; parents resolved after creation. */
    private void addPciSwitches(Topology.Node host, Map<String, Node> byId, Node firstCpu) {
        for (Topology.PciSwitch p : host.pciSwitches()) {
            Node pci = sys.create(PCI, p.id());
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
            Node gpu = sys.create(GPU, "gpu" + g.index());
            gpu.cc = g.computeCapability();
            gpu.rank = ranks[i];
            gpu.dev = g.index();
            gpu.busId = GraphListing.busId(g.busId());
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
            Node nic = sys.create(NIC, n.name());
            Node parent = n.pciParent() == null ? firstCpu : byId.get(n.pciParent());
            Topology.PciSwitch sw = n.pciParent() == null ? null : switches.get(n.pciParent());
            // The NIC's own PCIe link, as NCCL joins every PCI node to its parent (ncclTopoAddPci, topo.cc:483-492
            // @v2.28.9-1): an NCCL dump gives it. Where it is not known (a JSON node, nvidia-smi text) it is taken to
            // be as wide as the switch it hangs off. A NIC right under a socket without a link is a bare <nic> there,
            // as NCCL attaches a device without a PCI path (graph/xml.cc:939-940) and as pathproof writes one: joined
            // to its CPU at LOC_BW (graph/topo.cc:556-557@v2.28.9-1).
            float pbw = n.pciGen() != null
                    ? pciBw(table, n.pciGen(), n.pciWidth())
                    : sw == null ? LOC_BW : pciBw(table, sw.gen(), sw.width());
            connect(nic, parent, LINK_PCI, pbw);
            connect(parent, nic, LINK_PCI, pbw);
            Node net = sys.create(NET, n.name());
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
                    nvs = sys.create(NVS, "nvs");
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
        for (Node c1 : sys.nodes[CPU]) {
            for (Node c2 : sys.nodes[CPU]) {
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
        for (Node cpu : sys.nodes[CPU]) {
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
}

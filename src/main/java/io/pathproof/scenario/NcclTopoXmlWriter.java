package io.pathproof.scenario;

import io.pathproof.core.PathproofException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Writes a single-node {@link Topology} as the NCCL topology XML that {@code NCCL_TOPO_FILE} loads (graph/xml.cc
 * {@code ncclTopoGetXmlFromFile}, read by graph/topo.cc {@code ncclTopoGetSystemFromXml} of NCCL v2.28.9-1), so that
 * NCCL itself can be asked what it decides on that machine while N rank processes share one real GPU (the emulator:
 * native/nccl-emulator). The shape is the one NCCL dumps ({@code NCCL_TOPO_DUMP_FILE}), so {@link NcclTopoXmlReader}
 * reads it back:
 *
 * <ul>
 *   <li>one {@code <cpu numaid arch vendor familyid modelid affinity>} per socket: topo.cc:512-545 {@code
 *       ncclTopoAddCpu} needs {@code vendor} on x86 and {@code familyid}/{@code modelid} on Intel (they pick the
 *       inter-socket bandwidth); {@code affinity} is there so that every rank's copy of a socket is the same (see
 *       {@link #AFFINITY});
 *   <li>a PCIe switch as {@code <pci class="0x060400">} holding its devices (topo.cc:463 {@code type == PCI});
 *   <li>per GPU {@code <pci busid class="0x030200" vendor="0x10de" device link_speed link_width>} with
 *       {@code <gpu dev sm rank gdr>}: topo.cc:444 skips a GPU without {@code rank}; NCCL overwrites rank and keeps
 *       only the GPUs that hold a rank (topo.cc:1450-1454, {@code ncclTopoTrimXml});
 *   <li>{@code <nvlink target count tclass>}: {@code tclass 0x068000} = into the NVSwitch fabric (target
 *       {@link #NVSWITCH_BUSID}, which NCCL does not look at), {@code 0x030200} = directly to the GPU at {@code target};
 *       both ends list a GPU-GPU link, as NVML reports it to each (xml.cc:811-820).
 * </ul>
 *
 * A GPU with no {@code <nvlink>} element makes NCCL ask NVML about the real GPU's links (xml.cc:765-822): on a host
 * whose real GPU has active NVLinks, a PCIe-only emulation would gain them. NCCL writes the real host hash over every
 * {@code host_hash} it reads (topo.cc:1429-1436), so the one written here only keeps the file's shape.
 */
public final class NcclTopoXmlWriter {
    /** The target NCCL's dumps name for links into the NVSwitch fabric; only its class counts (topo.cc:589-594). */
    public static final String NVSWITCH_BUSID = "0000:ff:00.0";

    /**
     * Every {@code <cpu>}'s {@code affinity}: the empty CPU set. Each local rank loads this file and then, for the
     * socket above its own GPU only, fills an {@code affinity} the file lacks from the host's
     * /sys/devices/system/node/node&lt;numaid&gt;/cpumap (ncclTopoGetXmlFromCpu, graph/xml.cc:471-486@v2.30.7-1). The
     * local ranks' XMLs are then fused, and a node joins another only when every attribute agrees (xmlFindNode,
     * graph/xml.h:205-226@v2.30.7-1; ncclTopoFuseXml, graph/topo.cc:1920-1924@v2.30.7-1), so a socket that rank 0 left
     * without {@code affinity} and rank 4 filled is kept twice: the NICs stay under rank 0's copy (a NIC is created and
     * linked to its switch once, topo.cc:672-683@v2.30.7-1) and the GPUs of rank 4's socket lose their PIX/PXB path to
     * them. NCCL 2.30 writes the attribute even when the cpumap cannot be read (os/linux.cc:706-723@v2.30.7-1: "using
     * empty affinity"); 2.29 and before skipped an empty value (ncclTopoSetAttrFromSys,
     * graph/xml.cc:469-475@v2.29.7-1), which hid this on an emulation host with one NUMA node. A real machine without
     * NCCL_TOPO_FILE reads every socket's cpumap in every rank and fuses one copy per socket, which is what this
     * emulates. Empty, not the host's cores: the emulated sockets are not the host's, and NCCL only pins threads with
     * it, skipping an empty set (ncclTopoGetCpuAffinity, topo.cc:2150-2193@v2.30.7-1, "empty, ignoring"); no NCCL
     * decision reads it.
     */
    static final String AFFINITY = "";

    /** NCCL's busId text: int64ToBusId's "%04lx:%02lx:%02lx.%01lx" (misc/utils.cc), lower case. */
    private static final Pattern BUSID = Pattern.compile("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-9a-f]");

    private NcclTopoXmlWriter() {}

    /**
     * The XML and the busId each GPU (in the topology's list order, i.e. rank order) reports. {@code busIds.get(r)} is
     * what rank r's process must pass as its emulated busId; {@code nicBusIds}, by the node's NIC order, the busId of
     * each NIC's own PCI device (null where the NIC sits right under a socket), which a net plugin's device path names.
     */
    public record Emulated(String xml, List<String> busIds, List<String> nicBusIds) {
        public Emulated {
            busIds = List.copyOf(busIds);
            nicBusIds = java.util.Collections.unmodifiableList(new ArrayList<>(nicBusIds));
        }

        /** The busId of the PCI device holding NIC {@code i} of the node, or null for a NIC right under a socket. */
        public String nicBusId(int i) {
            return nicBusIds.get(i);
        }
    }

    /**
     * Writes {@code topology}. {@code realBusId} (null when not known) is the busId of the one real GPU: the first GPU
     * keeps it, so rank 0 reports what its GPU really is; every other GPU keeps the topology's busId when that is a
     * valid, distinct NCCL busId, else gets a made-up one. Refuses (exit 3) a topology of several nodes or none GPUs.
     */
    public static Emulated write(Topology topology, String realBusId) {
        if (topology.nodes().size() != 1) {
            throw PathproofException.badInput(
                    "topology '" + topology.name() + "' has " + topology.nodes().size()
                            + " nodes: emulation is single-node (NCCL sees one host; no network is emulated)");
        }
        return writeNode(topology, 0, realBusId);
    }

    /**
     * Writes node {@code node} of {@code cluster} as that node's own NCCL_TOPO_FILE: its CPUs, switches, GPUs and its
     * NICs as {@code <net>} entries with their speed and GPUDirect flag (for an emulated cluster over loopback, the
     * one {@code lo} of {@link Scenarios#emulatedCluster}). BusIds are chosen as {@link #write} chooses them, per node:
     * they may repeat across nodes, since NCCL calls two ranks one GPU only when both their host hash and their busId
     * are equal (init.cc:903@v2.28.9-1) and each emulated node has its own host hash (NCCL_HOSTID). The gpu's
     * {@code rank} attribute is the global rank (node by node); NCCL writes each rank's own over it anyway.
     */
    public static Emulated writeNode(Topology cluster, int node, String realBusId) {
        if (node < 0 || node >= cluster.nodes().size()) {
            throw PathproofException.usage("topology '" + cluster.name() + "' has no node " + node);
        }
        Topology.Node n = cluster.nodes().get(node);
        if (n.gpus().isEmpty()) {
            throw PathproofException.badInput(
                    "topology '" + cluster.name() + "' node " + n.hostname() + " has no GPU: nothing to emulate");
        }
        String real = realBusId == null ? null : normalize(realBusId);
        if (realBusId != null && real == null) {
            throw PathproofException.badInput(
                    "real GPU busId '" + realBusId + "' is not a PCI busId (e.g. 0000:00:06.0)");
        }
        int firstRank = 0;
        for (int i = 0; i < node; i++) {
            firstRank += cluster.nodes().get(i).gpus().size();
        }
        return new Writer(cluster, n, real, firstRank).write();
    }

    /**
     * A busId in NCCL's form, or null: accepts nvidia-smi's 8-digit domain ("00000000:00:06.0") and upper case.
     */
    public static String normalize(String busId) {
        if (busId == null) {
            return null;
        }
        String b = busId.trim().toLowerCase(Locale.ROOT);
        if (b.length() == 16 && b.startsWith("0000")) {
            b = b.substring(4);
        }
        return BUSID.matcher(b).matches() ? b : null;
    }

    /** One write: busIds chosen first (GPUs, then switches, then NICs), then the XML from the CPUs down. */
    private static final class Writer {
        final Topology topology;
        final Topology.Node node;
        final String real;
        final Set<String> used = new HashSet<>();
        final Map<Integer, String> gpuBus = new LinkedHashMap<>();
        final Map<String, String> switchBus = new HashMap<>();
        final Map<Topology.Nic, String> nicBus = new HashMap<>();
        final StringBuilder out = new StringBuilder();
        final int firstRank;
        int nextBus = 0x41; // made-up busIds 0000:41:00.0, 0000:42:00.0 … as in the first emulated runs

        Writer(Topology topology, Topology.Node node, String real, int firstRank) {
            this.topology = topology;
            this.node = node;
            this.real = real;
            this.firstRank = firstRank;
        }

        Emulated write() {
            used.add(NVSWITCH_BUSID);
            if (real != null) {
                used.add(real);
            }
            List<Topology.Gpu> gpus = node.gpus();
            for (int i = 0; i < gpus.size(); i++) {
                Topology.Gpu g = gpus.get(i);
                String b = i == 0 && real != null ? real : normalize(g.busId());
                if (i == 0 && real != null) {
                    gpuBus.put(g.index(), real);
                    continue;
                }
                gpuBus.put(g.index(), b != null && used.add(b) ? b : fresh());
            }
            for (Topology.PciSwitch s : node.pciSwitches()) {
                switchBus.put(s.id(), fresh());
            }
            out.append("<system version=\"1\">\n");
            List<Topology.Cpu> cpus = node.cpus();
            if (cpus.isEmpty()) {
                // A host without CPU records: one socket of unknown make, as pathproof's model assumes
                // (TopoSystem.build).
                cpus = List.of(new Topology.Cpu("cpu0", 0, "x86_64", null));
            }
            for (int c = 0; c < cpus.size(); c++) {
                Topology.Cpu cpu = cpus.get(c);
                out.append("  <cpu host_hash=\"")
                        .append(hostHash())
                        .append("\" numaid=\"")
                        .append(cpu.numaId())
                        .append("\"")
                        .append(cpuAttrs(cpu))
                        .append(" affinity=\"")
                        .append(AFFINITY)
                        .append("\">\n");
                String parentId = node.cpus().isEmpty() ? null : cpu.id();
                children(parentId, c == 0, "    ");
                out.append("  </cpu>\n");
            }
            out.append("</system>\n");
            List<String> ids = new ArrayList<>(gpuBus.values());
            List<String> nics = new ArrayList<>();
            node.nics().forEach(n -> nics.add(nicBus.get(n)));
            return new Emulated(out.toString(), ids, nics);
        }

        /** Everything whose parent is {@code parent}; the first CPU also takes what names no parent. */
        void children(String parent, boolean orphans, String indent) {
            for (Topology.PciSwitch s : node.pciSwitches()) {
                if (isChild(s.parent(), parent, orphans)) {
                    out.append(indent)
                            .append("<pci busid=\"")
                            .append(switchBus.get(s.id()))
                            .append("\" class=\"0x060400\" link_speed=\"")
                            .append(linkSpeed(s.gen()))
                            .append("\" link_width=\"")
                            .append(s.width())
                            .append("\">\n");
                    children(s.id(), false, indent + "  ");
                    out.append(indent).append("</pci>\n");
                }
            }
            for (Topology.Gpu g : node.gpus()) {
                if (isChild(g.pciParent(), parent, orphans)) {
                    gpu(g, indent);
                }
            }
            for (Topology.Nic n : node.nics()) {
                if (isChild(n.pciParent(), parent, orphans)) {
                    nic(n, indent, parent == null ? null : switchOf(parent));
                }
            }
        }

        boolean isChild(String childParent, String parent, boolean orphans) {
            return childParent == null ? orphans : childParent.equals(parent);
        }

        void gpu(Topology.Gpu g, String indent) {
            String bus = gpuBus.get(g.index());
            Integer device = GpuModels.deviceOf(g.model());
            out.append(indent).append("<pci busid=\"").append(bus).append("\" class=\"0x030200\" vendor=\"0x10de\"");
            if (device != null) {
                out.append(" device=\"").append(String.format("0x%04x", device)).append("\"");
            }
            out.append(" link_speed=\"")
                    .append(linkSpeed(g.pciGen()))
                    .append("\" link_width=\"")
                    .append(g.pciWidth())
                    .append("\">\n");
            int rank = firstRank + node.gpus().indexOf(g);
            out.append(indent)
                    .append("  <gpu dev=\"")
                    .append(g.index())
                    .append("\" sm=\"")
                    .append(g.computeCapability())
                    .append("\" rank=\"")
                    .append(rank)
                    .append("\" gdr=\"1\">\n");
            if (g.nvswitchLinks() > 0) {
                out.append(indent)
                        .append("    <nvlink target=\"")
                        .append(NVSWITCH_BUSID)
                        .append("\" count=\"")
                        .append(g.nvswitchLinks())
                        .append("\" tclass=\"0x068000\"/>\n");
            }
            for (Topology.NvLink l : node.nvlinks()) {
                int peer = l.gpuA() == g.index() ? l.gpuB() : l.gpuB() == g.index() ? l.gpuA() : -1;
                if (peer >= 0) {
                    out.append(indent)
                            .append("    <nvlink target=\"")
                            .append(gpuBus.get(peer))
                            .append("\" count=\"")
                            .append(l.count())
                            .append("\" tclass=\"0x030200\"/>\n");
                }
            }
            out.append(indent).append("  </gpu>\n");
            out.append(indent).append("</pci>\n");
        }

        Topology.PciSwitch switchOf(String id) {
            return node.pciSwitches().stream()
                    .filter(s -> s.id().equals(id))
                    .findFirst()
                    .orElse(null);
        }

        /**
         * A NIC under a CPU is a bare {@code <nic>} (as NCCL dumps a socket-attached port, and attaches a device without a
         * PCI path, ncclTopoFillNet, graph/xml.cc:939-940@v2.28.9-1); under a switch, a PCI device whose link is its
         * own where known, else the switch's, as the model takes it.
         */
        void nic(Topology.Nic n, String indent, Topology.PciSwitch sw) {
            String inner = indent;
            if (sw != null || n.pciGen() != null) {
                nicBus.put(n, fresh());
                out.append(indent)
                        .append("<pci busid=\"")
                        .append(nicBus.get(n))
                        .append("\" class=\"0x020000\" link_speed=\"")
                        .append(linkSpeed(n.pciGen() != null ? n.pciGen() : sw.gen()))
                        .append("\" link_width=\"")
                        .append(n.pciWidth() != null ? n.pciWidth() : sw.width())
                        .append("\">\n");
                inner = indent + "  ";
            }
            out.append(inner).append("<nic>\n");
            out.append(inner)
                    .append("  <net name=\"")
                    .append(escape(n.name()))
                    .append("\" dev=\"")
                    .append(node.nics().indexOf(n))
                    .append("\" speed=\"")
                    .append(n.speedMbps())
                    .append("\" port=\"0\" gdr=\"")
                    .append(n.gdr() ? 1 : 0)
                    .append("\"/>\n");
            out.append(inner).append("</nic>\n");
            if (sw != null || n.pciGen() != null) {
                out.append(indent).append("</pci>\n");
            }
        }

        String fresh() {
            while (nextBus <= 0xfe) {
                String b = String.format("0000:%02x:00.0", nextBus++);
                if (used.add(b)) {
                    return b;
                }
            }
            throw PathproofException.badInput(
                    "topology '" + topology.name() + "': more PCI devices than made-up busIds");
        }

        String hostHash() {
            return String.format("0x%016x", (long) node.hostname().hashCode() & 0xffffffffL);
        }
    }

    /**
     * arch/vendor/family/model as NCCL reads them (topo.cc:497-538). pathproof's Intel generations ride in the vendor
     * text ("intel", "intel skylake", "intel sapphire rapids", "intel emerald rapids": TopoBuilder.interCpuBw); each is
     * written as a model id NCCL classifies the same way (>= 0xCF ERP, >= 0x8F SRP, >= 0x55 SKL, else BDW).
     */
    static String cpuAttrs(Topology.Cpu cpu) {
        String arch = cpu.arch() == null ? "x86_64" : cpu.arch().toLowerCase(Locale.ROOT);
        String v = cpu.vendor() == null ? "" : cpu.vendor().toLowerCase(Locale.ROOT);
        if (arch.startsWith("arm") || arch.equals("aarch64")) {
            return " arch=\"arm64\"";
        }
        if (arch.startsWith("ppc") || arch.startsWith("power")) {
            return " arch=\"ppc64\"";
        }
        if (v.contains("intel")) {
            int model = v.contains("erp") || v.contains("emerald")
                    ? 0xcf
                    : v.contains("srp") || v.contains("sapphire")
                            ? 0x8f
                            : v.contains("skl") || v.contains("skylake") ? 0x55 : 0x4f;
            return " arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"" + model + "\"";
        }
        if (v.contains("amd")) {
            return " arch=\"x86_64\" vendor=\"AuthenticAMD\"";
        }
        if (v.contains("zhaoxin") || v.contains("centaur")) {
            // Not family 7 model 0x5B (Yongfeng, topo.cc:543): pathproof's model gives every Zhaoxin ZPI_BW.
            return " arch=\"x86_64\" vendor=\"CentaurHauls\" familyid=\"7\" modelid=\"59\"";
        }
        // NCCL needs a vendor on x86 (topo.cc:528); one it does not know counts as none, as pathproof's model takes it.
        return " arch=\"x86_64\" vendor=\"" + (v.isEmpty() ? "unknown" : escape(v)) + "\"";
    }

    /** kvDictPciGen's text for a generation (topo.cc:423); an unknown one gets NCCL's own fallback, 8 GT/s. */
    static String linkSpeed(int gen) {
        return switch (gen) {
            case 1 -> "2.5 GT/s PCIe";
            case 2 -> "5.0 GT/s PCIe";
            case 4 -> "16.0 GT/s PCIe";
            case 5 -> "32.0 GT/s PCIe";
            case 6 -> "64.0 GT/s PCIe";
            default -> "8.0 GT/s PCIe";
        };
    }

    static String escape(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}

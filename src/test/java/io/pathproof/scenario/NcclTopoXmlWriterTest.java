package io.pathproof.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Topology → NCCL topology XML → the reader NCCL's own dumps go through → the same machine. */
class NcclTopoXmlWriterTest {
    /**
     * A topology without the names a file format cannot carry (switch ids, host name, inferred notes): every GPU with
     * its capability, busId, PCIe link, NVSwitch links and its path of (gen, width) up to the socket's NUMA id.
     */
    static List<String> canon(Topology t) {
        List<String> out = new ArrayList<>();
        out.add("nodes " + t.nodes().size());
        for (Topology.Node n : t.nodes()) {
            Map<String, String> path = new HashMap<>();
            for (Topology.Cpu c : n.cpus()) {
                path.put(c.id(), "cpu" + c.numaId());
                out.add("cpu numa " + c.numaId() + " arch " + archOf(c.arch()) + " vendor " + c.vendor());
            }
            boolean grown = true;
            while (grown) {
                grown = false;
                for (Topology.PciSwitch s : n.pciSwitches()) {
                    String up = s.parent() == null ? path.get(n.cpus().get(0).id()) : path.get(s.parent());
                    if (up != null && !path.containsKey(s.id())) {
                        path.put(s.id(), up + "/sw(gen" + s.gen() + "x" + s.width() + ")");
                        grown = true;
                    }
                }
            }
            TreeSet<String> sws = new TreeSet<>();
            n.pciSwitches().forEach(s -> sws.add("switch " + path.get(s.id())));
            out.addAll(sws);
            for (Topology.Gpu g : n.gpus()) {
                String model = GpuModels.deviceOf(g.model()) != null ? g.model() : "model-not-in-xml";
                out.add("gpu " + g.index() + " " + model + " sm" + g.computeCapability() + " bus " + g.busId()
                        + " under "
                        + path.get(g.pciParent() == null ? n.cpus().get(0).id() : g.pciParent()) + " pcie gen"
                        + g.pciGen() + "x"
                        + g.pciWidth() + " nvswitch " + g.nvswitchLinks());
            }
            TreeSet<String> links = new TreeSet<>();
            n.nvlinks()
                    .forEach(l -> links.add("nvlink " + Math.min(l.gpuA(), l.gpuB()) + "-"
                            + Math.max(l.gpuA(), l.gpuB()) + " x" + l.count()));
            out.addAll(links);
            for (Topology.Nic nic : n.nics()) {
                out.add("nic " + nic.name() + " " + nic.speedMbps() + " gdr " + nic.gdr() + " under "
                        + path.get(nic.pciParent() == null ? n.cpus().get(0).id() : nic.pciParent()));
            }
        }
        return out;
    }

    /** The topology with the busIds the writer chose (made up where the topology gave none). */
    static Topology withBusIds(Topology t, List<String> ids) {
        Topology.Node n = t.nodes().get(0);
        List<Topology.Gpu> gs = new ArrayList<>();
        for (int i = 0; i < n.gpus().size(); i++) {
            Topology.Gpu g = n.gpus().get(i);
            gs.add(new Topology.Gpu(
                    g.index(),
                    g.model(),
                    g.computeCapability(),
                    ids.get(i),
                    g.pciParent(),
                    g.pciGen(),
                    g.pciWidth(),
                    g.nvswitchLinks()));
        }
        return new Topology(
                t.name(),
                List.of(new Topology.Node(n.hostname(), n.cpus(), n.pciSwitches(), gs, n.nvlinks(), n.nics())));
    }

    static String archOf(String a) {
        return a == null ? "x86_64" : a.startsWith("arm") || a.equals("aarch64") ? "arm" : a;
    }

    static Topology readBack(NcclTopoXmlWriter.Emulated e, String name) {
        return Scenarios.parseTopology(e.xml(), "written " + name, name, TopologyHints.NONE);
    }

    @Test
    void everySingleNodePresetWithGpusComesBackTheSame() {
        int checked = 0;
        for (String name : Scenarios.topologyPresets()) {
            Topology t = Scenarios.topology(name);
            if (t.nodes().size() != 1 || t.gpuCount() == 0) {
                assertThatThrownBy(() -> NcclTopoXmlWriter.write(t, null))
                        .isInstanceOf(PathproofException.class)
                        .satisfies(x ->
                                assertThat(((PathproofException) x).exitCode()).isEqualTo(ExitCode.BAD_INPUT));
                continue;
            }
            NcclTopoXmlWriter.Emulated e = NcclTopoXmlWriter.write(t, null);
            Topology back = readBack(e, name);
            assertThat(canon(back)).as("preset %s", name).isEqualTo(canon(t));
            assertThat(e.busIds())
                    .as("preset %s keeps its busIds", name)
                    .isEqualTo(t.nodes().get(0).gpus().stream()
                            .map(Topology.Gpu::busId)
                            .toList());
            checked++;
        }
        assertThat(checked).isGreaterThanOrEqualTo(5); // v100 x4, h200 x4/x8, h800 x8, h200 x1
    }

    @Test
    void theRealGpuKeepsItsBusIdAndTheOthersStayDistinct() {
        Topology t = Scenarios.topology("h200-sxm-x4-nvswitch");
        NcclTopoXmlWriter.Emulated e = NcclTopoXmlWriter.write(t, "00000000:00:06.0"); // nvidia-smi's form
        assertThat(e.busIds()).containsExactly("0000:00:06.0", "0000:2a:00.0", "0000:9a:00.0", "0000:ab:00.0");
        assertThat(e.xml())
                .contains("<pci busid=\"0000:00:06.0\" class=\"0x030200\" vendor=\"0x10de\" device=\"0x2335\""
                        + " link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">")
                .contains("<gpu dev=\"3\" sm=\"90\" rank=\"3\" gdr=\"1\">")
                .contains("<nvlink target=\"0000:ff:00.0\" count=\"18\" tclass=\"0x068000\"/>")
                .contains("numaid=\"1\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"79\"");
        Topology back = readBack(e, "x4");
        assertThat(back.nodes().get(0).gpus().get(0).busId()).isEqualTo("0000:00:06.0");
        assertThat(back.nodes().get(0).gpus().stream()
                        .map(Topology.Gpu::nvswitchLinks)
                        .toList())
                .containsExactly(18, 18, 18, 18);

        // The real busId already taken by another GPU of the topology: that GPU gets a made-up one.
        NcclTopoXmlWriter.Emulated clash = NcclTopoXmlWriter.write(t, "0000:9a:00.0");
        assertThat(clash.busIds()).hasSize(4).doesNotHaveDuplicates().startsWith("0000:9a:00.0");
        assertThat(clash.busIds().get(2)).isNotEqualTo("0000:9a:00.0");
        assertThat(new HashSet<>(clash.busIds())).doesNotContain(NcclTopoXmlWriter.NVSWITCH_BUSID);
    }

    @Test
    void aMeshAPcieOnlyMachineAndTwoAmdSocketsComeBackTheSame() {
        // A partial NVLink mesh (a ring of NV2 pairs plus one NV1 diagonal) on PCIe gen4, no busIds given.
        List<Topology.Gpu> gpus = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            gpus.add(new Topology.Gpu(i, "NVIDIA A100-SXM4-80GB", 80, null, i < 2 ? "sw0" : "sw1", 4, 16, 0));
        }
        Topology mesh = new Topology(
                "mesh",
                List.of(new Topology.Node(
                        "m",
                        List.of(new Topology.Cpu("c0", 0, "x86_64", "amd"), new Topology.Cpu("c1", 1, "x86_64", "amd")),
                        List.of(new Topology.PciSwitch("sw0", "c0", 4, 16), new Topology.PciSwitch("sw1", "c1", 4, 16)),
                        gpus,
                        List.of(
                                new Topology.NvLink(0, 1, 2),
                                new Topology.NvLink(1, 2, 2),
                                new Topology.NvLink(2, 3, 2),
                                new Topology.NvLink(3, 0, 2),
                                new Topology.NvLink(0, 2, 1)),
                        List.of(new Topology.Nic("ib0", "sw1", 200_000, true, "net")))));
        NcclTopoXmlWriter.Emulated e = NcclTopoXmlWriter.write(mesh, null);
        assertThat(e.busIds()).containsExactly("0000:41:00.0", "0000:42:00.0", "0000:43:00.0", "0000:44:00.0");
        assertThat(canon(readBack(e, "mesh"))).isEqualTo(canon(withBusIds(mesh, e.busIds())));
        assertThat(e.xml()).contains("vendor=\"AuthenticAMD\"").contains("tclass=\"0x030200\"");

        // PCIe only: no NVLink at all, GPUs straight under one socket, an unknown model (no device id written).
        List<Topology.Gpu> pcie = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            pcie.add(new Topology.Gpu(i, "NVIDIA L40S", 89, "0000:0" + (i + 1) + ":00.0", "c0", 4, 16, 0));
        }
        Topology flat = new Topology(
                "pcie",
                List.of(new Topology.Node(
                        "p",
                        List.of(new Topology.Cpu("c0", 0, "x86_64", "intel")),
                        List.of(),
                        pcie,
                        List.of(),
                        List.of())));
        NcclTopoXmlWriter.Emulated f = NcclTopoXmlWriter.write(flat, null);
        assertThat(f.xml()).doesNotContain("<nvlink").doesNotContain("device=");
        assertThat(canon(readBack(f, "pcie"))).isEqualTo(canon(flat));
    }

    /**
     * Each local rank fills the {@code affinity} of its own GPU's socket when the file has none, and NCCL 2.30 fuses
     * the ranks' XMLs only where every attribute agrees: without one written here, the 2-socket HGX emulated through
     * the net plugin came out of NCCL 2.30.7 with its second socket twice, NICs 4-7 apart from GPUs 4-7 (ring 24/24
     * instead of 48/48). Every socket carries the attribute, so no rank adds one of its own.
     */
    @Test
    void everySocketCarriesAnAffinitySoEveryRanksCopyOfItIsTheSame() {
        Topology hgx = Scenarios.topology("samples/emulation-sweep/topologies/h200-hgx-x8-8nic-gdr.json");
        String xml = NcclTopoXmlWriter.writeNode(hgx, 0, null).xml();
        List<String> cpus = xml.lines().filter(l -> l.contains("<cpu ")).toList();
        assertThat(cpus).hasSize(2).allMatch(l -> l.endsWith(" affinity=\"\">"));
        assertThat(canon(readBack(NcclTopoXmlWriter.writeNode(hgx, 0, null), "hgx")).stream()
                        .filter(l -> l.startsWith("cpu "))
                        .toList())
                .hasSize(2);
    }

    @Test
    void emulationIsSingleNode() {
        Topology one = Scenarios.topology("h200-sxm-x4-nvswitch");
        Topology two = new Topology(
                "two-hosts",
                List.of(
                        one.nodes().get(0),
                        new Topology.Node(
                                "other",
                                one.nodes().get(0).cpus(),
                                one.nodes().get(0).pciSwitches(),
                                one.nodes().get(0).gpus(),
                                List.of(),
                                List.of())));
        assertThatThrownBy(() -> NcclTopoXmlWriter.write(two, null))
                .hasMessageContaining("emulation is single-node")
                .satisfies(x -> assertThat(((PathproofException) x).exitCode()).isEqualTo(ExitCode.BAD_INPUT));
        assertThatThrownBy(() -> NcclTopoXmlWriter.write(one, "not-a-bus"))
                .hasMessageContaining("'not-a-bus' is not a PCI busId");
    }

    @Test
    void busIdsAreNormalizedToNcclsForm() {
        assertThat(NcclTopoXmlWriter.normalize("00000000:18:00.0")).isEqualTo("0000:18:00.0");
        assertThat(NcclTopoXmlWriter.normalize("0000:AB:00.0")).isEqualTo("0000:ab:00.0");
        assertThat(NcclTopoXmlWriter.normalize("18:00.0")).isNull();
        assertThat(NcclTopoXmlWriter.normalize(null)).isNull();
    }
}

package io.pathproof.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.PathproofException;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.Predictor;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Partial NCCL_TOPO_FILEs, the kind cloud images ship for NCCL to complete on the machine (GPUs as bare
 * {@code <pci class="0x03…">}, NICs as bare {@code <pci class="0x02…">}, or {@code <gpu>} without {@code <nvlink>}):
 * refused where nothing is left to predict on, said in the prediction's assumptions where something is.
 */
class PartialTopoFileTest {
    private static final String HEAD =
            "<system version=\"1\">\n  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"85\">\n";

    private static String bareSwitch(int sw) {
        return "    <pci busid=\"ffff:ff:0" + sw + ".0\" class=\"0x060400\" link_speed=\"8 GT/s\" link_width=\"16\">\n"
                + "      <pci busid=\"0000:" + sw
                + "0:1c.0\" class=\"0x030200\" link_speed=\"8 GT/s\" link_width=\"16\"/>\n"
                + "      <pci busid=\"0000:" + sw
                + "0:1d.0\" class=\"0x030200\" link_speed=\"8 GT/s\" link_width=\"16\"/>\n"
                + "      <pci busid=\"0000:" + sw
                + "0:1b.0\" class=\"0x020000\" link_speed=\"8 GT/s\" link_width=\"16\"/>\n"
                + "    </pci>\n";
    }

    @Test
    void gpusLeftForNcclToFillAreRefusedNamingTheirLines() {
        String xml = HEAD + bareSwitch(1) + bareSwitch(2) + "  </cpu>\n</system>\n";
        assertThatThrownBy(() -> Scenarios.parseTopology(xml, "cloud.xml", "cloud", TopologyHints.NONE))
                .isInstanceOf(PathproofException.class)
                .hasMessageStartingWith("cloud.xml:4: 4 GPU <pci> (lines 4, 5, 9, 10)")
                .hasMessageContaining("partial NCCL_TOPO_FILE")
                .hasMessageContaining("NCCL_TOPO_DUMP_FILE");
    }

    @Test
    void aHostWithoutAnyGpuIsRefusedNotPredictedAsGloo() {
        String xml = HEAD + "  </cpu>\n</system>\n";
        assertThatThrownBy(() -> Scenarios.parseTopology(xml, "empty.xml", "empty", TopologyHints.NONE))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("empty.xml: host0 has no <gpu>");
    }

    @Test
    void gpusWithoutNvlinkNcclNeverReadAreSaidOnceAndBareOnesAreLeftOutAsNcclDoes() {
        StringBuilder xml = new StringBuilder(HEAD);
        for (int g = 0; g < 4; g++) {
            xml.append("    <pci busid=\"0000:0")
                    .append(g)
                    .append(":00.0\" class=\"0x060400\" link_speed=\"16.0 GT/s PCIe\"")
                    .append(" link_width=\"16\">\n      <pci busid=\"0000:4")
                    .append(g)
                    .append(":00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n")
                    .append("        <gpu dev=\"")
                    .append(g)
                    .append("\" sm=\"90\" rank=\"")
                    .append(g)
                    .append("\" gdr=\"1\"/>\n      </pci>\n      <pci busid=\"0000:5")
                    .append(g)
                    .append(":00.0\" class=\"0x020000\" link_speed=\"16.0 GT/s PCIe\" link_width=\"8\">\n")
                    .append("        <nic><net name=\"rdma")
                    .append(g)
                    .append("\" dev=\"")
                    .append(g)
                    .append(
                            "\" speed=\"100000\" port=\"1\" latency=\"0.0\" gdr=\"1\"/></nic>\n      </pci>\n    </pci>\n");
        }
        // a GPU no rank used and a NIC the plugin did not report: NCCL builds no node of either (topo.cc:439-463)
        xml.append(
                        "    <pci busid=\"0000:60:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\"/>\n")
                .append(
                        "    <pci busid=\"0000:61:00.0\" class=\"0x020700\" link_speed=\"16.0 GT/s PCIe\" link_width=\"8\"/>\n")
                .append("  </cpu>\n</system>\n");
        Topology t = Scenarios.parseTopology(xml.toString(), "p.xml", "p", TopologyHints.NONE);
        assertThat(t.nodes().get(0).gpus()).hasSize(4);
        assertThat(t.nodes().get(0).nics()).hasSize(4);
        assertThat(t.nodes().get(0).nvlinks()).isEmpty();
        assertThat(t.inferredGrouped())
                .contains("host0 GPU0-3: model unknown (no PCI device id), named by its sm")
                .anyMatch(s -> s.startsWith("host0 GPU0-3: no <nvlink> and no PCI device id")
                        && s.contains("graph/xml.cc:766-815@v2.28.9-1"))
                .anyMatch(s -> s.startsWith("host0: 1 GPU <pci> without <gpu> (line 35)"))
                .anyMatch(s -> s.startsWith("host0: 1 NIC <pci> without <nic> (line 36)"));

        Scenario given = new Scenario(
                "partial",
                Scenarios.workload("one-64mib-fp32"),
                t,
                new Versions(Version.parse("2.11.0"), Version.parse("2.28.9"), null),
                4,
                Map.of());
        Prediction p = Predictor.predict(given);
        assertThat(p.backend()).isEqualTo("nccl");
        assertThat(p.assumptions()).anyMatch(s -> s.startsWith("topology: host0 GPU0-3: no <nvlink>"));
    }

    @Test
    void notesThatDifferOnlyInTheirGpuOrNicAreSaidOnce() {
        Topology t = new Topology(
                "t",
                Scenarios.topology("h200-sxm-x8-nvswitch").nodes(),
                java.util.List.of(
                        "host0 GPU0: model unknown",
                        "host0 GPU1: model unknown",
                        "host0 GPU2: model unknown",
                        "host0 GPU5: model unknown",
                        "NIC mlx5_1 left out: the speed is not in nvidia-smi topo -m",
                        "NIC mlx5_2 left out: the speed is not in nvidia-smi topo -m",
                        "NIC mlx5_3: speed 400000 Mb/s given as a hint",
                        "sockets: one"));
        assertThat(t.inferredGrouped())
                .containsExactly(
                        "host0 GPU0-2, 5: model unknown",
                        "NICs mlx5_1, mlx5_2 left out: the speed is not in nvidia-smi topo -m",
                        "NIC mlx5_3: speed 400000 Mb/s given as a hint",
                        "sockets: one");
    }

    @Test
    void aDumpNcclWroteSaysNothingOfNvlinkItDidNotFind() {
        Topology t = Scenarios.topology("samples/emulation-sweep/topologies/h200-pcie-2socket-x8.xml");
        assertThat(t.nodes().get(0).nvlinks()).isEmpty();
        assertThat(t.inferred()).noneMatch(s -> s.contains("<nvlink>"));
        assertThat(t.inferredGrouped()).containsExactly("host0 GPU0-7: model 'NVIDIA H200' from PCI device id 0x2335");
    }
}

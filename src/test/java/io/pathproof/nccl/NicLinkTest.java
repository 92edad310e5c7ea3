package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Topology;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A NIC's own PCIe link, as NCCL joins every PCI node to its parent (ncclTopoAddPci, topo.cc:483-492@v2.28.9-1). Cloud
 * VMs put each GPU and its NIC under a virtual bridge whose own uplink reads as 2.5 GT/s x1 (an IBM Cloud H100 dump):
 * the path between the GPU and its NIC never crosses that uplink, so it must not bound the network path. Before, the
 * NIC took the bridge's link and a 2-node prediction came out 200 times too slow with exit 0.
 */
class NicLinkTest {
    @TempDir
    Path dir;

    /**
     * Two H100s on an NVSwitch (so that only the network path is in question), each with a 200 Gb/s GDR NIC
     * (link_width 0, as sysfs leaves it) under one bridge.
     */
    private Topology node(String bridgeSpeed, String bridgeWidth) throws IOException {
        StringBuilder x =
                new StringBuilder("<system version=\"1\">\n  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\""
                        + " vendor=\"GenuineIntel\" familyid=\"6\" modelid=\"143\">\n");
        for (int g = 0; g < 2; g++) {
            x.append("    <pci busid=\"0000:a")
                    .append(g)
                    .append(":00.0\" class=\"0x060400\" link_speed=\"")
                    .append(bridgeSpeed)
                    .append("\" link_width=\"")
                    .append(bridgeWidth)
                    .append("\">\n")
                    .append("      <pci busid=\"0000:b")
                    .append(g)
                    .append(":00.0\" class=\"0x030200\" vendor=\"0x10de\"")
                    .append(" device=\"0x2330\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n")
                    .append("        <gpu dev=\"")
                    .append(g)
                    .append("\" sm=\"90\" rank=\"")
                    .append(g)
                    .append("\" gdr=\"1\">\n          <nvlink target=\"fffffff:ff:ff.0\" count=\"18\"")
                    .append(" tclass=\"0x068000\"/>\n        </gpu>\n      </pci>\n")
                    .append("      <pci busid=\"0000:c")
                    .append(g)
                    .append(":00.0\" class=\"0x020000\"")
                    .append(" link_speed=\"32.0 GT/s PCIe\" link_width=\"0\">\n")
                    .append("        <nic><net name=\"mlx5_")
                    .append(g)
                    .append("\" dev=\"")
                    .append(g)
                    .append("\" speed=\"200000\" port=\"1\" gdr=\"1\"/></nic>\n      </pci>\n    </pci>\n");
        }
        x.append("  </cpu>\n</system>\n");
        Path f = dir.resolve("node-" + bridgeWidth + ".xml");
        Files.writeString(f, x);
        return Scenarios.topology(f.toString());
    }

    private CommunicatorPrediction twoNodes(Topology node) {
        return NcclModel.of(Topologies.scenario(Scenarios.cluster(node, 2), "2.28.9", 4, Map.of()))
                .communicator();
    }

    @Test
    void aSlowUplinkAboveAGpuAndItsNicDoesNotSlowThePathBetweenThem() throws IOException {
        Topology slow = node("2.5 GT/s PCIe", "1");
        Topology.Nic nic = slow.nodes().get(0).nics().get(0);
        // link_width 0 counts as 16 (topo.cc:488), the NIC keeps its own link
        assertThat(nic.pciGen()).isEqualTo(5);
        assertThat(nic.pciWidth()).isEqualTo(16);
        CommunicatorPrediction viaSlow = twoNodes(slow);
        CommunicatorPrediction viaFast = twoNodes(node("32.0 GT/s PCIe", "16"));
        assertThat(viaSlow.ringGraph().bwInter()).isEqualTo(viaFast.ringGraph().bwInter());
        assertThat(viaSlow.treeGraph().bwInter()).isEqualTo(viaFast.treeGraph().bwInter());
        assertThat(viaSlow.treeGraph().typeInter()).isEqualTo("PIX");
        assertThat(viaSlow.transport()).contains("NET/GDRDMA");
    }
}

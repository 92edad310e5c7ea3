package io.pathproof.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A cluster as NCCL sees it under emulation on one GPU (each node's NIC as the Socket transport over lo presents it,
 * only the ranks' GPUs), and each node's own NCCL_TOPO_FILE: read back through the reader NCCL's dumps go through.
 */
class EmulatedClusterTest {
    static final Topology X8 = Scenarios.topology("h200-sxm-x8-nvswitch");

    static int exit(Throwable t) {
        return ((PathproofException) t).exitCode();
    }

    /** A node of {@code base} with the given NICs. */
    static Topology.Node withNics(Topology.Node base, String host, List<Topology.Nic> nics) {
        return new Topology.Node(host, base.cpus(), base.pciSwitches(), base.gpus(), base.nvlinks(), nics);
    }

    @Test
    void aNodeWithoutNicGetsOneLoopbackNicAtTheGivenSpeedAndEveryNodeItsOwnFile() {
        Topology c = Scenarios.emulatedCluster(Scenarios.cluster(X8, 2), 8, 400_000L, false);
        assertThat(c.name()).isEqualTo("h200-sxm-x8-nvswitch-x2-nodes");
        assertThat(c.nodes())
                .extracting(Topology.Node::hostname)
                .containsExactly("h200-sxm-x8-node-0", "h200-sxm-x8-node-1");
        for (Topology.Node n : c.nodes()) {
            assertThat(n.gpus()).hasSize(8);
            assertThat(n.nics()).containsExactly(new Topology.Nic("lo", null, 400_000, false, "socket"));
        }
        assertThat(c.inferred())
                .anyMatch(s -> s.contains("Socket transport over loopback") && s.contains("400000 Mb/s"));

        List<List<String>> busIds = new ArrayList<>();
        for (int k = 0; k < 2; k++) {
            NcclTopoXmlWriter.Emulated e = NcclTopoXmlWriter.writeNode(c, k, "0000:00:06.0");
            busIds.add(e.busIds());
            // The NIC NCCL's Socket transport finds by name, its speed kept, no GPUDirect; under the first socket.
            assertThat(e.xml())
                    .contains("<nic>\n      <net name=\"lo\" dev=\"0\" speed=\"400000\" port=\"0\" gdr=\"0\"/>")
                    .contains("<gpu dev=\"0\" sm=\"90\" rank=\"" + 8 * k + "\" gdr=\"1\">")
                    .contains("<gpu dev=\"7\" sm=\"90\" rank=\"" + (8 * k + 7) + "\" gdr=\"1\">");
            assertThat(e.xml().indexOf("<net ")).isLessThan(e.xml().indexOf("numaid=\"1\""));
            Topology back = Scenarios.parseTopology(e.xml(), "node " + k, "node" + k, TopologyHints.NONE);
            assertThat(back.nodes()).hasSize(1);
            Topology.Nic nic = back.nodes().get(0).nics().get(0);
            assertThat(List.of(nic.name(), nic.speedMbps(), nic.gdr())).containsExactly("lo", 400_000L, false);
            assertThat(back.nodes().get(0).gpus()).hasSize(8);
        }
        // Both nodes report the same busIds (the real GPU's first): NCCL tells them apart by host hash.
        assertThat(busIds.get(0))
                .isEqualTo(busIds.get(1))
                .startsWith("0000:00:06.0")
                .doesNotHaveDuplicates();
    }

    @Test
    void fewerRanksPerNodeKeepEachNodesFirstGpusAndTheNvlinksAmongThem() {
        Topology v100 = Scenarios.topology("v100-sxm2-x4-nv2");
        Topology c = Scenarios.emulatedCluster(Scenarios.cluster(v100, 3), 2, 25_000L, false);
        assertThat(c.gpuCount()).isEqualTo(6);
        for (Topology.Node n : c.nodes()) {
            assertThat(n.gpus()).extracting(Topology.Gpu::index).containsExactly(0, 1);
            assertThat(n.nvlinks()).isNotEmpty().allMatch(l -> l.gpuA() < 2 && l.gpuB() < 2);
        }
        NcclTopoXmlWriter.Emulated last = NcclTopoXmlWriter.writeNode(c, 2, null);
        assertThat(last.busIds()).hasSize(2);
        assertThat(last.xml()).contains("rank=\"4\"").contains("rank=\"5\"").contains("speed=\"25000\"");
    }

    @Test
    void aNodesOwnSingleNicKeepsItsSpeedAndPlaceAndBecomesLo() {
        Topology.Node base = X8.nodes().get(0);
        Topology.Nic eth = new Topology.Nic("eth0", "pcisw1", 100_000, false, "net");
        Topology c = Scenarios.emulatedCluster(
                new Topology("two", List.of(withNics(base, "a", List.of(eth)), withNics(base, "b", List.of(eth)))),
                8,
                999L,
                false);
        assertThat(c.nodes().get(1).nics()).containsExactly(new Topology.Nic("lo", "pcisw1", 100_000, false, "socket"));
        // Under a switch: a PCI device whose link is the switch's own (gen5 x16), as the model takes a NIC's link.
        String xml = NcclTopoXmlWriter.writeNode(c, 1, null).xml();
        assertThat(xml)
                .contains(
                        "class=\"0x020000\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">\n"
                                + "        <nic>\n          <net name=\"lo\" dev=\"0\" speed=\"100000\" port=\"0\" gdr=\"0\"/>");
    }

    @Test
    void whatSocketOverLoopbackCannotEmulateIsRefusedNamingTheNodeAndThePlugin() {
        Topology.Node base = X8.nodes().get(0);
        Topology.Nic gdr = new Topology.Nic("mlx5_0", "pcisw0", 400_000, true, "ib");
        Topology.Nic gdr2 = new Topology.Nic("mlx5_1", "pcisw1", 400_000, true, "ib");
        Topology hgx = new Topology(
                "hgx", List.of(withNics(base, "a", List.of(gdr, gdr2)), withNics(base, "b", List.of(gdr, gdr2))));
        assertThatThrownBy(() -> Scenarios.emulatedCluster(hgx, 8, null, false))
                .hasMessage(
                        "--emulate hgx: node a has 2 NICs; NCCL's Socket transport over lo gives each emulated node one"
                                + " NIC without GPUDirect (a net plugin that exposes the topology's NICs, --net-plugin, would emulate it)")
                .satisfies(t -> assertThat(exit(t)).isEqualTo(ExitCode.BAD_INPUT));
        Topology oneGdr =
                new Topology("gdr", List.of(withNics(base, "a", List.of(gdr)), withNics(base, "b", List.of(gdr))));
        assertThatThrownBy(() -> Scenarios.emulatedCluster(oneGdr, 8, null, false))
                .hasMessageStartingWith("--emulate gdr: node a: NIC mlx5_0 has GPUDirect RDMA; ")
                .satisfies(t -> assertThat(exit(t)).isEqualTo(ExitCode.BAD_INPUT));
        // With a net plugin the topology's own NICs stay as given.
        Topology plugged = Scenarios.emulatedCluster(hgx, 8, null, true);
        assertThat(plugged.nodes().get(0).nics()).containsExactly(gdr, gdr2);

        assertThatThrownBy(() -> Scenarios.emulatedCluster(Scenarios.cluster(X8, 2), 8, null, false))
                .hasMessage(
                        "--emulate h200-sxm-x8-nvswitch-x2-nodes: node h200-sxm-x8-node-0 has no NIC: give --nic-speed"
                                + " MBPS, the speed of the one NIC ('lo') each emulated node gets")
                .satisfies(t -> assertThat(exit(t)).isEqualTo(ExitCode.USAGE));
        assertThatThrownBy(() -> Scenarios.emulatedCluster(Scenarios.cluster(X8, 2), 9, 400_000L, false))
                .hasMessageContaining("node h200-sxm-x8-node-0 has 8 GPU(s) but 9 rank(s) per node")
                .satisfies(t -> assertThat(exit(t)).isEqualTo(ExitCode.BAD_INPUT));
        assertThatThrownBy(() -> Scenarios.emulatedCluster(X8, 8, 400_000L, false))
                .satisfies(t -> assertThat(exit(t)).isEqualTo(ExitCode.USAGE));
        Topology twins = new Topology("twins", List.of(base, base));
        assertThatThrownBy(() -> Scenarios.emulatedCluster(twins, 8, 400_000L, false))
                .hasMessageContaining("two nodes named 'h200-sxm-x8-node'")
                .satisfies(t -> assertThat(exit(t)).isEqualTo(ExitCode.BAD_INPUT));
        assertThatThrownBy(() -> NcclTopoXmlWriter.writeNode(Scenarios.cluster(X8, 2), 2, null))
                .satisfies(t -> assertThat(exit(t)).isEqualTo(ExitCode.USAGE));
    }
}

package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;
import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.Topology;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The system NCCL builds (topo.cc), its paths (paths.cc) and the search's start values (search.cc). */
class TopoSystemTest {
    private static TopoSystem build(NcclVersionTable t, Topology topo, int ngpus) {
        Topology.Node host = topo.nodes().get(0);
        int[] ranks = new int[ngpus];
        for (int i = 0; i < ngpus; i++) {
            ranks[i] = i;
        }
        TopoSystem s = TopoSystem.build(t, host, host.gpus().subList(0, ngpus), ranks, false, false, new ArrayList<>());
        s.applyP2pLevel(null, false, null);
        return s;
    }

    @Test
    void nvlinkCountTimesPerLinkBandwidthAndSearchInit() {
        TopoSystem v100 = build(NcclVersionTable.named("2.22.x"), Topologies.v100x4nv2("h", "0"), 4);
        // topo.h SM70_NVLINK_BW 20 x 2 links; totalBw = sum of a GPU's NVLinks.
        assertThat(v100.node(TopoSystem.GPU, 0).paths[TopoSystem.GPU][1].bw).isEqualTo(40.0f);
        assertThat(v100.node(TopoSystem.GPU, 0).paths[TopoSystem.GPU][1].type).isEqualTo(PATH_NVL);
        assertThat(v100.maxBw).isEqualTo(40.0f);
        assertThat(v100.totalBw).isEqualTo(120.0f);
        TopoSystem h200 = build(NcclVersionTable.named("2.28.x"), Topologies.hopper("H200", 8, 18), 8);
        // 18 x SM90_NVLINK_BW (20.6) into the single NVS node; GPU -> NVS -> GPU is an NVL path of two hops.
        assertThat(h200.count(TopoSystem.NVS)).isEqualTo(1);
        assertThat(h200.node(TopoSystem.GPU, 0).paths[TopoSystem.GPU][5].count).isEqualTo(2);
        assertThat(h200.node(TopoSystem.GPU, 0).paths[TopoSystem.GPU][5].type).isEqualTo(PATH_NVL);
        assertThat(h200.maxBw).isEqualTo(18 * 20.6f);
        assertThat(h200.totalBw).isEqualTo(18 * 20.6f);
    }

    @Test
    void pciBandwidthFromGenerationAndWidth() {
        NcclVersionTable t = NcclVersionTable.named("2.28.x");
        assertThat(TopoBuilder.pciBw(t, 3, 16)).isEqualTo(12.0f);
        assertThat(TopoBuilder.pciBw(t, 4, 16)).isEqualTo(24.0f);
        assertThat(TopoBuilder.pciBw(t, 5, 16)).isEqualTo(48.0f);
        assertThat(TopoBuilder.pciBw(t, 4, 8)).isEqualTo(12.0f);
        // width 0 reads as 16, an unknown generation as the Gen3 fallback.
        assertThat(TopoBuilder.pciBw(t, 0, 0)).isEqualTo(12.0f);
    }

    @Test
    void pathTypesThroughSwitchesSocketsAndAnNvlinkBridge() {
        List<Topology.Gpu> gpus = List.of(
                new Topology.Gpu(0, "g", 80, "1", "swA", 4, 16, 0),
                new Topology.Gpu(1, "g", 80, "2", "swA", 4, 16, 0),
                new Topology.Gpu(2, "g", 80, "3", "swB", 4, 16, 0),
                new Topology.Gpu(3, "g", 80, "4", "swC", 4, 16, 0),
                new Topology.Gpu(4, "g", 80, "5", "swD", 4, 16, 0));
        Topology topo = new Topology(
                "mixed",
                List.of(new Topology.Node(
                        "h",
                        List.of(
                                new Topology.Cpu("cpu0", 0, "x86_64", "AuthenticAMD"),
                                new Topology.Cpu("cpu1", 1, "x86_64", "AuthenticAMD")),
                        List.of(
                                new Topology.PciSwitch("top", "cpu0", 4, 16),
                                new Topology.PciSwitch("swA", "top", 4, 16),
                                new Topology.PciSwitch("swB", "top", 4, 16),
                                new Topology.PciSwitch("swC", "cpu0", 4, 16),
                                new Topology.PciSwitch("swD", "cpu1", 4, 16)),
                        gpus,
                        List.of(new Topology.NvLink(0, 3, 1), new Topology.NvLink(3, 4, 1)),
                        List.of())));
        TopoSystem s = build(NcclVersionTable.named("2.28.x"), topo, 5);
        TopoSystem.Path[] p0 = s.node(TopoSystem.GPU, 0).paths[TopoSystem.GPU];
        assertThat(PATH_NAMES[p0[1].type]).isEqualTo("PIX"); // one switch
        assertThat(PATH_NAMES[p0[2].type]).isEqualTo("PXB"); // two switches, no host bridge
        assertThat(PATH_NAMES[p0[3].type]).isEqualTo("NVL"); // direct NVLink
        assertThat(PATH_NAMES[p0[4].type]).isEqualTo("NVB"); // NVLink through GPU 3
        TopoSystem.Path[] p1 = s.node(TopoSystem.GPU, 1).paths[TopoSystem.GPU];
        // GPU 1 to GPU 4 crosses the sockets: SYS, and P2P is not allowed beyond PXB so it is routed via the CPU.
        assertThat(PATH_NAMES[p1[4].type]).isEqualTo("SYS");
        // AMD sockets are joined at AMD_BW (16); the path's bottleneck is that link.
        assertThat(p1[4].bw).isEqualTo(16.0f);
    }
}

package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Topology;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A cluster whose nodes each have one NIC right under a socket, without GPUDirect: the emulated cluster over
 * loopback (NCCL's Socket transport, {@code <nic>} under {@code <cpu>} in each node's file). NCCL joins such a NIC to
 * its CPU at LOC_BW (graph/topo.cc:556-557@v2.28.9-1), so the path out of a node is bounded by the GPU's own PCIe
 * link to the CPU, not by a made-up PCIe link of the NIC.
 */
class SocketNicTest {
    @Test
    void twoNodesOfFourH200sWithOne400GbNicUnderTheSocketAsNcclDecided() {
        Topology c = Scenarios.emulatedCluster(
                Scenarios.cluster(Scenarios.topology("h200-sxm-x4-nvswitch"), 2), 4, 400_000L, false);
        NcclModel m = NcclModel.of(Topologies.scenario(c, "2.28.9", 8, Map.of("NCCL_NVLS_ENABLE", "0")));
        CommunicatorPrediction p = m.communicator();
        assertThat(p.cannotPredict()).isNull();
        assertThat(p.nNodes()).isEqualTo(2);
        // NCCL 2.28.9 on this cluster emulated on one H200: 4 coll channels, a ring of 2 channels, Ring/LL for 1 MiB.
        assertThat(p.collChannels()).isEqualTo(4);
        assertThat(p.ringGraph().nChannels()).isEqualTo(2);
        assertThat(p.transport()).contains("NET/Socket");
        CollectivePrediction mib = m.allReduce(0, 1 << 20, DType.FLOAT32);
        assertThat(mib.algorithm()).isEqualTo("Ring");
        assertThat(mib.protocol()).isEqualTo("LL");
    }

    /**
     * NCCL_NET names the net module; the connector prints that module's own name (transport/net.cc@v2.28.9-1:313), so a
     * cluster run through a net plugin ("emu") is predicted as NET/emu, not as the NIC's family, and Socket never with
     * GPUDirect.
     */
    @Test
    void theNetModuleNamedByNcclNetIsTheTransportBetweenNodes() {
        Topology c = Scenarios.emulatedCluster(
                Scenarios.cluster(Scenarios.topology("h200-sxm-x4-nvswitch"), 2), 4, 400_000L, false);
        assertThat(NcclModel.of(Topologies.scenario(c, "2.28.9", 8, Map.of("NCCL_NET", "emu")))
                        .communicator()
                        .transport())
                .contains("NET/emu")
                .doesNotContain("NET/Socket");
        assertThat(NcclModel.of(Topologies.scenario(c, "2.28.9", 8, Map.of("NCCL_NET", "socket")))
                        .communicator()
                        .transport())
                .contains("NET/Socket")
                .doesNotContain("GDRDMA");
    }
}

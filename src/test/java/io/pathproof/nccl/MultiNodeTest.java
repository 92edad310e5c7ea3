package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import io.pathproof.scenario.Topology;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Hosts joined by NICs: the search goes NET → GPUs → NET, and inputs that are missing are said so. */
class MultiNodeTest {
    private static final Map<String, String> NVLS_OFF = Map.of("NCCL_NVLS_ENABLE", "0");

    @Test
    void twoH200HostsSearchThroughTheirNics() {
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.hopperCluster(2, 8), "2.28.9", 16, NVLS_OFF));
        CommunicatorPrediction c = m.communicator();
        assertThat(c.nNodes()).isEqualTo(2);
        assertThat(c.cannotPredict()).isNull();
        // Each channel leaves and enters a host through a NIC; one NIC per GPU at 400 Gb/s = 50 GB/s behind a PCIe Gen5
        // x16 link (48 GB/s): the inter-node speed cannot exceed 48 (speedArrayInter sm90 starts at 48).
        assertThat(c.ringGraph().bwInter()).isLessThanOrEqualTo(48.0);
        assertThat(c.ringGraph().typeInter()).isEqualTo("PIX");
        assertThat(c.ringGraph().nChannels()).isPositive();
        // Ring LL threshold scales with the ranks: 8 * 16.
        assertThat(c.threadThresholdsLine()).isEqualTo("threadThresholds 8/8/64 | 128/8/64 | 512 | 512");
        assertThat(c.transport()).isEqualTo("P2P/CUMEM or P2P/IPC + NET/IB/GDRDMA: cuMem support unknown");
        CollectivePrediction small = m.allReduce(0, 4096, DType.FLOAT32);
        CollectivePrediction big = m.allReduce(1, 64L << 20, DType.FLOAT32);
        // Across hosts the tree's log(nNodes) latency beats the ring's 2(N-1) steps for small messages.
        assertThat(small.algorithm()).isEqualTo("Tree");
        assertThat(big.gridX()).isBetween(1, c.collChannels());
        assertThat(big.tuningLine()).startsWith("AllReduce: 67108864 Bytes -> Algo ");
    }

    @Test
    void from229ANetPeerGetsAChannelPerFourteenGbOfItsNics() {
        // One 400 Gb/s NIC per GPU behind a 48 GB/s PCIe link: to 2.28 a NET peer gets max(1 NIC, 2) channels; from
        // 2.29 max(1 NIC, divUp(48, NCCL_P2P_PER_CHANNEL_NET_BW = 14)), still within p2pChannels / divUp(16 ranks, 8).
        for (String nccl : List.of("2.28.9", "2.29.7", "2.30.7")) {
            CommunicatorPrediction c = NcclModel.of(
                            Topologies.scenario(Topologies.hopperCluster(2, 8), nccl, 16, NVLS_OFF))
                    .communicator();
            int expected = nccl.equals("2.28.9") ? 2 : 4;
            assertThat(c.p2pChannelsPerPeer()).as(nccl).isEqualTo(expected);
            assertThat(c.channelsInitLine()).as(nccl).endsWith(expected + " p2p channels per peer");
        }
        // NCCL_P2P_PER_CHANNEL_NET_BW and NCCL_NCHANNELS_PER_NET_PEER decide it instead.
        Map<String, String> wide = Map.of("NCCL_NVLS_ENABLE", "0", "NCCL_P2P_PER_CHANNEL_NET_BW", "48");
        assertThat(NcclModel.of(Topologies.scenario(Topologies.hopperCluster(2, 8), "2.29.7", 16, wide))
                        .communicator()
                        .p2pChannelsPerPeer())
                .isEqualTo(1);
        Map<String, String> set = Map.of("NCCL_NVLS_ENABLE", "0", "NCCL_NCHANNELS_PER_NET_PEER", "2");
        assertThat(NcclModel.of(Topologies.scenario(Topologies.hopperCluster(2, 8), "2.30.7", 16, set))
                        .communicator()
                        .p2pChannelsPerPeer())
                .isEqualTo(2);
    }

    @Test
    void before226NcclCrossNic1SwapsTheRingsOfOddNodes() {
        // connect.cc@v2.21.5-1:384 swaps rings c and c^1 on odd nodes whenever the ring graph has crossNic set;
        // 2.26 only for crossNic 2 (connect.cc@v2.26.2-1:393), which NCCL_CROSS_NIC=1 never gives.
        Map<String, String> crossNic = Map.of("NCCL_NVLS_ENABLE", "0", "NCCL_CROSS_NIC", "1");
        for (String nccl : List.of("2.21.5", "2.26.2")) {
            NcclModel m = NcclModel.of(Topologies.scenario(Topologies.hopperCluster(2, 8), nccl, 16, crossNic));
            assertThat(m.communicator().ringGraph().crossNic()).as(nccl).isEqualTo(1);
            // Node 1's part of ring 0 is its own graph's channel 1 (2.21) or channel 0 (2.26), read as ranks.
            List<String> ringLines = m.graphListing(8).get(0);
            assertThat(gpus(ringLines.get(0))).as(nccl).isNotEqualTo(gpus(ringLines.get(1)));
            String gpus = gpus(ringLines.get(nccl.equals("2.21.5") ? 1 : 0));
            String ring0 = m.communicator().ringOrders().get(0).trim().replaceAll(" +", " ");
            assertThat(ring0).as(nccl).endsWith(" " + gpus);
        }
    }

    /** The GPU ranks of a graph channel line ({@code  1 : NET/1 GPU/9 GPU/10 … NET/0}), space-separated. */
    private static String gpus(String channelLine) {
        return String.join(
                " ",
                java.util.Arrays.stream(channelLine.trim().split(" +"))
                        .filter(w -> w.startsWith("GPU/"))
                        .map(w -> w.substring(4))
                        .toList());
    }

    @Test
    void gpusWithoutTheirOwnNicReachOneThroughAnNvlinkPeer() {
        List<Topology.Node> hosts = new java.util.ArrayList<>();
        for (int h = 0; h < 2; h++) {
            Topology.Node base = Topologies.hopperNode("n" + h, "NVIDIA H100", 8, 18, true);
            List<Topology.Nic> half = List.of(
                    base.nics().get(0),
                    base.nics().get(2),
                    base.nics().get(4),
                    base.nics().get(6));
            hosts.add(new Topology.Node(
                    base.hostname(), base.cpus(), base.pciSwitches(), base.gpus(), base.nvlinks(), half));
        }
        Topology t = new Topology("half-nics", hosts);
        // PXN (paths.cc): GPU 1 sends to GPU 0's NIC through GPU 0 over NVLink instead of through the CPU (PHB).
        NcclModel pxn = NcclModel.of(Topologies.scenario(t, "2.28.9", 16, NVLS_OFF));
        assertThat(pxn.communicator().ringGraph().typeInter()).isEqualTo("PXN");
        NcclModel noPxn = NcclModel.of(
                Topologies.scenario(t, "2.28.9", 16, Map.of("NCCL_NVLS_ENABLE", "0", "NCCL_PXN_DISABLE", "1")));
        assertThat(noPxn.communicator().ringGraph().typeInter()).isEqualTo("PHB");
    }

    @Test
    void aHostWithoutNicsCannotBePredicted() {
        Topology t = new Topology(
                "two-boxes",
                List.of(
                        Topologies.hopperNode("a", "NVIDIA H200", 8, 18, false),
                        Topologies.hopperNode("b", "NVIDIA H200", 8, 18, false)));
        NcclModel m = NcclModel.of(Topologies.scenario(t, "2.28.9", 16, NVLS_OFF));
        assertThat(m.communicator().cannotPredict())
                .isEqualTo("cannot predict: host a has no NIC in the topology (network paths unknown); "
                        + "cannot predict: host b has no NIC in the topology (network paths unknown)");
    }

    @Test
    void identicalHostsAreSearchedOnceAndGiveTheSameAnswerAsTwo() {
        NcclModel two = NcclModel.of(Topologies.scenario(Topologies.hopperCluster(2, 8), "2.28.9", 16, NVLS_OFF));
        NcclModel four = NcclModel.of(Topologies.scenario(Topologies.hopperCluster(4, 8), "2.28.9", 32, NVLS_OFF));
        assertThat(four.communicator().ringGraph()).isEqualTo(two.communicator().ringGraph());
        assertThat(four.communicator().collChannels())
                .isEqualTo(two.communicator().collChannels());
    }
}

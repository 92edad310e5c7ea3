package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import java.math.BigDecimal;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Hopper behind NVSwitch with NVLS disabled: the search, duplication and Postset give 24 or 16 channels. */
class HopperTest {
    private static final Map<String, String> NVLS_OFF = Map.of("NCCL_NVLS_ENABLE", "0");

    @ParameterizedTest
    @CsvSource({"2.22.3, 4", "2.22.3, 8", "2.23.4, 8", "2.24.3, 8", "2.28.9, 4", "2.28.9, 8", "2.30.7, 8"})
    void h200OverNvSwitchGets24CollChannels(String nccl, int ranks) {
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.hopper("NVIDIA H200", 8, 18), nccl, ranks, NVLS_OFF));
        CommunicatorPrediction c = m.communicator();
        assertThat(c.ringGraph().nChannels()).isEqualTo(12);
        assertThat(c.ringGraph().bwIntra()).isEqualTo(30.0);
        assertThat(c.collChannels()).isEqualTo(24);
        assertThat(c.channelsInitLine())
                .isEqualTo(
                        "24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer");
        assertThat(c.cannotPredict()).isNull();
        // As the public 8 x H100 log (NVIDIA/nccl#1705) prints: "Channel 00/24 : 0 1 2 3 4 5 6 7".
        assertThat(c.ringOrders()).hasSize(24);
        assertThat(c.ringOrders().get(0)).isEqualTo(ranks == 8 ? "0 1 2 3 4 5 6 7" : "0 1 2 3");
    }

    @Test
    void h800WithEightLinksGets16CollChannels() {
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.hopper("NVIDIA H800", 8, 8), "2.28.9", 8, NVLS_OFF));
        assertThat(m.communicator().ringGraph().nChannels()).isEqualTo(8);
        assertThat(m.communicator().ringGraph().bwIntra()).isEqualTo(20.0);
        assertThat(m.communicator().collChannels()).isEqualTo(16);
        assertThat(m.communicator().threadThresholdsLine()).isEqualTo("threadThresholds 8/8/64 | 64/8/64 | 512 | 512");
        // The public H800 log (NVIDIA/nccl#892) prints "16 coll channels, ..., 16 p2p channels, 16 p2p channels per
        // peer".
        assertThat(m.communicator().p2pChannels()).isEqualTo(16);
        assertThat(m.communicator().p2pChannelsPerPeer()).isEqualTo(16);
    }

    @ParameterizedTest
    @CsvSource({"8, 382.223633", "4, 308.420258"})
    void h200SixtyFourMibIsRingSimpleOn24Channels(int ranks, String time) {
        NcclModel m =
                NcclModel.of(Topologies.scenario(Topologies.hopper("NVIDIA H200", 8, 18), "2.22.3", ranks, NVLS_OFF));
        CollectivePrediction p = m.allReduce(0, 67_108_864L, DType.FLOAT32);
        assertThat(p.algorithm()).isEqualTo("Ring");
        assertThat(p.protocol()).isEqualTo("Simple");
        assertThat(p.tunerTimeUs()).isEqualTo(new BigDecimal(time));
        assertThat(p.gridX()).isEqualTo(24);
        assertThat(p.blockX()).isEqualTo(544);
    }

    @Test
    void h200On2289PrintsTheChannelRangeInsteadOfTheTime() {
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.hopper("NVIDIA H200", 8, 18), "2.28.9", 8, NVLS_OFF));
        CollectivePrediction p = m.allReduce(0, 67_108_864L, DType.FLOAT32);
        assertThat(p.tuningLine())
                .isEqualTo("AllReduce: 67108864 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..23}");
    }

    @Test
    void nvlsLeftOnIsNotPretended() {
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.hopper("NVIDIA H200", 8, 18), "2.28.9", 8, Map.of()));
        assertThat(m.communicator().cannotPredict()).contains("NVLS").contains("NCCL_NVLS_ENABLE=0");
    }

    @Test
    void oneH200RankIsACopyWith64Channels() {
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.hopper("NVIDIA H200", 1, 0), "2.28.9", 1, Map.of()));
        // The real H200 fixture (one rank, NCCL 2.28.9) prints exactly this line.
        assertThat(m.communicator().channelsInitLine())
                .isEqualTo(
                        "64 coll channels, 64 collnet channels, 0 nvls channels, 64 p2p channels, 64 p2p channels per peer");
        // and these GRAPH lines: "Pattern 4, crossNic 0, nChannels 32, bw 60.000000/60.000000, type LOC/PIX,
        // sameChannels 1" and "Pattern 3, ... nChannels 32, bw 60.000000/60.000000, type LOC/PIX, sameChannels 1".
        assertThat(m.communicator().ringGraph()).isEqualTo(new GraphSummary(4, 32, 60.0, 60.0, "LOC", "PIX", true, 0));
        assertThat(m.communicator().treeGraph()).isEqualTo(new GraphSummary(3, 32, 60.0, 60.0, "LOC", "PIX", true, 0));
        CollectivePrediction p = m.allReduce(0, 67_108_864L, DType.FLOAT32);
        assertThat(p.noKernel()).isTrue();
        assertThat(p.tuningLine()).isNull();
        assertThat(p.gridX()).isZero();
        assertThat(p.algorithm()).isEqualTo("none");
    }
}

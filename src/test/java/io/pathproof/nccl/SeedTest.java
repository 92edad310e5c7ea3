package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import java.math.BigDecimal;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The seed's reference run: 4 × V100-SXM2, NV2 between every pair, NCCL 2.22.3, one 64 MiB fp32 AllReduce. */
class SeedTest {
    private static final NcclModel SEED =
            NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("host", "0"), "2.22.3", 4, Map.of()));

    @Test
    void communicatorMatchesTheSeedInitLines() {
        CommunicatorPrediction c = SEED.communicator();
        assertThat(c.collChannels()).isEqualTo(12);
        assertThat(c.p2pChannels()).isEqualTo(16);
        assertThat(c.p2pChannelsPerPeer()).isEqualTo(4);
        assertThat(c.ringGraph().nChannels()).isEqualTo(6);
        assertThat(c.ringGraph().bwIntra()).isEqualTo(20.0);
        assertThat(c.channelsInitLine())
                .isEqualTo(
                        "12 coll channels, 12 collnet channels, 0 nvls channels, 16 p2p channels, 4 p2p channels per peer");
        assertThat(c.threadThresholdsLine()).isEqualTo("threadThresholds 8/8/64 | 32/8/64 | 512 | 512");
        assertThat(c.cannotPredict()).isNull();
    }

    @Test
    void allReduceMatchesTheSeedTuningLine() {
        CollectivePrediction p = SEED.allReduce(0, 67_108_864L, DType.FLOAT32);
        assertThat(p.algorithmId()).isEqualTo(1);
        assertThat(p.protocolId()).isEqualTo(2);
        assertThat(p.algorithm()).isEqualTo("Ring");
        assertThat(p.protocol()).isEqualTo("Simple");
        assertThat(p.tunerTimeUs()).isEqualTo(new BigDecimal("867.660767"));
        assertThat(p.channels()).isEqualTo(12);
        assertThat(p.gridX()).isEqualTo(12);
        assertThat(p.blockX()).isEqualTo(544);
        assertThat(p.tuningLine()).isEqualTo("67108864 Bytes -> Algo 1 proto 2 time 867.660767");
        assertThat(p.kernelName()).isEqualTo("ncclDevKernel_AllReduce_Sum_f32_RING_LL");
        assertThat(p.reduceScatterSteps()).isEqualTo(3);
        assertThat(p.allGatherSteps()).isEqualTo(3);
        assertThat(p.busFactor()).isEqualTo(1.5);
        assertThat(p.busBytes()).isEqualTo(100_663_296L);
    }

    @Test
    void oneChannelKeepsTheTunerTimeButLaunchesOneBlock() {
        NcclModel m = NcclModel.of(Topologies.scenario(
                Topologies.v100x4nv2("host", "0"),
                "2.22.3",
                4,
                Map.of("NCCL_MAX_NCHANNELS", "1", "NCCL_MIN_NCHANNELS", "1")));
        CollectivePrediction p = m.allReduce(0, 67_108_864L, DType.FLOAT32);
        assertThat(p.tunerTimeUs()).isEqualTo(new BigDecimal("867.660767"));
        assertThat(p.gridX()).isEqualTo(1);
        assertThat(p.blockX()).isEqualTo(544);
        assertThat(m.communicator().collChannels()).isEqualTo(1);
        assertThat(m.communicator().channelsInitLine()).startsWith("1 coll channels, 1 collnet channels");
    }
}

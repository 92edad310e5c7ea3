package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import io.pathproof.scenario.Topology;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The NCCL versions torch wheels ship (2.21.5: torch 2.5, 2.6; 2.26.2: 2.7; 2.27.3 / 2.27.5: 2.8–2.10): where their
 * rules differ from the neighbouring 2.22 and 2.28, the prediction differs the same way.
 */
class TorchWheelVersionsTest {
    private static final Map<String, String> NVLS_OFF = Map.of("NCCL_NVLS_ENABLE", "0");

    private static NcclModel seed(String nccl, Map<String, String> env) {
        return NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), nccl, 4, env));
    }

    /** Two GPUs of one compute capability joined by four NVLinks under one PCIe switch. */
    private static Topology nvlinkPair(int cc) {
        Topology.Node node = new Topology.Node(
                "box",
                List.of(new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel")),
                List.of(new Topology.PciSwitch("sw0", "cpu0", 4, 16)),
                List.of(
                        new Topology.Gpu(0, "G", cc, "01:00.0", "sw0", 4, 16, 0),
                        new Topology.Gpu(1, "G", cc, "02:00.0", "sw0", 4, 16, 0)),
                List.of(new Topology.NvLink(0, 1, 4)),
                List.of());
        return new Topology("pair-cc" + cc, List.of(node));
    }

    private static BigDecimal ringLl128Bw(String nccl, int cc) {
        CollectivePrediction p = NcclModel.of(Topologies.scenario(nvlinkPair(cc), nccl, 2, Map.of()))
                .allReduce(0, 4 << 20, DType.FLOAT32);
        return p.tuningTable().stream()
                .filter(e -> e.algorithm().equals("Ring") && e.protocol().equals("LL128"))
                .findFirst()
                .orElseThrow()
                .bandwidthGBs();
    }

    @Test
    void theSeedOn2215PrintsThe2223TuningLine() {
        // 2.21 has 2.22's tuner (tuning.cc@v2.21.5-1 differs only in the ring backup) and its TUNING line
        // (enqueue.cc:1534).
        CollectivePrediction p = seed("2.21.5", Map.of()).allReduce(0, 67_108_864L, DType.FLOAT32);
        assertThat(p.tuningLine()).isEqualTo("67108864 Bytes -> Algo 1 proto 2 time 867.660767");
        assertThat(p.gridX()).isEqualTo(12);
        assertThat(p.blockX()).isEqualTo(544);
        assertThat(seed("2.21.5", Map.of()).communicator().channelsInitLine())
                .isEqualTo(
                        "12 coll channels, 12 collnet channels, 0 nvls channels, 16 p2p channels, 4 p2p channels per peer");
    }

    @ParameterizedTest
    @CsvSource({"262144, LL, 11, 12", "1048576, LL128, 11, 12"})
    void on221TheBytesPerChannelRoundedToTheProtocolLeaveALastChannelEmpty(
            long bytes, String proto, int grid221, int grid222) {
        // 256 KiB LL on 12 channels: maxBytesPerChannel 21856, rounded up to 1024 floats (8 B x 512 threads) = 24576 B
        // a
        // channel, so 11 channels carry it (enqueue.cc@v2.21.5-1:834, 452-458); 2.22's cells use all 12.
        CollectivePrediction a = seed("2.21.5", Map.of()).allReduce(0, bytes, DType.FLOAT32);
        CollectivePrediction b = seed("2.22.3", Map.of()).allReduce(0, bytes, DType.FLOAT32);
        assertThat(a.protocol()).isEqualTo(proto);
        assertThat(a.gridX()).isEqualTo(grid221);
        assertThat(b.gridX()).isEqualTo(grid222);
        assertThat(a.tunerTimeUs()).isEqualTo(b.tunerTimeUs());
    }

    @Test
    void on221NoFloorOf128ThreadsAndTreeKeepsItsOwnThreads() {
        // 2 KiB: the threads halve to 64, then three warps (96). 2.21 keeps 96 (enqueue.cc@v2.21.5-1:585); 2.22 raises
        // every block to NCCL_MIN_NTHREADS = 128 (enqueue.cc@v2.22.3-1:158).
        assertThat(seed("2.21.5", Map.of()).allReduce(0, 2048, DType.FLOAT32).blockX())
                .isEqualTo(96);
        assertThat(seed("2.22.3", Map.of()).allReduce(0, 2048, DType.FLOAT32).blockX())
                .isEqualTo(128);
        // Tree/LL: 512 threads on 2.21; 2.22 gives Tree all 640 (enqueue.cc@v2.22.3-1:1652).
        Map<String, String> treeLl = Map.of("NCCL_ALGO", "Tree", "NCCL_PROTO", "LL");
        assertThat(seed("2.21.5", treeLl)
                        .allReduce(0, 67_108_864L, DType.FLOAT32)
                        .blockX())
                .isEqualTo(512);
        assertThat(seed("2.22.3", treeLl)
                        .allReduce(0, 67_108_864L, DType.FLOAT32)
                        .blockX())
                .isEqualTo(640);
    }

    @ParameterizedTest
    @ValueSource(strings = {"2.26.2", "2.27.3", "2.27.5", "2.27.7"})
    void from226TheShapesOf228OnTheSeedAndTheChannelRangeLine(String nccl) {
        for (long bytes : new long[] {2048, 262144, 1 << 20, 67_108_864L}) {
            CollectivePrediction p = seed(nccl, Map.of()).allReduce(0, bytes, DType.FLOAT32);
            CollectivePrediction ref = seed("2.28.9", Map.of()).allReduce(0, bytes, DType.FLOAT32);
            assertThat(p.algorithm() + "/" + p.protocol() + " " + p.gridX() + "x" + p.blockX())
                    .isEqualTo(ref.algorithm() + "/" + ref.protocol() + " " + ref.gridX() + "x" + ref.blockX());
            assertThat(p.tuningLine()).isEqualTo(ref.tuningLine());
        }
    }

    @ParameterizedTest
    @CsvSource({"2.21.5, 4", "2.21.5, 8", "2.26.2, 8", "2.27.3, 8", "2.27.5, 4", "2.27.5, 8"})
    void h200OverNvSwitchGets24CollChannelsOnEveryWheelVersion(String nccl, int ranks) {
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.hopper("NVIDIA H200", 8, 18), nccl, ranks, NVLS_OFF));
        assertThat(m.communicator().collChannels()).isEqualTo(24);
        assertThat(m.communicator().cannotPredict()).isNull();
        assertThat(m.allReduce(0, 67_108_864L, DType.FLOAT32).gridX()).isEqualTo(24);
    }

    @Test
    void ll128ByComputeCapabilityFollowsEachVersionsRule() {
        // 2.22: only 70/80/90. 2.26: also 100 and 120 (tuning.cc@v2.26.2-1:432-439). 2.27+: any cc >= 70
        // (tuning.cc@v2.27.3-1:463), so an Ada (89) or GA10x (86) NVLink pair gets LL128.
        assertThat(ringLl128Bw("2.22.3", 100)).isZero();
        assertThat(ringLl128Bw("2.26.2", 100)).isPositive();
        assertThat(ringLl128Bw("2.26.2", 89)).isZero();
        assertThat(ringLl128Bw("2.26.2", 86)).isZero();
        assertThat(ringLl128Bw("2.27.3", 89)).isPositive();
        assertThat(ringLl128Bw("2.27.5", 86)).isPositive();
        assertThat(ringLl128Bw("2.21.5", 80)).isPositive();
    }

    @Test
    void blackwellNvlinkIs40Before2275And401After() {
        Topology b200 = Topologies.hopperWithCc("NVIDIA B200", 8, 18, 100);
        TopoSystem early = TopoSystem.build(
                NcclVersionTable.named("2.27.0-2.27.4"),
                b200.nodes().get(0),
                b200.nodes().get(0).gpus(),
                new int[] {0, 1, 2, 3, 4, 5, 6, 7},
                false,
                false,
                new java.util.ArrayList<>());
        TopoSystem five = TopoSystem.build(
                NcclVersionTable.named("2.27.5"),
                b200.nodes().get(0),
                b200.nodes().get(0).gpus(),
                new int[] {0, 1, 2, 3, 4, 5, 6, 7},
                false,
                false,
                new java.util.ArrayList<>());
        assertThat(early.totalBw).isEqualTo(18 * 40.0f);
        assertThat(five.totalBw).isEqualTo(18 * 40.1f);
    }

    @ParameterizedTest
    @ValueSource(strings = {"2.21.5", "2.26.2", "2.27.3", "2.27.5", "2.28.9"})
    void aTwoNodeH200ClusterIsPredictedOnEveryWheelVersion(String nccl) {
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.hopperCluster(2, 8), nccl, 16, NVLS_OFF));
        assertThat(m.communicator().nNodes()).isEqualTo(2);
        assertThat(m.communicator().cannotPredict()).isNull();
        assertThat(m.communicator().ringGraph().typeInter()).isEqualTo("PIX");
        CollectivePrediction p = m.allReduce(0, 1 << 20, DType.FLOAT32);
        assertThat(p.algorithm()).isNotEqualTo("none");
    }
}

package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import io.pathproof.scenario.Topology;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** One test per ported rule that the seed and the NVSwitch boxes do not already pin down. */
class RulesTest {
    private static CollectivePrediction.TuningEntry entry(CollectivePrediction p, String algo, String proto) {
        return p.tuningTable().stream()
                .filter(e -> e.algorithm().equals(algo) && e.protocol().equals(proto))
                .findFirst()
                .orElseThrow();
    }

    /** As NCCL's tuning table prints it ("%8.1f/%6.1f"): one decimal of the float. */
    private static BigDecimal one(BigDecimal v) {
        return v.setScale(1, java.math.RoundingMode.HALF_UP);
    }

    private static BigDecimal two(BigDecimal v) {
        return v.setScale(2, java.math.RoundingMode.HALF_UP);
    }

    private static CollectivePrediction seed(String nccl, Map<String, String> env) {
        return NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), nccl, 4, env))
                .allReduce(0, 67_108_864L, DType.FLOAT32);
    }

    @Test
    void treeRowsOf222AgainstThe230Latencies() {
        CollectivePrediction old = seed("2.22.3", Map.of());
        // tuning.cc@v2.22.3-1: Tree Simple has base 0 and NVLink 28 us per hop: 2 * 3 * 28 = 168.
        assertThat(entry(old, "Tree", "Simple").latencyUs()).isEqualByComparingTo("168.0");
        assertThat(entry(old, "Tree", "Simple").bandwidthGBs().setScale(1, java.math.RoundingMode.HALF_UP))
                .isEqualByComparingTo("55.2");
        assertThat(one(entry(old, "Tree", "LL").latencyUs())).isEqualByComparingTo("10.4");
        assertThat(one(entry(old, "Tree", "LL128").latencyUs())).isEqualByComparingTo("21.5");
        assertThat(one(entry(old, "Ring", "LL128").latencyUs())).isEqualByComparingTo("25.4");
        assertThat(one(entry(old, "Ring", "LL").bandwidthGBs())).isEqualByComparingTo("26.0");
        // The competing times of nccl-model.md section 6 (2 decimals).
        assertThat(two(entry(old, "Ring", "LL").timeUs())).isEqualByComparingTo("2591.31");
        assertThat(two(entry(old, "Ring", "LL128").timeUs())).isEqualByComparingTo("937.21");
        assertThat(two(entry(old, "Tree", "Simple").timeUs())).isEqualByComparingTo("1687.68");
        assertThat(two(entry(old, "Tree", "LL128").timeUs())).isEqualByComparingTo("1758.27");
        assertThat(two(entry(old, "Tree", "LL").timeUs())).isEqualByComparingTo("4630.21");
        // 2.23+: Tree Simple base 8.4 and 4.0 us per NVLink hop: 8.4 + 24 = 32.4; the ring is unchanged and still wins.
        CollectivePrediction neu = seed("2.30.7", Map.of());
        assertThat(entry(neu, "Tree", "Simple").latencyUs().setScale(1, java.math.RoundingMode.HALF_UP))
                .isEqualByComparingTo("32.4");
        assertThat(neu.algorithm()).isEqualTo("Ring");
        assertThat(neu.tunerTimeUs()).isEqualTo(old.tunerTimeUs());
        assertThat(neu.tuningLine())
                .isEqualTo("AllReduce: 67108864 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..11}");
    }

    @Test
    void eachVersionPrintsItsOwnTuningLine() {
        assertThat(seed("2.22.3", Map.of()).tuningLine()).isEqualTo("67108864 Bytes -> Algo 1 proto 2 time 867.660767");
        // 2.23 prefixes the function name and keeps the time (enqueue.cc@v2.23.4-1:1855).
        assertThat(seed("2.23.4", Map.of()).tuningLine())
                .isEqualTo("AllReduce: 67108864 Bytes -> Algo 1 proto 2 time 867.660767");
        // 2.24 prints the channel range instead (enqueue.cc@v2.24.3-1:678).
        assertThat(seed("2.24.3", Map.of()).tuningLine())
                .isEqualTo("AllReduce: 67108864 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..11}");
        // 2.23 already has the lower tree latencies of 2.30.
        assertThat(one(entry(seed("2.23.4", Map.of()), "Tree", "Simple").latencyUs()))
                .isEqualByComparingTo("32.4");
    }

    @Test
    void from229TheChannelSplitCanUseFewerBlocksThanChannels() {
        NcclModel v222 = NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.22.3", 4, Map.of()));
        NcclModel v230 = NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.30.7", 4, Map.of()));
        CollectivePrediction a = v222.allReduce(0, 256 * 1024, DType.FLOAT32);
        CollectivePrediction b = v230.allReduce(0, 256 * 1024, DType.FLOAT32);
        assertThat(a.protocol()).isEqualTo("LL");
        assertThat(b.protocol()).isEqualTo("LL");
        // 2.22: 16-byte cells, 12 blocks. 2.30: 4 KiB LL cells (32 KiB traffic, x4 for LL): 6 cells per channel of 64.
        assertThat(a.gridX()).isEqualTo(12);
        assertThat(b.gridX()).isEqualTo(11);
        assertThat(b.tuningLine()).endsWith("channel{Lo..Hi}={0..10}");
    }

    @Test
    void ncclAlgoAndProtoSelectAndExclude() {
        CollectivePrediction tree = seed("2.22.3", Map.of("NCCL_ALGO", "Tree"));
        assertThat(tree.algorithm()).isEqualTo("Tree");
        assertThat(tree.blockX()).isEqualTo(640);
        assertThat(tree.kernelName()).isEqualTo("ncclDevKernel_AllReduce_Sum_f32_TREE_LL");
        CollectivePrediction noSimple = seed("2.28.9", Map.of("NCCL_PROTO", "^Simple"));
        assertThat(noSimple.protocol()).isEqualTo("LL128");
        assertThat(noSimple.blockX()).isEqualTo(640);
        CollectivePrediction ll = seed("2.28.9", Map.of("NCCL_PROTO", "LL"));
        assertThat(ll.protocol()).isEqualTo("LL");
        assertThat(ll.blockX()).isEqualTo(512);
    }

    @Test
    void nthreadsChangesOnlyTheShapeAndBadValuesAreReplacedAsNcclDoes() {
        CollectivePrediction p = seed("2.22.3", Map.of("NCCL_NTHREADS", "256"));
        assertThat(p.blockX()).isEqualTo(288);
        assertThat(p.tunerTimeUs()).isEqualTo(new BigDecimal("867.660767"));
        // 100 is not a multiple of 32: getNthreads warns and uses the maximum (512), so 544 again.
        assertThat(seed("2.22.3", Map.of("NCCL_NTHREADS", "100")).blockX()).isEqualTo(544);
    }

    @Test
    void legacyRingNamesClampLikeTheNewOnes() {
        NcclModel m = NcclModel.of(
                Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.22.3", 4, Map.of("NCCL_MAX_NRINGS", "2")));
        assertThat(m.communicator().collChannels()).isEqualTo(2);
        assertThat(m.allReduce(0, 67_108_864L, DType.FLOAT32).gridX()).isEqualTo(2);
    }

    @Test
    void ctaLimitsOfTheCommConfigClampLikeTheChannelVariables() {
        NcclModel m = NcclModel.of(
                Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.28.9", 4, Map.of("NCCL_MAX_CTAS", "4")));
        assertThat(m.communicator().collChannels()).isEqualTo(4);
        NcclModel up = NcclModel.of(
                Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.28.9", 4, Map.of("NCCL_MIN_CTAS", "20")));
        assertThat(up.communicator().collChannels()).isEqualTo(20);
    }

    @Test
    void p2pDisableRoutesThroughTheCpuUsesShmAndPciLatencies() {
        NcclModel m = NcclModel.of(
                Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.22.3", 4, Map.of("NCCL_P2P_DISABLE", "1")));
        assertThat(m.communicator().transport()).isEqualTo("SHM");
        assertThat(m.communicator().ringGraph().typeIntra()).isEqualTo("PHB");
        CollectivePrediction p = m.allReduce(0, 67_108_864L, DType.FLOAT32);
        // LL128 needs typeIntra <= NVB: disabled over PHB.
        assertThat(entry(p, "Ring", "LL128").timeUs()).isNull();
    }

    @Test
    void transportIsCumemByDefaultIpcWithoutCumemAndReadOnlyOnAmpere() {
        NcclModel v100 = NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.22.3", 4, Map.of()));
        assertThat(v100.communicator().transport()).isEqualTo("P2P/CUMEM or P2P/IPC: cuMem support unknown");
        NcclModel ipc = NcclModel.of(
                Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.22.3", 4, Map.of("NCCL_CUMEM_ENABLE", "0")));
        assertThat(ipc.communicator().transport()).isEqualTo("P2P/IPC");
        List<Topology.Gpu> gpus = List.of(
                new Topology.Gpu(0, "A100", 80, "1", "cpu0", 4, 16, 0),
                new Topology.Gpu(1, "A100", 80, "2", "cpu0", 4, 16, 0));
        Topology a100 = new Topology(
                "a100x2",
                List.of(new Topology.Node(
                        "h",
                        List.of(new Topology.Cpu("cpu0", 0, "x86_64", "AuthenticAMD")),
                        List.of(),
                        gpus,
                        List.of(new Topology.NvLink(0, 1, 12)),
                        List.of())));
        NcclModel amp = NcclModel.of(Topologies.scenario(a100, "2.28.9", 2, Map.of()));
        assertThat(amp.communicator().transport()).isEqualTo("P2P/CUMEM/read or P2P/IPC/read: cuMem support unknown");
    }

    @Test
    void pciOnlyGpusGetPciLatenciesAndNoLl128() {
        List<Topology.Gpu> gpus = List.of(
                new Topology.Gpu(0, "L4", 89, "1", "sw0", 4, 16, 0),
                new Topology.Gpu(1, "L4", 89, "2", "sw0", 4, 16, 0));
        Topology t = new Topology(
                "pci",
                List.of(new Topology.Node(
                        "h",
                        List.of(new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel")),
                        List.of(new Topology.PciSwitch("sw0", "cpu0", 4, 16)),
                        gpus,
                        List.of(),
                        List.of())));
        NcclModel m = NcclModel.of(Topologies.scenario(t, "2.28.9", 2, Map.of()));
        assertThat(m.communicator().ringGraph().typeIntra()).isEqualTo("PIX");
        CollectivePrediction p = m.allReduce(0, 1 << 20, DType.FLOAT32);
        assertThat(entry(p, "Ring", "LL128").timeUs()).isNull();
        // Ring LL: 6.6 + 2 * 1.0 (PCI) = 8.6 us.
        assertThat(one(entry(p, "Ring", "LL").latencyUs())).isEqualByComparingTo("8.6");
    }

    @Test
    void expectedTimeIsReportedApartFromTheTunerEstimate() {
        CollectivePrediction full = seed("2.22.3", Map.of());
        CollectivePrediction one = seed("2.22.3", Map.of("NCCL_MAX_NCHANNELS", "1"));
        assertThat(full.expectedTimeUs()).isNotNull();
        assertThat(full.expectedTimeUs()).isNotEqualByComparingTo(full.tunerTimeUs());
        // Fewer channels, same tuner time, slower kernel.
        assertThat(one.tunerTimeUs()).isEqualTo(full.tunerTimeUs());
        assertThat(one.expectedTimeUs()).isGreaterThan(full.expectedTimeUs());
    }

    @Test
    void ll128IsOffForTwoHopperRanksOnCuda118() {
        io.pathproof.scenario.Topology two = Topologies.hopper("NVIDIA H100", 2, 18);
        java.util.function.Function<String, CollectivePrediction> run =
                cuda -> NcclModel.of(new io.pathproof.scenario.Scenario(
                                "t",
                                Topologies.ONE_64MIB,
                                two,
                                new io.pathproof.scenario.Versions(
                                        io.pathproof.scenario.Version.parse("2.1.0"),
                                        io.pathproof.scenario.Version.parse("2.22.3"),
                                        io.pathproof.scenario.Version.parse(cuda)),
                                2,
                                Map.of("NCCL_NVLS_ENABLE", "0")))
                        .allReduce(0, 4 << 20, DType.FLOAT32);
        // tuning.cc@v2.22.3-1:312: !(CUDART_VERSION == 11080 && AllReduce && Ring && nRanks == 2) on sm90.
        assertThat(entry(run.apply("11.8"), "Ring", "LL128").timeUs()).isNull();
        assertThat(entry(run.apply("12.4"), "Ring", "LL128").timeUs()).isNotNull();
    }

    @Test
    void signedIntegersRunInTheUnsignedKernel() {
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.22.3", 4, Map.of()));
        assertThat(m.allReduce(0, 1 << 20, DType.INT32).kernelName())
                .isEqualTo("ncclDevKernel_AllReduce_Sum_u32_RING_LL");
        assertThat(m.allReduce(0, 1 << 20, DType.BFLOAT16).kernelName())
                .isEqualTo("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
    }
}

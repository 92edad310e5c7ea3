package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Topology;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Versions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.LongStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Seeded properties over random single-host machines, versions, env clamps and sizes. */
class PropertyTest {
    static LongStream seeds() {
        return LongStream.range(1, 41);
    }

    private static final String[] VERSIONS = {"2.22.3", "2.23.4", "2.24.3", "2.28.9", "2.29.2", "2.30.7"};

    /** A random host: an NVLink mesh (counts 1..3, some pairs missing), an NVSwitch box, or PCIe only. */
    static Topology randomTopology(SplittableRandom rnd, String host, String busPrefix, String gpuModel) {
        int kind = rnd.nextInt(3);
        int n = 2 + rnd.nextInt(7);
        int cc = new int[] {70, 80, 90}[rnd.nextInt(3)];
        int nsw = 1 + rnd.nextInt(3);
        List<Topology.PciSwitch> sws = new ArrayList<>();
        for (int s = 0; s < nsw; s++) {
            sws.add(new Topology.PciSwitch("sw" + s, s % 2 == 0 ? "cpu0" : "cpu1", 3 + rnd.nextInt(3), 16));
        }
        List<Topology.Gpu> gpus = new ArrayList<>();
        List<Topology.NvLink> links = new ArrayList<>();
        int nvsLinks = kind == 1 ? 4 + rnd.nextInt(15) : 0;
        for (int i = 0; i < n; i++) {
            gpus.add(new Topology.Gpu(
                    i, gpuModel, cc, busPrefix + i, "sw" + (i % nsw), 3 + rnd.nextInt(3), 16, nvsLinks));
        }
        if (kind == 0) {
            for (int i = 0; i < n; i++) {
                for (int j = i + 1; j < n; j++) {
                    if (rnd.nextInt(4) != 0) {
                        links.add(new Topology.NvLink(i, j, 1 + rnd.nextInt(3)));
                    }
                }
            }
        }
        Topology.Node node = new Topology.Node(
                host,
                List.of(
                        new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel"),
                        new Topology.Cpu("cpu1", 1, "x86_64", "GenuineIntel")),
                sws,
                gpus,
                links,
                List.of());
        return new Topology("random", List.of(node));
    }

    static Scenario randomScenario(long seed, String host, String busPrefix, String model, String cuda) {
        SplittableRandom rnd = new SplittableRandom(seed);
        Topology t = randomTopology(rnd, host, busPrefix, model);
        int ranks = 1 + rnd.nextInt(t.gpuCount());
        Map<String, String> env = new HashMap<>();
        env.put("NCCL_NVLS_ENABLE", "0");
        if (rnd.nextInt(3) == 0) {
            env.put("NCCL_MAX_NCHANNELS", Integer.toString(1 + rnd.nextInt(40)));
        }
        if (rnd.nextInt(3) == 0) {
            env.put("NCCL_MIN_NCHANNELS", Integer.toString(rnd.nextInt(8)));
        }
        if (rnd.nextInt(4) == 0) {
            env.put("NCCL_NTHREADS", Integer.toString(64 * (1 + rnd.nextInt(8))));
        }
        String v = VERSIONS[rnd.nextInt(VERSIONS.length)];
        return new Scenario(
                "p",
                Topologies.ONE_64MIB,
                t,
                new Versions(Version.parse("2.5.0"), Version.parse(v), cuda == null ? null : Version.parse(cuda)),
                ranks,
                env);
    }

    static long randomSize(SplittableRandom rnd) {
        return 4L * (1 + rnd.nextLong(1L << (2 + rnd.nextInt(26))));
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void launchShapeStaysInsideTheCommunicator(long seed) {
        Scenario s = randomScenario(seed, "h", "0000:", "GPU", null);
        NcclModel m = NcclModel.of(s);
        CommunicatorPrediction c = m.communicator();
        SplittableRandom rnd = new SplittableRandom(seed * 31);
        for (int i = 0; i < 30; i++) {
            CollectivePrediction p = m.allReduce(i, randomSize(rnd), DType.FLOAT32);
            if (p.noKernel()) {
                assertThat(s.ranks()).isEqualTo(1);
                continue;
            }
            assertThat(p.gridX()).isBetween(1, c.collChannels());
            assertThat(p.blockX() % 32).isZero();
            assertThat(p.blockX()).isBetween(128, 640);
            if (p.algorithm().equals("Tree")) {
                assertThat(p.blockX()).isEqualTo(640);
            }
            if (p.algorithm().equals("Ring") && p.protocol().equals("LL")) {
                assertThat(p.blockX()).isLessThanOrEqualTo(512);
            }
        }
    }

    /** Fewer seeds: a random multi-host machine can make the search run its full budgets (seconds; see docs/perf). */
    static LongStream clusterSeeds() {
        return LongStream.range(1, 9);
    }

    @ParameterizedTest
    @MethodSource("clusterSeeds")
    void multiNodeClustersGiveAShapeInsideTheCommunicator(long seed) {
        SplittableRandom rnd = new SplittableRandom(seed * 101);
        int hosts = 2 + rnd.nextInt(3);
        List<Topology.Node> nodes = new ArrayList<>();
        Topology first = randomTopology(rnd, "h0", "b", "GPU");
        Topology.Node proto = first.nodes().get(0);
        int ranks = 0;
        // Hosts of one cluster are alike (as NCCL's allgather of graphs assumes in practice): one NIC layout for all.
        List<Topology.Nic> nics = new ArrayList<>();
        for (Topology.PciSwitch sw : proto.pciSwitches()) {
            if (rnd.nextInt(3) != 0 || nics.isEmpty()) {
                nics.add(new Topology.Nic(
                        "nic-" + sw.id(), sw.id(), 100_000L * (1 + rnd.nextInt(4)), rnd.nextBoolean(), "ib"));
            }
        }
        for (int h = 0; h < hosts; h++) {
            nodes.add(
                    new Topology.Node("h" + h, proto.cpus(), proto.pciSwitches(), proto.gpus(), proto.nvlinks(), nics));
            ranks += proto.gpus().size();
        }
        String v = VERSIONS[rnd.nextInt(VERSIONS.length)];
        Scenario s = new Scenario(
                "m",
                Topologies.ONE_64MIB,
                new Topology("cluster", nodes),
                new Versions(Version.parse("2.5.0"), Version.parse(v), null),
                ranks,
                Map.of("NCCL_NVLS_ENABLE", "0"));
        NcclModel m = NcclModel.of(s);
        CommunicatorPrediction c = m.communicator();
        assertThat(c.nNodes()).isEqualTo(hosts);
        assertThat(c.cannotPredict()).isNull();
        for (int i = 0; i < 10; i++) {
            CollectivePrediction p = m.allReduce(i, randomSize(rnd), DType.FLOAT32);
            assertThat(p.gridX()).isBetween(1, c.collChannels());
            assertThat(p.blockX()).isBetween(128, 640);
            assertThat(p.transport()).contains("NET/");
        }
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void channelClampsAreRespected(long seed) {
        Scenario s = randomScenario(seed, "h", "0000:", "GPU", null);
        CommunicatorPrediction c = NcclModel.of(s).communicator();
        String max = s.env().get("NCCL_MAX_NCHANNELS");
        String min = s.env().get("NCCL_MIN_NCHANNELS");
        int maxCh = s.versions().nccl().minor() >= 25 ? 64 : 32;
        assertThat(c.collChannels()).isBetween(1, maxCh);
        if (max != null && (min == null || Integer.parseInt(min) <= Integer.parseInt(max))) {
            assertThat(c.collChannels()).isLessThanOrEqualTo(Math.min(Integer.parseInt(max), maxCh));
        }
        if (min != null) {
            assertThat(c.collChannels()).isGreaterThanOrEqualTo(Integer.parseInt(min));
        }
        assertThat(Integer.bitCount(c.p2pChannels())).isEqualTo(1);
        assertThat(Integer.bitCount(c.p2pChannelsPerPeer())).isEqualTo(1);
        assertThat(c.p2pChannelsPerPeer()).isLessThanOrEqualTo(c.p2pChannels());
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void ringTimeGrowsWithSize(long seed) {
        Scenario s = randomScenario(seed, "h", "0000:", "GPU", null);
        NcclModel m = NcclModel.of(s);
        if (s.ranks() == 1) {
            return;
        }
        SplittableRandom rnd = new SplittableRandom(seed * 7);
        long[] sizes =
                LongStream.generate(() -> randomSize(rnd)).limit(40).sorted().toArray();
        for (String proto : new String[] {"LL", "LL128", "Simple"}) {
            double prev = -1;
            for (long size : sizes) {
                CollectivePrediction p = m.allReduce(0, size, DType.FLOAT32);
                for (CollectivePrediction.TuningEntry e : p.tuningTable()) {
                    if (e.algorithm().equals("Ring") && e.protocol().equals(proto) && e.timeUs() != null) {
                        assertThat(e.timeUs().doubleValue()).isGreaterThanOrEqualTo(prev);
                        prev = e.timeUs().doubleValue();
                    }
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("seeds")
    void choicesIgnoreHostnamesBusIdsModelNamesAndCuda(long seed) {
        NcclModel a = NcclModel.of(randomScenario(seed, "alpha", "0000:", "Tesla", "12.4"));
        NcclModel b = NcclModel.of(randomScenario(seed, "beta-host-7", "0001:", "NVIDIA GPU", "13.0"));
        assertThat(b.communicator().channelsInitLine())
                .isEqualTo(a.communicator().channelsInitLine());
        assertThat(b.communicator().ringGraph()).isEqualTo(a.communicator().ringGraph());
        SplittableRandom rnd = new SplittableRandom(seed * 13);
        for (int i = 0; i < 20; i++) {
            long size = randomSize(rnd);
            CollectivePrediction pa = a.allReduce(0, size, DType.FLOAT32);
            CollectivePrediction pb = b.allReduce(0, size, DType.FLOAT32);
            assertThat(pb.algorithmId()).isEqualTo(pa.algorithmId());
            assertThat(pb.protocolId()).isEqualTo(pa.protocolId());
            assertThat(pb.tunerTimeUs()).isEqualTo(pa.tunerTimeUs());
            assertThat(pb.gridX()).isEqualTo(pa.gridX());
            assertThat(pb.blockX()).isEqualTo(pa.blockX());
        }
    }
}

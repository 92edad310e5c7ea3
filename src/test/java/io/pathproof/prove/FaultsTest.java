package io.pathproof.prove;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.diagnose.Layer;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.Predictor;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class FaultsTest {
    @Test
    void glooOffersTheFourApplicationAndDdpFaultsAndTheCapComesFromThePlanner() {
        Scenario s = Scenarios.load("cpu-x4-small");
        Prediction p = Predictor.predict(s);
        List<Fault> c = Faults.catalogue(s, p, "gloo", 4, 1);
        assertThat(c)
                .extracting(Fault::kind)
                .containsExactly(
                        "compute slowdown", "corrupted gradient", "bucket-cap change", "find_unused_parameters");
        assertThat(c)
                .extracting(f -> f.layer().id())
                .containsExactly("compute", "correctness", "ddp-buckets", "ddp-config");
        // The cap is the first halving of 25 MiB with which the planner forms other buckets: checked against the
        // planner.
        String cap = c.get(2).settings().get(0).substring("bucket_cap_mb=".length());
        Scenario capped = new Scenario(
                s.name(),
                s.workload().withDdpFlags(Double.parseDouble(cap), false, false, false),
                s.topology(),
                s.versions(),
                s.ranks(),
                s.env(),
                s.backend());
        Scenario twice = new Scenario(
                s.name(),
                s.workload().withDdpFlags(Double.parseDouble(cap) * 2, false, false, false),
                s.topology(),
                s.versions(),
                s.ranks(),
                s.env(),
                s.backend());
        assertThat(Predictor.predict(capped).buckets().rebuilt())
                .isNotEqualTo(p.buckets().rebuilt());
        assertThat(Predictor.predict(twice).buckets().rebuilt())
                .extracting(b -> b.params())
                .isEqualTo(p.buckets().rebuilt().stream().map(b -> b.params()).toList());
        // The slowdown is sized from the model (3 MiB of parameters at 32 ms per MiB: 97 ms) and scaled by the seed.
        assertThat(c.get(0).settings().get(0))
                .isIn("compute_delay_ms=97", "compute_delay_ms=145", "compute_delay_ms=193");
    }

    @Test
    void theSeedReproducesTheWholeFaultSizeIncludedWhateverTheMachineMeasured() {
        // Issue 19 §3: the slowdown was sized from the baseline's median, so one seed gave 40 ms, then 61 ms.
        Scenario s = Scenarios.load("cpu-x4-small");
        Prediction p = Predictor.predict(s);
        Set<String> sizes = new HashSet<>();
        for (long seed = 0; seed < 24; seed++) {
            List<Fault> first = Faults.catalogue(s, p, "gloo", 4, seed);
            List<Fault> again = Faults.catalogue(s, Predictor.predict(s), "gloo", 4, seed);
            assertThat(again).isEqualTo(first);
            assertThat(Faults.draw(again, seed)).isEqualTo(Faults.draw(first, seed));
            double ms = Double.parseDouble(first.get(0).settings().get(0).substring("compute_delay_ms=".length()));
            assertThat(ms)
                    .isGreaterThanOrEqualTo(Faults.MIN_DELAY_MS)
                    .isGreaterThanOrEqualTo(Faults.CPU_MS_PER_MIB * 3);
            sizes.add(first.get(0).settings().get(0));
        }
        assertThat(sizes).as("the seed scales the size").hasSizeGreaterThan(1);
        // The 64 MiB model's CPU step is seconds: its slowdown is sized by its bytes, not by the 40 ms floor.
        Scenario big = Scenarios.load("cpu-x4-gloo");
        assertThat(Faults.computeDelayMs(Predictor.predict(big), "gloo", 1))
                .isGreaterThanOrEqualTo(64 * Faults.CPU_MS_PER_MIB);
        // On a GPU the step is the AllReduce: the floor stands far above ten times its predicted time.
        Scenario gpu = Scenarios.load("h200-x4");
        assertThat(Faults.computeDelayMs(Predictor.predict(gpu), "nccl", 1)).isIn(40.0, 60.0, 80.0);
    }

    @Test
    void aSingleParameterModelHasNoBucketCapFaultAndOneRankNoCorruption() {
        Scenario s = Scenarios.load("cpu-x4-gloo"); // one 64 MiB parameter: every cap gives the same one bucket
        List<Fault> c = Faults.catalogue(s, Predictor.predict(s), "gloo", 1, 1);
        assertThat(c).extracting(Fault::kind).containsExactly("compute slowdown", "find_unused_parameters");
    }

    @Test
    void ncclFaultsAreSetAgainstWhatNcclWasPredictedToChoose() {
        Scenario s = Scenarios.load("h200-x4");
        Prediction p = Predictor.predict(s);
        List<Fault> c = Faults.catalogue(s, p, "nccl", 4, 1);
        Set<String> layers = new HashSet<>();
        c.forEach(f -> layers.add(f.layer().id()));
        assertThat(layers).contains("channels", "protocol", "algorithm", "threads", "compute", "correctness");
        var big = p.collectives().stream()
                .filter(x -> x.bucket() >= 0)
                .max(java.util.Comparator.comparingLong(x -> x.bytes()))
                .orElseThrow();
        Fault proto =
                c.stream().filter(f -> f.layer() == Layer.PROTOCOL).findFirst().orElseThrow();
        assertThat(proto.settings().get(0)).startsWith("NCCL_PROTO=").isNotEqualTo("NCCL_PROTO=" + big.protocol());
        Fault algo =
                c.stream().filter(f -> f.layer() == Layer.ALGORITHM).findFirst().orElseThrow();
        assertThat(big.algorithm()).isEqualTo("Ring");
        // NCCL 2.28: AllReduce only. A plain NCCL_ALGO=Tree made the emulated H200 variant exit before its first step
        // ("no algorithm/protocol available for function AllGather with datatype ncclInt8. NCCL_ALGO was set to Tree").
        assertThat(algo.settings()).containsExactly("NCCL_ALGO=allreduce:tree");
        Scenario forced = s.withEnv(java.util.Map.of("NCCL_ALGO", "allreduce:tree"));
        var forcedBig = Predictor.predict(forced).collectives().stream()
                .filter(x -> x.bucket() == big.bucket())
                .findFirst()
                .orElseThrow();
        assertThat(forcedBig.algorithm())
                .as("the model reads the per-function list as NCCL does")
                .isEqualTo("Tree");
        Fault ch =
                c.stream().filter(f -> f.layer() == Layer.CHANNELS).findFirst().orElseThrow();
        assertThat(ch.settings()).containsExactly("NCCL_MIN_NCHANNELS=1", "NCCL_MAX_NCHANNELS=1");
    }

    /** NCCL 2.22 reads one plain list and falls back to Ring where it leaves none, so the plain value is right there. */
    @Test
    void beforeNccl224TheAlgorithmFaultIsAPlainList() {
        Scenario s = Scenarios.load("seed"); // 4 × V100, NCCL 2.22.3
        Fault algo = Faults.catalogue(s, Predictor.predict(s), "nccl", 4, 1).stream()
                .filter(f -> f.layer() == Layer.ALGORITHM)
                .findFirst()
                .orElseThrow();
        assertThat(algo.settings().get(0)).matches("NCCL_ALGO=(Tree|Ring)");
    }

    @Test
    void drawIsSeededAndGivenFaultsTakeTheirLayerFromTheCatalogue() {
        Scenario s = Scenarios.load("cpu-x4-small");
        List<Fault> c = Faults.catalogue(s, Predictor.predict(s), "gloo", 4, 1);
        Set<String> kinds = new HashSet<>();
        for (long seed = 0; seed < 40; seed++) {
            assertThat(Faults.draw(c, seed)).isEqualTo(Faults.draw(c, seed));
            kinds.add(Faults.draw(c, seed).kind());
        }
        assertThat(kinds).hasSize(c.size());
        assertThat(Faults.given("compute_delay_ms=55", c).layer()).isEqualTo(Layer.COMPUTE);
        assertThat(Faults.given("NCCL_P2P_DISABLE=1", c).layer()).isEqualTo(Layer.TRANSPORT);
        // find_unused_parameters is a DDP flag: the diagnose room names it on ddp-config, never on the bucket layout.
        assertThat(Faults.given("find_unused_parameters=true", List.of()).layer())
                .isEqualTo(Layer.DDP_CONFIG);
        assertThat(Faults.given("bucket_cap_mb=1", List.of()).layer()).isEqualTo(Layer.BUCKETS);
        // Outside the catalogue a variable acts on the layer the diagnose room's knob table gives it, the one a blind
        // diagnosis names: the whole family, not only the variables prove itself injects.
        assertThat(Faults.given("NCCL_LL128_ENABLE=0", List.of()).layer()).isEqualTo(Layer.PROTOCOL);
        assertThat(Faults.given("NCCL_NCHANNELS_PER_PEER=1", List.of()).layer()).isEqualTo(Layer.CHANNELS);
        assertThat(Faults.given("corrupt_grad_rank=0", List.of()).layer()).isEqualTo(Layer.CORRECTNESS);
        assertThat(Faults.given("TORCH_NCCL_BLOCKING_WAIT=1", List.of()).layer())
                .isEqualTo(Layer.CONFIGURATION);
        Faults.check("NCCL_PROTO=LL,compute_delay_ms=3");
        assertThatThrownBy(() -> Faults.check("compute_dleay_ms=3"))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("compute_dleay_ms");
        assertThatThrownBy(() -> Faults.given("nonsense", c))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("K=V");
    }

    @Test
    void theSealedRecordHasTheFaultSchemaAndItsHashChangesWithTheFault() throws Exception {
        Fault f = new Fault("channel cap", List.of("NCCL_MIN_NCHANNELS=1", "NCCL_MAX_NCHANNELS=1"), Layer.CHANNELS, "");
        String rec = SealedFault.record(f, 7, List.of(f));
        JsonNode n = Json.mapper().readTree(rec);
        assertThat(n.path("schema").asText()).isEqualTo("pathproof.fault/1");
        assertThat(n.at("/env/NCCL_MAX_NCHANNELS").asText()).isEqualTo("1");
        assertThat(n.path("knobs").size()).isZero();
        assertThat(n.path("layer").asText()).isEqualTo("channels");
        Fault g = new Fault("slow", List.of("compute_delay_ms=40"), Layer.COMPUTE, "");
        assertThat(Json.mapper()
                        .readTree(SealedFault.record(g, 7, List.of(g)))
                        .at("/knobs/compute_delay_ms")
                        .asText())
                .isEqualTo("40");
        assertThat(SealedFault.sha256(rec))
                .isNotEqualTo(SealedFault.sha256(SealedFault.record(g, 7, List.of(g))))
                .hasSize(64);
    }

    /**
     * Two HGX nodes (8 × 400 Gb/s GPUDirect NICs each, the emulated clusters' topology): the model offers GPUDirect off
     * and the other NIC pairing, each because predicting again with the variable changes how NCCL reaches the other
     * node; one node offers no network fault at all.
     */
    @Test
    void networkFaultsAreOfferedWhereTheModelSaysTheNetworkPathChanges() {
        io.pathproof.scenario.Topology node =
                Scenarios.topology("samples/emulation-sweep/topologies/h200-hgx-x8-8nic-gdr.json");
        Scenario one = Scenarios.load("h200-x4");
        Scenario cluster = new Scenario(
                "hgx-2x8",
                one.workload(),
                Scenarios.cluster(node, 2),
                one.versions(),
                16,
                java.util.Map.of("NCCL_NVLS_ENABLE", "0"),
                one.backend());
        Prediction p = Predictor.predict(cluster);
        List<Fault> net = Faults.networkFaults(cluster, p, false);
        assertThat(net).extracting(Fault::layer).containsOnly(Layer.NETWORK);
        assertThat(net).extracting(f -> f.settings().get(0)).contains("NCCL_NET_GDR_LEVEL=LOC");
        Fault gdr = net.stream()
                .filter(f -> f.settings().get(0).startsWith("NCCL_NET_GDR_LEVEL"))
                .findFirst()
                .orElseThrow();
        // Without GPUDirect the path to the NIC goes through the CPU: PHB where it was PIX
        // (paths.cc@v2.28.9-1:741-752).
        assertThat(gdr.description()).contains("PIX").contains("PHB");
        assertThat(Faults.catalogue(cluster, p, "nccl", 16, 1)).containsAll(net);
        assertThat(Faults.networkFaults(one, Predictor.predict(one), false)).isEmpty();
    }

    private static Scenario hgx(int nodes, java.util.Map<String, String> env) {
        io.pathproof.scenario.Topology node =
                Scenarios.topology("samples/emulation-sweep/topologies/h200-hgx-x8-8nic-gdr.json");
        Scenario one = Scenarios.load("h200-x4");
        return new Scenario(
                "hgx-" + nodes + "x8",
                one.workload(),
                Scenarios.cluster(node, nodes),
                one.versions(),
                8 * nodes,
                env,
                one.backend());
    }

    /**
     * One node's NICs slowed is offered only on an emulated cluster (pathproof cannot slow a real NIC), on the last
     * node, at the first fraction of its NICs' speed with which the model's search of that node finds less between the
     * nodes; the fault is the emulation's knob, acting on the network.
     */
    @Test
    void aSlowerNodeIsOfferedOnlyOnAnEmulatedClusterWhereItsSearchFindsLess() {
        Scenario cluster = hgx(2, java.util.Map.of("NCCL_NVLS_ENABLE", "0"));
        Prediction p = Predictor.predict(cluster);
        assertThat(Faults.catalogue(cluster, p, "nccl", 16, 1))
                .noneMatch(f -> f.settings().get(0).startsWith("node_nic_mbps"));
        Fault slow = Faults.catalogue(cluster, p, "nccl", 16, 1, true).stream()
                .filter(f -> f.settings().get(0).startsWith("node_nic_mbps"))
                .findFirst()
                .orElseThrow();
        assertThat(slow.layer()).isEqualTo(Layer.NETWORK);
        String v = slow.settings().get(0).substring("node_nic_mbps=".length());
        assertThat(v).startsWith("1:");
        long mbps = Long.parseLong(v.substring(2));
        // A fraction 1/2, 1/4 or 1/8 of the 400 Gb/s NICs of the topology file.
        assertThat(List.of(200_000L, 100_000L, 50_000L)).contains(mbps);
        // The mechanism agrees that it changes something: predicted again on the slowed cluster, the aligned graphs
        // (the minimum over every node's own search) carry less between the nodes.
        Prediction q = Predictor.predict(cluster.withTopology(cluster.topology().withNodeNicSpeed(1, mbps)));
        assertThat(q.communicator().ringGraph().bwInter())
                .isLessThan(p.communicator().ringGraph().bwInter());
        assertThat(slow.description()).contains("→");
        // One node: nothing between nodes to slow.
        Scenario one = Scenarios.load("h200-x4");
        assertThat(Faults.catalogue(one, Predictor.predict(one), "nccl", 4, 1, true))
                .noneMatch(f -> f.settings().get(0).startsWith("node_nic_mbps"));
        assertThatThrownBy(() -> Faults.check("node_nic_mbps=1:100000", false))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("emulated");
        Faults.check("node_nic_mbps=1:100000", true);
        assertThat(Faults.given("node_nic_mbps=1:100000", List.of()).layer()).isEqualTo(Layer.NETWORK);
    }

    /**
     * Fewer channels per net peer is offered where the model says NCCL gives a peer on another node more than one p2p
     * channel, and NCCL_NCHANNELS_PER_NET_PEER=1 lowers that.
     */
    @Test
    void fewerChannelsPerNetPeerIsOfferedWhereTheModelGivesANetPeerSeveral() {
        Scenario cluster = hgx(2, java.util.Map.of("NCCL_NVLS_ENABLE", "0"));
        Prediction p = Predictor.predict(cluster);
        Fault f = Faults.fewerChannelsPerNetPeer(cluster, p);
        Prediction q = Predictor.predict(cluster.withEnv(java.util.Map.of("NCCL_NCHANNELS_PER_NET_PEER", "1")));
        if (p.communicator().p2pChannelsPerPeer() > q.communicator().p2pChannelsPerPeer()) {
            assertThat(f).isNotNull();
            assertThat(f.settings()).containsExactly("NCCL_NCHANNELS_PER_NET_PEER=1");
            assertThat(Faults.networkFaults(cluster, p, false)).contains(f);
        } else {
            assertThat(f).isNull();
        }
        // Forced the other way (two channels per net peer where the model gives one): nothing to lower.
        Scenario one = hgx(2, java.util.Map.of("NCCL_NVLS_ENABLE", "0", "NCCL_NCHANNELS_PER_NET_PEER", "1"));
        assertThat(Faults.fewerChannelsPerNetPeer(one, Predictor.predict(one))).isNull();
    }
}

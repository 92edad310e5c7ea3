package io.pathproof.diagnose;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The network layer on real evidence: prove's runs on an emulated cluster of two HGX H200 nodes (8 ranks each, NCCL
 * 2.28.9 through the emu net plugin), the variant with NCCL_CROSS_NIC=1. NCCL's inter-node graphs then end with
 * crossNic 1 and nothing else on the path changes; the diagnosis names the network, undoes the variable, and a
 * single-node diagnosis has no network row at all.
 */
class NetworkLayerTest {
    private static final Path CLUSTER = Path.of("samples/emulated-hgx-2x8-prove-network");

    private static Evidence read(Path dir) {
        return Ingest.read(List.of(dir));
    }

    @Test
    void aNicPairingChangeBetweenNodesIsNamedAsTheNetwork() {
        Diagnosis d = Diagnosis.diagnose(read(CLUSTER.resolve("baseline")), read(CLUSTER.resolve("variant")));
        assertThat(d.conclusion()).isEqualTo("root cause");
        assertThat(d.rootCause().layer()).isEqualTo(Layer.NETWORK);
        assertThat(d.rootCause().owner()).isEqualTo("NCCL host");
        assertThat(d.rootCause().fix()).contains("remove NCCL_CROSS_NIC=1");
        Diagnosis.LayerDiff net = network(d);
        assertThat(net.changed()).isTrue();
        assertThat(net.baseline()).contains("2 nodes").contains("crossNic 0").doesNotContain("crossNic 1");
        assertThat(net.variant()).contains("crossNic 1");
        // Only the network changed on the path: the buckets, algorithm, protocol, transport, channels and threads did
        // not.
        assertThat(d.diffs().stream().filter(Diagnosis.LayerDiff::changed).map(Diagnosis.LayerDiff::layer))
                .containsExactly(Layer.NETWORK);
        assertThat(d.configuration()).extracting(Diagnosis.ConfigChange::layer).containsOnly(Layer.NETWORK);
    }

    @Test
    void theFixedRunReachesTheOtherNodeAsTheBaselineDid() {
        Diagnosis d = Diagnosis.diagnose(read(CLUSTER.resolve("baseline")), read(CLUSTER.resolve("fixed")));
        assertThat(network(d).changed()).isFalse();
        assertThat(d.eliminated()).extracting(Diagnosis.Elimination::layer).contains(Layer.NETWORK);
    }

    @Test
    void oneNodeHasNoNetworkToExamine() {
        Path x4 = Path.of("samples/emulated-h200-x4");
        Diagnosis d = Diagnosis.diagnose(read(x4.resolve("run")), read(x4.resolve("variant-proto")));
        assertThat(d.diffs()).extracting(Diagnosis.LayerDiff::layer).doesNotContain(Layer.NETWORK);
        assertThat(d.eliminated()).extracting(Diagnosis.Elimination::layer).doesNotContain(Layer.NETWORK);
        assertThat(d.unexamined()).extracting(Diagnosis.Elimination::layer).doesNotContain(Layer.NETWORK);
    }

    /**
     * Each rank prints its own node's search before the ranks keep the minimum: where one node found less, the
     * fingerprint names the log of the first rank that printed each graph; where every rank agrees it says nothing.
     */
    @Test
    void ranksWhoseOwnSearchesDisagreeAreNamed() {
        Evidence.Graph fast = new Evidence.Graph(
                4, 0, 8, 48, 48, "NVL", "PIX", 0, io.pathproof.evidence.Source.line("run/nccl-rank0.log", 120));
        Evidence.Graph slow = new Evidence.Graph(
                4, 0, 8, 12, 12, "NVL", "PIX", 0, io.pathproof.evidence.Source.line("run/nccl-rank8.log", 131));
        Evidence.Graph tree = new Evidence.Graph(
                1, 0, 8, 48, 48, "NVL", "PIX", 0, io.pathproof.evidence.Source.line("run/nccl-rank0.log", 140));
        List<String> sources = new java.util.ArrayList<>();
        String said = Fingerprint.disagreement(List.of(fast, tree, slow), sources);
        assertThat(said)
                .contains(Fingerprint.SEARCHES_DISAGREE + " on pattern 4")
                .contains("bw 48/48 NVL/PIX in nccl-rank0.log")
                .contains("bw 12/12 NVL/PIX in nccl-rank8.log")
                .doesNotContain("pattern 1");
        assertThat(sources).containsExactly("run/nccl-rank0.log:120", "run/nccl-rank8.log:131");
        List<String> none = new java.util.ArrayList<>();
        assertThat(Fingerprint.disagreement(List.of(fast, tree), none)).isEmpty();
        assertThat(none).isEmpty();
    }

    /**
     * prove's runs with one node's NICs slowed (samples/emulated-hgx-2x8-prove-slow-node, packed): nothing in the
     * configuration changed, node 1's ranks searched their own slower graphs, and the diagnosis names the network as the
     * hardware's, citing the first rank of each search; the fixed run reaches the other node as the baseline did.
     */
    @Test
    void aSlowerNodeIsNamedFromTheRanksOwnSearches(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        unpack("samples/emulated-hgx-2x8-prove-slow-node/prove.txz", tmp);
        Diagnosis d = Diagnosis.diagnose(read(tmp.resolve("baseline")), read(tmp.resolve("variant")));
        assertThat(d.conclusion()).isEqualTo("root cause");
        assertThat(d.configuration()).isEmpty();
        assertThat(d.rootCause().layer()).isEqualTo(Layer.NETWORK);
        assertThat(d.rootCause().owner()).isEqualTo(Layer.Owner.HARDWARE);
        assertThat(d.rootCause().fix()).contains("link speed");
        Diagnosis.LayerDiff net = network(d);
        assertThat(net.baseline()).doesNotContain(Fingerprint.SEARCHES_DISAGREE);
        assertThat(net.variant())
                .contains(Fingerprint.SEARCHES_DISAGREE)
                .contains("in nccl-rank0.log")
                .contains("in nccl-rank8.log");
        assertThat(net.provenance()).anyMatch(p -> p.contains("nccl-rank8.log:"));
        Diagnosis fixed = Diagnosis.diagnose(read(tmp.resolve("baseline")), read(tmp.resolve("fixed")));
        assertThat(network(fixed).changed()).isFalse();
    }

    /**
     * prove's runs on the HGX nodes with GPUDirect claimed (samples/emulated-hgx-2x8-prove-gdr, packed; the emu net
     * plugin staging device bytes through a context of its own), the variant with NCCL_NET_GDR_LEVEL=LOC: NCCL reached
     * the other node through host memory instead, its graphs and then its algorithm, protocol and channels changed
     * with it, and the diagnosis names the variable on the network layer, not the layers downstream of it.
     */
    @Test
    void gpuDirectOffIsNamedAsTheNetwork(@org.junit.jupiter.api.io.TempDir Path tmp) throws Exception {
        unpack("samples/emulated-hgx-2x8-prove-gdr/prove.txz", tmp);
        Diagnosis d = Diagnosis.diagnose(read(tmp.resolve("baseline")), read(tmp.resolve("variant")));
        assertThat(d.conclusion()).isEqualTo("root cause");
        assertThat(d.rootCause().layer()).isEqualTo(Layer.NETWORK);
        assertThat(d.rootCause().owner()).isEqualTo("NCCL host");
        assertThat(d.rootCause().fix()).contains("remove NCCL_NET_GDR_LEVEL=LOC");
        Diagnosis.LayerDiff net = network(d);
        assertThat(net.baseline()).contains("net NET/emu/GDRDMA");
        assertThat(net.variant()).contains("net NET/emu;").doesNotContain("GDRDMA");
        assertThat(d.configuration()).extracting(Diagnosis.ConfigChange::layer).containsOnly(Layer.NETWORK);
        Diagnosis fixed = Diagnosis.diagnose(read(tmp.resolve("baseline")), read(tmp.resolve("fixed")));
        assertThat(fixed.diffs().stream().filter(Diagnosis.LayerDiff::changed)).isEmpty();
    }

    private static void unpack(String txz, Path into) throws Exception {
        Process tar = new ProcessBuilder("tar", "-xJf", txz, "-C", into.toString())
                .redirectErrorStream(true)
                .start();
        String out = new String(tar.getInputStream().readAllBytes());
        assertThat(tar.waitFor()).as(out).isZero();
    }

    private static Diagnosis.LayerDiff network(Diagnosis d) {
        return d.diffs().stream()
                .filter(x -> x.layer() == Layer.NETWORK)
                .findFirst()
                .orElseThrow();
    }
}

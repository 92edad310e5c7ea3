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
        Diagnosis.LayerDiff net = d.diffs().stream()
                .filter(x -> x.layer() == Layer.NETWORK)
                .findFirst()
                .orElseThrow();
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
        assertThat(d.diffs().stream()
                        .filter(x -> x.layer() == Layer.NETWORK)
                        .findFirst()
                        .orElseThrow()
                        .changed())
                .isFalse();
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
}

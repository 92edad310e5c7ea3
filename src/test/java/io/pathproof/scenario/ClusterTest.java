package io.pathproof.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.PathproofException;
import org.junit.jupiter.api.Test;

/** {@code --topology NODE --nodes N}: N identical nodes from a one-node topology. */
class ClusterTest {
    @Test
    void nCopiesOfTheNodeWithTheirOwnHostNames() {
        Topology node = Scenarios.topology("samples/emulated-h200-x4/run/nccl-topo.xml");
        Topology c = Scenarios.cluster(node, 3);
        assertThat(c.nodes()).hasSize(3);
        assertThat(c.nodes()).extracting(Topology.Node::hostname).containsExactly("host0-0", "host0-1", "host0-2");
        assertThat(c.gpuCount()).isEqualTo(12);
        for (Topology.Node n : c.nodes()) {
            assertThat(n.gpus()).isEqualTo(node.nodes().get(0).gpus());
            assertThat(n.nics()).isEqualTo(node.nodes().get(0).nics());
        }
        assertThat(c.name()).isEqualTo("nccl-topo-x3-nodes");
        assertThat(c.inferred())
                .containsAll(node.inferred())
                .anyMatch(s -> s.startsWith("3 identical nodes from the one-node topology 'nccl-topo' (--nodes 3)"));
    }

    @Test
    void aNodeWithoutNicsSaysHowItsNodesMeetIsUnknown() {
        Topology c = Scenarios.cluster(Scenarios.topology("h200-sxm-x4-nvswitch"), 2);
        assertThat(c.inferred()).anyMatch(s -> s.contains("has no NIC"));
    }

    @Test
    void aTopologyOfSeveralNodesIsNotANodeToCopy() {
        Topology two = Scenarios.cluster(Scenarios.topology("h200-sxm-x4-nvswitch"), 2);
        assertThat(Scenarios.cluster(two, 2)).isSameAs(two);
        assertThatThrownBy(() -> Scenarios.cluster(two, 4))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("already has 2 nodes");
        assertThatThrownBy(() -> Scenarios.cluster(two, 0)).hasMessageContaining("at least 1");
    }
}

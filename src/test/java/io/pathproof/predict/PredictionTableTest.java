package io.pathproof.predict;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The prediction as text: where the nodes differ, each node's own search under the minimum the ranks keep. */
class PredictionTableTest {
    private static Scenario hgx(int slowNode, long mbps) {
        Scenario one = Scenarios.load("h200-x4");
        io.pathproof.scenario.Topology cluster = Scenarios.cluster(
                Scenarios.topology("samples/emulation-sweep/topologies/h200-hgx-x8-8nic-gdr.json"), 2);
        return new Scenario(
                "hgx-2x8",
                one.workload(),
                slowNode < 0 ? cluster : cluster.withNodeNicSpeed(slowNode, mbps),
                one.versions(),
                16,
                Map.of("NCCL_NVLS_ENABLE", "0"),
                one.backend());
    }

    @Test
    void eachNodesOwnSearchIsListedOnlyWhereTheNodesDiffer() {
        Prediction slow = Predictor.predict(hgx(1, 100_000));
        assertThat(slow.communicator().nodeGraphs()).hasSize(2);
        // The minimum every rank keeps is node 1's bandwidth (init.cc@v2.28.9-1:1175-1192).
        assertThat(slow.communicator().ringGraph().bwInter())
                .isEqualTo(slow.communicator().nodeGraphs().get(1).ring().bwInter())
                .isLessThan(slow.communicator().nodeGraphs().get(0).ring().bwInter());
        assertThat(slow.communicator().nodeGraphs().get(1).firstRank()).isEqualTo(8);
        String text = PredictionTable.render(slow);
        assertThat(text)
                .contains("the nodes' own searches differ")
                .contains("(ranks 0-7) ring:")
                .contains("(ranks 8-15) tree:");
        Prediction same = Predictor.predict(hgx(-1, 0));
        assertThat(same.communicator().nodeGraphs()).isEmpty();
        assertThat(PredictionTable.render(same)).doesNotContain("own searches");
    }
}

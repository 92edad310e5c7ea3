package io.pathproof.explain;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.accept.Verdict;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.Layer;
import io.pathproof.diagnose.Regressions;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.Predictor;
import io.pathproof.scenario.Scenarios;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Answers follow the algorithm the model predicts, and 14/15 follow this run's diagnosis, not a canned text. */
class ExplainerTest {
    static Prediction seed(Map<String, String> env) {
        return Predictor.predict(Scenarios.load("seed").withEnv(env));
    }

    @Test
    void theTransportAnswerNamesThePairsThatDiffer() {
        // the seed's V100s with NVML denying 0-1, NCCL told to go on: that pair alone connects over SHM
        io.pathproof.scenario.Scenario s = Scenarios.load("seed");
        s = s.withTopology(s.topology().withP2pDenied(List.of(List.of(0, 1)), "p2p.txt"))
                .withEnv(Map.of("NCCL_IGNORE_DISABLED_P2P", "1", "NCCL_CUMEM_ENABLE", "1"));
        String answer = Explainer.explain(Predictor.predict(s), null).get(10).answer();
        assertThat(answer)
                .contains("Predicted transport here: P2P/CUMEM + SHM (per GPU pair: SHM between ranks 0-1;"
                        + " P2P/CUMEM between the other pairs).");
        assertThat(Explainer.explain(seed(Map.of()), null).get(10).answer()).doesNotContain("per GPU pair");
    }

    @Test
    void treeHasNoRingStepsAndSaysWhatItDoes() {
        List<Explainer.Answer> a = Explainer.explain(seed(Map.of("NCCL_ALGO", "Tree")), null);
        assertThat(a.get(8).answer())
                .startsWith("Tree:")
                .doesNotContain("reduce-scatter steps")
                .doesNotContain("N−1 = 0");
        assertThat(a.get(8).answer()).contains("3 hop(s) up"); // 4 ranks on one node: a chain of 4, 3 hops
        assertThat(a.get(8).basis()).contains("Tree").doesNotContain("ring algorithm");
        assertThat(a.get(9).answer()).contains("does not move 2(N−1)/N");
        assertThat(a.get(6).answer()).contains("Algo 0 = Tree", "NCCL_ALGO=Tree leaves");
    }

    @Test
    void ringKeepsItsSteps() {
        List<Explainer.Answer> a = Explainer.explain(seed(Map.of()), null);
        assertThat(a.get(8).answer()).contains("Ring: N−1 = 3 reduce-scatter and N−1 = 3 all-gather");
        assertThat(a.get(9).answer()).contains("exactly what each rank sends");
    }

    @Test
    void withoutADiagnosisThereIsNoRegressionToExplain() {
        List<Explainer.Answer> a = Explainer.explain(seed(Map.of()), null);
        assertThat(a.get(13).answer()).startsWith("No regression here");
        assertThat(a.get(14).answer()).startsWith("No regression here");
    }

    @Test
    void withADiagnosisAnswers14And15AreThatDiagnosis() {
        Diagnosis d = new Diagnosis(
                Diagnosis.SCHEMA,
                "base",
                "var",
                "root cause",
                new Diagnosis.Correctness(Verdict.PASS, "equal"),
                Regressions.of("regression", 1.31, 1.2, 1.4, 10.0, 13.1, "rule"),
                List.of(new Diagnosis.LayerDiff(Layer.PROTOCOL, "Simple", "LL", true, List.of(), List.of())),
                List.of(),
                List.of(
                        new Diagnosis.Elimination(Layer.CORRECTNESS, "equal"),
                        new Diagnosis.Elimination(Layer.BUCKETS, "same")),
                List.of(),
                new Diagnosis.RootCause(
                        Layer.PROTOCOL,
                        "NCCL host",
                        "NCCL_PROTO: unset → LL",
                        List.of(),
                        "remove NCCL_PROTO=LL",
                        List.of("more channels"),
                        "verify-fix"),
                List.of());
        List<Explainer.Answer> a = Explainer.explain(seed(Map.of()), null, d);
        assertThat(a.get(13).answer())
                .contains(
                        "layer protocol",
                        "NCCL_PROTO: unset → LL",
                        "ratio 1.310",
                        "correctness, ddp-buckets",
                        "protocol.");
        assertThat(a.get(14).answer())
                .contains("remove NCCL_PROTO=LL", "more channels")
                .doesNotContain("channel override");
    }
}

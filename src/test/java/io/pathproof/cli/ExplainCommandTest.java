package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import org.junit.jupiter.api.Test;

class ExplainCommandTest {
    @Test
    void answersTheSixteenQuestionsWithTheSeedsNumbers() throws Exception {
        MainTest.Result r = MainTest.run("explain", "--scenario", "seed", "--format", "json");
        assertThat(r.code).as(r.err).isZero();
        JsonNode doc = Json.mapper().readTree(r.out);
        assertThat(doc.path("callgraph")).hasSize(35);
        assertThat(doc.path("answers")).hasSize(16);
        assertThat(doc.at("/answers/0/answer").asText()).contains("16,777,216 elements");
        assertThat(doc.at("/answers/8/answer").asText()).contains("N−1 = 3 reduce-scatter", "N−1 = 3 all-gather");
        assertThat(doc.at("/answers/9/answer").asText()).contains("= 1.5");
        assertThat(doc.at("/answers/6/answer").asText()).contains("Algo 1 = Ring", "proto 2 = Simple");
        assertThat(doc.at("/answers/7/answer").asText()).contains("12 coll channels", "gridX = 12");
    }

    @Test
    void tableListsOwners() {
        MainTest.Result r = MainTest.run("explain", "--scenario", "seed");
        assertThat(r.code).as(r.err).isZero();
        assertThat(r.out).contains("PyTorch", "NCCL host", "NCCL device", "CUDA+hardware");
    }

    @Test
    void withABaselineAnswers14And15AreTheDiagnosisOfTheRun() throws Exception {
        String run = "samples/h200-1rank-accepted/run";
        MainTest.Result r = MainTest.run(
                "explain",
                "--prediction",
                "samples/h200-1rank-accepted/prediction.json",
                "--run",
                run,
                "--baseline",
                run,
                "--format",
                "json");
        assertThat(r.code).as(r.err).isZero();
        JsonNode doc = Json.mapper().readTree(r.out);
        // The run against itself: 24 steps of a noisy H200 run cannot exclude a 5 % change, even against themselves.
        assertThat(doc.at("/answers/13/answer").asText()).startsWith("This run's diagnosis: inconclusive");
        assertThat(doc.at("/answers/14/answer").asText()).startsWith("Not decided yet");
        MainTest.Result plain = MainTest.run(
                "explain",
                "--prediction",
                "samples/h200-1rank-accepted/prediction.json",
                "--run",
                run,
                "--format",
                "json");
        assertThat(Json.mapper().readTree(plain.out).at("/answers/13/answer").asText())
                .startsWith("No regression here");
        assertThat(MainTest.run("explain", "--scenario", "seed", "--baseline", run).code)
                .isEqualTo(2);
    }
}

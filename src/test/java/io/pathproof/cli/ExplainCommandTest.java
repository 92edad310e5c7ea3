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
}

package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import org.junit.jupiter.api.Test;

/** The committed H200 sample stays accepted: a sealed prediction, a real run made after it, every row PASS or N/A. */
class SampleAcceptanceTest {
    @Test
    void theH200SampleIsAcceptedRowByRow() throws Exception {
        MainTest.Result r = MainTest.run(
                "accept",
                "--prediction",
                "samples/h200-1rank-accepted/prediction.json",
                "--run",
                "samples/h200-1rank-accepted/run",
                "--format",
                "json");
        assertThat(r.code).as(r.err).isZero();
        JsonNode t = Json.mapper().readTree(r.out);
        assertThat(t.path("verdict").asText()).isEqualTo("PASS");
        boolean channels = false;
        for (JsonNode row : t.path("rows")) {
            assertThat(row.path("verdict").asText()).as(row.toString()).isIn("PASS", "N/A");
            if (row.path("id").asText().equals("coll-channels")) {
                channels = row.path("verdict").asText().equals("PASS")
                        && row.path("observed").asText().contains("64");
            }
        }
        assertThat(channels).as("coll-channels PASS with 64 observed").isTrue();
    }
}

package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a user reads when an input is missing or broken: "no such file: PATH", and never a library's own notes. */
class HonestMessagesTest {
    @TempDir
    Path tmp;

    @Test
    void aMissingPredictionIsNoSuchFileNotAnUnreadablePrediction() {
        Path nope = tmp.resolve("nope.json");
        MainTest.Result r = MainTest.run("accept", "--prediction", nope.toString(), "--run", tmp.toString());
        assertThat(r.code).isEqualTo(3);
        assertThat(r.err.strip()).isEqualTo("pathproof: no such file: " + nope);
    }

    @Test
    void aMissingReportInputIsNoSuchFile() {
        Path nope = tmp.resolve("nope");
        MainTest.Result r = MainTest.run(
                "report", nope.toString(), "--out", tmp.resolve("out").toString());
        assertThat(r.code).isEqualTo(3);
        assertThat(r.err.strip()).isEqualTo("pathproof: no such file: " + nope);
    }

    @Test
    void aMissingWorkloadFileSaysNoSuchFileWithItsName() {
        MainTest.Result r =
                MainTest.run("predict", "--workload", "nope.jsonl", "--topology", "cpu-x4", "--torch", "1.13.0");
        assertThat(r.code).isEqualTo(2);
        assertThat(r.err).contains("no such file: nope.jsonl");
    }

    @Test
    void aCutHookLineIsReportedWithoutJacksonInternals() throws Exception {
        Path run = tmp.resolve("run");
        Files.createDirectories(run);
        Files.writeString(
                run.resolve("hook-rank0.jsonl"),
                "{\"rank\": 0, \"iteration\": 0, \"index\": 0, \"bytes\": 64, \"isLast\": true}\n"
                        + "{\"rank\": 0, \"iteration\": 1, \"index\": 0, \"bytes\": 64");
        MainTest.Result r = MainTest.run("ingest", run.toString());
        assertThat(r.err)
                .contains("hook-rank0.jsonl:2: not JSON: Unexpected end-of-input")
                .doesNotContain("StreamReadFeature", "REDACTED", "Source:", "`");
    }
}

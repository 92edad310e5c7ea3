package io.pathproof.prove;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.cli.Main;
import io.pathproof.core.Json;
import io.pathproof.predict.PredictionIo;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * {@code pathproof prove -- COMMAND} on a user's own script (examples/recsys under torch's own launcher): the
 * baseline seals its prediction in the run, is accepted against it, a hidden fault reaches the job through the
 * instrumentation, the diagnosis names its layer blind, and the fix is verified.
 */
@Tag("live")
class ProveOwnJobLiveTest {
    private static int freePort() throws java.io.IOException {
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void provesAUsersOwnJob(@TempDir Path tmp) throws Exception {
        ProveLiveTest.requireTorch();
        Path out = tmp.resolve("proof");
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        // The corrupted gradient: found by the replica digests whatever the machine's load, so one run decides.
        int exit = Main.run(
                new String[] {
                    "prove",
                    "--fault",
                    "corrupt_grad_rank=1",
                    "--out",
                    out.toString(),
                    "--",
                    io.pathproof.run.Runner.probe(null).python(),
                    "-m",
                    "torch.distributed.run",
                    "--nproc_per_node",
                    "2",
                    "--master_addr",
                    "127.0.0.1",
                    "--master_port",
                    Integer.toString(freePort()),
                    "examples/recsys/train.py",
                    "--steps",
                    "48"
                },
                new PrintWriter(o, true),
                new PrintWriter(e, true));
        String printed = o + "\n" + e;
        assertThat(exit).as(printed).isZero();
        JsonNode proof = Json.mapper().readTree(out.resolve("proof.json").toFile());
        assertThat(proof.path("verdict").asText()).isEqualTo("PROVEN");
        assertThat(proof.at("/reveal/diagnosed/layer").asText()).isEqualTo("correctness");
        assertThat(proof.path("worldSize").asInt()).isEqualTo(2);
        assertThat(proof.path("phases").get(1).path("detail").asText())
                .startsWith("sealed in the baseline run before its first gradient AllReduce");
        // the proof's prediction is the file the baseline sealed, byte for byte
        assertThat(Files.readString(out.resolve("prediction.json")))
                .isEqualTo(Files.readString(out.resolve("baseline/prediction-addendum.json")));
        PredictionIo.readVerified(out.resolve("prediction.json"));
        JsonNode acceptance =
                Json.mapper().readTree(out.resolve("acceptance.json").toFile());
        assertThat(acceptance.path("counts").path("fail").asInt()).isZero();
        // the variant ran with the baseline's prediction, so it sealed none of its own, and its manifest names no fault
        assertThat(out.resolve("variant/prediction.json")).doesNotExist();
        assertThat(Files.readString(out.resolve("variant/manifest.json"))).doesNotContain("corrupt");
        assertThat(out.resolve("report.html")).exists();
    }

    /**
     * Each example of examples/ proven as a user would (48 steps: whether a fix is verified rests on step times, and a
     * shared 2-core machine needs that many to decide), with a fault drawn from its own catalogue by a seed: the seed
     * picks the kind (3: a bucket cap that re-buckets this model, 10: find_unused_parameters, 1: a corrupted
     * gradient), the model decides its size.
     */
    @ParameterizedTest
    @CsvSource({"lm, 3, ddp-buckets", "convnet, 10, ddp-config", "recsys, 1, correctness"})
    void provesEachExample(String example, int seed, String layer, @TempDir Path tmp) throws Exception {
        ProveLiveTest.requireTorch();
        Path out = tmp.resolve(example);
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int exit = Main.run(
                new String[] {
                    "prove",
                    "--seed",
                    Integer.toString(seed),
                    "--out",
                    out.toString(),
                    "--",
                    io.pathproof.run.Runner.probe(null).python(),
                    "-m",
                    "torch.distributed.run",
                    "--nproc_per_node",
                    "2",
                    "--master_addr",
                    "127.0.0.1",
                    "--master_port",
                    Integer.toString(freePort()),
                    "examples/" + example + "/train.py",
                    "--steps",
                    "48"
                },
                new PrintWriter(o, true),
                new PrintWriter(e, true));
        String printed = o + "\n" + e;
        assertThat(exit).as(printed).isZero();
        JsonNode proof = Json.mapper().readTree(out.resolve("proof.json").toFile());
        assertThat(proof.at("/reveal/injected/layer").asText()).as(printed).isEqualTo(layer);
        assertThat(proof.at("/reveal/diagnosed/layer").asText()).as(printed).isEqualTo(layer);
        assertThat(proof.path("verdict").asText()).isEqualTo("PROVEN");
    }
}

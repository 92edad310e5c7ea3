package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plain dump of {@code ddp._get_ddp_logging_data()} under a name of the user's own (ddp-debug/make_ddp_debug.py,
 * torch 1.13, two gloo ranks: {@code ddp-state-{rank}.json}) gives the facts the run's own
 * {@code ddp-logging-rank{r}.json} gives: it is recognised by its keys, and its rank is the data's own.
 */
class DdpLoggingDumpTest {
    static final Path CAPTURE = Read.RES.resolve("ddp-debug/torch-1.13-detail");

    @TempDir
    Path tmp;

    private Path dumpsOnly(String... names) throws IOException {
        Path dir = tmp.resolve("dumps");
        Files.createDirectories(dir);
        for (int r = 0; r < 2; r++) {
            Files.copy(CAPTURE.resolve("ddp-state-" + r + ".json"), dir.resolve(names[r]));
        }
        return dir;
    }

    private static JsonNode json(Path p) throws IOException {
        return Json.mapper().readTree(p.toFile());
    }

    @Test
    void aDumpUnderAnyNameIsReadByItsContentWithTheRankOfItsData() throws IOException {
        Path dir = dumpsOnly("ddp-state-0.json", "after-training");
        Evidence e = Ingest.read(List.of(dir));
        assertThat(e.problems()).isEmpty();
        assertThat(e.anythingRead()).isTrue();
        assertThat(e.ddp().logging()).containsOnlyKeys("0", "1");
        assertThat(e.ddp().logging().get("0")).isEqualTo(json(CAPTURE.resolve("ddp-state-0.json")));
        assertThat(e.ddp().logging().get("1")).isEqualTo(json(CAPTURE.resolve("ddp-state-1.json")));
        assertThat(e.ddp().logging().get("1").path("rebuilt_bucket_sizes").asText())
                .isEqualTo("1317408, 526336, 33792");
        assertThat(e.ddp().buckets()).isEmpty();
        assertThat(e.files()).extracting(Evidence.FileRead::kind).containsOnly(FileKind.DDP_LOGGING);
        assertThat(e.files()).extracting(Evidence.FileRead::rank).containsExactly(1, 0);
    }

    @Test
    void itGivesTheFactsTheRunsOwnFileGives() throws IOException {
        Evidence dumps = Ingest.read(List.of(dumpsOnly("a.json", "b.json")));
        Path own = tmp.resolve("own");
        Files.createDirectories(own);
        for (int r = 0; r < 2; r++) {
            Files.copy(CAPTURE.resolve("ddp-state-" + r + ".json"), own.resolve("ddp-logging-rank" + r + ".json"));
        }
        Evidence harness = Ingest.read(List.of(own));
        assertThat(harness.files()).isEmpty(); // read once, by the run's own reader
        assertThat(dumps.ddp().logging()).isEqualTo(harness.ddp().logging());
        assertThat(List.copyOf(dumps.ddp().logging().keySet()))
                .isEqualTo(List.copyOf(harness.ddp().logging().keySet()));
    }

    @Test
    void aDumpNamedOnTheCommandLineIsReadToo() {
        Evidence e = Ingest.read(List.of(CAPTURE.resolve("ddp-state-1.json")));
        assertThat(e.problems()).isEmpty();
        assertThat(e.ddp().logging()).containsOnlyKeys("1");
        assertThat(e.files()).singleElement().satisfies(f -> {
            assertThat(f.kind()).isEqualTo(FileKind.DDP_LOGGING);
            assertThat(f.rank()).isEqualTo(1);
            assertThat(f.facts()).isGreaterThan(30);
        });
    }

    @Test
    void torch211sDumpIsRecognisedToo() throws IOException {
        // The real H200 run's DDP logging (torch 2.11.0+cu130, NCCL), saved under a name of the user's own.
        Path dir = tmp.resolve("h200");
        Files.createDirectories(dir);
        Path h200 = Path.of("samples/h200-1rank-accepted/run/ddp-logging-rank0.json");
        Files.copy(h200, dir.resolve("logging.json"));
        Evidence e = Ingest.read(List.of(dir));
        assertThat(e.problems()).isEmpty();
        assertThat(e.ddp().logging()).containsOnlyKeys("0");
        assertThat(e.ddp().logging().get("0")).isEqualTo(json(h200));
        assertThat(e.ddp().logging().get("0").path("backend_name").asText()).isEqualTo("nccl");
    }

    @Test
    void aNameThatSaysAnotherRankIsAProblemAndTheDataWins() throws IOException {
        Path dir = dumpsOnly("dump-rank1.json", "dump-rank0.json");
        Evidence e = Ingest.read(List.of(dir));
        assertThat(e.ddp().logging().get("0").path("rank").asInt()).isZero();
        assertThat(e.ddp().logging().get("1").path("rank").asInt()).isEqualTo(1);
        assertThat(e.problems()).hasSize(2).allSatisfy(p -> assertThat(p.message())
                .contains("in a file named for rank"));
    }

    @Test
    void twoDumpsOfOneRankKeepTheFirstAndSaySo() throws IOException {
        Path dir = dumpsOnly("a.json", "b.json");
        Files.copy(CAPTURE.resolve("ddp-state-1.json"), dir.resolve("c.json"));
        Evidence e = Ingest.read(List.of(dir));
        assertThat(e.ddp().logging()).containsOnlyKeys("0", "1");
        assertThat(e.problems()).singleElement().satisfies(p -> {
            assertThat(p.file()).endsWith("c.json");
            assertThat(p.message()).contains("rank 1's DDP logging was read from another file already");
        });
    }

    @Test
    void otherJsonIsNotTakenForADump() throws IOException {
        Path dir = tmp.resolve("other");
        Files.createDirectories(dir);
        Files.copy(Read.RES.resolve("ddp-debug/workload.json"), dir.resolve("workload.json"));
        // The keys of a dump, but not an object of them: a list of names someone wrote down.
        Files.writeString(
                dir.resolve("keys.json"),
                "[\"bucket_sizes\", \"world_size\", \"backend_name\", \"rank\"]",
                StandardCharsets.UTF_8);
        Evidence e = Ingest.read(List.of(dir));
        assertThat(e.files()).isEmpty();
        assertThat(e.ddp()).isNull();
    }
}

package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * NCCL's profiler plugin as the third witness of a bucket's decision, on the committed emulated 4-rank run (NCCL
 * 2.28.9's own decisions: AllReduce of 16777216 floats as RING SIMPLE on 24 channels, 17 warps, on every rank) and on
 * copies of it edited the way a wrong or absent witness would look.
 */
class ProfilerChecksTest {
    private static final Path SAMPLE = Path.of("samples/emulated-h200-x4");

    @TempDir
    Path tmp;

    private static Prediction prediction() {
        return PredictionIo.readVerified(SAMPLE.resolve("prediction.json"));
    }

    private static AcceptanceTable accept(Path run) {
        return Acceptance.accept(prediction(), Ingest.read(List.of(run)));
    }

    private static List<AcceptanceRow> profilerRows(AcceptanceTable t) {
        return t.rows().stream().filter(r -> r.id().startsWith("profiler/")).toList();
    }

    /** A copy of the sample run that a test may edit. */
    private Path copyOfRun() throws IOException {
        Path src = SAMPLE.resolve("run");
        Path dst = tmp.resolve("run");
        Files.createDirectories(dst);
        try (Stream<Path> files = Files.list(src)) {
            files.forEach(f -> {
                try {
                    Files.copy(f, dst.resolve(f.getFileName().toString()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        return dst;
    }

    private static List<Path> profilerFiles(Path run) throws IOException {
        try (Stream<Path> files = Files.list(run)) {
            return files.filter(f -> f.getFileName().toString().startsWith("nccl-profiler-rank"))
                    .sorted()
                    .toList();
        }
    }

    private static void replaceIn(Path f, String from, String to) throws IOException {
        String s = Files.readString(f, StandardCharsets.UTF_8);
        assertThat(s).as(f.toString()).contains(from);
        Files.writeString(f, s.replace(from, to), StandardCharsets.UTF_8);
    }

    @Test
    void theEmulatedSamplesProfilerRecordsPassOnEveryRank() {
        AcceptanceTable t = accept(SAMPLE.resolve("run"));
        List<AcceptanceRow> rows = profilerRows(t);
        assertThat(rows)
                .extracting(AcceptanceRow::id)
                .containsExactly(
                        "profiler/rank0/bucket0",
                        "profiler/rank1/bucket0",
                        "profiler/rank2/bucket0",
                        "profiler/rank3/bucket0");
        for (int rank = 0; rank < 4; rank++) {
            AcceptanceRow r = t.row("profiler/rank" + rank + "/bucket0");
            assertThat(r.verdict()).as(r.id() + ": " + r.observed()).isEqualTo(Verdict.PASS);
            assertThat(r.expected()).isEqualTo("RING/SIMPLE, 24 channels, 544 threads for 67108864 B");
            assertThat(r.observed()).startsWith("RING/SIMPLE, 24 channels, 544 threads (17 warps) in 27 call(s)");
            assertThat(r.evidence()).containsExactly(EvidenceKind.NCCL_PROFILER);
            assertThat(r.provenance()).singleElement().asString().contains("nccl-profiler-rank" + rank + "-");
        }
        // The profiler rows come right after the launch-shape rows.
        List<String> ids = t.rows().stream().map(AcceptanceRow::id).toList();
        assertThat(ids.indexOf("profiler/rank0/bucket0")).isEqualTo(ids.indexOf("launch-shape/rank3/bucket0") + 1);
        assertThat(t.row("evidence-consistency").verdict()).isEqualTo(Verdict.PASS);
    }

    @Test
    void aRankWhoseProfilerSawOtherChannelsFailsAndTheWitnessesDisagree() throws IOException {
        Path run = copyOfRun();
        Path rank0 = profilerFiles(run).get(0);
        assertThat(rank0.getFileName().toString()).startsWith("nccl-profiler-rank0-");
        replaceIn(
                rank0,
                "\"count\":16777216,\"datatype\":\"ncclFloat32\",\"root\":0,\"algorithm\":\"RING\",\"protocol\":\"SIMPLE\",\"channels\":24",
                "\"count\":16777216,\"datatype\":\"ncclFloat32\",\"root\":0,\"algorithm\":\"RING\",\"protocol\":\"SIMPLE\",\"channels\":16");
        AcceptanceTable t = accept(run);
        AcceptanceRow bad = t.row("profiler/rank0/bucket0");
        assertThat(bad.verdict()).as(bad.observed()).isEqualTo(Verdict.FAIL);
        assertThat(bad.observed()).contains("16 channels").endsWith("differs in channels (16, predicted 24)");
        assertThat(bad.provenance()).isNotEmpty().allSatisfy(p -> assertThat(p).contains("nccl-profiler-rank0-"));
        assertThat(t.row("profiler/rank1/bucket0").verdict()).isEqualTo(Verdict.PASS);
        // Rank 0 prints the TUNING line (channel{0..23}): the plugin's 16 channels contradict it, and rank 0 now
        // differs
        // from rank 1 too; the run is not one configuration.
        AcceptanceRow consistency = t.row("evidence-consistency");
        assertThat(consistency.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(consistency.observed()).contains("witness-disagreement").contains("cross-rank-disagreement");
        assertThat(consistency.evidence()).contains(EvidenceKind.NCCL_PROFILER);
        assertThat(t.verdict()).isEqualTo(Verdict.FAIL);
    }

    /** The committed variants, each run with one NCCL knob changed: NCCL's own profiler records name the changed decision. */
    @ParameterizedTest
    @CsvSource({
        "variant-channels, channels (1, predicted 24)",
        "variant-proto, protocol (LL128, predicted SIMPLE)",
        "variant-algo, algorithm (TREE, predicted RING)",
        "variant-threads, threads (288, predicted 544)"
    })
    void eachVariantFailsOnTheDecisionItChanged(String variant, String differs) {
        AcceptanceTable t = accept(SAMPLE.resolve(variant));
        assertThat(profilerRows(t)).hasSize(4).allSatisfy(r -> {
            assertThat(r.verdict()).as(r.observed()).isEqualTo(Verdict.FAIL);
            assertThat(r.observed()).contains("differs in").contains(differs);
        });
    }

    @Test
    void aPluginNcclDidNotLoadLeavesTheRowsUnprovenSayingWhichVersionNcclWanted() throws IOException {
        Path run = copyOfRun();
        for (Path f : profilerFiles(run)) {
            Files.delete(f);
        }
        // The same run under NCCL 2.27.3, which looks for profiler API v4 and so ignores the plugin's v5.
        try (Stream<Path> files = Files.list(run)) {
            for (Path f : files.filter(f -> f.getFileName().toString().matches("nccl-rank\\d\\.log"))
                    .toList()) {
                replaceIn(f, "NCCL version 2.28.9", "NCCL version 2.27.3");
            }
        }
        replaceIn(run.resolve("manifest.json"), "\"nccl\" : \"2.28.9\"", "\"nccl\" : \"2.27.3\"");
        AcceptanceTable t = accept(run);
        List<AcceptanceRow> rows = profilerRows(t);
        assertThat(rows).hasSize(4).allSatisfy(r -> {
            assertThat(r.verdict()).isEqualTo(Verdict.UNPROVEN);
            assertThat(r.observed()).isEqualTo("profiler plugin not loaded (NCCL wants v4)");
            assertThat(r.evidence()).isEmpty();
        });
    }

    @Test
    void aLoadedPluginWithNoRecordOfThisSizeIsUnprovenNeverPass() throws IOException {
        Path run = copyOfRun();
        for (Path f : profilerFiles(run)) {
            replaceIn(f, "\"count\":16777216,", "\"count\":16777215,");
        }
        AcceptanceTable t = accept(run);
        AcceptanceRow r = t.row("profiler/rank2/bucket0");
        assertThat(r.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(r.observed()).contains("no AllReduce of 67108864 B").contains("67108860");
    }

    @Test
    void aOneRankRunWithThePluginLoadedHasNothingToJudge() throws IOException {
        // What the plugin wrote on the real one-H200 run: its comm line, no collective (NCCL copies on one rank).
        Path prof = tmp.resolve("nccl-profiler-rank0-0000000000000001.jsonl");
        Files.writeString(
                prof,
                "{\"event\":\"comm\",\"format\":\"pathproof.nccl-profiler/1\",\"apiVersion\":5,"
                        + "\"commId\":\"0000000000000001\",\"rank\":0,\"nRanks\":1}\n"
                        + "{\"event\":\"finalize\",\"rank\":0,\"written\":1,\"lost\":0}\n");
        Evidence e = Ingest.read(List.of(Path.of("samples/h200-1rank-accepted/run"), prof));
        assertThat(e.ncclProfiler().status()).isEqualTo("loaded");
        AcceptanceTable t =
                Acceptance.accept(PredictionIo.readVerified(Path.of("samples/h200-1rank-accepted/prediction.json")), e);
        assertThat(profilerRows(t)).singleElement().satisfies(r -> {
            assertThat(r.id()).isEqualTo("profiler/rank0/bucket0");
            assertThat(r.verdict()).isEqualTo(Verdict.NOT_APPLICABLE);
            assertThat(r.observed()).contains("1 rank");
        });
        assertThat(t.verdict()).isNotEqualTo(Verdict.FAIL);
    }

    @Test
    void aRunThatDidNotAskForThePluginHasNoProfilerRows() {
        Evidence e = Ingest.read(List.of(Path.of("samples/h200-1rank-accepted/run")));
        assertThat(e.ncclProfiler()).isNull();
        AcceptanceTable t =
                Acceptance.accept(PredictionIo.readVerified(Path.of("samples/h200-1rank-accepted/prediction.json")), e);
        assertThat(profilerRows(t)).isEmpty();
        assertThat(t.rows()).isNotEmpty();
    }
}

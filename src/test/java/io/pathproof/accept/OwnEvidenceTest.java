package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Acceptance on evidence people produce themselves, without pathproof's instrumentation: the captures of
 * src/test/resources/io/pathproof/evidence/ddp-debug (torch 1.13, two gloo ranks of make_ddp_debug.py), against a
 * prediction made from the model's parameters (workload.json there).
 */
class OwnEvidenceTest {
    static final Path CAPTURES = Path.of("src/test/resources/io/pathproof/evidence/ddp-debug");

    @TempDir
    Path tmp;

    Path predictionFile;
    Prediction prediction;

    @BeforeEach
    void predict() {
        predictionFile = tmp.resolve("prediction.json");
        AcceptCliTest.Result r = AcceptCliTest.run(
                "predict",
                "--scenario",
                "cpu-x4-gloo",
                "--ranks",
                "2",
                "--torch",
                "1.13.1",
                "--workload",
                CAPTURES.resolve("workload.json").toString(),
                "-o",
                predictionFile.toString());
        assertThat(r.code()).as(r.err()).isZero();
        prediction = PredictionIo.readVerified(predictionFile);
    }

    /** A folder holding only what the user's script saved: _get_ddp_logging_data() of each rank, under its own names. */
    Path dumpsOnly() throws IOException {
        Path dir = tmp.resolve("dumps");
        Files.createDirectories(dir);
        for (int r = 0; r < 2; r++) {
            Files.copy(
                    CAPTURES.resolve("torch-1.13-detail/ddp-state-" + r + ".json"),
                    dir.resolve("ddp-state-" + r + ".json"));
        }
        return dir;
    }

    @Test
    void aFolderOfDdpLoggingDumpsProvesTheBucketsOnDdpsOwnRecord() throws IOException {
        Evidence e = Ingest.read(List.of(dumpsOnly()));
        AcceptanceTable t = Acceptance.accept(prediction, e);
        for (String id : List.of("buckets-construction", "buckets-rebuilt", "parameter-bytes", "world-size")) {
            AcceptanceRow r = t.row(id);
            assertThat(r.verdict()).as(r.toString()).isEqualTo(Verdict.PASS);
            assertThat(r.evidence()).as(id).containsExactly(EvidenceKind.DDP_LOGGING);
        }
        assertThat(t.row("buckets-rebuilt").observed())
                .contains("DDP logging rebuilt_bucket_sizes agrees on 2 rank(s)");
        assertThat(t.counts().fail()).isZero();
    }

    /** Each rank's stderr with TORCH_DISTRIBUTED_DEBUG=DETAIL, as the script wrote it, and nothing else. */
    Path logsOnly(String capture) throws IOException {
        Path dir = tmp.resolve("logs-" + capture);
        Files.createDirectories(dir);
        try (var s = Files.list(CAPTURES.resolve(capture))) {
            for (Path f :
                    s.filter(p -> p.getFileName().toString().endsWith(".log")).toList()) {
                Files.copy(f, dir.resolve(f.getFileName()));
            }
        }
        return dir;
    }

    @Test
    void ddpsDebugLogProvesTheConstructionBucketsAndChecksTheRebuildsCountAndLimits() throws IOException {
        for (String capture : List.of("torch-1.13-detail", "torch-1.13-info", "torch-1.13-detail-one-log")) {
            AcceptanceTable t = Acceptance.accept(prediction, Ingest.read(List.of(logsOnly(capture))));
            AcceptanceRow construction = t.row("buckets-construction");
            assertThat(construction.verdict()).as(capture + " " + construction).isEqualTo(Verdict.PASS);
            assertThat(construction.evidence()).containsExactly(EvidenceKind.DDP_LOG);
            assertThat(construction.observed()).contains("DDP's debug log bucket_sizes agrees on 2 message(s)");
            assertThat(construction.provenance()).allSatisfy(p -> assertThat(p).matches(".*\\.log:\\d+"));
            // The rebuild line holds how many buckets and their limits, not their sizes: never a PASS on its own.
            AcceptanceRow rebuilt = t.row("buckets-rebuilt");
            assertThat(rebuilt.verdict()).as(capture + " " + rebuilt).isEqualTo(Verdict.UNPROVEN);
            assertThat(rebuilt.observed())
                    .contains("3 bucket(s) rebuilt with size limits [1048576, 262144, 262144] on 2 rank(s),"
                            + " as predicted (it prints no sizes)");
            assertThat(t.row("parameter-bytes").verdict()).isEqualTo(Verdict.PASS);
            assertThat(t.row("parameter-bytes").evidence()).containsExactly(EvidenceKind.DDP_LOG);
            assertThat(t.counts().fail()).isZero();
        }
    }

    @Test
    void aRebuildOfOtherLimitsInDdpsDebugLogFailsTheRebuiltRow() throws IOException {
        Path dir = logsOnly("torch-1.13-detail");
        Path f = dir.resolve("train-1.log");
        Files.writeString(
                f,
                Files.readString(f)
                        .replace(
                                "3 buckets rebuilt with size limits: 1048576, 262144, 262144 bytes.",
                                "2 buckets rebuilt with size limits: 1048576, 26214400 bytes."));
        AcceptanceRow rebuilt =
                Acceptance.accept(prediction, Ingest.read(List.of(dir))).row("buckets-rebuilt");
        assertThat(rebuilt.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(rebuilt.evidence()).containsExactly(EvidenceKind.DDP_LOG);
        assertThat(rebuilt.observed())
                .contains("rank 1 DDP's debug log: 2 bucket(s) rebuilt with size limits [1048576, 26214400]");
        assertThat(rebuilt.provenance()).anySatisfy(p -> assertThat(p).endsWith("train-1.log:42"));
    }

    @Test
    void dumpsAndLogsTogetherAreTwoKindsOfEvidence() throws IOException {
        Path dir = logsOnly("torch-1.13-detail");
        for (int r = 0; r < 2; r++) {
            Files.copy(
                    CAPTURES.resolve("torch-1.13-detail/ddp-state-" + r + ".json"),
                    dir.resolve("ddp-state-" + r + ".json"));
        }
        AcceptanceTable t = Acceptance.accept(prediction, Ingest.read(List.of(dir)));
        assertThat(t.row("buckets-construction").evidence())
                .containsExactly(EvidenceKind.DDP_LOGGING, EvidenceKind.DDP_LOG);
        assertThat(t.row("buckets-rebuilt").evidence()).containsExactly(EvidenceKind.DDP_LOGGING);
        assertThat(t.row("buckets-rebuilt").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.row("parameter-bytes").evidence()).containsExactly(EvidenceKind.DDP_LOGGING, EvidenceKind.DDP_LOG);
    }

    @Test
    void torch211sOwnEvidenceProvesItsPrediction() throws IOException {
        // torch 2.11.0+cu130 rebuilds into four buckets (its first bucket takes the cap given, 262144): predicted for
        // 2.11.
        Path pred = tmp.resolve("prediction-2.11.json");
        AcceptCliTest.Result made = AcceptCliTest.run(
                "predict",
                "--scenario",
                "cpu-x4-gloo",
                "--ranks",
                "2",
                "--torch",
                "2.11.0",
                "--workload",
                CAPTURES.resolve("workload.json").toString(),
                "-o",
                pred.toString());
        assertThat(made.code()).as(made.err()).isZero();
        Prediction p211 = PredictionIo.readVerified(pred);
        AcceptanceTable logs = Acceptance.accept(p211, Ingest.read(List.of(logsOnly("torch-2.11-info"))));
        assertThat(logs.row("buckets-construction").verdict()).isEqualTo(Verdict.PASS);
        assertThat(logs.row("buckets-construction").evidence()).containsExactly(EvidenceKind.DDP_LOG);
        assertThat(logs.row("buckets-rebuilt").observed())
                .contains(
                        "4 bucket(s) rebuilt with size limits [262144, 262144, 262144, 262144] on 2 rank(s), as predicted");
        assertThat(logs.counts().fail()).isZero();
        Path all = tmp.resolve("all-2.11");
        Files.createDirectories(all);
        try (var s = Files.list(CAPTURES.resolve("torch-2.11-info"))) {
            for (Path f : s.toList()) {
                Files.copy(f, all.resolve(f.getFileName()));
            }
        }
        AcceptanceTable t = Acceptance.accept(p211, Ingest.read(List.of(all)));
        assertThat(t.row("buckets-rebuilt").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.row("buckets-rebuilt").observed())
                .contains("DDP logging rebuilt_bucket_sizes agrees on 2 rank(s)");
        assertThat(t.row("buckets-construction").evidence())
                .containsExactly(EvidenceKind.DDP_LOGGING, EvidenceKind.DDP_LOG);
        assertThat(t.counts().fail()).isZero();
    }

    @Test
    void acceptReadsSuchAFolder() throws IOException {
        AcceptCliTest.Result r = AcceptCliTest.run(
                "accept",
                "--prediction",
                predictionFile.toString(),
                "--run",
                dumpsOnly().toString());
        assertThat(r.err()).doesNotContain("no readable evidence");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("buckets-rebuilt");
    }
}

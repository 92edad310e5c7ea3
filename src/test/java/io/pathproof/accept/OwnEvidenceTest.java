package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.evidence.Evidence;
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

  @TempDir Path tmp;
  Path predictionFile;
  Prediction prediction;

  @BeforeEach
  void predict() {
    predictionFile = tmp.resolve("prediction.json");
    AcceptCliTest.Result r = AcceptCliTest.run("predict", "--scenario", "cpu-x4-gloo", "--ranks", "2", "--torch", "1.13.1",
        "--workload", CAPTURES.resolve("workload.json").toString(), "-o", predictionFile.toString());
    assertThat(r.code()).as(r.err()).isZero();
    prediction = PredictionIo.readVerified(predictionFile);
  }

  /** A folder holding only what the user's script saved: _get_ddp_logging_data() of each rank, under its own names. */
  Path dumpsOnly() throws IOException {
    Path dir = tmp.resolve("dumps");
    Files.createDirectories(dir);
    for (int r = 0; r < 2; r++) {
      Files.copy(CAPTURES.resolve("torch-1.13-detail/ddp-state-" + r + ".json"), dir.resolve("ddp-state-" + r + ".json"));
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
      assertThat(r.evidence()).as(id).containsExactly("ddp-logging");
    }
    assertThat(t.row("buckets-rebuilt").observed()).contains("DDP logging rebuilt_bucket_sizes agrees on 2 rank(s)");
    assertThat(t.counts().fail()).isZero();
  }

  @Test
  void acceptReadsSuchAFolder() throws IOException {
    AcceptCliTest.Result r = AcceptCliTest.run("accept", "--prediction", predictionFile.toString(), "--run", dumpsOnly().toString());
    assertThat(r.err()).doesNotContain("no readable evidence");
    assertThat(r.code()).as(r.err()).isZero();
    assertThat(r.out()).contains("buckets-rebuilt");
  }
}

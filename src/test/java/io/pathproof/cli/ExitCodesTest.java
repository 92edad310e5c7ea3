package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.accept.SyntheticRuns;
import io.pathproof.predict.PredictionIo;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The exit codes the README documents, each where it can be caused without a live run (run's 4–8 are caught by the
 * run room's live tests). Where code and README disagreed, the README's line is quoted beside the case.
 */
class ExitCodesTest {
    @TempDir
    Path tmp;

    @Test
    void predictVerifyExits9WhenTheFileIsMissingOrNoPrediction() throws Exception {
        // README: "predict --verify pred.json  # check a seal (exit 9: no such file, not a prediction, seal missing or
        // broken)"
        Path missing = tmp.resolve("missing.json");
        MainTest.Result r = MainTest.run("predict", "--verify", missing.toString());
        assertThat(r.code).isEqualTo(9);
        assertThat(r.err.strip()).isEqualTo("pathproof: no such file: " + missing);
        Path junk = tmp.resolve("junk.json");
        Files.writeString(junk, "{\"schema\": \"something else\"}");
        assertThat(MainTest.run("predict", "--verify", junk.toString()).code).isEqualTo(9);
        Path unsealed = tmp.resolve("unsealed.json");
        Files.writeString(unsealed, PredictionIo.toJson(SyntheticRuns.seedPrediction()));
        assertThat(MainTest.run("predict", "--verify", unsealed.toString()).code)
                .isEqualTo(9);
        Path sealed = tmp.resolve("sealed.json");
        PredictionIo.writeSealed(SyntheticRuns.seedPrediction(), sealed, "test");
        assertThat(MainTest.run("predict", "--verify", sealed.toString()).code).isZero();
    }

    @Test
    void acceptExits3ForAnUnreadablePredictionAnd9ForItsSeal() throws Exception {
        // README: "3 the run's evidence or the prediction file unreadable (…), 9 the prediction's seal missing or
        // broken"
        Path run = Path.of("samples/emulated-h200-x4/run");
        assertThat(MainTest.run(
                                "accept",
                                "--prediction",
                                tmp.resolve("none.json").toString(),
                                "--run",
                                run.toString())
                        .code)
                .isEqualTo(3);
        Path unsealed = tmp.resolve("unsealed.json");
        Files.writeString(unsealed, PredictionIo.toJson(SyntheticRuns.seedPrediction()));
        assertThat(MainTest.run("accept", "--prediction", unsealed.toString(), "--run", run.toString()).code)
                .isEqualTo(9);
        assertThat(MainTest.run(
                                "accept",
                                "--prediction",
                                "samples/emulated-h200-x4/prediction.json",
                                "--run",
                                tmp.resolve("no").toString())
                        .code)
                .isEqualTo(3);
    }

    @Test
    void ingestExits0WhenSomethingWasReadAnd3WhenNothing() {
        // README: "Exit 0 when something was read, 3 when nothing readable"
        assertThat(MainTest.run("ingest", "samples/emulated-h200-x4/run/nccl-rank0.log").code)
                .isZero();
        assertThat(MainTest.run("ingest", tmp.resolve("nothing.log").toString()).code)
                .isEqualTo(3);
    }

    @Test
    void proveExits2ForAMistypedFaultBeforeAnythingRuns() {
        // README: "2 a wrong command line (a mistyped `--fault`)"
        Path out = tmp.resolve("p");
        MainTest.Result r = MainTest.run("prove", "--fault", "compute_dleay_ms=3", "--out", out.toString());
        assertThat(r.code).isEqualTo(2);
        assertThat(r.err).contains("compute_dleay_ms");
        assertThat(out).doesNotExist();
    }
}

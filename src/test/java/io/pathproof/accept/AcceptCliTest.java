package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.cli.Main;
import io.pathproof.predict.PredictionIo;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The accept, diagnose and verify-fix command lines up to the point where they read a run's evidence. */
class AcceptCliTest {
    @TempDir
    Path tmp;

    record Result(int code, String out, String err) {}

    static Result run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int code = Main.run(args, new PrintWriter(o, true), new PrintWriter(e, true));
        return new Result(code, o.toString(), e.toString());
    }

    @Test
    void missingOptionsAreUsageErrors() {
        assertThat(run("accept", "--run", "r").code()).isEqualTo(2);
        assertThat(run("diagnose", "--baseline", "a").code()).isEqualTo(2);
        assertThat(run("verify-fix", "--fixed", "a").code()).isEqualTo(2);
    }

    @Test
    void anUnsealedPredictionIsRefusedWithExit9BeforeTheRunIsRead() throws Exception {
        Path p = tmp.resolve("p.json");
        Files.writeString(p, PredictionIo.toJson(SyntheticRuns.seedPrediction()));
        Result r = run(
                "accept",
                "--prediction",
                p.toString(),
                "--run",
                tmp.resolve("no-such-run").toString());
        assertThat(r.code()).isEqualTo(9);
        assertThat(r.err()).startsWith("pathproof: ").contains("p.json", "not sealed");
    }

    @Test
    void aTamperedPredictionIsRefusedWithExit9() throws Exception {
        Path p = tmp.resolve("p.json");
        PredictionIo.writeSealed(SyntheticRuns.seedPrediction(), p, "test");
        Files.writeString(p, Files.readString(p).replace("\"SIMPLE\"", "\"LL\""));
        Result r = run("accept", "--prediction", p.toString(), "--run", tmp.toString());
        assertThat(r.code()).isEqualTo(9);
        assertThat(r.err()).contains("seal broken");
    }

    @Test
    void unreadableInputsAreExit3WithOneLine() throws Exception {
        Path p = tmp.resolve("p.json");
        PredictionIo.writeSealed(SyntheticRuns.seedPrediction(), p, "test");
        Result r = run(
                "accept",
                "--prediction",
                p.toString(),
                "--run",
                tmp.resolve("missing").toString());
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err().strip()).doesNotContain("\n").contains("missing", "no such run directory");
        Result d = run(
                "diagnose",
                "--baseline",
                tmp.resolve("b").toString(),
                "--variant",
                tmp.resolve("v").toString());
        assertThat(d.code()).isEqualTo(3);
        assertThat(d.err()).contains("no such run directory");
        Result garbage =
                run("accept", "--prediction", tmp.resolve("nothing.json").toString(), "--run", tmp.toString());
        assertThat(garbage.code()).isEqualTo(3);
    }

    @Test
    void anUnknownFormatIsAUsageError() throws Exception {
        Path p = tmp.resolve("p.json");
        PredictionIo.writeSealed(SyntheticRuns.seedPrediction(), p, "test");
        Result r = run("accept", "--prediction", p.toString(), "--run", tmp.toString(), "--format", "yaml");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--format", "yaml");
        assertThat(run("verify-fix", "--baseline", "a", "--fixed", "b", "--format", "html")
                        .code())
                .isEqualTo(2);
    }
}

package io.pathproof.proofdir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.cli.Main;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.core.StageFile;
import io.pathproof.diagnose.Layer;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * proof.json through its one codec: the committed proofs load, a proof reads back as written, another schema is
 * refused.
 */
class ProofTest {
    static final List<Path> COMMITTED = List.of(
            Path.of("samples/emulated-h200-x4-proven"),
            Path.of("samples/emulated-h200-x4-prove"),
            Path.of("samples/emulated-h200-x4-own-job-proven"));

    @Test
    void everyCommittedProofLoadsTypedAndReadsBackAsItsRecordWritesIt(@TempDir Path tmp) throws Exception {
        for (Path dir : COMMITTED) {
            Proof p = Proof.read(dir);
            JsonNode file = Json.mapper().readTree(dir.resolve(Proof.FILE).toFile());
            assertThat(p.schema()).isEqualTo(Proof.SCHEMA);
            assertThat(p.verdict())
                    .as("%s", dir)
                    .isEqualTo(file.path("verdict").asText())
                    .isNotEmpty();
            assertThat(p.reveal().match()).isEqualTo(file.at("/reveal/match").asBoolean());
            assertThat(p.reveal().injected().layer()).isNotEqualTo(Layer.NONE);
            assertThat(p.reveal().injected().layer().id())
                    .isEqualTo(file.at("/reveal/injected/layer").asText());
            assertThat(p.fault().seed()).isEqualTo(file.at("/fault/seed").asLong());
            assertThat(p.files().acceptance()).isEqualTo(Proof.Files.ACCEPTANCE);
            assertThat(p.phases())
                    .extracting(Proof.Phase::name)
                    .contains("predict", "accept", "diagnose")
                    .endsWith("report");
            // Written by the codec and read again: the same record, and the same text when written once more.
            Path again = tmp.resolve(dir.getFileName());
            Files.createDirectories(again);
            Files.writeString(again.resolve(Proof.FILE), StageFile.text(p));
            Proof q = Proof.read(again);
            assertThat(q).isEqualTo(p);
            assertThat(StageFile.text(q)).isEqualTo(StageFile.text(p));
        }
        // An older prove wrote no runs, sequence or backend choice, and a drift without its last verdict: they read as
        // none.
        Proof older = Proof.read(Path.of("samples/emulated-h200-x4-prove"));
        assertThat(older.runs()).isEmpty();
        assertThat(older.sequence()).isNull();
        assertThat(older.drift().verdict()).isNull();
        assertThat(older.drift().baselineVsBaselineAgain().verdict()).isEqualTo("unknown");
    }

    @Test
    void aProofOfAnotherSchemaIsRefusedInOneLineNamingTheFileAndExit3(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("old");
        Files.createDirectories(dir);
        Files.writeString(dir.resolve(Proof.FILE), "{\"schema\":\"pathproof.proof/0\",\"verdict\":\"PROVEN\"}");
        assertThatThrownBy(() -> Proof.read(dir)).isInstanceOfSatisfying(PathproofException.class, e -> {
            assertThat(e.exitCode()).isEqualTo(ExitCode.BAD_INPUT);
            assertThat(e.getMessage())
                    .isEqualTo(dir.resolve(Proof.FILE) + ": schema pathproof.proof/0, expected " + Proof.SCHEMA);
        });
        Files.writeString(dir.resolve(Proof.FILE), "{\"verdict\":\"PROVEN\"}");
        assertThatThrownBy(() -> Proof.read(dir))
                .hasMessage(dir.resolve(Proof.FILE) + ": schema (none), expected " + Proof.SCHEMA);
        // Through the command line: exit 3, one line on stderr, no stack trace.
        Files.writeString(dir.resolve(Proof.FILE), "{\"schema\":\"pathproof.proof/2\"}");
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int code = Main.run(
                new String[] {
                    "report", dir.toString(), "--out", tmp.resolve("r").toString()
                },
                new PrintWriter(o, true),
                new PrintWriter(e, true));
        assertThat(code).isEqualTo(ExitCode.BAD_INPUT);
        assertThat(e.toString().strip())
                .doesNotContain("\n")
                .doesNotContain("Exception")
                .endsWith(Proof.FILE + ": schema pathproof.proof/2, expected " + Proof.SCHEMA);
    }

    @Test
    void aKeyOfTheWrongTypeIsOneLineNamingTheFile(@TempDir Path tmp) throws Exception {
        Files.writeString(tmp.resolve(Proof.FILE), "{\"schema\":\"" + Proof.SCHEMA + "\",\"worldSize\":\"four\"}");
        assertThatThrownBy(() -> Proof.read(tmp))
                .isInstanceOf(PathproofException.class)
                .hasMessageStartingWith(tmp.resolve(Proof.FILE) + ": ")
                .hasMessageContaining("an integer")
                .hasMessageNotContaining("\n");
    }
}

package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * docs/run-directory.md's "Making one from your own evidence" says what ingest reads from people's own files: every kind
 * a file can be read as is named there, with how to make it, and the recipes it gives are the ones the readers take.
 */
class RunDirectoryDocTest {
    private static String section() throws IOException {
        String doc = Files.readString(Path.of("docs/run-directory.md"), StandardCharsets.UTF_8);
        int from = doc.indexOf("## Making one from your own evidence");
        assertThat(from).as("the section").isNotNegative();
        int to = doc.indexOf("\n## ", from + 1);
        return to < 0 ? doc.substring(from) : doc.substring(from, to);
    }

    @Test
    void everyKindIngestReadsByContentIsDocumented() throws IOException {
        String s = section();
        for (FileKind kind : FileKind.values()) {
            assertThat(s).as(kind.label()).contains("`" + kind.label() + "`");
        }
    }

    @Test
    void itSaysHowToMakeDdpsOwnEvidenceAndWhatItProves() throws IOException {
        String s = section();
        assertThat(s)
                .contains(
                        "_get_ddp_logging_data()",
                        "any name",
                        "TORCH_DISTRIBUTED_DEBUG=INFO",
                        "TORCH_CPP_LOG_LEVEL=INFO",
                        "buckets rebuilt with size limits",
                        "never a PASS on its own",
                        "UNPROVEN with the reason",
                        "N/A on a gloo run");
        // The manifest it offers is read as such: its keys are the ones the rows read.
        assertThat(s).contains("\"backend\"", "\"worldSize\"", "\"versions\"", "\"start\"");
    }

    @Test
    void theDumpItsRecipeWritesIsReadUnderTheNameItGives() throws IOException {
        // {any name}-{rank}.json, as the recipe writes it: the committed dump of rank 1 under such a name.
        Path dir = Files.createTempDirectory("own");
        try {
            Files.copy(
                    Read.RES.resolve("ddp-debug/torch-1.13-detail/ddp-state-1.json"),
                    dir.resolve("after-training-1.json"));
            Evidence e = Ingest.read(List.of(dir));
            assertThat(e.files()).singleElement().satisfies(f -> assertThat(f.kind())
                    .isEqualTo(FileKind.DDP_LOGGING));
            assertThat(e.ddp().logging()).containsOnlyKeys("1");
        } finally {
            try (var s = Files.list(dir)) {
                for (Path f : s.toList()) {
                    Files.delete(f);
                }
            }
            Files.delete(dir);
        }
    }
}

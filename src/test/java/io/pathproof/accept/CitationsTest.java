package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A row cites only files that exist, or says in words what it read where the fact has no file of its own ("ddp logging
 * rank 0 backend_name"). The backend row cited DIR/manifest.json for a run without a manifest, whose backend came from
 * DDP's own record; the integrity row did the same for a run directory without one.
 */
class CitationsTest {
    /** A citation's file: what comes before " (" and a ":line" or "#event". */
    private static final Pattern FILE = Pattern.compile("^(.*?)(?::\\d+|#\\d+)?(?: \\(.*)?$");

    static final Path CAPTURES = OwnEvidenceTest.CAPTURES;
    static final Path GLOO2 = Path.of("src/test/resources/io/pathproof/run/testdata/gloo2-phases");

    @TempDir
    Path tmp;

    private Prediction predict(String... args) {
        Path out = tmp.resolve(
                "prediction-" + args.length + "-" + String.join("", args).hashCode() + ".json");
        String[] all = Stream.concat(
                        Stream.of("predict"), Stream.concat(Stream.of(args), Stream.of("-o", out.toString())))
                .toArray(String[]::new);
        AcceptCliTest.Result r = AcceptCliTest.run(all);
        assertThat(r.code()).as(r.err()).isZero();
        return PredictionIo.readVerified(out);
    }

    private static void assertCitationsExist(AcceptanceTable t) {
        for (AcceptanceRow r : t.rows()) {
            for (String p : r.provenance()) {
                if (p.startsWith("… and ")) {
                    continue;
                }
                Matcher m = FILE.matcher(p);
                assertThat(m.matches()).isTrue();
                String file = m.group(1);
                if (file.contains("/")) {
                    assertThat(Path.of(file)).as("row %s cites %s", r.id(), p).exists();
                } else {
                    assertThat(p)
                            .as("row %s cites %s: neither a file nor words", r.id(), p)
                            .contains(" ");
                }
            }
        }
    }

    private Path copy(Path from, String name, java.util.function.Predicate<String> keep) throws IOException {
        Path dir = tmp.resolve(name);
        Files.createDirectories(dir);
        try (Stream<Path> s = Files.list(from)) {
            for (Path f : s.filter(Files::isRegularFile)
                    .filter(f -> keep.test(f.getFileName().toString()))
                    .toList()) {
                Files.copy(f, dir.resolve(f.getFileName()));
            }
        }
        return dir;
    }

    @Test
    void aRunWithoutAManifestCitesWhereItsBackendWasRead() throws IOException {
        Prediction p = predict(
                "--scenario",
                "cpu-x4-gloo",
                "--ranks",
                "2",
                "--torch",
                "1.13.1",
                "--workload",
                CAPTURES.resolve("workload.json").toString());
        Path dumps = copy(CAPTURES.resolve("torch-1.13-detail"), "dumps", n -> n.endsWith(".json"));
        AcceptanceTable t = Acceptance.accept(p, Ingest.read(List.of(dumps)));
        assertCitationsExist(t);
        AcceptanceRow backend = t.row("backend");
        assertThat(backend.verdict()).isEqualTo(Verdict.PASS);
        assertThat(backend.evidence()).containsExactly(EvidenceKind.DDP_LOGGING);
        assertThat(backend.provenance())
                .containsExactly(dumps.resolve("ddp-state-0.json") + " (DDP logging rank 0 backend_name)");
        assertThat(t.row("world-size").provenance())
                .containsExactly(dumps.resolve("ddp-state-0.json") + " (DDP logging rank 0 world_size)");

        Path logs = copy(CAPTURES.resolve("torch-1.13-detail"), "logs", n -> n.endsWith(".log"));
        AcceptanceTable fromLogs = Acceptance.accept(p, Ingest.read(List.of(logs)));
        assertCitationsExist(fromLogs);
        assertThat(fromLogs.row("backend").evidence()).containsExactly(EvidenceKind.DDP_LOG);
        assertThat(fromLogs.row("backend").provenance())
                .containsExactly(logs.resolve("train-0.log") + ":19 (backend_name)");
        assertThat(fromLogs.row("world-size").verdict()).isEqualTo(Verdict.PASS);
        assertThat(fromLogs.row("world-size").evidence()).containsExactly(EvidenceKind.DDP_LOG);
    }

    @Test
    void aRunDirectoryWithoutAManifestIsCitedAsItself() throws IOException {
        Prediction p = predict("--scenario", "cpu-x4-gloo", "--torch", "1.13.1");
        Path run = copy(GLOO2, "no-manifest", n -> !n.equals("manifest.json"));
        AcceptanceTable t = Acceptance.accept(p, Ingest.read(List.of(run)));
        assertCitationsExist(t);
        assertThat(t.row("evidence-integrity").provenance())
                .containsExactly(run + " (its per-rank files; no manifest.json)");
        assertThat(t.row("backend").provenance()).containsExactly("ddp logging rank 0 backend_name");
    }

    @Test
    void everyCitationOfTheRecordedRunsExists() throws IOException {
        Prediction gloo = predict("--scenario", "cpu-x4-gloo", "--torch", "1.13.1");
        assertCitationsExist(Acceptance.accept(gloo, Ingest.read(List.of(GLOO2))));
        assertCitationsExist(
                Acceptance.accept(gloo, Ingest.read(List.of(copy(GLOO2, "own", n -> !n.startsWith("trace-"))))));
        Prediction h200 = PredictionIo.readVerified(Path.of("samples/h200-1rank-accepted/prediction.json"));
        assertCitationsExist(Acceptance.accept(h200, Ingest.read(List.of(Path.of("samples/h200-1rank-accepted/run")))));
    }
}

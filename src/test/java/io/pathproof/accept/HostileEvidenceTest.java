package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.cli.Main;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.PredictionIo;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Hostile evidence (issue 19 §1): one rank's file of each kind cut mid-line, emptied, deleted, or replaced by another
 * rank's, and a rank's NCCL log torn — on copies of a whole gloo × 4 run (every row PASS or N/A) and of the emulated
 * H200 × 4 baseline (NCCL logs, flight recorder, kernel traces). No case may give an all-PASS table: each row that
 * reads the damaged kind is not PASS, one of them is UNPROVEN naming the rank and the file, and diagnose refuses the run
 * (exit 3, one line naming the file). Before, a cut or emptied rank 2 was accepted "11 PASS, 0 FAIL" and diagnosed.
 */
class HostileEvidenceTest {
    static final Path GLOO = Path.of("src/test/resources/io/pathproof/accept/gloo4-small");
    static final Path NCCL = Path.of("samples/emulated-h200-x4-proven");

    /** What each kind of file feeds, written here apart from main code's table: the test's own account of the rows. */
    static final Map<String, List<String>> ROWS = Map.of(
            "hook", List.of("parameter-bytes", "buckets-construction", "buckets-rebuilt", "completion-order"),
            "steps", List.of(),
            "ddp-logging", List.of("parameter-bytes", "buckets-construction", "buckets-rebuilt"),
            "trace", List.of("launch-shape/rank2/bucket0", "kernels/rank2"),
            "nccl",
                    List.of(
                            "collective/bucket0",
                            "algorithm/bucket0",
                            "protocol/bucket0",
                            "coll-channels",
                            "ring-order",
                            "evidence-consistency",
                            "bus-bytes/bucket0"),
            "flight-recorder", List.of("collective/bucket0"),
            "replicas", List.of("replicas"),
            "replica", List.of("replicas"));

    enum Damage {
        CUT,
        EMPTIED,
        DELETED,
        DUPLICATED,
        TORN
    }

    @TempDir
    Path tmp;

    static Stream<Arguments> cases() {
        List<Arguments> out = new ArrayList<>();
        for (String f : List.of(
                "hook-rank%d.jsonl",
                "steps-rank%d.jsonl", "ddp-logging-rank%d.json", "replicas.json", "replica-rank%d.json")) {
            for (Damage d : List.of(Damage.CUT, Damage.EMPTIED, Damage.DELETED, Damage.DUPLICATED)) {
                out.add(Arguments.of("gloo", f, d));
            }
        }
        for (String f : List.of("nccl-rank%d.log", "flight-recorder-rank%d.json", "trace-rank%d.json")) {
            for (Damage d : List.of(Damage.CUT, Damage.EMPTIED, Damage.DELETED, Damage.DUPLICATED)) {
                out.add(Arguments.of("nccl", f, d));
            }
        }
        out.add(Arguments.of("nccl", "nccl-rank%d.log", Damage.TORN));
        return out.stream();
    }

    @Test
    void theUndamagedRunsAreWhole() throws IOException {
        AcceptanceTable gloo = accept("gloo", copy("gloo", false));
        assertThat(gloo.verdict()).isEqualTo(Verdict.PASS);
        AcceptanceTable nccl = accept("nccl", copy("nccl", false));
        // The sample's sealed prediction predates the predicted tuning table: that row is unproven for want of it.
        assertThat(nccl.rows()).filteredOn(r -> r.verdict() == Verdict.UNPROVEN).allSatisfy(r -> assertThat(
                        r.id().startsWith("transport-mechanism/")
                                || (r.id().equals("tuning-table")
                                        && r.observed().contains("the prediction holds no tuning table")))
                .as(r.id() + ": " + r.observed())
                .isTrue());
        assertThat(nccl.counts().fail()).isZero();
        assertThat(gloo.row("evidence-integrity").verdict()).isEqualTo(Verdict.PASS);
        assertThat(nccl.row("evidence-integrity").verdict()).isEqualTo(Verdict.PASS);
    }

    @ParameterizedTest(name = "{0}: {1} {2}")
    @MethodSource("cases")
    void aDamagedRankFileNeverGivesAnAllPassTable(String fixture, String pattern, Damage damage) throws IOException {
        Path run = copy(fixture, pattern.startsWith("replica-"));
        String name = pattern.contains("%d") ? String.format(pattern, 2) : pattern;
        damage(run, pattern, damage);

        AcceptanceTable t = accept(fixture, run);
        assertThat(t.verdict()).as(t.counts().toString()).isNotEqualTo(Verdict.PASS);
        // Whatever the kind, the table's own row for the run's evidence says what is missing, and where.
        AcceptanceRow whole = t.row("evidence-integrity");
        assertThat(whole).isNotNull();
        assertThat(whole.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(whole.provenance()).anySatisfy(p -> assertThat(p).contains(name));
        // The kind is the file name before "-rank" (or ".json" for the one run-wide file).
        String kind = pattern.contains("-rank")
                ? pattern.substring(0, pattern.indexOf("-rank"))
                : pattern.substring(0, pattern.indexOf('.'));
        List<String> rows = ROWS.get(kind);
        for (String id : rows) {
            AcceptanceRow r = t.row(id);
            assertThat(r).as(id).isNotNull();
            assertThat(r.verdict()).as(id + ": " + r.observed()).isNotEqualTo(Verdict.PASS);
        }
        if (!rows.isEmpty()) {
            // The row says why: the rank and the file (with its line where one line is at fault).
            assertThat(t.rows()).as("a row naming " + name).anySatisfy(r -> {
                assertThat(r.verdict()).isEqualTo(Verdict.UNPROVEN);
                assertThat(r.observed()).startsWith("evidence incomplete: ").contains(name);
                if (!name.equals("replicas.json")) {
                    assertThat(r.observed()).contains("rank 2: ");
                }
                assertThat(r.provenance()).anySatisfy(p -> assertThat(p).contains(name));
            });
        }
        // diagnose refuses such a run: exit 3, one line that names the file.
        Evidence damaged = Ingest.read(List.of(run));
        Evidence other = Ingest.read(List.of(fixture.equals("gloo") ? GLOO.resolve("run") : NCCL.resolve("variant")));
        PathproofException e = catchThrowableOfType(() -> Diagnosis.diagnose(other, damaged), PathproofException.class);
        assertThat(e).as("diagnose refuses").isNotNull();
        assertThat(e.exitCode()).isEqualTo(3);
        assertThat(e.getMessage()).contains(name).doesNotContain("\n");
        if (fixture.equals("nccl")) {
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int code = Main.run(
                    new String[] {
                        "diagnose", "--baseline", NCCL.resolve("variant").toString(), "--variant", run.toString()
                    },
                    new PrintWriter(out, true),
                    new PrintWriter(err, true));
            assertThat(code).isEqualTo(3);
            assertThat(err.toString().strip())
                    .startsWith("pathproof: ")
                    .contains(name)
                    .doesNotContain("\n")
                    .doesNotContain("Exception");
            assertThat(out.toString()).isEmpty();
        }
    }

    @Test
    void acceptPrintsTheIntegritySummaryInTextMarkdownAndJson() throws IOException {
        Path run = copy("gloo", false);
        damage(run, "steps-rank%d.jsonl", Damage.CUT);
        AcceptanceTable t = accept("gloo", run);
        String text = Acceptance.render(t, "table");
        assertThat(text)
                .contains(
                        "integrity: 4 rank(s) (manifest worldSize); ranks with whole files: hook 4/4, steps 3/4, ddp-logging 4/4")
                .containsPattern("\\n  gap rank 2: .*steps-rank2\\.jsonl:\\d+: the last line is cut mid-JSON")
                // the gap makes the integrity row itself UNPROVEN: the summary counts it
                .containsPattern("\\d+ gap\\(s\\), [1-9]\\d* row\\(s\\) UNPROVEN on them");
        assertThat(t.row("evidence-integrity").verdict()).isEqualTo(Verdict.UNPROVEN);
        String md = Acceptance.render(t, "markdown");
        assertThat(md)
                .contains("**Evidence integrity: 4 rank(s)")
                .containsPattern("\\n- gap rank 2: .*steps-rank2\\.jsonl:\\d+");
        JsonNode j = Json.mapper().readTree(Acceptance.render(t, "json"));
        assertThat(j.at("/integrity/worldSize").asInt()).isEqualTo(4);
        assertThat(j.at("/integrity/gaps/0/rank").asInt()).isEqualTo(2);
        assertThat(j.at("/integrity/gaps/0/file").asText()).endsWith("steps-rank2.jsonl");
        assertThat(j.at("/integrity/gaps/0/line").asLong()).isPositive();
        assertThat(j.at("/integrity/kinds")).anySatisfy(k -> {
            assertThat(k.path("kind").asText()).isEqualTo("hook");
            assertThat(k.path("files").asText()).isEqualTo("hook-rank{r}.jsonl");
            assertThat(k.path("completeRanks")).hasSize(4);
        });
        // A whole run says so in one line, and lists no gap.
        String whole = Acceptance.render(accept("gloo", copy("gloo-whole", false)), "table");
        assertThat(whole)
                .contains("integrity: 4 rank(s) (manifest worldSize); every rank's files whole: hook 4/4, steps 4/4")
                .doesNotContain("  gap ");
    }

    @Test
    void aRowThatDidNotReadTheDamagedKindKeepsItsVerdict() throws IOException {
        // world-size reads DDP logging only where the manifest has no worldSize; this manifest has one.
        Path run = copy("gloo", false);
        damage(run, "ddp-logging-rank%d.json", Damage.EMPTIED);
        AcceptanceTable t = accept("gloo", run);
        assertThat(t.row("world-size").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.row("world-size").evidence()).containsExactly(EvidenceKind.MANIFEST);
        assertThat(t.row("buckets-rebuilt").verdict()).isEqualTo(Verdict.UNPROVEN);
    }

    private AcceptanceTable accept(String fixture, Path run) {
        Path pred = (fixture.startsWith("gloo") ? GLOO : NCCL).resolve("prediction.json");
        return Acceptance.accept(PredictionIo.readVerified(pred), Ingest.read(List.of(run)));
    }

    /** A copy of the fixture's run; with {@code perRankReplicas}, its digests also as replica-rank{r}.json files. */
    private Path copy(String fixture, boolean perRankReplicas) throws IOException {
        Path src = fixture.startsWith("gloo") ? GLOO.resolve("run") : NCCL.resolve("baseline");
        Path dst = tmp.resolve(fixture + "-run");
        Files.createDirectories(dst);
        try (Stream<Path> s = Files.list(src)) {
            s.filter(Files::isRegularFile).forEach(f -> {
                try {
                    Files.copy(f, dst.resolve(f.getFileName().toString()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        if (perRankReplicas) {
            // As a user's instrumented job writes them: one digest per rank, each in its own file.
            for (JsonNode d : Json.mapper()
                    .readTree(dst.resolve("replicas.json").toFile())
                    .path("digests")) {
                Files.writeString(
                        dst.resolve("replica-rank" + d.path("rank").asInt() + ".json"),
                        Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(d) + "\n");
            }
        }
        return dst;
    }

    private static void damage(Path run, String pattern, Damage damage) throws IOException {
        Path f = run.resolve(pattern.contains("%d") ? String.format(pattern, 2) : pattern);
        byte[] b = Files.readAllBytes(f);
        switch (damage) {
            case CUT -> Files.write(f, Arrays.copyOf(b, b.length / 2));
            case EMPTIED -> Files.write(f, new byte[0]);
            case DELETED -> Files.delete(f);
            case DUPLICATED -> {
                if (pattern.contains("%d")) {
                    Files.copy(
                            run.resolve(String.format(pattern, 1)),
                            f,
                            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                } else {
                    // One run-wide file: rank 1's digest twice, rank 2's gone.
                    ObjectNode n = (ObjectNode) Json.mapper().readTree(b);
                    ArrayNode ds = (ArrayNode) n.path("digests");
                    ds.set(2, ds.get(1).deepCopy());
                    Files.writeString(
                            f,
                            Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(n),
                            StandardCharsets.UTF_8);
                }
            }
            case TORN -> {
                // The last line cut in its middle, as when a rank dies while NCCL writes.
                int end = b.length - 1;
                int start = end - 1;
                while (start > 0 && b[start - 1] != '\n') {
                    start--;
                }
                Files.write(f, Arrays.copyOf(b, start + (end - start) / 2));
            }
            default -> throw new IllegalStateException();
        }
    }
}

package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.PredictionIo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The gradients each rank of a user's job held at its end (replica-rank{r}.json's {@code gradients}): after a backward
 * DDP averaged, every rank holds the same ones. A job that reproduces pytorch issue 69031 (no_sync, then a synced
 * micro-batch, with find_unused_parameters) ends with equal parameters (no optimizer step) and different gradients;
 * the replicas row passed it. Gradients are compared only where DDP promises them equal.
 */
class GradientDigestTest {
    static final Path GLOO = Path.of("src/test/resources/io/pathproof/accept/gloo4-small");
    static final String A = "a".repeat(64);
    static final String B = "b".repeat(64);

    @TempDir
    Path tmp;

    @Test
    void gradientsThatDifferAfterAnAveragedBackwardFailTheReplicasRow() throws IOException {
        Row r = replicas(run(new Grad(A, 9, true), new Grad(A, 9, true), new Grad(B, 9, true), new Grad(A, 9, true)));
        assertThat(r.verdict).isEqualTo(Verdict.FAIL);
        assertThat(r.observed)
                .startsWith("parameters equal on 4/4 ranks, but the gradients DDP averaged in iteration 9 differ:")
                .contains("ranks [2] sha256 bbbbbbbbbbbb…");
    }

    @Test
    void equalGradientsAreSaidInThePass() throws IOException {
        Row r = replicas(run(new Grad(A, 9, true), new Grad(A, 9, true), new Grad(A, 9, true), new Grad(A, 9, true)));
        assertThat(r.verdict).isEqualTo(Verdict.PASS);
        assertThat(r.observed).endsWith("; the gradients DDP averaged in iteration 9 equal too");
    }

    @Test
    void ranksWhoseLastBackwardDiffersAreNotCompared() throws IOException {
        // DDP's Join: a rank that ran out of inputs ended an iteration earlier, with its own last gradients
        Row r = replicas(run(new Grad(A, 9, true), new Grad(B, 8, true), new Grad(A, 9, true), new Grad(A, 9, true)));
        assertThat(r.verdict).isEqualTo(Verdict.PASS);
        assertThat(r.observed)
                .endsWith("gradients not compared: the ranks' last backward was not one iteration [8, 9]");
    }

    @Test
    void aLastBackwardUnderNoSyncIsNotCompared() throws IOException {
        Row r = replicas(
                run(new Grad(A, 9, false), new Grad(B, 9, false), new Grad(A, 9, false), new Grad(A, 9, false)));
        assertThat(r.verdict).isEqualTo(Verdict.PASS);
        assertThat(r.observed).contains("ran without gradient sync (no_sync)");
    }

    @Test
    void aMalformedGradientDigestIsAProblemNotAVerdict() throws IOException {
        Path run = run(new Grad(A, 9, true), new Grad(A, 9, true), new Grad(A, 9, true), new Grad(A, 9, true));
        ObjectNode d = (ObjectNode)
                Json.mapper().readTree(run.resolve("replica-rank1.json").toFile());
        ((ObjectNode) d.get("gradients")).put("sha256", "not hex");
        Files.writeString(run.resolve("replica-rank1.json"), d.toString());
        assertThat(Ingest.read(List.of(run)).problems())
                .anySatisfy(p ->
                        assertThat(p.toString()).contains("replica-rank1.json").contains("gradients:"));
        assertThat(replicas(run).observed).contains("gradients not compared");
    }

    private record Grad(String sha, int iteration, boolean averaged) {}

    private record Row(Verdict verdict, String observed) {}

    private static Row replicas(Path run) {
        AcceptanceTable t = Acceptance.accept(
                PredictionIo.readVerified(GLOO.resolve("prediction.json")), Ingest.read(List.of(run)));
        AcceptanceRow r = t.row("replicas");
        return new Row(r.verdict(), r.observed());
    }

    /** The fixture's run with its digests as a user's job writes them, one file per rank, each with gradients. */
    private Path run(Grad... grads) throws IOException {
        Path dst = Files.createTempDirectory(tmp, "run");
        try (Stream<Path> s = Files.list(GLOO.resolve("run"))) {
            s.forEach(f -> {
                try {
                    Files.copy(f, dst.resolve(f.getFileName().toString()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        for (JsonNode d : Json.mapper()
                .readTree(GLOO.resolve("run/replicas.json").toFile())
                .path("digests")) {
            Grad g = grads[d.path("rank").asInt()];
            ObjectNode o = ((ObjectNode) d).deepCopy();
            o.putObject("gradients")
                    .put("sha256", g.sha())
                    .put("iteration", g.iteration())
                    .put("averaged", g.averaged())
                    .put("held", 6);
            Files.writeString(dst.resolve("replica-rank" + d.path("rank").asInt() + ".json"), o.toString());
        }
        return dst;
    }
}

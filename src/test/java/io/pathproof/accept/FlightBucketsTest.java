package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
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
 * The buckets of every iteration from torch's flight recorder, on a real run that recorded no comm hook: the conv net
 * of examples/ with its own fp16 compression hook, 4 ranks on an emulated H200 × 4 (NCCL 2.28.9, torch 2.11; the
 * committed sample), and on copies of it whose dumps lost a bucket or were cut by the recorder's ring.
 */
class FlightBucketsTest {
    private static final Path SAMPLE = Path.of("samples/emulated-h200-x4-own-job-no-hook/run");

    @TempDir
    Path tmp;

    private static AcceptanceRow row(Path run, String id) {
        Prediction p = PredictionIo.readVerified(SAMPLE.resolve("prediction.json"));
        AcceptanceTable t = Acceptance.accept(p, Ingest.read(List.of(run)));
        return t.rows().stream().filter(r -> r.id().equals(id)).findFirst().orElseThrow();
    }

    @Test
    void withoutAHookEveryIterationsBucketsAreProvenFromTheFlightRecorder() {
        AcceptanceRow rebuilt = row(SAMPLE, "buckets-rebuilt");
        assertThat(rebuilt.verdict()).isEqualTo(Verdict.PASS);
        assertThat(rebuilt.evidence()).contains(EvidenceKind.FLIGHT_RECORDER, EvidenceKind.DDP_LOGGING);
        // 24 steps: iterations 1..23 carry the rebuilt buckets on each of the 4 ranks
        assertThat(rebuilt.observed())
                .contains("in the backward of each of 92 rank×iteration(s) in the flight recorder"
                        + " (ranks [0, 1, 2, 3])");
        AcceptanceRow construction = row(SAMPLE, "buckets-construction");
        assertThat(construction.verdict()).isEqualTo(Verdict.PASS);
        assertThat(construction.observed()).contains("each of 4 rank×iteration(s) in the flight recorder");
        assertThat(row(SAMPLE, "predicted-before-run").observed()).contains("flight recorder, iteration 0");
    }

    @Test
    void aBucketMissingFromOneRanksBackwardFails() throws IOException {
        Path run = copy();
        ArrayNode entries = entries(run, 2);
        int victim = nthHalfAllReduce(entries, 30);
        entries.remove(victim);
        write(run, 2, entries);
        AcceptanceRow rebuilt = row(run, "buckets-rebuilt");
        assertThat(rebuilt.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(rebuilt.observed())
                .contains("rank 2 iteration ")
                .contains("1 AllReduce(s) of")
                .contains("(flight recorder; predicted [");
    }

    @Test
    void iterationsTheRecordersRingMayHaveCutAreNotJudged() throws IOException {
        Path run = copy();
        for (int rank = 0; rank < 4; rank++) {
            ArrayNode entries = entries(run, rank);
            // keep from the second bucket's AllReduce of some iteration on: that iteration lost its first bucket
            int cut = nthHalfAllReduce(entries, 20);
            while (!entries.get(cut)
                    .path("input_sizes")
                    .get(0)
                    .get(0)
                    .asText()
                    .equals(entries.get(nthHalfAllReduce(entries, 1))
                            .path("input_sizes")
                            .get(0)
                            .get(0)
                            .asText())) {
                cut++; // the first all_reduce of an iteration after the rebuild is bucket 0; move to a bucket-1 entry
            }
            cut++;
            ArrayNode kept = Json.mapper().createArrayNode();
            for (int i = cut; i < entries.size(); i++) {
                kept.add(entries.get(i));
            }
            write(run, rank, kept);
        }
        AcceptanceRow rebuilt = row(run, "buckets-rebuilt");
        assertThat(rebuilt.verdict()).as(rebuilt.observed()).isEqualTo(Verdict.PASS);
        assertThat(rebuilt.observed())
                .doesNotContain("each of 92 rank×iteration(s)")
                .contains("in the flight recorder");
    }

    /**
     * A second DDP object of the job (a GAN's discriminator) launches its buckets' AllReduces on the same process group,
     * in the same backward window: the recorder's AllReduces there are not the watched model's alone, so they are set
     * aside. Here the sample's window is left whole, and the buckets rest on DDP's own logging without it.
     */
    @Test
    void anotherDdpObjectsAllReducesSetTheRecorderAside() throws IOException {
        Path run = copy();
        Path manifest = run.resolve("manifest.json");
        ObjectNode m = (ObjectNode) Json.mapper().readTree(manifest.toFile());
        ((ObjectNode) m.path("instrumentation"))
                .putArray("otherDdpObjects")
                .addObject()
                .put("module", "Discriminator")
                .put("parameters", 11);
        Files.writeString(manifest, m.toString());
        AcceptanceRow rebuilt = row(run, "buckets-rebuilt");
        assertThat(rebuilt.evidence()).doesNotContain(EvidenceKind.FLIGHT_RECORDER);
        assertThat(rebuilt.observed()).doesNotContain("in the flight recorder");
        assertThat(row(SAMPLE, "buckets-rebuilt").evidence()).contains(EvidenceKind.FLIGHT_RECORDER);
    }

    /** The index of the n-th (0-based) half-precision AllReduce: the fp16 hook's buckets. */
    private static int nthHalfAllReduce(ArrayNode entries, int n) {
        int seen = 0;
        for (int i = 0; i < entries.size(); i++) {
            JsonNode e = entries.get(i);
            if (e.path("profiling_name").asText().equals("nccl:all_reduce")
                    && e.path("input_dtypes").get(0).asText().equals("Half")
                    && seen++ == n) {
                return i;
            }
        }
        throw new AssertionError("fewer than " + (n + 1) + " half AllReduces in the sample");
    }

    private static ArrayNode entries(Path run, int rank) throws IOException {
        return (ArrayNode) Json.mapper()
                .readTree(run.resolve("flight-recorder-rank" + rank + ".json").toFile())
                .path("entries");
    }

    private static void write(Path run, int rank, ArrayNode entries) throws IOException {
        Path f = run.resolve("flight-recorder-rank" + rank + ".json");
        ObjectNode root = (ObjectNode) Json.mapper().readTree(f.toFile());
        root.set("entries", entries);
        Files.writeString(f, Json.mapper().writeValueAsString(root));
    }

    private Path copy() throws IOException {
        Path dst = tmp.resolve("run");
        Files.createDirectories(dst);
        try (Stream<Path> files = Files.list(SAMPLE)) {
            files.filter(Files::isRegularFile).forEach(f -> {
                try {
                    Files.copy(f, dst.resolve(f.getFileName().toString()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        return dst;
    }
}

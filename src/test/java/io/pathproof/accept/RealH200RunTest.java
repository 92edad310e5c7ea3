package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.ddp.Bucket;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.FileKind;
import io.pathproof.evidence.Source;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.CommunicatorPrediction;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.scenario.DType;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * accept and diagnose on the facts of a real run: the one-H200 run of the run room (hook records, steps, replicas,
 * DDP logging and manifest as the harness wrote them; NCCL and Kineto facts mirrored from its log and trace).
 */
class RealH200RunTest {
    private static final String DIR = "runs/h200-1rank";

    @TempDir
    Path tmp;

    private static String text(String name) throws IOException {
        try (InputStream in = RealH200RunTest.class.getResourceAsStream("/io/pathproof/accept/h200-1rank/" + name)) {
            assertThat(in).as(name).isNotNull();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static List<JsonNode> jsonl(String name) throws IOException {
        List<JsonNode> out = new ArrayList<>();
        for (String line : text(name).split("\n")) {
            if (!line.isBlank()) {
                out.add(Json.mapper().readTree(line));
            }
        }
        return out;
    }

    private static Long ns(JsonNode n) {
        return n == null || n.isNull() ? null : n.asLong();
    }

    static Evidence evidence() throws IOException {
        String log = DIR + "/nccl-rank0.log";
        String trace = DIR + "/trace-rank0.json";
        List<Evidence.BucketRecord> hooks = new ArrayList<>();
        int line = 1;
        for (JsonNode h : jsonl("hook-rank0.jsonl")) {
            List<String> params = new ArrayList<>();
            h.path("params").forEach(p -> params.add(p.asText()));
            hooks.add(new Evidence.BucketRecord(
                    h.path("rank").asInt(),
                    h.path("iteration").asInt(),
                    h.path("index").asInt(),
                    h.path("bytes").asLong(),
                    h.path("isLast").asBoolean(),
                    params,
                    ns(h.get("readyNs")),
                    ns(h.get("futureDoneNs")),
                    ns(h.get("gpuDoneNs")),
                    Source.line(DIR + "/hook-rank0.jsonl", line++)));
        }
        List<Evidence.Step> steps = new ArrayList<>();
        line = 1;
        for (JsonNode s : jsonl("steps-rank0.jsonl")) {
            steps.add(new Evidence.Step(
                    s.path("rank").asInt(),
                    s.path("iteration").asInt(),
                    s.path("ms").asDouble(),
                    "measured".equals(s.path("phase").asText()),
                    Source.line(DIR + "/steps-rank0.jsonl", line++),
                    null,
                    null));
        }
        JsonNode rep = Json.mapper().readTree(text("replicas.json"));
        List<Evidence.Digest> digests = new ArrayList<>();
        for (JsonNode d : rep.path("digests")) {
            List<Double> samples = new ArrayList<>();
            d.path("samples").forEach(x -> samples.add(x.asDouble()));
            digests.add(
                    new Evidence.Digest(d.path("rank").asInt(), d.path("sha256").asText(), samples));
        }
        Map<String, JsonNode> logging =
                new TreeMap<>(Map.of("0", Json.mapper().readTree(text("ddp-logging-rank0.json"))));
        // From nccl-rank0.log: line 3 "NCCL version 2.28.9+cuda13.0", line 306 "64 coll channels, … 64 p2p channels per
        // peer", line 315 "AllReduce: opCount 0 … count 16777216 datatype 7 op 0 root 0 … [nranks=1]" (one per call).
        Evidence.Communicator comm = new Evidence.Communicator(
                "0x1",
                List.of(0),
                1,
                1,
                1,
                64,
                64,
                64,
                0,
                64,
                List.of(),
                List.of(),
                List.of(),
                List.of(),
                null,
                List.of(),
                List.of(),
                false,
                false,
                List.of(),
                Source.line(log, 306),
                List.of(),
                List.of(),
                null);
        Evidence.Nccl nccl = new Evidence.Nccl(
                "2.28.9",
                Source.line(log, 3),
                List.of(comm),
                List.of(),
                List.of(new Evidence.Coll(0, "AllReduce", "0", 16_777_216L, 7, 0, 1, Source.line(log, 315), null, 1)),
                Map.of("NCCL_NVLS_ENABLE", "0"),
                Map.of(),
                List.of());
        // From trace-rank0.json: three nccl:all_reduce user annotations and no NCCL kernel.
        List<Evidence.Range> ranges = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            ranges.add(new Evidence.Range(
                    0, "nccl:all_reduce", "user_annotation", 1_000_000L * i, 50_000L, Source.event(trace, 100 + i)));
        }
        List<Evidence.Kernel> kernels = List.of(new Evidence.Kernel(
                0,
                "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
                new int[] {65536, 1, 1},
                new int[] {128, 1, 1},
                null,
                0L,
                null,
                0,
                7,
                false,
                Map.of(),
                Source.event(trace, 90),
                null,
                null));
        List<Evidence.FileRead> files = List.of(
                new Evidence.FileRead(log, FileKind.NCCL_LOG, 0, 38920, 84),
                new Evidence.FileRead(trace, FileKind.KINETO, 0, 246215, 37));
        return Evidence.builder()
                .runDir(DIR)
                .files(files)
                .nccl(nccl)
                .kernels(kernels)
                .ranges(ranges)
                .ddp(new Evidence.Ddp(hooks, logging, List.of()))
                .steps(steps)
                .replicas(new Evidence.Replicas(
                        rep.path("equal").asBoolean(), digests, Source.file(DIR + "/replicas.json")))
                .manifest(Json.mapper().readTree(text("manifest.json")))
                .build();
    }

    /** What the model predicts for one rank: one 64 MiB bucket, rebuilt after iteration 0, a copy instead of a kernel. */
    static Prediction oneRankPrediction() {
        Bucket b = new Bucket(0, 67_108_864L, List.of("p"), true, DType.FLOAT32, 67_108_864L);
        CommunicatorPrediction comm = new CommunicatorPrediction(
                1,
                1,
                64,
                64,
                64,
                0,
                null,
                null,
                "none",
                List.of(),
                null,
                null,
                null,
                List.of(),
                null,
                null,
                List.of(),
                java.util.Map.of(),
                List.of());
        CollectivePrediction c = new CollectivePrediction(
                0,
                67_108_864L,
                "none",
                -1,
                "none",
                -1,
                null,
                0,
                0,
                0,
                0,
                0,
                0.0,
                0L,
                "none (local copy)",
                null,
                null,
                null,
                true,
                List.of(),
                null);
        // Made for the versions the run records, as a real prediction names them.
        com.fasterxml.jackson.databind.node.ObjectNode inputs =
                Json.mapper().createObjectNode().put("ranks", 1);
        com.fasterxml.jackson.databind.node.ObjectNode versions = inputs.putObject("versions");
        versions.putObject("torch").put("text", "2.11.0");
        versions.putObject("nccl").put("text", "2.28.9");
        return new Prediction(
                Prediction.SCHEMA,
                inputs,
                "nccl",
                new Prediction.Buckets(List.of(b), List.of(b), 1, 67_108_864L, 1),
                comm,
                List.of(c),
                List.of(),
                null);
    }

    @Test
    void theRealRunMeetsTheOneRankPredictionExceptThatThePredictionCameAfterIt() throws IOException {
        Path f = tmp.resolve("p.json");
        PredictionIo.writeSealed(oneRankPrediction(), f, "test");
        AcceptanceTable t = Acceptance.accept(PredictionIo.readVerified(f), evidence());
        // The run (2026-12-02T12:44:28Z) is older than any prediction sealed now: common error 1, and said so.
        assertThat(t.row("predicted-before-run").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t.row("predicted-before-run").observed()).contains("2026-12-02T12:44:28.841216Z");
        for (String id : List.of(
                "seal",
                "parameter-bytes",
                "buckets-construction",
                "buckets-rebuilt",
                "collective/bucket0",
                "coll-channels",
                "launch-shape/rank0/bucket0",
                "kernels/rank0",
                "replicas",
                "completion-order",
                "bus-bytes/bucket0")) {
            assertThat(t.row(id).verdict()).as(id + ": " + t.row(id).observed()).isEqualTo(Verdict.PASS);
        }
        assertThat(t.row("buckets-rebuilt").observed()).contains("in each of 52 rank×iteration(s)");
        assertThat(t.row("completion-order").observed())
                .isEqualTo(
                        "53/53 bucket records in order (53/53 with GPU-done); 4 GPU-done up to 72.1 us before future-done, within the "
                                + "host-clock mapping of CUDA events");
        assertThat(t.row("parameter-bytes").evidence()).containsExactly(EvidenceKind.DDP_LOGGING, EvidenceKind.HOOK);
        // The capture was made before pathproof's run recorded a prediction's seal: that row alone cannot be judged.
        assertThat(t.rows())
                .filteredOn(r -> r.verdict() == Verdict.UNPROVEN)
                .extracting(AcceptanceRow::id)
                .containsExactly("run-made-for-prediction");
        assertThat(t.row("run-made-for-prediction").observed()).contains("names no prediction seal");
    }

    @Test
    void theRealRunAgainstItselfIsNoChange() throws IOException {
        Diagnosis d = Diagnosis.diagnose(evidence(), evidence());
        assertThat(d.conclusion()).isEqualTo("no change");
        assertThat(d.regression().ratio()).isEqualTo(1.0);
        assertThat(d.correctness().verdict()).isEqualTo(Verdict.PASS);
        assertThat(d.configuration()).isEmpty();
    }
}

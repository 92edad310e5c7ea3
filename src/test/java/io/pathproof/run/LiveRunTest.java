package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.HarnessFacts;
import io.pathproof.evidence.HarnessReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The integration test of issue 4: four gloo ranks on CPU, one-64mib-fp32, every piece of evidence present. */
@Tag("live")
class LiveRunTest {
    @Test
    void fourGlooRanksLeaveACompleteRunDirectory(@TempDir Path tmp) throws Exception {
        Live.requireTorch();
        Path out = tmp.resolve("r");
        int warmup = 1;
        int iters = 2;
        java.io.StringWriter o = new java.io.StringWriter();
        java.io.StringWriter e = new java.io.StringWriter();
        long t0 = System.nanoTime();
        // the issue's command, with fewer iterations (the 2-core CI machine is shared)
        int code = io.pathproof.cli.Main.run(
                new String[] {
                    "run",
                    "--backend",
                    "gloo",
                    "--nproc",
                    "4",
                    "--workload",
                    "one-64mib-fp32",
                    "--warmup",
                    Integer.toString(warmup),
                    "--iters",
                    Integer.toString(iters),
                    "--profile-iters",
                    "1",
                    "--timeout",
                    "300",
                    "--out",
                    out.toString()
                },
                new java.io.PrintWriter(o, true),
                new java.io.PrintWriter(e, true));
        double seconds = (System.nanoTime() - t0) / 1e9;
        assertThat(e.toString()).isEmpty();
        assertThat(code).isZero();
        assertThat(o.toString())
                .isEqualTo("run: complete: " + out.toAbsolutePath().normalize() + " (4 process(es) exited 0)"
                        + System.lineSeparator());
        assertThat(seconds).as("wall time of the 4-rank run, s").isLessThan(60);

        for (int rank = 0; rank < 4; rank++) {
            for (String f : List.of(
                    "hook-rank%d.jsonl",
                    "steps-rank%d.jsonl",
                    "ddp-logging-rank%d.json",
                    "trace-rank%d.json",
                    "rank%d.stdout",
                    "rank%d.stderr")) {
                assertThat(out.resolve(String.format(f, rank))).exists();
            }
        }
        JsonNode trace = Json.mapper().readTree(out.resolve("trace-rank0.json").toFile());
        assertThat(trace.isArray() || trace.has("traceEvents")).isTrue();

        JsonNode m = Json.mapper().readTree(out.resolve("manifest.json").toFile());
        assertThat(m.path("complete").asBoolean()).isTrue();
        assertThat(m.path("harnessFinished").asBoolean()).isTrue();
        assertThat(m.path("backend").asText()).isEqualTo("gloo");
        assertThat(m.path("launcher").asText()).isIn("spawn", "torchrun");
        assertThat(m.path("versions").path("torch").asText()).isNotEmpty();
        assertThat(m.path("versions").path("python").asText()).isNotEmpty();
        assertThat(m.path("hosts").size()).isEqualTo(4);
        assertThat(m.path("env").path("NCCL_DEBUG_SUBSYS").asText()).isEqualTo("INIT,ENV,TUNING,COLL,GRAPH,P2P");
        assertThat(m.path("commandLine").toString())
                .startsWith("[\"pathproof\",\"run\",\"--backend\",\"gloo\",\"--nproc\",\"4\"");
        assertThat(m.path("workloadName").asText()).isEqualTo("one-64mib-fp32");
        assertThat(m.path("workload").path("parameters").get(0).path("name").asText())
                .isEqualTo("p");
        assertThat(m.path("start").asText()).isNotEmpty();
        assertThat(m.path("end").asText()).isNotEmpty();
        assertThat(m.path("ranks").findValues("exitCode").stream()
                        .map(JsonNode::asInt)
                        .toList())
                .containsOnly(0);

        HarnessFacts h = HarnessReader.read(out);
        assertThat(h.problems()).isEmpty();
        List<Evidence.BucketRecord> b = h.ddp().buckets();
        assertThat(b).hasSize(4 * (warmup + iters));
        assertThat(b).allSatisfy(x -> {
            assertThat(x.bytes()).isEqualTo(64L << 20);
            assertThat(x.index()).isZero();
            assertThat(x.isLast()).isTrue();
            assertThat(x.params()).containsExactly("p");
            assertThat(x.futureDoneNs()).isGreaterThanOrEqualTo(x.readyNs());
            assertThat(x.gpuDoneNs()).isNull();
        });
        assertThat(b.stream().map(x -> x.rank() + "/" + x.iteration()).collect(Collectors.toSet()))
                .hasSize(4 * (warmup + iters));
        assertThat(h.ddp().logging()).containsOnlyKeys("0", "1", "2", "3");
        assertThat(h.ddp().logging().get("2").path("comm_hook").asText())
                .isEqualTo("pathproof_recording_allreduce_hook");
        assertThat(h.ddp().logging().get("2").path("bucket_sizes").asText()).isEqualTo(Long.toString(64L << 20));
        assertThat(h.steps()).hasSize(4 * (warmup + iters));
        assertThat(h.steps().stream().filter(Evidence.Step::measured).count()).isEqualTo(4L * iters);
        // Every step carries its phase boundaries, as work (CPU); each rank's hook fires inside its backward, which on
        // CPU
        // returns only after DDP has waited for the bucket's allreduce.
        assertThat(h.steps()).allSatisfy(s -> {
            Evidence.HostPhases p = s.hostPhases();
            assertThat(p)
                    .as("phases of rank %d iteration %d", s.rank(), s.iteration())
                    .isNotNull();
            assertThat(p.issueOnly()).isFalse();
            Evidence.BucketRecord hook = b.stream()
                    .filter(x -> x.rank() == s.rank() && x.iteration() == s.iteration())
                    .findFirst()
                    .orElseThrow();
            assertThat(hook.readyNs()).isBetween(p.backwardStartNs(), p.backwardEndNs());
            assertThat(hook.futureDoneNs()).isLessThanOrEqualTo(p.backwardEndNs());
        });
        assertThat(h.replicas().equal()).isTrue();
        assertThat(h.replicas().digests()).hasSize(4);
        assertThat(h.replicas().digests().stream().map(Evidence.Digest::rank).collect(Collectors.toSet()))
                .isEqualTo(Set.of(0, 1, 2, 3));
        assertThat(h.peerAccess()).isEmpty(); // CPU: no GPUs, no pairs
        assertThat(Files.readString(out.resolve("workload.json"))).contains("\"bucketCapMb\"");
    }

    /**
     * run --overhead (issue 13): the plain arm and the instrumented arm alternate step by step in one process, so that a
     * drifting machine moves both alike; the plain arm pauses in the profiler window and makes its steps up after.
     */
    @Test
    void overheadInterleavesThePlainAndTheInstrumentedSteps(@TempDir Path tmp) throws Exception {
        Live.requireTorch();
        Path out = tmp.resolve("ov");
        java.io.StringWriter o = new java.io.StringWriter();
        java.io.StringWriter e = new java.io.StringWriter();
        int code = io.pathproof.cli.Main.run(
                new String[] {
                    "run",
                    "--backend",
                    "gloo",
                    "--nproc",
                    "2",
                    "--workload",
                    "one-64mib-fp32",
                    "--warmup",
                    "1",
                    "--iters",
                    "5",
                    "--profile-iters",
                    "1",
                    "--hook-every",
                    "2",
                    "--overhead",
                    "--timeout",
                    "300",
                    "--out",
                    out.toString()
                },
                new java.io.PrintWriter(o, true),
                new java.io.PrintWriter(e, true));
        assertThat(code).as(e.toString()).isZero();
        JsonNode ov = Json.mapper().readTree(out.resolve("overhead.json").toFile());
        assertThat(ov.path("measured").asInt()).isEqualTo(5);
        assertThat(ov.path("pairs").asInt()).isEqualTo(5);
        assertThat(ov.path("pairedRatio").asDouble()).isPositive();
        assertThat(ov.path("order").asText()).startsWith("interleaved");
        List<JsonNode> plain = rows(out.resolve("plain-steps-rank0.jsonl"));
        List<JsonNode> inst = rows(out.resolve("steps-rank0.jsonl"));
        assertThat(plain).extracting(r -> r.path("iteration").asInt()).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(inst).extracting(r -> r.path("iteration").asInt()).containsExactly(0, 1, 2, 3, 4, 5);
        assertThat(plain)
                .allSatisfy(r -> assertThat(r.path("hooked").asBoolean()).isFalse());
        // the profiler window is iteration 3 (warmup 1 + 2); the plain arm's steps 0..2 run before instrumented 0..2
        // one by one, then instrumented 3 runs alone, then plain 3 before instrumented 4, plain 4 before 5, plain 5
        // last.
        long[] p = plain.stream().mapToLong(r -> r.path("hostStartNs").asLong()).toArray();
        long[] i = inst.stream().mapToLong(r -> r.path("hostStartNs").asLong()).toArray();
        assertThat(inst.get(3).path("profiled").asBoolean()).isTrue();
        for (int k = 0; k < 3; k++) {
            assertThat(p[k]).isLessThan(i[k]);
            assertThat(i[k]).isLessThan(p[k + 1]);
        }
        assertThat(i[3]).isLessThan(p[3]);
        assertThat(p[3]).isLessThan(i[4]);
        assertThat(p[4]).isLessThan(i[5]);
        assertThat(i[5]).isLessThan(p[5]);
    }

    private static List<JsonNode> rows(Path f) throws java.io.IOException {
        List<JsonNode> r = new java.util.ArrayList<>();
        for (String line : Files.readAllLines(f)) {
            r.add(Json.mapper().readTree(line));
        }
        return r;
    }
}

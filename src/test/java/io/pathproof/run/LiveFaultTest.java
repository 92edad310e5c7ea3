package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.rundir.RunOutcome.RankExit;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Deliberate faults on CPU: each ends with its own exit code and one line, and every file stays. */
@Tag("live")
class LiveFaultTest {
    private static Runner.Request small(Path out, List<String> inject, long timeoutSec) {
        return standIn(out)
                .ranks(2, 1, 0)
                .sizes(3, 0, 0)
                .inject(inject)
                .timeoutSec(timeoutSec)
                .recorded(List.of(), "pathproof test")
                .build();
    }

    /** The one-parameter job on gloo, its ranks spawned here; each test sets the rest. */
    private static Runner.Request.Builder standIn(Path out) {
        return Runner.Request.builder(RunnerTest.oneParameter(), out)
                .labels("one-64mib-fp32", null)
                .backend(Runner.Backend.GLOO)
                .launcher(Runner.Launcher.SPAWN);
    }

    @Test
    void aRankThatExitsFailsTheRunAndTheOtherIsKilled(@TempDir Path tmp) throws Exception {
        Live.requireTorch();
        Path out = tmp.resolve("r");
        Runner.Result r = Runner.run(small(out, List.of("exit_rank=1@1"), 0), null);
        assertThat(r.exitCode()).isEqualTo(ExitCode.RANK_FAILED);
        assertThat(r.message())
                .startsWith("run: rank 1 exited with status 3 (failed); last line of rank1.stderr: "
                        + "harness: rank 1 exits at iteration 1 (knob exit_rank)");
        assertThat(r.ranks()).extracting(RankExit::rank).containsExactly(0, 1);
        assertThat(r.ranks().get(1).ended()).isEqualTo("failed");
        assertThat(r.ranks().get(1).exitCode()).isEqualTo(3);
        // gloo notices the lost peer and rank 0 fails by itself, or it hangs in the allreduce and is killed
        assertThat(r.ranks().get(0).ended()).isIn("failed", "killed: another rank failed");
        JsonNode m = Json.mapper().readTree(out.resolve("manifest.json").toFile());
        assertThat(m.path("complete").asBoolean(true)).isFalse();
        assertThat(m.path("exitCode").asInt()).isEqualTo(ExitCode.RANK_FAILED);
        // Blind by construction: no inject or knobs record, no --knob in any recorded command line; fault.sealed.json
        // has it.
        assertThat(m.has("inject") || m.has("knobs")).isFalse();
        assertThat(m.path("rankArgv").toString() + m.path("argv") + m.path("commandLine"))
                .doesNotContain("--knob")
                .doesNotContain("exit_rank");
        assertThat(Json.mapper()
                        .readTree(out.resolve("fault.sealed.json").toFile())
                        .path("knobs")
                        .path("exit_rank")
                        .asText())
                .isEqualTo("1@1");
        assertThat(m.path("versions").path("torch").asText()).isNotEmpty(); // rank 0's harness facts survived
        for (String f : List.of(
                "rank0.stdout",
                "rank0.stderr",
                "rank1.stdout",
                "rank1.stderr",
                "hook-rank0.jsonl",
                "steps-rank1.jsonl")) {
            assertThat(out.resolve(f)).exists();
        }
        assertThat(Files.readAllLines(out.resolve("steps-rank1.jsonl"))).hasSize(1); // iteration 0 done, 1 never
    }

    @Test
    void aHangIsKilledAtTheTimeoutAndLeavesAnIncompleteManifest(@TempDir Path tmp) throws Exception {
        Live.requireTorch();
        Path out = tmp.resolve("r");
        long t0 = System.nanoTime();
        Runner.Result r = Runner.run(small(out, List.of("compute_delay_ms=600000"), 20), null);
        double s = (System.nanoTime() - t0) / 1e9;
        assertThat(r.exitCode()).isEqualTo(ExitCode.TIMEOUT);
        assertThat(r.message()).startsWith("run: timed out after 20 s; every rank was killed; files kept in ");
        assertThat(s).isLessThan(20 + 2 * RankProcesses.KILL_GRACE_MS / 1000.0 + 10);
        assertThat(r.ranks()).allSatisfy(x -> assertThat(x.ended()).isEqualTo("killed: timeout"));
        JsonNode m = Json.mapper().readTree(out.resolve("manifest.json").toFile());
        assertThat(m.path("complete").asBoolean(true)).isFalse();
        assertThat(m.path("exitCode").asInt()).isEqualTo(ExitCode.TIMEOUT);
        assertThat(m.path("incompleteReason").asText()).isEqualTo(r.message());
        assertThat(out.resolve("rank0.stderr")).exists();
        assertThat(out.resolve("rank1.stdout")).exists();
        assertThat(ProcessHandle.allProcesses()
                        .filter(p -> p.info()
                                .arguments()
                                .map(a -> String.join(" ", a))
                                .orElse("")
                                .contains(out.toString()))
                        .count())
                .as("processes of the run left alive")
                .isZero();
    }

    @Test
    void ncclWithoutAGpuIsRefusedWithNoGpu(@TempDir Path tmp) throws Exception {
        PythonProbe.Python py = Live.requireTorch();
        org.junit.jupiter.api.Assumptions.assumeTrue(!py.cuda(), "this machine has a GPU");
        Path out = tmp.resolve("r");
        Runner.Result r = Runner.run(
                standIn(out)
                        .backend(Runner.Backend.NCCL)
                        .ranks(1, 1, 0)
                        .sizes(1, 0, 0)
                        .python(py.executable())
                        .recorded(List.of(), "t")
                        .build(),
                null);
        assertThat(r.exitCode()).isEqualTo(ExitCode.NO_GPU);
        assertThat(r.message())
                .startsWith("run: --backend nccl but " + py.executable())
                .endsWith("sees no CUDA GPU; use --backend gloo");
        assertThat(out.resolve("manifest.json")).exists();
    }

    @Test
    void aCorruptedGradientShowsInTheReplicaDigests(@TempDir Path tmp) throws Exception {
        Live.requireTorch();
        Path out = tmp.resolve("r");
        List<String> progress = new java.util.ArrayList<>();
        Runner.Result r = Runner.run(
                standIn(out)
                        .ranks(2, 1, 0)
                        .sizes(1, 0, 0)
                        .inject(List.of("corrupt_grad_rank=1"))
                        .recorded(List.of(), "t")
                        .build(),
                (done, total) -> progress.add(done + "/" + total));
        assertThat(r.exitCode()).isZero(); // the run itself is fine: only the correctness layer can tell
        assertThat(progress).first().isEqualTo("0/1");
        assertThat(progress).last().isEqualTo("1/1");
        io.pathproof.evidence.HarnessFacts h = io.pathproof.evidence.HarnessReader.read(out);
        assertThat(h.replicas().equal()).isFalse();
        assertThat(h.replicas().digests()).hasSize(2);
        assertThat(h.replicas().digests().get(0).sha256())
                .isNotEqualTo(h.replicas().digests().get(1).sha256());
    }
}

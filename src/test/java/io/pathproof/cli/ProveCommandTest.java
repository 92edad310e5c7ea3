package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import io.pathproof.run.Runner;
import java.nio.file.Path;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** prove --backend auto through the command line, on a machine whose torch sees no GPU (this CPU machine and CI). */
class ProveCommandTest {
    static Runner.Machine cpuOnly() {
        Runner.Machine m;
        try {
            m = Runner.probe(null);
        } catch (PathproofException e) {
            Assumptions.abort("no Python with torch: " + e.getMessage());
            return null;
        }
        Assumptions.assumeTrue(m.gpus() == 0, "torch sees GPUs here: the CPU-only refusal cannot be shown");
        return m;
    }

    @Test
    void autoRefusesAnNcclScenarioWithoutAGpuBeforeAnythingRuns(@TempDir Path tmp) {
        Runner.Machine m = cpuOnly();
        Path out = tmp.resolve("p");
        MainTest.Result r = MainTest.run("prove", "--scenario", "h200-x4", "--out", out.toString());
        assertThat(r.code).as(r.err).isEqualTo(ExitCode.NO_GPU);
        assertThat(r.err.strip())
                .isEqualTo(
                        "pathproof: prove --backend auto: the scenario is an NCCL one, but no GPU (torch " + m.torch()
                                + " sees no CUDA device); run it where it has one GPU per rank, or emulate it on one GPU with --emulate --nccl-lib DIR");
        assertThat(out).doesNotExist();
    }

    /**
     * Issue 19 §4: prove says one line per phase also when stderr is no terminal (a test's writer, a CI log, a pipe).
     * Before, it said nothing until the end, two minutes later. A Python that does not exist ends it after predict.
     */
    @Test
    void provePrintsALinePerPhaseWhenNotOnATerminal(@TempDir Path tmp) {
        Path out = tmp.resolve("p");
        MainTest.Result r = MainTest.run(
                "prove",
                "--backend",
                "gloo",
                "--torch",
                "1.13.0",
                "--python",
                tmp.resolve("no-python").toString(),
                "--out",
                out.toString());
        assertThat(r.code).as(r.err).isNotZero();
        assertThat(r.err).contains("prove: backend gloo → gloo: --backend gloo as given\n");
        assertThat(r.err).containsPattern("\\[\\s*\\d+\\.\\d s\\] predict\\s+sealed [0-9a-f]{12} at ");
        assertThat(r.err.indexOf("predict")).isLessThan(r.err.indexOf("pathproof: "));
    }

    /** The machine torch 2.11 ran the CPU default on (the H200 node): its DDP closes the first bucket at the given cap. */
    @Test
    void theDefaultScenarioIsPredictedForTheTorchThatRuns() {
        io.pathproof.scenario.Scenario s = io.pathproof.scenario.Scenarios.load("cpu-x4-small");
        io.pathproof.scenario.Scenario t =
                ProveCommand.forTheTorchThatRuns(s, new Runner.Machine("python3", "2.11.0+cu130", 0, true));
        assertThat(t.versions().torch().text()).isEqualTo("2.11.0+cu130");
        java.util.List<Long> preset = io.pathproof.predict.Predictor.predict(s).buckets().rebuilt().stream()
                .map(b -> b.bytes())
                .toList();
        java.util.List<Long> run = io.pathproof.predict.Predictor.predict(t).buckets().rebuilt().stream()
                .map(b -> b.bytes())
                .toList();
        // torch 1.13 always caps the first rebuilt bucket at 1 MiB; 2.x takes the given bucket_cap_mb (25 MiB) for it.
        assertThat(preset).hasSizeGreaterThan(1);
        assertThat(run).hasSize(1);
        assertThat(ProveCommand.forTheTorchThatRuns(t, new Runner.Machine("python3", "2.11.0", 0, true)))
                .isSameAs(t);
        assertThat(ProveCommand.forTheTorchThatRuns(s, null)).isSameAs(s);
    }

    /**
     * An NCCL scenario is predicted for the NCCL the ranks load (an emulator library's, or the one the ranks' torch
     * loads), not the preset's: torch 2.11 (built with 2.28.9) ran NCCL 2.30.7 on the H200 node (5 Dec 2026), and the
     * prediction named 2.28.9. A gloo scenario keeps its versions: it runs no NCCL.
     */
    @Test
    void anNcclScenarioIsPredictedForTheNcclThatRuns() {
        io.pathproof.scenario.Scenario s = io.pathproof.scenario.Scenarios.load("h200-x4");
        String other =
                s.versions().nccl().compareTo(io.pathproof.scenario.Version.parse("2.30.7")) == 0 ? "2.29.7" : "2.30.7";
        io.pathproof.scenario.Scenario t = ProveCommand.forTheNcclThatRuns(s, other);
        assertThat(t.versions().nccl().text()).isEqualTo(other);
        assertThat(t.versions().torch()).isEqualTo(s.versions().torch());
        assertThat(io.pathproof.predict.Predictor.predict(t)
                        .inputs()
                        .path("versions")
                        .path("nccl")
                        .path("text")
                        .asText())
                .isEqualTo(other);
        assertThat(ProveCommand.forTheNcclThatRuns(t, other)).isSameAs(t);
        assertThat(ProveCommand.forTheNcclThatRuns(s, null)).isSameAs(s);
        assertThat(ProveCommand.forTheNcclThatRuns(s, "not a version")).isSameAs(s);
        io.pathproof.scenario.Scenario cpu = io.pathproof.scenario.Scenarios.load("cpu-x4-small");
        assertThat(ProveCommand.forTheNcclThatRuns(cpu, other)).isSameAs(cpu);
    }
}

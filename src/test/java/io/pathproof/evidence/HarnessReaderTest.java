package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HarnessReaderTest {
    static Path testdata(String name) throws URISyntaxException {
        return Path.of(HarnessReaderTest.class
                .getResource("/io/pathproof/run/testdata/" + name)
                .toURI());
    }

    @Test
    void readsTheRealH200RunWithProvenance() throws Exception {
        Path dir = testdata("h200-1rank");
        HarnessFacts h = HarnessReader.read(dir);
        assertThat(h.problems()).isEmpty();

        List<Evidence.BucketRecord> b = h.ddp().buckets();
        assertThat(b).hasSize(53);
        Evidence.BucketRecord tenth = b.get(10);
        assertThat(tenth.rank()).isZero();
        assertThat(tenth.iteration()).isEqualTo(10);
        assertThat(tenth.index()).isZero();
        assertThat(tenth.isLast()).isTrue();
        assertThat(tenth.bytes()).isEqualTo(67108864L);
        assertThat(tenth.params()).containsExactly("p");
        assertThat(tenth.readyNs()).isEqualTo(1796215479119064487L);
        assertThat(tenth.futureDoneNs()).isEqualTo(1796215479119316829L);
        assertThat(tenth.gpuDoneNs()).isEqualTo(1796215479119307598L);
        assertThat(tenth.source())
                .isEqualTo(Source.line(dir.resolve("hook-rank0.jsonl").toString(), 11));

        assertThat(h.ddp().logging()).containsOnlyKeys("0");
        assertThat(h.ddp().logging().get("0").path("rebuilt_bucket_sizes").asText())
                .isEqualTo("67108864");
        assertThat(h.ddp().logging().get("0").path("backend_name").asText()).isEqualTo("nccl");

        assertThat(h.steps()).hasSize(53);
        assertThat(h.steps().stream().filter(Evidence.Step::measured).count()).isEqualTo(48);
        Evidence.Step last = h.steps().get(52);
        assertThat(last.iteration()).isEqualTo(52);
        assertThat(last.ms()).isEqualTo(1.694111943244934);
        assertThat(last.source().line()).isEqualTo(53);
        // Recorded before the harness wrote phase boundaries: the steps read, without them.
        assertThat(h.steps()).allSatisfy(s -> assertThat(s.hostPhases()).isNull());

        assertThat(h.replicas().equal()).isTrue();
        assertThat(h.replicas().digests()).singleElement().satisfies(d -> {
            assertThat(d.sha256()).isEqualTo("d2c841f44670037b56e13827aab1249927f5e294831fb1811d909502698c4b74");
            assertThat(d.samples()).hasSize(3);
        });
        assertThat(h.peerAccess()).isEmpty();
        assertThat(h.manifest().path("versions").path("nccl").asText()).isEqualTo("2.28.9");
        assertThat(h.manifest().path("complete").asBoolean()).isTrue();
    }

    /** Every rank writes what the machine gave it beside each step; a bad figure costs the load, not the step. */
    @Test
    void eachStepCarriesItsRanksLoad(@TempDir Path dir) throws Exception {
        Files.writeString(
                dir.resolve("steps-rank1.jsonl"),
                "{\"rank\": 1, \"iteration\": 0, \"ms\": 12.5, \"phase\": \"warmup\", \"cpuMs\": 9.0, \"loadavg1\": 2.5}\n"
                        + "{\"rank\": 1, \"iteration\": 1, \"ms\": 11.0, \"phase\": \"measured\", \"cpuMs\": 8.5,"
                        + " \"runQueueMs\": 1.25, \"loadavg1\": 2.5}\n"
                        + "{\"rank\": 1, \"iteration\": 2, \"ms\": 11.0, \"phase\": \"measured\", \"cpuMs\": 8.5,"
                        + " \"runQueueMs\": \"soon\"}\n"
                        + "{\"rank\": 1, \"iteration\": 3, \"ms\": 11.0, \"phase\": \"measured\"}\n");
        HarnessFacts h = HarnessReader.read(dir);
        assertThat(h.steps())
                .extracting(Evidence.Step::load)
                .containsExactly(
                        new Evidence.StepLoad(9.0, null, 2.5), new Evidence.StepLoad(8.5, 1.25, 2.5), null, null);
        assertThat(h.problems()).singleElement().satisfies(p -> {
            assertThat(p.line()).isEqualTo(3);
            assertThat(p.message()).contains("runQueueMs");
        });
    }

    @Test
    void badLinesBecomeProblemsNamingFileAndLineAndTheRestIsKept() throws Exception {
        Path dir = testdata("bad");
        HarnessFacts h = HarnessReader.read(dir);
        String hook = dir.resolve("hook-rank1.jsonl").toString();
        String steps = dir.resolve("steps-rank1.jsonl").toString();
        String replicas = dir.resolve("replicas.json").toString();
        String peers = dir.resolve("peer-access-rank0.json").toString();

        assertThat(h.ddp().buckets()).singleElement().satisfies(x -> {
            assertThat(x.params()).containsExactly("fc2.bias", "fc2.weight");
            assertThat(x.gpuDoneNs()).isEqualTo(3000L);
            assertThat(x.source()).isEqualTo(Source.line(hook, 1));
        });
        assertThat(h.steps()).extracting(Evidence.Step::iteration).containsExactly(0, 3);
        assertThat(h.peerAccess()).hasSize(2);
        assertThat(h.peerAccess().get(0).copyGBs()).isEqualTo(48.3);
        assertThat(h.peerAccess().get(1).canAccess()).isFalse();
        assertThat(h.peerAccess().get(1).copyGBs()).isNull();
        assertThat(h.peerAccess().get(1).source()).isEqualTo(Source.event(peers, 1));
        // the file claims equal, the digests disagree: the digests win
        assertThat(h.replicas().equal()).isFalse();
        assertThat(h.replicas().digests()).hasSize(2);
        assertThat(h.manifest()).isNull();

        assertThat(h.problems())
                .extracting(Problem::file, Problem::line)
                .contains(
                        org.assertj.core.groups.Tuple.tuple(hook, 2L),
                        org.assertj.core.groups.Tuple.tuple(hook, 3L),
                        org.assertj.core.groups.Tuple.tuple(hook, 5L),
                        org.assertj.core.groups.Tuple.tuple(steps, 2L),
                        org.assertj.core.groups.Tuple.tuple(steps, 3L),
                        org.assertj.core.groups.Tuple.tuple(peers, 0L),
                        org.assertj.core.groups.Tuple.tuple(replicas, 0L));
        assertThat(h.problems()).anySatisfy(p -> {
            assertThat(p.file()).isEqualTo(hook);
            assertThat(p.line()).isEqualTo(3);
            assertThat(p.message()).isEqualTo("field bytes: missing");
        });
        assertThat(h.problems()).anySatisfy(p -> assertThat(p.message()).isEqualTo("field isLast: not true/false"));
        assertThat(h.problems()).anySatisfy(p -> assertThat(p.message())
                .isEqualTo("field phase: 'plain' is neither measured nor warmup"));
        assertThat(h.problems())
                .anySatisfy(p -> assertThat(p.message()).isEqualTo("equal: file says true but the digests say false"));
        assertThat(h.problems())
                .anySatisfy(p -> assertThat(p.message()).isEqualTo("digests[2].sha256: not a SHA-256 hex digest"));
        assertThat(h.problems()).anySatisfy(p -> {
            assertThat(p.file()).isEqualTo(dir.resolve("manifest.json").toString());
            assertThat(p.message()).startsWith("not JSON");
        });
    }

    /**
     * A real two-rank gloo run (one-64mib-fp32, warm-up 1, 2 iterations) recorded with the phase boundaries: every step
     * has them, as work (CPU), and on CPU backward returns only after DDP has waited for the bucket's allreduce, so each
     * rank's backward ends at or after its hook's future completed and its hook fired inside backward.
     */
    @Test
    void readsPhaseBoundariesOfARealGlooRun() throws Exception {
        Path dir = testdata("gloo2-phases");
        HarnessFacts h = HarnessReader.read(dir);
        assertThat(h.problems()).isEmpty();
        assertThat(h.steps()).hasSize(6).allSatisfy(s -> {
            Evidence.HostPhases p = s.hostPhases();
            assertThat(p).as("rank %d iteration %d", s.rank(), s.iteration()).isNotNull();
            assertThat(p.issueOnly()).isFalse();
            assertThat(p.forwardStartNs()).isLessThan(p.backwardStartNs());
            assertThat(p.optimizerEndNs()).isGreaterThan(p.optimizerStartNs());
            // The phases lie inside the step the harness timed (perf_counter, its own clock: a millisecond of slack).
            assertThat((p.optimizerEndNs() - p.forwardStartNs()) / 1e6).isLessThanOrEqualTo(s.ms() + 1.0);
            Evidence.BucketRecord hook = h.ddp().buckets().stream()
                    .filter(b -> b.rank() == s.rank() && b.iteration() == s.iteration())
                    .findFirst()
                    .orElseThrow();
            assertThat(hook.readyNs()).isBetween(p.backwardStartNs(), p.backwardEndNs());
            assertThat(hook.futureDoneNs()).isLessThanOrEqualTo(p.backwardEndNs());
        });
        assertThat(h.steps().get(4).source())
                .isEqualTo(Source.line(dir.resolve("steps-rank1.jsonl").toString(), 2));
    }

    @Test
    void badPhaseBoundariesAreProblemsAndTheStepIsKeptWithoutThem(@TempDir Path tmp) throws Exception {
        String head = "{\"rank\": 0, \"phase\": \"measured\", \"ms\": 5.0, ";
        Files.writeString(
                tmp.resolve("steps-rank0.jsonl"),
                String.join(
                                "\n",
                                head
                                        + "\"iteration\": 0, \"hostPhases\": \"issue\", \"hostForwardStartNs\": 10, \"hostBackwardStartNs\": 20,"
                                        + " \"hostBackwardEndNs\": 30, \"hostOptimizerStartNs\": 40, \"hostOptimizerEndNs\": 50}",
                                head
                                        + "\"iteration\": 1, \"hostPhases\": \"work\", \"hostForwardStartNs\": 10, \"hostBackwardStartNs\": 20}",
                                head
                                        + "\"iteration\": 2, \"hostPhases\": \"work\", \"hostForwardStartNs\": 10, \"hostBackwardStartNs\": 20,"
                                        + " \"hostBackwardEndNs\": 15, \"hostOptimizerStartNs\": 40, \"hostOptimizerEndNs\": 50}",
                                head
                                        + "\"iteration\": 3, \"hostPhases\": \"gpu\", \"hostForwardStartNs\": 10, \"hostBackwardStartNs\": 20,"
                                        + " \"hostBackwardEndNs\": 30, \"hostOptimizerStartNs\": 40, \"hostOptimizerEndNs\": 50}",
                                head + "\"iteration\": 4}")
                        + "\n");
        HarnessFacts h = HarnessReader.read(tmp);
        String f = tmp.resolve("steps-rank0.jsonl").toString();
        assertThat(h.steps()).extracting(Evidence.Step::iteration).containsExactly(0, 1, 2, 3, 4);
        assertThat(h.steps().get(0).hostPhases()).isEqualTo(new Evidence.HostPhases(10, 20, 30, 40, 50, true));
        assertThat(h.steps().subList(1, 5))
                .allSatisfy(s -> assertThat(s.hostPhases()).isNull());
        assertThat(h.problems())
                .extracting(Problem::file, Problem::line)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple(f, 2L),
                        org.assertj.core.groups.Tuple.tuple(f, 3L),
                        org.assertj.core.groups.Tuple.tuple(f, 4L));
        assertThat(h.problems().get(0).message()).contains("only 2 of 5 present");
        assertThat(h.problems().get(1).message()).contains("out of order");
        assertThat(h.problems().get(2).message()).isEqualTo("field hostPhases: 'gpu' is neither issue nor work");
    }

    @Test
    void aPhasesWaitForACoreIsReadWithItAndNeverLongerThanThePhase(@TempDir Path tmp) throws Exception {
        String head = "{\"rank\": 0, \"phase\": \"measured\", \"ms\": 5.0, \"hostPhases\": \"work\", "
                + "\"hostForwardStartNs\": 0, \"hostBackwardStartNs\": 3000000, \"hostBackwardEndNs\": 4000000, "
                + "\"hostOptimizerStartNs\": 4000000, \"hostOptimizerEndNs\": 5000000, ";
        Files.writeString(
                tmp.resolve("steps-rank0.jsonl"),
                String.join(
                                "\n",
                                head
                                        + "\"iteration\": 0, \"hostForwardRunQueueMs\": 1.5, \"hostOptimizerRunQueueMs\": 0.25}",
                                head + "\"iteration\": 1}",
                                // waited 6 ms in a 3 ms forward: a wait read outside the phase's clock readings
                                head
                                        + "\"iteration\": 2, \"hostForwardRunQueueMs\": 6.0, \"hostOptimizerRunQueueMs\": 0}",
                                head + "\"iteration\": 3, \"hostForwardRunQueueMs\": 1.0}")
                        + "\n");
        HarnessFacts h = HarnessReader.read(tmp);
        assertThat(h.steps().get(0).hostPhases())
                .isEqualTo(new Evidence.HostPhases(0, 3_000_000, 4_000_000, 4_000_000, 5_000_000, false, 1.5, 0.25));
        assertThat(h.steps().get(1).hostPhases().forwardRunQueueMs()).isNull();
        assertThat(h.steps().subList(2, 4))
                .allSatisfy(s -> assertThat(s.hostPhases()).isNull());
        assertThat(h.problems()).extracting(Problem::line).containsExactly(3L, 4L);
        assertThat(h.problems().get(0).message()).contains("never longer than their phase");
        assertThat(h.problems().get(1).message()).contains("both or neither");
    }

    @Test
    void aDirectoryWithoutHarnessOutputGivesNull(@TempDir Path tmp) throws Exception {
        assertThat(HarnessReader.read(tmp)).isNull();
        Files.writeString(tmp.resolve("nccl-rank0.log"), "x\n");
        assertThat(HarnessReader.read(tmp)).isNull();
        assertThat(HarnessReader.read(tmp.resolve("absent"))).isNull();
    }
}

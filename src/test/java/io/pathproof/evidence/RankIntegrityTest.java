package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The per-rank integrity of a run directory, kind by kind, on small hand-made runs: what counts as a gap (and what
 * does not), where the number of ranks comes from, and the per-rank replica digests of a user's job.
 */
class RankIntegrityTest {
    @TempDir
    Path tmp;

    private static String hook(int rank, int it, int index, boolean last) {
        return "{\"rank\": " + rank + ", \"iteration\": " + it + ", \"index\": " + index
                + ", \"bytes\": 64, \"isLast\": " + last
                + ", \"params\": [\"p\"], \"readyNs\": 1, \"futureDoneNs\": 2}\n";
    }

    private static String step(int rank, int it) {
        return "{\"rank\": " + rank + ", \"iteration\": " + it + ", \"ms\": 1.5, \"phase\": \""
                + (it < 1 ? "warmup" : "measured") + "\"}\n";
    }

    /** Two ranks, iterations 0..2 (one warm-up), one bucket each, as the harness writes them. */
    private Path run(String manifest) throws IOException {
        Path d = tmp.resolve("run");
        Files.createDirectories(d);
        if (manifest != null) {
            Files.writeString(d.resolve("manifest.json"), manifest);
        }
        for (int r = 0; r < 2; r++) {
            StringBuilder h = new StringBuilder();
            StringBuilder s = new StringBuilder();
            for (int it = 0; it < 3; it++) {
                h.append(hook(r, it, 0, true));
                s.append(step(r, it));
            }
            Files.writeString(d.resolve("hook-rank" + r + ".jsonl"), h);
            Files.writeString(d.resolve("steps-rank" + r + ".jsonl"), s);
        }
        return d;
    }

    private static final String MANIFEST =
            "{\"worldSize\": 2, \"iters\": 2, \"warmup\": 1, \"hookedIterations\": [0, 1, 2]}";

    private static Evidence.Integrity integrity(Path d) {
        return Ingest.read(List.of(d)).integrity();
    }

    @Test
    void aWholeRunHasNoGapAndSaysWhichKindsItHas() throws IOException {
        Evidence.Integrity in = integrity(run(MANIFEST));
        assertThat(in.complete()).as(in.gaps().toString()).isTrue();
        assertThat(in.worldSize()).isEqualTo(2);
        assertThat(in.worldSizeFrom()).isEqualTo("manifest worldSize");
        assertThat(in.kinds())
                .filteredOn(Evidence.KindCheck::expected)
                .extracting(Evidence.KindCheck::kind)
                .containsExactly(EvidenceKind.HOOK, EvidenceKind.STEPS);
        assertThat(in.kinds())
                .filteredOn(k -> k.kind() == EvidenceKind.HOOK)
                .singleElement()
                .satisfies(k -> assertThat(k.completeRanks()).containsExactly(0, 1));
    }

    @Test
    void aCompleteLastLineWithoutItsNewlineIsAGapNamingTheLine() throws IOException {
        Path d = run(MANIFEST);
        Path f = d.resolve("steps-rank1.jsonl");
        String s = Files.readString(f);
        Files.writeString(f, s.substring(0, s.length() - 1));
        assertThat(integrity(d).gaps()).singleElement().satisfies(g -> {
            assertThat(g.rank()).isEqualTo(1);
            assertThat(g.kind()).isEqualTo(EvidenceKind.STEPS);
            assertThat(g.where()).isEqualTo(f + ":3");
            assertThat(g.problem()).startsWith("the last line has no newline at its end");
        });
    }

    @Test
    void aRankThatStoppedEarlyMissesTheManifestsIterations() throws IOException {
        Path d = run(MANIFEST);
        Files.writeString(d.resolve("hook-rank0.jsonl"), hook(0, 0, 0, true) + hook(0, 1, 0, true));
        assertThat(integrity(d).gaps()).singleElement().satisfies(g -> {
            assertThat(g.rank()).isZero();
            assertThat(g.line()).isEqualTo(2);
            assertThat(g.problem()).isEqualTo("iterations 2 missing (the manifest's hookedIterations: 0-2)");
        });
    }

    @Test
    void anIterationWhoseLaterBucketsAreMissingIsAGap() throws IOException {
        Path d = run(MANIFEST);
        Files.writeString(
                d.resolve("hook-rank1.jsonl"), hook(1, 0, 0, true) + hook(1, 1, 0, true) + hook(1, 2, 0, false));
        assertThat(integrity(d).gaps()).singleElement().satisfies(g -> assertThat(g.problem())
                .isEqualTo("iteration 2 has buckets [0] and none marked last (isLast): its later buckets are missing"));
    }

    @Test
    void aRecordWrittenTwiceAndAnotherRanksRecordAreGaps() throws IOException {
        Path d = run(MANIFEST);
        Files.writeString(d.resolve("steps-rank0.jsonl"), step(0, 0) + step(0, 1) + step(0, 1) + step(0, 2));
        Files.writeString(d.resolve("steps-rank1.jsonl"), step(1, 0) + step(0, 1) + step(1, 1) + step(1, 2));
        List<Evidence.Gap> gaps = integrity(d).gaps();
        assertThat(gaps)
                .extracting(Evidence.Gap::toString)
                .containsExactly(
                        "rank 0: " + d.resolve("steps-rank0.jsonl")
                                + ":3: iteration 1 recorded twice (first at line 2)",
                        "rank 1: " + d.resolve("steps-rank1.jsonl")
                                + ":2: a record of rank 0 in rank 1's file: not this rank's evidence");
    }

    @Test
    void withoutWorldSizeTheRanksComeFromNprocTimesNnodesElseFromTheFiles() throws IOException {
        Path d = run("{\"nproc\": 2, \"nnodes\": 2}");
        Evidence.Integrity in = integrity(d);
        assertThat(in.worldSize()).isEqualTo(4);
        assertThat(in.worldSizeFrom()).isEqualTo("manifest nproc × nnodes");
        assertThat(in.gaps()).extracting(Evidence.Gap::rank).contains(2, 3);
        Files.delete(d.resolve("manifest.json"));
        Files.delete(d.resolve("steps-rank1.jsonl"));
        Evidence.Integrity files = integrity(d);
        assertThat(files.worldSize()).isEqualTo(2);
        assertThat(files.worldSizeFrom()).startsWith("the ranks the files name");
        assertThat(files.gaps()).singleElement().satisfies(g -> assertThat(g.toString())
                .endsWith("steps-rank1.jsonl: missing: rank 1 wrote no steps file"));
    }

    /**
     * DDP's Join lets ranks run uneven inputs: a rank that finished and said it ran fewer iterations owes none past
     * them. One that did not say so, or did not finish, still shows the gap.
     */
    @Test
    void aRankThatFinishedFewerIterationsUnderJoinOwesNoneMore() throws IOException {
        Path d = run("{\"worldSize\": 2}");
        Files.writeString(d.resolve("hook-rank0.jsonl"), hook(0, 0, 0, true) + hook(0, 1, 0, true));
        Files.writeString(d.resolve("steps-rank0.jsonl"), step(0, 0) + step(0, 1));
        assertThat(integrity(d).gaps())
                .extracting(Evidence.Gap::problem)
                .containsExactly(
                        "iterations 2 missing (the iterations other ranks recorded: 0-2)",
                        "iterations 2 missing (the iterations other ranks recorded: 0-2)");
        Files.writeString(d.resolve("rank0.json"), "{\"rank\": 0, \"status\": \"finished\", \"iterations\": 2}");
        assertThat(integrity(d).gaps()).isEmpty();
        Files.writeString(d.resolve("rank0.json"), "{\"rank\": 0, \"status\": \"failed\", \"iterations\": 2}");
        assertThat(integrity(d).gaps()).hasSize(2);
    }

    /** A script that builds DDP and never trains (a checkpoint demo) owes no step or hook records; a ready flag does. */
    @Test
    void aRankThatFinishedWithoutAnyIterationOwesNoRecords() throws IOException {
        Path d = run("{\"worldSize\": 2, \"instrumentation\": {\"mode\": \"command\"}}");
        for (int r = 0; r < 2; r++) {
            Files.delete(d.resolve("steps-rank" + r + ".jsonl"));
            Files.delete(d.resolve("hook-rank" + r + ".jsonl"));
        }
        Files.writeString(d.resolve("rank0.json"), "{\"rank\": 0, \"status\": \"finished\", \"iterations\": 0}");
        assertThat(integrity(d).gaps())
                .extracting(Evidence.Gap::problem)
                .containsExactly("missing: rank 1 wrote no steps file");
        Files.writeString(d.resolve("rank1.json"), "{\"rank\": 1, \"status\": \"finished\", \"iterations\": 0}");
        assertThat(integrity(d).gaps()).isEmpty();
    }

    @Test
    void aFileOfARankThatDidNotRunIsAGap() throws IOException {
        Path d = run(MANIFEST);
        Files.writeString(d.resolve("hook-rank7.jsonl"), hook(7, 0, 0, true));
        assertThat(integrity(d).gaps()).singleElement().satisfies(g -> {
            assertThat(g.rank()).isEqualTo(7);
            assertThat(g.problem()).contains("not one of the 2 ranks");
        });
    }

    @Test
    void aTornNcclLogIsAGapAtItsLastLineAndAWholeOneIsNot() throws IOException {
        Path d = run(MANIFEST);
        Files.writeString(
                d.resolve("nccl-rank0.log"),
                "host:1:1 [0] NCCL INFO Bootstrap\nhost:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2\n");
        Files.writeString(
                d.resolve("nccl-rank1.log"), "host:2:2 [1] NCCL INFO Bootstrap\nhost:2:2 [1] NCCL INFO comm 0x1 ra");
        assertThat(integrity(d).gaps()).singleElement().satisfies(g -> {
            assertThat(g.kind()).isEqualTo(EvidenceKind.NCCL_LOG);
            assertThat(g.where()).endsWith("nccl-rank1.log:2");
            assertThat(g.problem()).startsWith("the last line is torn");
        });
    }

    @Test
    void perRankReplicaDigestsAreReadAndTheirEqualityComputed() throws IOException {
        Path d = run(MANIFEST);
        String a = "a".repeat(64);
        Files.writeString(
                d.resolve("replica-rank0.json"),
                "{\"rank\": 0, \"sha256\": \"" + a + "\", \"samples\": [0.5, -1.0, 0.25]}\n");
        Files.writeString(
                d.resolve("replica-rank1.json"),
                "{\"rank\": 1, \"sha256\": \"" + a + "\", \"samples\": [0.5, -1.0, 0.25]}\n");
        Evidence e = Ingest.read(List.of(d));
        assertThat(e.replicas().equal()).isTrue();
        assertThat(e.replicas().digests()).extracting(Evidence.Digest::rank).containsExactly(0, 1);
        assertThat(e.replicas().digests().get(1).samples()).containsExactly(0.5, -1.0, 0.25);
        assertThat(e.integrity().complete()).isTrue();
        // A copy of rank 0's file under rank 1's name: a problem for the reader, a gap for integrity, and never equal
        // by proxy.
        Files.copy(
                d.resolve("replica-rank0.json"),
                d.resolve("replica-rank1.json"),
                java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Evidence copied = Ingest.read(List.of(d));
        assertThat(copied.problems())
                .anySatisfy(p -> assertThat(p.message()).isEqualTo("rank: 0 in the file of rank 1"));
        assertThat(copied.replicas().digests())
                .extracting(Evidence.Digest::rank)
                .containsExactly(0, 0);
        assertThat(copied.integrity().gaps())
                .extracting(Evidence.Gap::problem)
                .anySatisfy(p -> assertThat(p).isEqualTo("holds rank 0's record, not rank 1's"))
                .anySatisfy(p -> assertThat(p).startsWith("byte for byte the same as replica-rank0.json"));
    }

    @Test
    void aUsersJobPromisesEachRanksDigestNotTheStandInsGatheredFile() throws IOException {
        // run -- COMMAND: the instrumentation finishes with replica-rank{r}.json and never writes replicas.json, which
        // only
        // pathproof's stand-in job gathers. A finished user's job without replicas.json is whole; one without a rank's
        // digest is not.
        String finished = "{\"worldSize\": 2, \"iters\": 2, \"warmup\": 1, \"hookedIterations\": [0, 1, 2],"
                + " \"harnessFinished\": true, \"instrumentation\": {\"mode\": \"command\"}}";
        Path d = run(finished);
        String a = "a".repeat(64);
        Files.writeString(
                d.resolve("replica-rank0.json"), "{\"rank\": 0, \"sha256\": \"" + a + "\", \"samples\": []}\n");
        Files.writeString(
                d.resolve("replica-rank1.json"), "{\"rank\": 1, \"sha256\": \"" + a + "\", \"samples\": []}\n");
        for (int r = 0; r < 2; r++) {
            Files.writeString(d.resolve("ddp-logging-rank" + r + ".json"), "{\"rank\": " + r + "}\n");
        }
        assertThat(integrity(d).gaps()).isEmpty();
        Files.delete(d.resolve("replica-rank1.json"));
        assertThat(integrity(d).gaps()).singleElement().satisfies(g -> {
            assertThat(g.kind()).isEqualTo(EvidenceKind.REPLICA);
            assertThat(g.rank()).isEqualTo(1);
        });
        // The stand-in job's finished run still owes its gathered replicas.json.
        Path standIn = tmp.resolve("stand-in");
        Files.createDirectories(standIn);
        Files.writeString(standIn.resolve("manifest.json"), "{\"worldSize\": 1, \"harnessFinished\": true}");
        Files.writeString(standIn.resolve("ddp-logging-rank0.json"), "{\"rank\": 0}\n");
        assertThat(integrity(standIn).gaps()).extracting(Evidence.Gap::kind).containsExactly(EvidenceKind.REPLICAS);
    }

    @Test
    void iterationsAreWrittenAsRuns() {
        assertThat(RankIntegrity.abbreviate(new TreeSet<>(Set.of(0, 1, 7, 8, 9, 12))))
                .isEqualTo("0-1, 7-9, 12");
    }

    @Test
    void fileListsAndLogsOutsideARunDirectoryHaveNoIntegrity() throws IOException {
        Path log = tmp.resolve("nccl.log");
        Files.writeString(log, "host:1:1 [0] NCCL INFO Bootstrap\n");
        assertThat(Ingest.read(List.of(log)).integrity()).isNull();
    }
}

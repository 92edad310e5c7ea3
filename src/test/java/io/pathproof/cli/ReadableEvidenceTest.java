package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What ingest reads, accept and diagnose read too: a directory holding only a run's own files (hook records, steps,
 * DDP logging, replica digests, manifest: no NCCL log, no trace) was read by ingest and refused by accept and diagnose
 * with "no readable evidence", because they asked for a file of a log or trace format instead of anything read.
 */
class ReadableEvidenceTest {
    private static final List<String> OWN_FILES = List.of(
            "manifest.json",
            "hook-rank0.jsonl",
            "hook-rank1.jsonl",
            "steps-rank0.jsonl",
            "steps-rank1.jsonl",
            "ddp-logging-rank0.json",
            "ddp-logging-rank1.json",
            "replicas.json");

    @TempDir
    Path tmp;

    Path prediction;

    @BeforeEach
    void predict() {
        prediction = tmp.resolve("prediction.json");
        MainTest.Result r =
                MainTest.run("predict", "--scenario", "cpu-x4-gloo", "--torch", "1.13.1", "-o", prediction.toString());
        assertThat(r.code).as(r.err).isZero();
    }

    /** The recorded two-rank gloo run without its traces: the files the instrumentation writes, and nothing else. */
    private Path ownFilesOnly(String name, String start) throws IOException, URISyntaxException {
        Path from = Path.of(ReadableEvidenceTest.class
                .getResource("/io/pathproof/run/testdata/gloo2-phases")
                .toURI());
        Path dir = tmp.resolve(name);
        Files.createDirectories(dir);
        for (String f : OWN_FILES) {
            Files.copy(from.resolve(f), dir.resolve(f));
        }
        // Two runs never share a manifest byte for byte (each records its own start).
        Path m = dir.resolve("manifest.json");
        String s = Files.readString(m, StandardCharsets.UTF_8);
        Files.writeString(m, s.replace("2026-12-02T20:16:08.711847318Z", start), StandardCharsets.UTF_8);
        return dir;
    }

    @Test
    void aDirectoryOfTheRunsOwnFilesIsAcceptedAsIngestReadsIt() throws Exception {
        Path run = ownFilesOnly("own", "2026-12-02T20:16:08.711847318Z");
        assertThat(MainTest.run("ingest", run.toString()).code).isZero();
        MainTest.Result r = MainTest.run("accept", "--prediction", prediction.toString(), "--run", run.toString());
        assertThat(r.err).doesNotContain("no readable evidence");
        assertThat(r.code).as(r.err).isIn(0, 1);
        assertThat(r.out).contains("world-size", "buckets");
    }

    @Test
    void twoSuchDirectoriesAreDiagnosed() throws Exception {
        Path a = ownFilesOnly("a", "2026-12-02T20:16:08.711847318Z");
        Path b = ownFilesOnly("b", "2026-12-02T20:26:08.711847318Z");
        MainTest.Result r = MainTest.run("diagnose", "--baseline", a.toString(), "--variant", b.toString());
        assertThat(r.err).doesNotContain("no readable evidence");
        // diagnosed: a conclusion, a regression, or (these dumps hold no step times) an inconclusive step time
        assertThat(r.code).as(r.err).isIn(0, 1, io.pathproof.core.ExitCode.INCONCLUSIVE);
        assertThat(r.out).startsWith("diagnosis: ");
    }

    @Test
    void aDirectoryWithNothingReadableIsStillRefusedByBoth() throws Exception {
        Path empty = tmp.resolve("empty");
        Files.createDirectories(empty);
        Files.writeString(empty.resolve("notes.md"), "nothing here\n");
        assertThat(MainTest.run("ingest", empty.toString()).code).isEqualTo(3);
        MainTest.Result r = MainTest.run("accept", "--prediction", prediction.toString(), "--run", empty.toString());
        assertThat(r.code).isEqualTo(3);
        assertThat(r.err).contains("no readable evidence");
    }
}

package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.cli.Main;
import io.pathproof.core.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The verb {@code pathproof ingest} end to end, in-process. */
class IngestCommandTest {
    record Result(int code, String out, String err) {}

    static Result run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int code = Main.run(args, new PrintWriter(o, true), new PrintWriter(e, true));
        return new Result(code, o.toString(), e.toString());
    }

    @Test
    void aRunDirectoryIsReadAsJsonWithThePublishedNames() throws Exception {
        Result r = run("ingest", "--format", "json", Read.res("h200-1rank").toString());
        assertThat(r.code()).isZero();
        assertThat(r.err()).doesNotContain("Exception");
        JsonNode ev = Json.mapper().readTree(r.out());
        assertThat(ev.at("/nccl/version").asText()).isEqualTo("2.28.9");
        JsonNode comm = ev.at("/nccl/communicators/0");
        for (String name :
                new String[] {"commId", "nRanks", "nNodes", "collChannels", "p2pChannels", "rings", "transports"}) {
            assertThat(comm.has(name)).as(name).isTrue();
        }
        assertThat(comm.get("collChannels").asInt()).isEqualTo(64);
        assertThat(ev.at("/nccl/envOverrides").isObject()).isTrue();
        assertThat(ev.at("/nccl/warnings").isArray()).isTrue();
        assertThat(ev.at("/nccl/tuning").isArray()).isTrue();
        JsonNode k = ev.at("/kernels/0");
        for (String name : new String[] {"rank", "name", "grid", "block", "durUs"}) {
            assertThat(k.has(name)).as(name).isTrue();
        }
        assertThat(ev.at("/problems").isArray()).isTrue();
    }

    @Test
    void aStepsPhaseBoundariesHaveThePublishedNamesAndOldStepsNone() throws Exception {
        Result r = run(
                "ingest",
                "--format",
                "json",
                java.nio.file.Path.of("src/test/resources/io/pathproof/run/testdata/gloo2-phases")
                        .toString());
        assertThat(r.code()).isZero();
        JsonNode p = Json.mapper().readTree(r.out()).at("/steps/0/hostPhases");
        for (String name :
                new String[] {"forwardStartNs", "backwardStartNs", "backwardEndNs", "optimizerStartNs", "optimizerEndNs"
                }) {
            assertThat(p.path(name).isIntegralNumber()).as(name).isTrue();
        }
        assertThat(p.path("issueOnly").isBoolean()).isTrue();
        // Rows written before the boundaries: the step is published without the field, not with a null.
        JsonNode old = Json.mapper()
                .readTree(run("ingest", "--format", "json", "samples/h200-1rank-accepted/run")
                        .out())
                .at("/steps/0");
        assertThat(old.has("ms")).isTrue();
        assertThat(old.has("hostPhases")).isFalse();
    }

    @Test
    void tableFormatNamesTheFindingsAndTheVersion() {
        Result r = run(
                "ingest",
                Read.res("h200-1rank/kineto-trace.json").toString(),
                Read.res("public-nccl-logs/25-nccl2.19.3-4gpu-p2p-cumem-maxnchannels2-env.log")
                        .toString());
        assertThat(r.code()).isZero();
        assertThat(r.out())
                .contains("version        2.19.3", "P2P/CUMEM", "NCCL_MAX_NCHANNELS=2", "no-nccl-kernel-single-rank");
    }

    @Test
    void nothingReadableExitsThreeWithEachProblemNamed(@TempDir Path dir) throws Exception {
        Path junk = dir.resolve("junk.bin");
        Files.write(junk, new byte[] {1, 2, 3, 0, 4});
        Result r = run("ingest", junk.toString(), dir.resolve("missing.log").toString());
        assertThat(r.code()).isEqualTo(3);
        assertThat(r.err())
                .contains(junk + ":0: not a format", "missing.log:0: no such file or directory", "nothing readable");
        assertThat(r.err()).doesNotContain("Exception", "\tat ");
    }

    @Test
    void problemsAreListedWithFileAndLineWhileTheRestIsRead(@TempDir Path dir) throws Exception {
        Path log = dir.resolve("rank0.log");
        Files.writeString(
                log, "h:1:1 [0] NCCL INFO Connected all rings\nh:1:1 [0] NCCL INFO AllReduce: opCount 0 count x\n");
        Result r = run("ingest", log.toString());
        assertThat(r.code()).isZero();
        assertThat(r.err()).contains(log + ":2: COLL line not understood");
    }

    @Test
    void aWrongFormatIsAUsageError() {
        Result r = run("ingest", "--format", "xml", Read.res("h200-1rank").toString());
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--format: 'xml' is not one of table, json");
    }

    @Test
    void aDirectoryWithGzippedRankLogsAndAReadmeIsWalked(@TempDir Path dir) throws Exception {
        Path sub = Files.createDirectories(dir.resolve("logs"));
        for (int r = 0; r < 2; r++) {
            String log = "h:" + (10 + r) + ":1 [" + r + "] NCCL INFO ncclCommInitRank comm 0x1" + r + " rank " + r
                    + " nranks 2 cudaDev " + r + " nvmlDev " + r + " busId 1" + r + " commId 0xabc - Init START\n"
                    + "h:" + (10 + r) + ":1 [" + r
                    + "] NCCL INFO 24 coll channels, 24 collnet channels, 0 nvls channels,"
                    + " 32 p2p channels, 32 p2p channels per peer\n";
            try (var gz =
                    new java.util.zip.GZIPOutputStream(Files.newOutputStream(sub.resolve("rank" + r + ".log.gz")))) {
                gz.write(log.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            }
        }
        Files.writeString(
                dir.resolve("README.md"),
                "example: `h:1:1 [0] NCCL INFO 2 coll channels, 2 p2p channels, 1 p2p channels per peer`\n");
        Result r = run("ingest", "--format", "json", dir.toString());
        assertThat(r.code()).isZero();
        JsonNode ev = Json.mapper().readTree(r.out());
        assertThat(ev.at("/files")).hasSize(2);
        assertThat(ev.at("/nccl/communicators")).hasSize(1);
        assertThat(ev.at("/nccl/communicators/0/ranks").toString()).isEqualTo("[0,1]");
        assertThat(ev.at("/nccl/communicators/0/collChannels").asInt()).isEqualTo(24);
        assertThat(ev.at("/runDir").asText()).isEqualTo(dir.toString());
    }
}

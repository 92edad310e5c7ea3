package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class NcclProfilerReaderTest {
    private static final String RANK2 = "nccl-profiler/nccl-profiler-rank2-abcdef0123456789.jsonl";

    @Test
    void thePluginsLinesBecomeProfiledCollectivesWithTheirLine() {
        Evidence ev = Ingest.read(List.of(Read.res(RANK2)));
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.files()).singleElement().satisfies(f -> {
            assertThat(f.kind()).isEqualTo(FileKind.NCCL_PROFILER);
            assertThat(f.rank()).isEqualTo(2);
        });
        assertThat(ev.ncclProfiler().status()).isEqualTo("loaded");
        assertThat(ev.ncclProfiler().apiVersion()).isEqualTo(5);
        assertThat(ev.ncclProfiler().colls()).hasSize(2);
        Evidence.ProfiledColl c = ev.ncclProfiler().colls().get(0);
        assertThat(c.rank()).isEqualTo(2);
        assertThat(c.commId()).as("as NCCL's INIT line prints it").isEqualTo("0xabcdef0123456789");
        assertThat(c.func()).isEqualTo("AllReduce");
        assertThat(c.algorithm()).isEqualTo("RING");
        assertThat(c.protocol()).isEqualTo("SIMPLE");
        assertThat(c.channels()).isEqualTo(2);
        assertThat(c.threads()).isEqualTo(640);
        assertThat(c.bytes()).isEqualTo(67_108_864L);
        assertThat(c.minDurNs()).isEqualTo(4000L);
        assertThat(c.source().line()).isEqualTo(2);
        Evidence.ProfiledColl never = ev.ncclProfiler().colls().get(1);
        assertThat(never.incomplete()).isEqualTo(1);
        assertThat(never.minDurNs())
                .as("no GPU span without the kernel channels")
                .isNull();
        assertThat(never.bytes()).isEqualTo(4L);
    }

    @Test
    void identicalDecisionsAreCountedNotRepeated() {
        String comm =
                "{\"event\":\"comm\",\"format\":\"pathproof.nccl-profiler/1\",\"apiVersion\":5,\"commId\":\"c\",\"rank\":1,\"nRanks\":4}\n";
        String coll =
                "{\"event\":\"coll\",\"rank\":1,\"seq\":%d,\"func\":\"AllReduce\",\"count\":256,\"datatype\":\"ncclBfloat16\","
                        + "\"algorithm\":\"TREE\",\"protocol\":\"LL\",\"channels\":1,\"warps\":16,\"startNs\":%d,\"endNs\":%d,"
                        + "\"clock\":\"gpu-globaltimer\",\"complete\":true}\n";
        String text = comm
                + String.format(coll, 0, 100, 130)
                + String.format(coll, 1, 500, 510)
                + String.format(coll, 2, 900, 950);
        Evidence ev = Read.evidence(FileKind.NCCL_PROFILER, "nccl-profiler-rank1-c.jsonl", text);
        assertThat(ev.ncclProfiler().colls()).singleElement().satisfies(c -> {
            assertThat(c.calls()).isEqualTo(3);
            assertThat(c.firstSeq()).isZero();
            assertThat(c.minDurNs()).isEqualTo(10L);
            assertThat(c.maxDurNs()).isEqualTo(50L);
            assertThat(c.sumDurNs()).isEqualTo(90L);
            assertThat(c.bytes()).isEqualTo(512L);
        });
    }

    @Test
    void aOneRankCommunicatorIsLoadedButHasNoCollectiveToReport() {
        Evidence ev = Ingest.read(List.of(Read.res("nccl-profiler/nccl-profiler-rank0-0000000000000001.jsonl")));
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.ncclProfiler().status()).isEqualTo("loaded");
        assertThat(ev.ncclProfiler().colls()).isEmpty();
    }

    @Test
    void aBrokenLineIsAProblemWithItsLineAndReadingGoesOn() {
        String text =
                "{\"event\":\"comm\",\"format\":\"pathproof.nccl-profiler/1\",\"apiVersion\":5,\"commId\":\"c\",\"rank\":0,\"nRanks\":2}\n"
                        + "{\"event\":\"coll\",\"func\":\"AllReduce\",\"count\":\n"
                        + "{\"event\":\"coll\",\"rank\":0,\"func\":\"AllReduce\",\"count\":8,\"datatype\":\"ncclFloat32\",\"algorithm\":\"RING\",\"protocol\":\"LL\",\"channels\":1,\"warps\":8}\n"
                        + "{\"event\":\"coll\",\"count\":\"many\"}\n";
        Evidence ev = Read.evidence(FileKind.NCCL_PROFILER, "nccl-profiler-rank0-c.jsonl", text);
        assertThat(ev.problems()).extracting(Problem::line).containsExactly(2L, 4L);
        assertThat(ev.ncclProfiler().colls())
                .singleElement()
                .satisfies(c -> assertThat(c.source().line()).isEqualTo(3));
    }

    @Test
    void aTuningLineThatDisagreesWithTheProfilerIsAFinding() {
        String log = "h:1:1 [0] NCCL INFO AllReduce: 67108864 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..1}\n";
        String prof =
                "{\"event\":\"comm\",\"format\":\"pathproof.nccl-profiler/1\",\"apiVersion\":5,\"commId\":\"c\",\"rank\":0,\"nRanks\":4}\n"
                        + "{\"event\":\"coll\",\"rank\":0,\"func\":\"AllReduce\",\"count\":16777216,\"datatype\":\"ncclFloat32\","
                        + "\"algorithm\":\"RING\",\"protocol\":\"SIMPLE\",\"channels\":2,\"warps\":20}\n";
        Evidence ev = Read.files(
                Read.facts(FileKind.NCCL_LOG, "run/nccl-rank0.log", log.getBytes()),
                Read.facts(FileKind.NCCL_PROFILER, "run/nccl-profiler-rank0-c.jsonl", prof.getBytes()));
        assertThat(ev.findings())
                .filteredOn(f -> f.kind().equals("witness-disagreement"))
                .singleElement()
                .satisfies(f -> {
                    assertThat(f.message()).contains("RING/LL128").contains("RING/SIMPLE");
                    assertThat(f.sources())
                            .extracting(Source::toString)
                            .containsExactly("run/nccl-rank0.log:1", "run/nccl-profiler-rank0-c.jsonl:2");
                });

        String agreeing = log.replace("LL128", "SIMPLE");
        Evidence ok = Read.files(
                Read.facts(FileKind.NCCL_LOG, "run/nccl-rank0.log", agreeing.getBytes()),
                Read.facts(FileKind.NCCL_PROFILER, "run/nccl-profiler-rank0-c.jsonl", prof.getBytes()));
        assertThat(ok.findings()).noneMatch(f -> f.kind().equals("witness-disagreement"));
    }

    @Test
    void ranksOfOneCommunicatorThatRanTheSameCallDifferentlyAreAFinding() {
        String comm =
                "{\"event\":\"comm\",\"format\":\"pathproof.nccl-profiler/1\",\"apiVersion\":5,\"commId\":\"c\",\"rank\":%d,\"nRanks\":2}\n";
        String coll =
                "{\"event\":\"coll\",\"rank\":%d,\"func\":\"AllReduce\",\"count\":1024,\"datatype\":\"ncclFloat32\","
                        + "\"algorithm\":\"RING\",\"protocol\":\"LL\",\"channels\":%d,\"warps\":8}\n";
        Evidence same = Read.files(
                Read.facts(
                        FileKind.NCCL_PROFILER,
                        "r/nccl-profiler-rank0-c.jsonl",
                        (String.format(comm, 0) + String.format(coll, 0, 2)).getBytes()),
                Read.facts(
                        FileKind.NCCL_PROFILER,
                        "r/nccl-profiler-rank1-c.jsonl",
                        (String.format(comm, 1) + String.format(coll, 1, 2)).getBytes()));
        assertThat(same.findings()).isEmpty();
        Evidence differ = Read.files(
                Read.facts(
                        FileKind.NCCL_PROFILER,
                        "r/nccl-profiler-rank0-c.jsonl",
                        (String.format(comm, 0) + String.format(coll, 0, 2)).getBytes()),
                Read.facts(
                        FileKind.NCCL_PROFILER,
                        "r/nccl-profiler-rank1-c.jsonl",
                        (String.format(comm, 1) + String.format(coll, 1, 1)).getBytes()));
        assertThat(differ.findings()).singleElement().satisfies(f -> {
            assertThat(f.kind()).isEqualTo("cross-rank-disagreement");
            assertThat(f.message())
                    .contains("rank 0 run RING/LL on 2 channel(s)")
                    .contains("rank 1 RING/LL on 1 channel(s)");
        });
    }

    @Test
    void aRequestedPluginWithoutRecordsSaysWhichVersionNcclWanted(@TempDir Path dir) throws IOException {
        Files.writeString(
                dir.resolve("manifest.json"),
                "{\"schema\":\"pathproof.run.manifest/1\","
                        + "\"launcherEnv\":{\"NCCL_PROFILER_PLUGIN\":\"/opt/libnccl-profiler-pathproof.so\"},"
                        + "\"versions\":{\"nccl\":\"2.27.3\"}}\n");
        Evidence ev = Ingest.read(List.of(dir));
        assertThat(ev.ncclProfiler().status()).isEqualTo("not-loaded");
        assertThat(ev.ncclProfiler().message()).isEqualTo("profiler plugin not loaded (NCCL wants v4)");
        assertThat(ev.ncclProfiler().colls()).isEmpty();
    }

    @Test
    void withoutTheFlagNothingIsSaidAndTheJsonIsUnchanged(@TempDir Path dir) throws IOException {
        Files.writeString(
                dir.resolve("manifest.json"), "{\"schema\":\"pathproof.run.manifest/1\",\"launcherEnv\":{}}\n");
        Evidence ev = Ingest.read(List.of(dir));
        assertThat(ev.ncclProfiler()).isNull();
        assertThat(io.pathproof.core.Json.mapper().writeValueAsString(ev)).doesNotContain("ncclProfiler");
    }

    @Test
    void commIdsAreWrittenAsNcclsLogWritesThem() {
        assertThat(NcclProfilerReader.commId("000000000000000c")).isEqualTo("0xc");
        assertThat(NcclProfilerReader.commId("f238022cd8c98f08")).isEqualTo("0xf238022cd8c98f08");
        assertThat(NcclProfilerReader.commId("not-hex")).isEqualTo("not-hex");
    }

    @Test
    void theVersionTableFollowsNcclsLoaders() {
        assertThat(NcclProfilerReader.wants("2.22.3")).isZero();
        assertThat(NcclProfilerReader.wants("2.23.4")).isEqualTo(1);
        assertThat(NcclProfilerReader.wants("2.26.2-1")).isEqualTo(3);
        assertThat(NcclProfilerReader.wants("2.28.9+cuda13.0")).isEqualTo(5);
        assertThat(NcclProfilerReader.wants("2.30.7")).isEqualTo(6);
        assertThat(NcclProfilerReader.wants("2.31.0"))
                .as("newer than the table: at least the newest known")
                .isEqualTo(6);
        assertThat(NcclProfilerReader.wants("garbage")).isNull();
    }
}

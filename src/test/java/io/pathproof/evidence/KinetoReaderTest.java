package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KinetoReaderTest {
    private static final String NCCL_KERNEL =
            "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)\","
                    + " \"pid\": 0, \"tid\": 20, \"ts\": %s, \"dur\": 382.223, \"args\": {\"device\": 0, \"stream\": 20,"
                    + " \"grid\": [%d, 1, 1], \"block\": [544, 1, 1], \"Collective name\": \"allreduce\", \"In msg nelems\": 16777216,"
                    + " \"Out msg nelems\": 16777216, \"Group size\": 4, \"dtype\": \"Float\"}}";

    @Test
    void realH200TraceGivesKernelsRangesAndDistributedInfo() throws IOException {
        Evidence ev = Ingest.read(List.of(Read.res("h200-1rank/kineto-trace.json")));
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.files().get(0).kind()).isEqualTo(FileKind.KINETO);
        assertThat(ev.files().get(0).rank()).isZero();
        assertThat(ev.kernels()).hasSize(21).noneMatch(Evidence.Kernel::nccl);
        assertThat(ev.kernels())
                .allMatch(k -> k.rank() == 0 && k.grid() != null && k.block() != null && k.durNs() != null);
        assertThat(ev.ranges())
                .filteredOn(r -> r.name().equals("nccl:all_reduce"))
                .hasSize(3);
        assertThat(ev.ranges())
                .filteredOn(r -> r.category().equals("gpu_memcpy"))
                .hasSize(6);
        // ts 5354382075105.754 µs, dur 99.327 µs: moved to ns without any binary rounding.
        Evidence.Range first = ev.ranges().stream()
                .filter(r -> r.category().equals("user_annotation"))
                .findFirst()
                .get();
        assertThat(first.startNs()).isEqualTo(5354382075105754L);
        assertThat(first.durNs()).isEqualTo(99327L);
        // The trace's nccl_version is torch's build (torch.cuda.nccl.version()), never the run's NCCL version.
        assertThat(ev.nccl().version()).isNull();
        assertThat(ev.distributed())
                .extracting(Evidence.Distributed::torchNcclBuild)
                .containsOnly("2.28.9");
        assertThat(ev.findings()).extracting(Evidence.Finding::kind).containsExactly("no-nccl-kernel-single-rank");
    }

    @Test
    void legacyCpuTraceOfTorch113GivesItsGlooCollectivesAsRanges() {
        // The shape Debian's torch 1.13 (no Kineto) writes: a bare array, no "cat", pid "CPU functions".
        String trace =
                "[{\"name\": \"aten::mul\", \"ph\": \"X\", \"ts\": 265000, \"dur\": 12, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}},"
                        + " {\"name\": \"c10d::allreduce_\", \"ph\": \"X\", \"ts\": 265402, \"dur\": 10373, \"tid\": 1, \"pid\": \"CPU functions\", \"args\": {}},"
                        + " {\"name\": \"gloo:all_reduce\", \"ph\": \"X\", \"ts\": 265512, \"dur\": 283743, \"tid\": 2, \"pid\": \"CPU functions\", \"args\": {}}]";
        Evidence ev = Read.evidence(FileKind.KINETO, "trace-rank2.json", trace);
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.kernels()).isEmpty();
        assertThat(ev.ranges()).singleElement().satisfies(r -> {
            assertThat(r.name()).isEqualTo("gloo:all_reduce");
            assertThat(r.rank()).isEqualTo(2);
            assertThat(r.startNs()).isEqualTo(265512000L);
            assertThat(r.durNs()).isEqualTo(283743000L);
            assertThat(r.source()).isEqualTo(Source.event("trace-rank2.json", 2));
        });
        // gloo has no GPU kernels: its calls are not "collectives without NCCL kernels".
        assertThat(ev.findings()).noneMatch(f -> f.message().contains("HTA"));
    }

    @Test
    void legacyBareArrayOfTorch113IsRead() {
        String trace = "[" + String.format(NCCL_KERNEL, "1700000000123456.789", 12)
                + ", {\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)\","
                + " \"pid\": 1, \"tid\": 7, \"ts\": 1700000000123999, \"dur\": 10, \"args\": {\"grid\": [12, 1, 1], \"block\": [512, 1, 1]}}]";
        Evidence ev = Read.evidence(FileKind.KINETO, "trace_rank3.json", trace);
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.kernels()).hasSize(2).allMatch(Evidence.Kernel::nccl);
        Evidence.Kernel k = ev.kernels().get(0);
        assertThat(k.rank()).isEqualTo(3);
        assertThat(k.grid()).containsExactly(12, 1, 1);
        assertThat(k.block()).containsExactly(544, 1, 1);
        assertThat(k.startNs()).isEqualTo(1700000000123456789L);
        assertThat(k.durUs()).isEqualByComparingTo("382.223");
        assertThat(k.durNs()).isEqualTo(382223L);
        assertThat(k.collective()).containsEntry("Collective name", "allreduce").containsEntry("Group size", "4");
        assertThat(ev.kernels().get(1).device()).isEqualTo(1);
        assertThat(ev.kernels().get(1).source()).isEqualTo(Source.event("trace_rank3.json", 1));
    }

    @Test
    void gzippedTraceIsReadThroughIngest(@TempDir Path dir) throws IOException {
        String trace =
                "{\"schemaVersion\": 1, \"distributedInfo\": {\"rank\": 1, \"world_size\": 2, \"nccl_version\": \"2.28.9\"},"
                        + " \"traceEvents\": [" + String.format(NCCL_KERNEL, "1.5", 24) + "]}";
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gz = new GZIPOutputStream(bytes)) {
            gz.write(trace.getBytes(StandardCharsets.UTF_8));
        }
        Path f = dir.resolve("worker1.pt.trace.json.gz");
        Files.write(f, bytes.toByteArray());
        Evidence ev = Ingest.read(List.of(f));
        assertThat(ev.files()).extracting(Evidence.FileRead::kind).containsExactly(FileKind.KINETO);
        assertThat(ev.kernels()).singleElement().satisfies(k -> {
            assertThat(k.rank()).isEqualTo(1);
            assertThat(k.startNs()).isEqualTo(1500L);
        });
    }

    @Test
    void collectivesWithoutAnyNcclKernelAreALoudFinding() {
        String trace = "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 8}, \"traceEvents\": ["
                + "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:all_reduce\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2},"
                + "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"record_param_comms\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}]}";
        Evidence ev = Read.evidence(FileKind.KINETO, "t.json", trace);
        assertThat(ev.findings()).singleElement().satisfies(f -> {
            assertThat(f.kind()).isEqualTo("missing-nccl-kernels");
            assertThat(f.message()).contains("ZERO NCCL kernels", "HTA #360");
            assertThat(f.sources()).containsExactly(Source.event("t.json", 0));
        });
    }

    @Test
    void ranksWhoseNcclKernelsDifferInGridAreAFinding() {
        String t0 = "{\"distributedInfo\": {\"rank\": 0, \"world_size\": 2}, \"traceEvents\": ["
                + String.format(NCCL_KERNEL, "10", 24) + "]}";
        String t1 = "{\"distributedInfo\": {\"rank\": 1, \"world_size\": 2}, \"traceEvents\": ["
                + String.format(NCCL_KERNEL, "10", 12) + "]}";
        Evidence ev = Read.files(
                Read.facts(FileKind.KINETO, "r0.json", t0.getBytes(StandardCharsets.UTF_8)),
                Read.facts(FileKind.KINETO, "r1.json", t1.getBytes(StandardCharsets.UTF_8)));
        assertThat(ev.findings()).singleElement().satisfies(f -> {
            assertThat(f.kind()).isEqualTo("cross-rank-disagreement");
            assertThat(f.message()).contains("grid [24, 1, 1]", "grid [12, 1, 1]");
        });
    }

    @Test
    void aTraceCutMidTokenIsAProblemWithItsLineAndKeepsWhatCameBefore() {
        String trace =
                "{\"traceEvents\": [\n" + String.format(NCCL_KERNEL, "10", 24) + ",\n{\"ph\": \"X\", \"cat\": \"ker";
        Evidence ev = Read.evidence(FileKind.KINETO, "cut.json", trace);
        assertThat(ev.kernels()).hasSize(1);
        assertThat(ev.problems()).singleElement().satisfies(p -> {
            assertThat(p.file()).isEqualTo("cut.json");
            assertThat(p.line()).isEqualTo(3);
        });
    }
}

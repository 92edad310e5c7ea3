package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OtherReadersTest {
    @Test
    void ncuRawPageWithUnitsRowAndProfNoise() {
        Evidence ev = Ingest.read(List.of(Read.res("h200-1rank/ncu-raw.csv")));
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.kernels()).singleElement().satisfies(k -> {
            assertThat(k.name()).startsWith("void vectorized_elementwise_kernel<4, FillFunctor<float>");
            assertThat(k.grid()).containsExactly(16384, 1, 1); // printed as "16,384"
            assertThat(k.block()).containsExactly(128, 1, 1);
            assertThat(k.device()).isZero();
            assertThat(k.stream()).isEqualTo(7);
            assertThat(k.source().line()).isEqualTo(6);
        });
    }

    @Test
    void ncuDetailsPageGroupsRowsByKernelId() {
        Evidence ev = Ingest.read(List.of(Read.res("h200-1rank/ncu-details.csv")));
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.kernels()).hasSize(2);
        assertThat(ev.kernels().get(0).grid()).containsExactly(1056, 1, 1);
        assertThat(ev.kernels().get(0).block()).containsExactly(256, 1, 1);
        assertThat(ev.kernels().get(1).name()).startsWith("sm80_xmma_gemm");
        assertThat(ev.kernels().get(1).source().line()).isEqualTo(23);
    }

    @Test
    void ncuDurationIsConvertedFromItsUnitExactly() {
        String csv = "==PROF== Connected to process 1\n"
                + "\"ID\",\"Kernel Name\",\"Device\",\"Stream\",\"launch__grid_dim_x\",\"launch__grid_dim_y\",\"launch__grid_dim_z\","
                + "\"launch__block_dim_x\",\"launch__block_dim_y\",\"launch__block_dim_z\",\"gpu__time_duration.sum\"\n"
                + "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"block\",\"block\",\"block\",\"usecond\"\n"
                + "\"0\",\"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096>)\",\"0\",\"7\",\"24\",\"1\",\"1\",\"544\",\"1\",\"1\",\"1,382.22\"\n"
                + "\"1\"\n";
        Evidence ev = Read.evidence(FileKind.NCU, "ncu.csv", csv);
        assertThat(ev.kernels()).singleElement().satisfies(k -> {
            assertThat(k.nccl()).isTrue();
            assertThat(k.durUs()).isEqualByComparingTo("1382.22");
            assertThat(k.durNs()).isEqualTo(1382220L);
            assertThat(k.grid()).containsExactly(24, 1, 1);
        });
        assertThat(ev.problems()).singleElement().satisfies(p -> assertThat(p.line())
                .isEqualTo(5));
    }

    @Test
    void flightRecorderEntriesOfTheH200Capture() {
        Evidence ev = Ingest.read(List.of(Read.res("h200-1rank/flight-recorder.json")));
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.flightRecorder()).hasSize(9);
        Evidence.FlightRecord big = ev.flightRecorder().stream()
                .filter(f -> f.profilingName().equals("nccl:all_reduce"))
                .findFirst()
                .get();
        assertThat(big.inputSizes()).containsExactly(List.of(16781312L));
        assertThat(big.inputDtypes()).containsExactly("Float");
        assertThat(big.state()).isEqualTo("completed");
        assertThat(big.timeCreatedNs()).isPositive();
        assertThat(ev.nccl().version()).isEqualTo("2.28.9");
    }

    @Test
    void flightRecorderEntryWithoutRecordIdIsAProblem() {
        String fr = "{\"version\": \"2.10\",\n\"entries\": [\n{\"profiling_name\": \"nccl:all_reduce\"},\n"
                + "{\"record_id\": 1, \"profiling_name\": \"nccl:broadcast\", \"input_sizes\": [[4]]}]}";
        Evidence ev = Read.evidence(FileKind.FLIGHT_RECORDER, "fr_rank2.json", fr);
        assertThat(ev.flightRecorder()).singleElement().satisfies(f -> assertThat(f.rank())
                .isEqualTo(2));
        assertThat(ev.problems()).singleElement().satisfies(p -> assertThat(p.line())
                .isEqualTo(3));
    }

    static void nsysDb(Path f, boolean withKernels) throws Exception {
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + f);
                Statement s = c.createStatement()) {
            s.execute("CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL)");
            s.execute(
                    "INSERT INTO StringIds VALUES (1, 'ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)'),"
                            + " (2, 'void at::native::vectorized_elementwise_kernel<4>()'), (3, 'nccl:all_reduce')");
            if (withKernels) {
                s.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                        + " deviceId INTEGER, contextId INTEGER, streamId INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER,"
                        + " blockX INTEGER, blockY INTEGER, blockZ INTEGER, shortName INTEGER, demangledName INTEGER)");
                s.execute(
                        "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (1000, 383223, 0, 1, 20, 24, 1, 1, 544, 1, 1, 1, 1),"
                                + " (500, 900, 0, 1, 7, 16384, 1, 1, 128, 1, 1, 2, 2)");
            }
            s.execute(
                    "CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER, text TEXT, textId INTEGER)");
            s.execute(
                    "INSERT INTO NVTX_EVENTS VALUES (900, 400000, 59, NULL, 3), (10, 20, 59, 'step', NULL), (30, NULL, 34, 'mark', NULL)");
        }
    }

    @Test
    void nsysSqliteKernelsThroughStringIdsAndNvtxRanges(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("report_rank1.sqlite");
        nsysDb(f, true);
        Evidence ev = Ingest.read(List.of(f));
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.files().get(0).kind()).isEqualTo(FileKind.NSYS);
        assertThat(ev.kernels()).hasSize(2);
        Evidence.Kernel nccl = ev.kernels().get(1);
        assertThat(nccl.nccl()).isTrue();
        assertThat(nccl.rank()).isEqualTo(1);
        assertThat(nccl.grid()).containsExactly(24, 1, 1);
        assertThat(nccl.block()).containsExactly(544, 1, 1);
        assertThat(nccl.durNs()).isEqualTo(382223L);
        assertThat(nccl.durUs()).isEqualByComparingTo("382.223");
        assertThat(nccl.stream()).isEqualTo(20);
        assertThat(ev.ranges()).extracting(Evidence.Range::name).containsExactly("step", "nccl:all_reduce");
        assertThat(ev.findings()).isEmpty();
    }

    @Test
    void nsysWithoutKernelTableIsAProblemAndCollectivesWithoutKernelsAFinding(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("report.sqlite");
        nsysDb(f, false);
        Evidence ev = Ingest.read(List.of(f));
        assertThat(ev.problems()).singleElement().satisfies(p -> {
            assertThat(p.file()).isEqualTo(f.toString());
            assertThat(p.message()).contains("CUPTI_ACTIVITY_KIND_KERNEL");
        });
        assertThat(ev.findings()).extracting(Evidence.Finding::kind).containsExactly("missing-nccl-kernels");
    }

    @Test
    void nsysFileThatIsNotADatabaseIsAProblem(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("broken.sqlite");
        java.nio.file.Files.write(
                f, ("SQLite format 3\0" + "garbage".repeat(200)).getBytes(StandardCharsets.ISO_8859_1));
        Evidence ev = Ingest.read(List.of(f));
        assertThat(ev.problems()).singleElement().satisfies(p -> assertThat(p.message())
                .contains("SQLite"));
    }
}

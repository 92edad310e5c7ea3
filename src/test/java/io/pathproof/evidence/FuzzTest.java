package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Seeded mutations over every reader: truncation (JSON cut mid-token included), random bytes, duplicated and
 * reordered lines, a 1 MB line, invalid UTF-8; SQLite files with tables missing, truncated or overwritten. No case may
 * throw, hang, or report a problem without its file and a line inside the file (0 = the file as a whole).
 */
class FuzzTest {
    private static final long SEED = 20261202L;
    private static final byte[] MEGA_LINE = ("x".repeat(1 << 20) + "\n").getBytes(StandardCharsets.US_ASCII);
    private static int cases;

    static byte[] res(String rel) throws IOException {
        return Files.readAllBytes(Read.res(rel));
    }

    static byte[] head(byte[] b, int n) {
        return Arrays.copyOf(b, Math.min(n, b.length));
    }

    static List<byte[]> lines(byte[] b) {
        List<byte[]> out = new ArrayList<>();
        int s = 0;
        for (int i = 0; i < b.length; i++) {
            if (b[i] == '\n') {
                out.add(Arrays.copyOfRange(b, s, i + 1));
                s = i + 1;
            }
        }
        if (s < b.length) {
            out.add(Arrays.copyOfRange(b, s, b.length));
        }
        return out;
    }

    static byte[] join(List<byte[]> ls) {
        ByteArrayOutputStream o = new ByteArrayOutputStream();
        ls.forEach(o::writeBytes);
        return o.toByteArray();
    }

    static byte[] mutate(byte[] seed, Random r, int i) {
        byte[] b = seed.clone();
        switch (i % 7) {
            case 0 -> b = Arrays.copyOf(b, r.nextInt(b.length + 1)); // truncation, JSON cut mid-token
            case 1 -> {
                for (int k = 0; k < 1 + r.nextInt(8); k++) {
                    b[r.nextInt(b.length)] = (byte) r.nextInt(256);
                }
            }
            case 2 -> {
                List<byte[]> ls = lines(b);
                int at = r.nextInt(ls.size());
                ls.add(r.nextInt(ls.size() + 1), ls.get(at));
                b = join(ls);
            }
            case 3 -> {
                List<byte[]> ls = lines(b);
                for (int k = 0; k < 3; k++) {
                    java.util.Collections.swap(ls, r.nextInt(ls.size()), r.nextInt(ls.size()));
                }
                b = join(ls);
            }
            case 4 -> {
                if (r.nextInt(8) == 0) {
                    List<byte[]> ls = lines(b);
                    ls.add(r.nextInt(ls.size() + 1), MEGA_LINE);
                    b = join(ls);
                } else {
                    b = Arrays.copyOf(b, r.nextInt(b.length + 1));
                }
            }
            case 5 -> {
                byte[][] bad = {{(byte) 0xC3, 0x28}, {(byte) 0xFF}, {(byte) 0xED, (byte) 0xA0, (byte) 0x80}, {0}};
                int at = r.nextInt(b.length + 1);
                byte[] ins = bad[r.nextInt(bad.length)];
                byte[] n = new byte[b.length + ins.length];
                System.arraycopy(b, 0, n, 0, at);
                System.arraycopy(ins, 0, n, at, ins.length);
                System.arraycopy(b, at, n, at + ins.length, b.length - at);
                b = n;
            }
            default -> {
                int a = r.nextInt(b.length + 1);
                int c = Math.min(b.length, a + r.nextInt(64));
                byte[] n = new byte[b.length - (c - a)];
                System.arraycopy(b, 0, n, 0, a);
                System.arraycopy(b, c, n, a, b.length - c);
                b = n;
            }
        }
        return b;
    }

    static void check(FileKind kind, byte[] content, String name) {
        long lines = 1; // '\n', and a lone '\r' (JSON parsers count it as a line break too)
        for (int i = 0; i < content.length; i++) {
            if (content[i] == '\n' || (content[i] == '\r' && (i + 1 == content.length || content[i + 1] != '\n'))) {
                lines++;
            }
        }
        FileFacts ff = Read.facts(kind, name, content);
        Evidence ev = Assembly.evidence(null, List.of(ff), List.of(), List.of());
        for (Problem p : ev.problems()) {
            assertThat(p.file()).isEqualTo(name);
            assertThat(p.line()).isBetween(0L, lines);
            assertThat(p.message()).isNotBlank();
        }
        cases++;
    }

    static void run(FileKind kind, List<byte[]> seeds, int n, String name) {
        Random r = new Random(SEED ^ kind.label().hashCode());
        assertTimeoutPreemptively(Duration.ofSeconds(90), () -> {
            for (int i = 0; i < n; i++) {
                byte[] seed = seeds.get(i % seeds.size());
                check(kind, mutate(seed, r, i / seeds.size() + i), name);
            }
        });
    }

    @Test
    void ncclLogs() throws IOException {
        List<byte[]> seeds = new ArrayList<>();
        try (var s = Files.list(Read.res("public-nccl-logs"))) {
            for (Path p : s.filter(p -> p.toString().endsWith(".log")).sorted().toList()) {
                seeds.add(Files.readAllBytes(p));
            }
        }
        seeds.add(res("h200-1rank/nccl-debug.log"));
        seeds.add(("h:1:1 [0] NCCL INFO AllReduce: 67108864 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..23}\n"
                        + "h:1:1 [0] NCCL INFO 67108864 Bytes -> Algo 1 proto 2 time 867.660767\n"
                        + "h:1:1 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo 0 proto 1 time 39.650002\n")
                .getBytes(StandardCharsets.US_ASCII));
        run(FileKind.NCCL_LOG, seeds, 4200, "fuzz.log");
    }

    @Test
    void kinetoTraces() throws IOException {
        byte[] real = res("h200-1rank/kineto-trace.json");
        String legacy =
                "[{\"ph\": \"X\", \"cat\": \"Kernel\", \"name\": \"ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)\","
                        + " \"pid\": 1, \"tid\": 7, \"ts\": 1700000000123999.5, \"dur\": 10, \"args\": {\"grid\": [12, 1, 1], \"block\": [512, 1, 1]}},\n"
                        + "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"nccl:all_reduce\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 2}\n]";
        // The real trace's head (distributedInfo and the first events) and its tail, closed as valid JSON.
        String text = new String(real, StandardCharsets.UTF_8);
        int cut = text.indexOf("}}, {", 6000);
        String small = text.substring(0, cut + 2) + "]}";
        run(
                FileKind.KINETO,
                List.of(small.getBytes(StandardCharsets.UTF_8), legacy.getBytes(StandardCharsets.UTF_8)),
                2800,
                "fuzz.json");
    }

    @Test
    void flightRecorderDumps() throws IOException {
        run(FileKind.FLIGHT_RECORDER, List.of(res("h200-1rank/flight-recorder.json")), 1500, "fr_rank0.json");
    }

    @Test
    void ncuCsv() throws IOException {
        run(
                FileKind.NCU,
                List.of(res("h200-1rank/ncu-raw.csv"), head(res("h200-1rank/ncu-details.csv"), 9000)),
                1500,
                "ncu.csv");
    }

    @Test
    void nsysSqlite(@TempDir Path dir) throws Exception {
        Path good = dir.resolve("good.sqlite");
        OtherReadersTest.nsysDb(good, true);
        byte[] bytes = Files.readAllBytes(good);
        Random r = new Random(SEED);
        String[] drops = {"CUPTI_ACTIVITY_KIND_KERNEL", "StringIds", "NVTX_EVENTS"};
        int n = 0;
        assertTimeoutPreemptively(Duration.ofSeconds(90), () -> {
            for (int i = 0; i < 120; i++) {
                Path f = dir.resolve("case" + i + ".sqlite");
                if (i % 3 == 0) {
                    Files.copy(good, f);
                    try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + f);
                            Statement s = c.createStatement()) {
                        s.execute("DROP TABLE " + drops[r.nextInt(drops.length)]);
                        if (r.nextBoolean()) {
                            s.execute("DROP TABLE IF EXISTS " + drops[r.nextInt(drops.length)]);
                        }
                    }
                } else if (i % 3 == 1) {
                    Files.write(f, Arrays.copyOf(bytes, r.nextInt(bytes.length)));
                } else {
                    byte[] b = bytes.clone();
                    for (int k = 0; k < 1 + r.nextInt(32); k++) {
                        b[r.nextInt(b.length)] = (byte) r.nextInt(256);
                    }
                    Files.write(f, b);
                }
                FileFacts ff = Ingest.readOne(f, FileKind.NSYS);
                for (Problem p : ff.problems()) {
                    assertThat(p.file()).isEqualTo(f.toString());
                    assertThat(p.line()).isNotNegative();
                }
                cases++;
            }
        });
    }

    private static int batches;

    @org.junit.jupiter.api.AfterEach
    void countBatch() {
        batches++;
    }

    @org.junit.jupiter.api.AfterAll
    static void atLeastTenThousandCases() {
        // When the whole class ran (all five batches), the cases must add up to at least 10 000.
        if (batches == 5) {
            assertThat(cases).isGreaterThanOrEqualTo(10_000);
        }
    }
}

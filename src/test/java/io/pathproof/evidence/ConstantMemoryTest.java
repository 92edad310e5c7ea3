package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.bench.IngestCorpus;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The principle behind "a 4 GB log set with -Xmx256m": a generated 256 MiB COLL-heavy log (1.3 million lines) is read
 * by a JVM limited to 32 MiB of heap. Keeping one object per line would need far more; aggregation keeps it constant.
 */
class ConstantMemoryTest {
    static final long BYTES = 256L << 20;

    /** Entry of the child JVM: reads the generated stream and prints what it found. */
    public static void main(String[] args) {
        Reading in = new Reading("generated.log", FileKind.NCCL_LOG, 0);
        NcclLogReader reader = new NcclLogReader(in, 0);
        reader.read(IngestCorpus.ncclLogStream(0, 8, BYTES));
        FileFacts ff = in.done(reader.facts());
        Evidence ev = Assembly.evidence(null, java.util.List.of(ff), java.util.List.of(), java.util.List.of());
        long calls = ev.nccl().colls().stream().mapToLong(Evidence.Coll::calls).sum();
        System.out.println(ff.bytes() + " " + ev.nccl().colls().size() + " " + calls + " "
                + ev.problems().size());
    }

    @Test
    void aQuarterGigabyteLogIsReadIn32MiBOfHeap() throws Exception {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        Process p = new ProcessBuilder(
                        java,
                        "-Xmx32m",
                        "-cp",
                        System.getProperty("java.class.path"),
                        ConstantMemoryTest.class.getName())
                .redirectErrorStream(true)
                .start();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.exitValue()).as(out).isZero();
        String[] f = out.split(" ");
        assertThat(Long.parseLong(f[0])).isGreaterThanOrEqualTo(BYTES);
        assertThat(Integer.parseInt(f[1])).isEqualTo(4); // five DDP buckets per iteration, two of the same size
        assertThat(Long.parseLong(f[2])).isGreaterThan(1_000_000L);
        assertThat(f[3]).isEqualTo("0");
    }
}

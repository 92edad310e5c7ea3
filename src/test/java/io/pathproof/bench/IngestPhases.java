package io.pathproof.bench;

import com.sun.management.OperatingSystemMXBean;
import io.pathproof.core.Json;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import java.io.BufferedWriter;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Where the CPU time of one end-to-end {@code ingest --format json} goes, in a fresh JVM: JVM start up to main, the
 * read ({@link Ingest#read}), the JSON, and the CPU of the JVM's own threads (JIT compilers, GC) — the process's CPU
 * time less that of the Java threads still alive. For a shared, loaded machine, where wall time says little.
 *
 * <p>{@code java -Xmx256m -XX:ActiveProcessorCount=2 -cp … io.pathproof.bench.IngestPhases FILE… > out.json}
 */
public final class IngestPhases {
    private IngestPhases() {}

    public static void main(String[] args) throws Exception {
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        double startWall = ManagementFactory.getRuntimeMXBean().getUptime() / 1e3;
        double startCpu = os.getProcessCpuTime() / 1e9;
        List<Path> files = new ArrayList<>();
        for (String a : args) {
            files.add(Path.of(a));
        }
        if (Boolean.getBoolean("warmJson")) {
            Thread t = new Thread(() -> {
                try {
                    Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsBytes(Ingest.read(List.of()));
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
            t.setDaemon(true);
            t.start();
        }
        long w0 = System.nanoTime();
        long m0 = threads.getCurrentThreadCpuTime();
        long p0 = os.getProcessCpuTime();
        Evidence ev = Ingest.read(files, Math.max(1, Runtime.getRuntime().availableProcessors()));
        long w1 = System.nanoTime();
        long m1 = threads.getCurrentThreadCpuTime();
        long p1 = os.getProcessCpuTime();
        Writer out = new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
        Json.mapper().writerWithDefaultPrettyPrinter().writeValue(out, ev);
        long w2 = System.nanoTime();
        long m2 = threads.getCurrentThreadCpuTime();
        long p2 = os.getProcessCpuTime();
        long javaThreads = 0;
        for (long id : threads.getAllThreadIds()) {
            long t = threads.getThreadCpuTime(id);
            if (t > 0) {
                javaThreads += t;
            }
        }
        long bytes = ev.files().stream().mapToLong(Evidence.FileRead::bytes).sum();
        System.err.printf(
                Locale.ROOT,
                "JVM start to main: %.2f s wall, %.2f CPU-s%n"
                        + "read: %.2f s wall, %.2f CPU-s on the reading thread, %.2f CPU-s in the process (%.0f MB per CPU-s of"
                        + " the reading thread)%n"
                        + "json: %.2f s wall, %.2f CPU-s on the writing thread, %.2f CPU-s in the process%n"
                        + "total: %.2f CPU-s in the process, of which %.2f in JVM threads (JIT compilers, GC, VM)%n",
                startWall,
                startCpu,
                (w1 - w0) / 1e9,
                (m1 - m0) / 1e9,
                (p1 - p0) / 1e9,
                bytes / 1e6 / ((m1 - m0) / 1e9),
                (w2 - w1) / 1e9,
                (m2 - m1) / 1e9,
                (p2 - p1) / 1e9,
                p2 / 1e9,
                (p2 - javaThreads) / 1e9);
    }
}

package io.pathproof.bench;

import com.sun.management.OperatingSystemMXBean;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Throughput in MB per CPU second as well as per wall second, for a machine shared with other work (where JMH's wall
 * time mostly measures the neighbours). Reads the given files {@code reps} times after {@code warm} warm-up reads.
 *
 * <p>{@code java -cp … io.pathproof.bench.IngestThroughput THREADS WARM REPS FILE…}
 */
public final class IngestThroughput {
    private IngestThroughput() {}

    public static void main(String[] args) throws Exception {
        int threads = Integer.parseInt(args[0]);
        int warm = Integer.parseInt(args[1]);
        int reps = Integer.parseInt(args[2]);
        List<Path> files = new ArrayList<>();
        long bytes = 0;
        for (int i = 3; i < args.length; i++) {
            Path f = Path.of(args[i]);
            files.add(f);
            bytes += Files.size(f);
        }
        OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (int i = 0; i < warm; i++) {
            Ingest.read(files, threads);
        }
        java.lang.management.ThreadMXBean tm = ManagementFactory.getThreadMXBean();
        long main0 = tm.getCurrentThreadCpuTime();
        long cpu0 = os.getProcessCpuTime();
        long wall0 = System.nanoTime();
        long facts = 0;
        for (int i = 0; i < reps; i++) {
            Evidence ev = Ingest.read(files, threads);
            facts += ev.files().stream().mapToLong(Evidence.FileRead::facts).sum();
        }
        double cpu = (os.getProcessCpuTime() - cpu0) / 1e9;
        // With 1 thread the files are read on this thread: its CPU leaves out what the JIT compilers still do.
        double mainCpu = (tm.getCurrentThreadCpuTime() - main0) / 1e9;
        double wall = (System.nanoTime() - wall0) / 1e9;
        double mb = bytes * (double) reps / 1e6;
        System.out.printf(
                Locale.ROOT,
                "%d files, %.1f MB x %d reps, %d threads: %.0f MB/s wall, %.0f MB per CPU-second (%.2f CPU-s, %.2f wall-s, %d facts);"
                        + " %.0f MB per CPU-second of the main thread%n",
                files.size(),
                bytes / 1e6,
                reps,
                threads,
                mb / wall,
                mb / cpu,
                cpu,
                wall,
                facts / reps,
                mb / mainCpu);
    }
}

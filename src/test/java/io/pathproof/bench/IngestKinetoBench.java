package io.pathproof.bench;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * Kineto traces, goal ≥ 150 MB/s per core: one generated trace (kernels with grid/block, NCCL kernels with collective
 * args, memcpys, nccl:all_reduce ranges), read on one thread. MB/s = trace bytes / time per op.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class IngestKinetoBench {
    @Param({"64"})
    public int mb;

    private Path file;

    @Setup(Level.Trial)
    public void generate() throws IOException {
        file = Files.createTempFile("pathproof-bench-", "-rank0.json");
        IngestCorpus.writeKineto(file, 0, 8, (long) mb << 20);
        System.out.printf("%n[corpus] Kineto trace, %d bytes%n", Files.size(file));
    }

    @Benchmark
    public Evidence readTrace() {
        Evidence ev = Ingest.read(List.of(file), 1);
        if (ev.kernels().isEmpty() || !ev.problems().isEmpty()) {
            throw new IllegalStateException("benchmark trace not read");
        }
        return ev;
    }

    @TearDown(Level.Trial)
    public void clean() throws IOException {
        Files.deleteIfExists(file);
    }
}

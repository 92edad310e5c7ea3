package io.pathproof.bench;

import io.pathproof.ddp.BucketPlan;
import io.pathproof.ddp.BucketPlanner;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Workload;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * The bucket plan of a large model: {@code params} parameters (transformer-like shapes, mixed bf16/fp32), default
 * bucket cap, construction + rebuild. The rank count does not enter the DDP plan (every rank builds the same buckets).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class BucketPlannerBench {
    @Param({"1000", "10000"})
    int params;

    Workload workload;
    final Version torch = Version.parse("2.11.0");

    @Setup
    public void setup() {
        Random rnd = new Random(42);
        List<Parameter> ps = new ArrayList<>();
        for (int i = 0; i < params; i++) {
            boolean norm = i % 4 == 3;
            List<Long> shape = norm ? List.of(4096L) : List.of(1024L + rnd.nextInt(4096), 4096L);
            ps.add(new Parameter(
                    "layers." + i + (norm ? ".norm.weight" : ".weight"),
                    shape,
                    norm ? DType.FLOAT32 : DType.BFLOAT16,
                    true));
        }
        workload = new Workload("bench", ps, null, false, false, false);
    }

    @Benchmark
    public BucketPlan plan() {
        return BucketPlanner.plan(workload, torch, Map.of());
    }
}

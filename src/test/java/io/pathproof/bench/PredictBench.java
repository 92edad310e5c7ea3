package io.pathproof.bench;

import io.pathproof.predict.Prediction;
import io.pathproof.predict.Predictor;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Versions;
import io.pathproof.scenario.Workload;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Issue 2's speed goal, measured on the whole of {@code predict}: a 1 000-parameter model (a transformer-like mix of
 * bf16 weights and fp32 norms, default bucket cap, so construction and rebuilt buckets) on 8 192 ranks (1 024 nodes ×
 * 8 H200 over NVSwitch, one 400 Gb/s NIC per GPU, NCCL 2.28.9, torch 2.11): bucket plan, communicator, and NCCL's
 * decision for every bucket. Goal: under 100 ms.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class PredictBench {
    private Scenario scenario;

    @Setup
    public void setup() {
        List<Parameter> params = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            boolean norm = i % 4 == 3;
            params.add(new Parameter(
                    "layers." + (i / 4) + (norm ? ".norm.weight" : ".w" + (i % 4)),
                    norm ? List.of(4096L) : List.of(4096L, 1024L + 64L * (i % 7)),
                    norm ? DType.FLOAT32 : DType.BFLOAT16,
                    true));
        }
        Workload w = new Workload("bench-1000", params, null, false, false, false);
        scenario = new Scenario(
                "bench",
                w,
                Clusters.h200(1024),
                new Versions(Version.parse("2.11.0"), Version.parse("2.28.9"), Version.parse("13.0")),
                8192,
                Map.of("NCCL_NVLS_ENABLE", "0"));
    }

    @Benchmark
    public Prediction predict() {
        return Predictor.predict(scenario);
    }
}

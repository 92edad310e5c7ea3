package io.pathproof.bench;

import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.NcclModel;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Versions;
import io.pathproof.scenario.Workload;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * The NCCL model on a large cluster: 1 024 nodes × 8 H200 (18 NVLinks into NVSwitch, NVLS off), one 400 Gb/s NIC per
 * GPU under the GPU's PCIe Gen5 switch, 8 192 ranks, NCCL 2.28.9. One operation = model construction (topology system,
 * graph searches, Postset, cost model) + 1 000 AllReduce decisions of sizes from 4 KiB to 512 MiB. Goal: well under
 * 100 ms.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class NcclModelBench {
    private Scenario scenario;
    private long[] sizes;

    @Setup
    public void setup() {
        Workload w = new Workload(
                "w", List.of(new Parameter("p", List.of(1L), DType.FLOAT32, true)), null, false, false, false);
        scenario = new Scenario(
                "bench",
                w,
                Clusters.h200(1024),
                new Versions(Version.parse("2.11.0"), Version.parse("2.28.9"), Version.parse("13.0")),
                8192,
                Map.of("NCCL_NVLS_ENABLE", "0"));
        sizes = new long[1000];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = 4096L << (i % 18);
        }
    }

    @Benchmark
    public void predict(Blackhole bh) {
        NcclModel m = NcclModel.of(scenario);
        bh.consume(m.communicator());
        for (int i = 0; i < sizes.length; i++) {
            CollectivePrediction p = m.allReduce(i, sizes[i], DType.FLOAT32);
            bh.consume(p);
        }
    }
}

package io.pathproof.bench;

import io.pathproof.predict.Prediction;
import io.pathproof.predict.Predictor;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Topology;
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
    List<Topology.Node> nodes = new ArrayList<>();
    for (int n = 0; n < 1024; n++) {
      List<Topology.Gpu> gpus = new ArrayList<>();
      List<Topology.PciSwitch> sws = new ArrayList<>();
      List<Topology.Nic> nics = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        sws.add(new Topology.PciSwitch("sw" + i, i < 4 ? "cpu0" : "cpu1", 5, 16));
        gpus.add(new Topology.Gpu(i, "NVIDIA H200", 90, String.format("%02x:00.0", 0x18 + 0x10 * i), "sw" + i, 5, 16, 18));
        nics.add(new Topology.Nic("mlx5_" + i, "sw" + i, 400_000, true, "ib"));
      }
      nodes.add(new Topology.Node("node" + n,
          List.of(new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel"), new Topology.Cpu("cpu1", 1, "x86_64", "GenuineIntel")),
          sws, gpus, List.of(), nics));
    }
    List<Parameter> params = new ArrayList<>();
    for (int i = 0; i < 1000; i++) {
      boolean norm = i % 4 == 3;
      params.add(new Parameter("layers." + (i / 4) + (norm ? ".norm.weight" : ".w" + (i % 4)),
          norm ? List.of(4096L) : List.of(4096L, 1024L + 64L * (i % 7)), norm ? DType.FLOAT32 : DType.BFLOAT16, true));
    }
    Workload w = new Workload("bench-1000", params, null, false, false, false);
    scenario = new Scenario("bench", w, new Topology("h200-1024x8", nodes),
        new Versions(Version.parse("2.11.0"), Version.parse("2.28.9"), Version.parse("13.0")), 8192,
        Map.of("NCCL_NVLS_ENABLE", "0"));
  }

  @Benchmark
  public Prediction predict() {
    return Predictor.predict(scenario);
  }
}

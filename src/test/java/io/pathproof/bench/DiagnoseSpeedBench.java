package io.pathproof.bench;

import io.pathproof.accept.Acceptance;
import io.pathproof.accept.AcceptanceTable;
import io.pathproof.accept.SyntheticRuns;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.evidence.Evidence;
import io.pathproof.predict.Prediction;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * Time of one {@code accept} and one {@code diagnose} on the seed-shaped run (4 ranks, 53 iterations, 12 NCCL
 * kernels, 212 hook records, 636 connector/TUNING/COLL facts), evidence already read. Run with JMH (see
 * docs/PERFORMANCE.md).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MILLISECONDS)
public class DiagnoseSpeedBench {
    Evidence baseline;
    Evidence variant;
    Prediction prediction;

    @Setup
    public void setup() {
        SyntheticRuns.Spec b = new SyntheticRuns.Spec();
        SyntheticRuns.Spec v = b.copy();
        v.seed = 2;
        v.env.put("NCCL_MAX_NCHANNELS", "1");
        v.collChannels = 1;
        v.gridX = 1;
        v.commMs = 7.66;
        baseline = SyntheticRuns.build(b);
        variant = SyntheticRuns.build(v);
        prediction = SyntheticRuns.seedPrediction();
    }

    @Benchmark
    public Diagnosis diagnose() {
        return Diagnosis.diagnose(baseline, variant);
    }

    @Benchmark
    public AcceptanceTable accept() {
        return Acceptance.accept(prediction, baseline);
    }
}

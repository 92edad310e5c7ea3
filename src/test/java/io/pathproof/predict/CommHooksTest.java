package io.pathproof.predict;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Workload;
import org.junit.jupiter.api.Test;

class CommHooksTest {
    private static Scenario withHook(String hook) {
        Scenario s = Scenarios.load("h200-x4");
        Workload w = s.workload();
        return s.withWorkload(new Workload(
                w.name(),
                w.parameters(),
                w.bucketCapMb(),
                w.findUnusedParameters(),
                w.staticGraph(),
                w.gradientAsBucketView(),
                null,
                hook));
    }

    @Test
    void fp16CompressionHalvesEveryBucketsCollective() {
        Prediction plain = Predictor.predict(withHook(null));
        Prediction fp16 = Predictor.predict(withHook("fp16_compress_hook"));
        assertThat(fp16.buckets()).isEqualTo(plain.buckets()); // the DDP buckets themselves do not change
        assertThat(fp16.collectives()).hasSameSizeAs(plain.collectives());
        for (int i = 0; i < plain.collectives().size(); i++) {
            CollectivePrediction a = plain.collectives().get(i);
            CollectivePrediction b = fp16.collectives().get(i);
            assertThat(b.bytes()).isEqualTo(a.bytes() / 2);
            assertThat(b.kernelName()).contains("f16").doesNotContain("f32");
        }
        assertThat(fp16.assumptions()).anyMatch(x -> x.contains("float16"));
    }

    @Test
    void aHookWhoseCollectivesAreItsOwnIsNotGuessed() {
        Prediction p = Predictor.predict(withHook("powerSGD_hook"));
        assertThat(p.collectives()).isEmpty();
        assertThat(p.buckets().construction()).isNotEmpty();
        assertThat(p.assumptions()).anyMatch(x -> x.contains("powerSGD_hook") && x.contains("cannot be"));
    }
}

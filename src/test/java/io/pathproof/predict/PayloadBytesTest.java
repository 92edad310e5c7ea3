package io.pathproof.predict;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.ddp.Bucket;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Workload;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Seed common error 3: parameter size, bucket size and bus bytes are three different numbers. A frozen parameter has
 * no bucket bytes, a bucket holds several parameters, and bus bytes are the bucket's bytes times 2(N−1)/N.
 */
class PayloadBytesTest {
    @Test
    void parameterBucketAndBusBytesAreKeptApart() {
        Scenario seed = Scenarios.load("seed");
        Workload w = new Workload(
                "three",
                List.of(
                        new Parameter("a", List.of(1024L, 1024L), DType.FLOAT32, true), // 4 MiB
                        new Parameter("frozen", List.of(1024L, 1024L), DType.FLOAT32, false), // no gradient: not DDP's
                        new Parameter("b", List.of(2048L, 1024L), DType.FLOAT32, true)), // 8 MiB
                5.0,
                false,
                false,
                false);
        Prediction p =
                Predictor.predict(new Scenario("t", w, seed.topology(), seed.versions(), seed.ranks(), seed.env()));

        assertThat(p.buckets().parameterBytes()).isEqualTo(12L << 20);
        assertThat(p.buckets().parameterCount()).isEqualTo(2);
        List<Bucket> rebuilt = p.buckets().rebuilt();
        assertThat(rebuilt.stream().mapToLong(Bucket::bytes).sum()).isEqualTo(12L << 20);
        assertThat(rebuilt).allSatisfy(b -> assertThat(b.params()).doesNotContain("frozen"));
        for (Bucket b : rebuilt) {
            CollectivePrediction c = p.collectives().stream()
                    .filter(x -> x.bucket() == b.index() && x.bytes() == b.bytes())
                    .findFirst()
                    .orElseThrow();
            assertThat(c.busBytes()).isEqualTo(b.bytes() * 2 * 3 / 4);
            assertThat(c.busBytes()).isNotEqualTo(c.bytes());
        }
    }
}

package io.pathproof.ddp;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Workload;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Seeded random workloads: invariants every plan must keep, for every supported torch version and DDP flag. */
class BucketPlanPropertiesTest {
    static final DType[] TYPES = {DType.FLOAT32, DType.FLOAT16, DType.BFLOAT16, DType.FLOAT64};
    static final List<Version> VERSIONS =
            List.of(Version.parse("1.13.1"), Version.parse("2.5.0"), Version.parse("2.6.0"), Version.parse("2.11.0"));

    static Workload randomWorkload(Random rnd) {
        int n = 1 + rnd.nextInt(60);
        boolean mixed = rnd.nextInt(3) == 0;
        List<Parameter> ps = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int dims = 1 + rnd.nextInt(3);
            List<Long> shape = new ArrayList<>();
            for (int d = 0; d < dims; d++) {
                // Mostly small tensors, sometimes big ones that cross any limit alone.
                shape.add(rnd.nextInt(10) == 0 ? 1024L + rnd.nextInt(4096) : 1L + rnd.nextInt(300));
            }
            DType t = mixed ? TYPES[rnd.nextInt(TYPES.length)] : DType.FLOAT32;
            ps.add(new Parameter("p" + i, shape, t, rnd.nextInt(8) != 0 || i == 0));
        }
        Double cap = rnd.nextBoolean() ? null : (double) (1 + rnd.nextInt(8)) / (1 + rnd.nextInt(4));
        return new Workload("random", ps, cap, rnd.nextBoolean(), rnd.nextBoolean(), rnd.nextBoolean());
    }

    @Test
    void invariantsHoldOnSeededRandomWorkloads() {
        Random rnd = new Random(20261202L);
        int plans = 0;
        for (int trial = 0; trial < 400; trial++) {
            Workload w = randomWorkload(rnd);
            Version v = VERSIONS.get(rnd.nextInt(VERSIONS.size()));
            Map<String, String> env = rnd.nextInt(4) == 0 ? Map.of("DDP_SET_LAST_BUCKET_CAP", "1") : Map.of();
            BucketPlan plan = BucketPlanner.plan(w, v, env);
            check(w, plan.construction(), false, env);
            if (!plan.rebuilt().isEmpty()) {
                check(w, plan.rebuilt(), true, env);
            }
            assertThat(plan.rebuilt().isEmpty()).isEqualTo(w.findUnusedParameters() && !w.staticGraph());
            plans++;
        }
        assertThat(plans).isEqualTo(400);
    }

    private static void check(Workload w, List<Bucket> buckets, boolean rebuilt, Map<String, String> env) {
        Map<String, Parameter> byName = new HashMap<>();
        long gradBytes = 0;
        for (Parameter p : w.parameters()) {
            byName.put(p.name(), p);
            if (p.requiresGrad()) {
                gradBytes += p.bytes();
            }
        }
        Set<String> seen = new HashSet<>();
        long sum = 0;
        Map<DType, Integer> leftovers = new HashMap<>();
        for (int i = 0; i < buckets.size(); i++) {
            Bucket b = buckets.get(i);
            assertThat(b.index()).isEqualTo(i);
            assertThat(b.isLast()).isEqualTo(i == buckets.size() - 1);
            long bytes = 0;
            for (String name : b.params()) {
                Parameter p = byName.get(name);
                assertThat(p.requiresGrad())
                        .as("frozen parameter %s in a bucket", name)
                        .isTrue();
                assertThat(seen.add(name))
                        .as("parameter %s in two buckets", name)
                        .isTrue();
                assertThat(p.dtype()).as("bucket %d mixes dtypes", i).isEqualTo(b.dtype());
                bytes += p.bytes();
            }
            assertThat(b.bytes()).isEqualTo(bytes);
            sum += bytes;
            if (b.bytes() < b.limitBytes()) {
                leftovers.merge(b.dtype(), 1, Integer::sum);
            }
        }
        long trainable = w.parameters().stream().filter(Parameter::requiresGrad).count();
        assertThat(seen).hasSize((int) trainable);
        assertThat(sum).isEqualTo(gradBytes);
        // Every bucket closed at >= its limit except at most one leftover per dtype.
        for (int count : leftovers.values()) {
            assertThat(count).isLessThanOrEqualTo(1);
        }
    }
}

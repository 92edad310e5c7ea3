package io.pathproof.ddp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Workload;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BucketPlannerTest {
    static final Version T113 = Version.parse("1.13.0a0");
    static final Version T25 = Version.parse("2.5.0a0+872d972e41.nv24.08");
    static final Version T211 = Version.parse("2.11.0+cu130");

    static Parameter p(String name, boolean grad, long... shape) {
        List<Long> s = new ArrayList<>();
        for (long d : shape) {
            s.add(d);
        }
        return new Parameter(name, s, DType.FLOAT32, grad);
    }

    /**
     * The 7-parameter model of pytorch-ddp-model.md §1.6 (shapes as torch gives its Linear layers): 0 fc1.weight
     * 1048576 B, 1 fc1.bias 1024 B, 2 fc2.weight 8388608 B, 3 fc2.bias 32768 B, 4 fc3.weight
     * 327680 B, 5 fc3.bias 40 B, 6 frozen.bias 16 B; frozen.weight does not require a gradient.
     */
    static List<Parameter> sevenParams() {
        return List.of(
                p("fc1.weight", true, 256, 1024),
                p("fc1.bias", true, 256),
                p("fc2.weight", true, 8192, 256),
                p("fc2.bias", true, 8192),
                p("fc3.weight", true, 10, 8192),
                p("fc3.bias", true, 10),
                p("frozen.weight", false, 4, 10),
                p("frozen.bias", true, 4));
    }

    static Workload model(Double capMb, boolean findUnused, boolean staticGraph) {
        return new Workload("seven", sevenParams(), capMb, findUnused, staticGraph, false);
    }

    static List<Long> sizes(List<Bucket> bs) {
        return bs.stream().map(Bucket::bytes).toList();
    }

    @Test
    void sevenParameterModelDefaultConfig() {
        BucketPlan plan = BucketPlanner.plan(model(null, false, false), T113, Map.of());
        assertThat(sizes(plan.construction())).containsExactly(9798712L);
        assertThat(sizes(plan.rebuilt())).containsExactly(8749112L, 1049600L);
        assertThat(plan.rebuilt().get(0).params())
                .containsExactly("frozen.bias", "fc3.bias", "fc3.weight", "fc2.bias", "fc2.weight");
        assertThat(plan.rebuilt().get(1).params()).containsExactly("fc1.bias", "fc1.weight");
        assertThat(plan.rebuilt().get(0).isLast()).isFalse();
        assertThat(plan.rebuilt().get(1).isLast()).isTrue();
        // GradBucket numels seen by the hook: 2187278 and 262400 float32 elements.
        assertThat(plan.rebuilt().get(0).bytes() / 4).isEqualTo(2187278L);
        assertThat(plan.rebuilt().get(1).bytes() / 4).isEqualTo(262400L);
        assertThat(plan.bucketsAt(0)).isEqualTo(plan.construction());
        assertThat(plan.bucketsAt(1)).isEqualTo(plan.rebuilt());
        assertThat(plan.firstRebuiltIteration()).isEqualTo(1);
        assertThat(plan.construction().get(0).params()).hasSize(7).doesNotContain("frozen.weight");
        assertThat(plan.assumptions()).anyMatch(a -> a.contains("reverse parameter order"));
    }

    @Test
    void sevenParameterModelCap1() {
        for (Version v : List.of(T113, T25, T211)) {
            BucketPlan plan = BucketPlanner.plan(model(1.0, false, false), v, Map.of());
            assertThat(sizes(plan.construction())).as("torch %s", v).containsExactly(9798712L);
            assertThat(sizes(plan.rebuilt())).as("torch %s", v).containsExactly(8749112L, 1049600L);
        }
    }

    @Test
    void sevenParameterModelFindUnused() {
        BucketPlan plan = BucketPlanner.plan(model(null, true, false), T113, Map.of());
        assertThat(sizes(plan.construction())).containsExactly(8750136L, 1048576L);
        assertThat(plan.construction().get(0).params())
                .containsExactly("fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias", "frozen.bias");
        assertThat(plan.construction().get(1).params()).containsExactly("fc1.weight");
        assertThat(plan.rebuilt()).isEmpty();
        assertThat(plan.firstRebuiltIteration()).isEqualTo(-1);
        assertThat(plan.bucketsAt(100)).isEqualTo(plan.construction());
        assertThat(plan.constructionLimits()).containsExactly(1048576L, 26214400L);
    }

    @Test
    void sevenParameterModelStaticGraph() {
        BucketPlan plan = BucketPlanner.plan(model(null, false, true), T113, Map.of());
        assertThat(sizes(plan.construction())).containsExactly(9798712L);
        assertThat(sizes(plan.rebuilt())).containsExactly(8749112L, 1049600L);
        assertThat(plan.firstRebuiltIteration()).isEqualTo(2);
        assertThat(sizes(plan.bucketsAt(1))).containsExactly(9798712L);
        assertThat(sizes(plan.bucketsAt(2))).containsExactly(8749112L, 1049600L);
    }

    /**
     * {@code ddp._set_static_graph()} after a construction with find_unused_parameters: torch 1.13 measured here (one
     * gloo rank, this model, 12 iterations): bucket_sizes "8750136, 1048576" (constructed as for a graph that is not
     * static), rebuilt_bucket_sizes "8749112, 1049600" (run statically); with static_graph=True given to the
     * constructor, bucket_sizes "9798712".
     */
    @Test
    void aGraphMadeStaticAfterConstructionKeepsItsConstructionBuckets() {
        Workload late = new Workload("seven", sevenParams(), null, true, true, false, null, null, true);
        BucketPlan plan = BucketPlanner.plan(late, T113, Map.of());
        assertThat(sizes(plan.construction())).containsExactly(8750136L, 1048576L);
        assertThat(sizes(plan.rebuilt())).containsExactly(8749112L, 1049600L);
        assertThat(plan.firstRebuiltIteration()).isEqualTo(2);
        assertThat(sizes(BucketPlanner.plan(model(null, true, true), T113, Map.of())
                        .construction()))
                .containsExactly(9798712L);
    }

    @Test
    void seedIsOneBucketOf64MiB() {
        Workload seed = new Workload("one-64mib-fp32", List.of(p("p", true, 16777216)), 64.0, false, false, false);
        BucketPlan plan = BucketPlanner.plan(seed, T25, Map.of());
        for (int it = 0; it < 3; it++) {
            assertThat(plan.bucketsAt(it)).hasSize(1);
            Bucket b = plan.bucketsAt(it).get(0);
            assertThat(b.bytes()).isEqualTo(67108864L);
            assertThat(b.index()).isZero();
            assertThat(b.isLast()).isTrue();
            assertThat(b.dtype()).isEqualTo(DType.FLOAT32);
            assertThat(b.params()).containsExactly("p");
        }
    }

    @Test
    void everyPresetScenarioPlans() {
        for (String name : io.pathproof.scenario.Scenarios.scenarioPresets()) {
            var s = io.pathproof.scenario.Scenarios.load(name);
            BucketPlan plan = BucketPlanner.plan(s);
            if (s.workload().name().equals("small-4p-fp32")) {
                // prove's CPU default (torch 1.13): one bucket at construction; rebuilt with 1 MiB first, then the 25
                // MiB cap
                // in ready order d, c, b, a: [d] [c b a].
                assertThat(sizes(plan.bucketsAt(0))).as(name).containsExactly(3147776L);
                assertThat(sizes(plan.bucketsAt(5))).as(name).containsExactly(1048576L, 2099200L);
                continue;
            }
            // Every other preset uses the seed's one-parameter model: one 64 MiB bucket before and after the rebuild.
            assertThat(sizes(plan.bucketsAt(0))).as(name).containsExactly(67108864L);
            assertThat(sizes(plan.bucketsAt(5))).as(name).containsExactly(67108864L);
        }
    }

    @Test
    void flagsGivenOverADumpChangeThePlan() {
        Workload dumped = new Workload("dump", sevenParams(), null, false, false, false);
        BucketPlan plan = BucketPlanner.plan(dumped.withDdpFlags(null, true, false, false), T113, Map.of());
        assertThat(sizes(plan.construction())).containsExactly(8750136L, 1048576L);
    }

    @Test
    void firstBucketFollowsAGivenCapFrom25On() {
        // find_unused_parameters=True with bucket_cap_mb=2: 1.13 passes [1 MiB, 2 MiB], 2.x passes [2 MiB] only.
        BucketPlan old = BucketPlanner.plan(model(2.0, true, false), T113, Map.of());
        assertThat(old.constructionLimits()).containsExactly(1048576L, 2097152L);
        // fc1.weight alone closes at 1 MiB; fc1.bias + fc2.weight cross 2 MiB; fc2.bias..frozen.bias are a leftover.
        assertThat(sizes(old.construction())).containsExactly(360504L, 8389632L, 1048576L);

        BucketPlan neu = BucketPlanner.plan(model(2.0, true, false), T25, Map.of());
        assertThat(neu.constructionLimits()).containsExactly(2097152L);
        // fc1.weight (1 MiB) + fc1.bias + fc2.weight crosses 2 MiB; the rest is a leftover.
        assertThat(sizes(neu.construction())).containsExactly(360504L, 9438208L);

        // Rebuild with a given cap: 2.x uses [cap, cap]; 1.13 keeps [1 MiB, cap].
        BucketPlan reOld = BucketPlanner.plan(model(2.0, false, false), T113, Map.of());
        assertThat(reOld.rebuildLimits()).containsExactly(1048576L, 2097152L);
        BucketPlan reNew = BucketPlanner.plan(model(2.0, false, false), T211, Map.of());
        assertThat(reNew.rebuildLimits()).containsExactly(2097152L, 2097152L);
        assertThat(sizes(reNew.rebuilt())).containsExactly(8749112L, 1049600L);
        // Default cap: both use [1 MiB, 25 MiB].
        assertThat(BucketPlanner.plan(model(null, false, false), T211, Map.of()).rebuildLimits())
                .containsExactly(1048576L, 26214400L);
    }

    @Test
    void nnLinear4096OnH200RebuildsToBiasFirst() {
        // fixtures/h200-1rank second capture: nn.Linear(4096, 4096), bucket_cap_mb=25, torch 2.11:
        // bucket_sizes '67125248', rebuilt_per_bucket_param_indices '1 0'.
        Workload lin = new Workload(
                "linear", List.of(p("weight", true, 4096, 4096), p("bias", true, 4096)), 25.0, false, false, false);
        BucketPlan plan = BucketPlanner.plan(lin, T211, Map.of());
        assertThat(sizes(plan.construction())).containsExactly(67125248L);
        assertThat(plan.rebuilt()).hasSize(1);
        assertThat(plan.rebuilt().get(0).params()).containsExactly("bias", "weight");
    }

    @Test
    void setLastBucketCapMovesTheSmallBucketToTheEnd() {
        BucketPlan plan = BucketPlanner.plan(model(null, false, false), T113, Map.of("DDP_SET_LAST_BUCKET_CAP", "1"));
        // Ready order reversed: 0 1 2 3 4 5 6; fc1.weight alone reaches 1 MiB and closes the small bucket, which then
        // becomes the last; everything else is one leftover under 25 MiB.
        assertThat(sizes(plan.rebuilt())).containsExactly(8750136L, 1048576L);
        assertThat(plan.rebuilt().get(0).params())
                .containsExactly("fc1.bias", "fc2.weight", "fc2.bias", "fc3.weight", "fc3.bias", "frozen.bias");
        assertThat(plan.rebuilt().get(1).limitBytes()).isEqualTo(1048576L);
        assertThat(plan.rebuilt().get(1).isLast()).isTrue();
        BucketPlan other = BucketPlanner.plan(model(null, false, false), T113, Map.of("DDP_SET_LAST_BUCKET_CAP", "0"));
        assertThat(sizes(other.rebuilt())).containsExactly(8749112L, 1049600L);
    }

    @Test
    void mixedDtypesNeverShareABucket() {
        Workload w = new Workload(
                "mixed",
                List.of(
                        new Parameter("a", List.of(1000L), DType.FLOAT32, true),
                        new Parameter("b", List.of(1000L), DType.BFLOAT16, true),
                        new Parameter("c", List.of(1000L), DType.FLOAT32, true)),
                null,
                false,
                false,
                false);
        BucketPlan plan = BucketPlanner.plan(w, T211, Map.of());
        assertThat(plan.construction()).hasSize(2);
        // Construction sorted by smallest index, then reversed: the bf16 bucket {b} first, {a, c} last.
        assertThat(plan.construction().get(0).params()).containsExactly("b");
        assertThat(plan.construction().get(1).params()).containsExactly("a", "c");
        assertThat(plan.assumptions()).anyMatch(a -> a.contains("unordered_map"));
        // Rebuild, ready order c, b, a: both dtypes leave a partly filled bucket; bf16 was seen last, so it comes
        // first.
        assertThat(plan.rebuilt()).extracting(Bucket::params).containsExactly(List.of("b"), List.of("c", "a"));
    }

    @Test
    void unsupportedTorchVersionIsBadInput() {
        assertThatThrownBy(() -> BucketPlanner.plan(model(null, false, false), Version.parse("2.3.1"), Map.of()))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("versions.torch")
                .hasMessageContaining("2.3.1")
                .extracting(e -> ((PathproofException) e).exitCode())
                .isEqualTo(3);
    }

    @Test
    void noTrainableParameterIsBadInput() {
        Workload w = new Workload("frozen", List.of(p("w", false, 4)), null, false, false, false);
        assertThatThrownBy(() -> BucketPlanner.plan(w, T25, Map.of()))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("requires a gradient");
    }
}

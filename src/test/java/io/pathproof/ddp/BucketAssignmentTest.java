package io.pathproof.ddp;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.ddp.BucketAssignment.Tensor;
import io.pathproof.scenario.DType;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The measured cases of pytorch-ddp-model.md §1.2: {@code dist._compute_bucket_assignment_by_size} run on torch
 * 1.13.1 with synthetic tensors and limits {@code [1 MiB, 25 MiB]}.
 */
class BucketAssignmentTest {
    static final long MIB = 1048576;
    static final List<Long> LIMITS = List.of(MIB, 25 * MIB);

    static Tensor f32(long bytes) {
        return new Tensor(bytes, DType.FLOAT32);
    }

    static Tensor f16(long bytes) {
        return new Tensor(bytes, DType.FLOAT16);
    }

    @Test
    void aTensorLargerThanTheCapGetsItsOwnBucketOnlyWhenItsAccumulatorIsEmpty() {
        var r = BucketAssignment.bySize(List.of(f32(30 * MIB), f32(4), f32(4)), LIMITS, null);
        assertThat(r.buckets()).containsExactly(List.of(0), List.of(1, 2));

        var r2 = BucketAssignment.bySize(List.of(f32(4), f32(30 * MIB), f32(4), f32(2 * MIB)), LIMITS, null);
        assertThat(r2.buckets()).containsExactly(List.of(0, 1), List.of(2, 3));
    }

    @Test
    void exactlyAtTheLimitCloses() {
        var r = BucketAssignment.bySize(
                List.of(f32(MIB), f32(MIB), f32(24 * MIB), f32(25 * MIB), f32(4)), LIMITS, null);
        assertThat(r.buckets()).containsExactly(List.of(0), List.of(1, 2), List.of(3), List.of(4));
        assertThat(r.limits()).containsExactly(MIB, 25 * MIB, 25 * MIB, 25 * MIB);
    }

    @Test
    void mixedDtypesBucketSeparatelyWithIndependentLimitCursors() {
        long k600 = 600 * 1024;
        var tensors = List.of(f32(k600), f16(k600), f32(k600), f16(k600), f32(4));
        var r = BucketAssignment.bySize(tensors, LIMITS, null);
        assertThat(r.buckets()).containsExactly(List.of(0, 2), List.of(1, 3), List.of(4));
        assertThat(r.limits()).containsExactly(MIB, MIB, 25 * MIB);
        assertThat(r.unorderedLeftovers()).isFalse();
    }

    @Test
    void withTensorIndicesNothingIsSorted() {
        long k600 = 600 * 1024;
        var tensors = List.of(f32(k600), f16(k600), f32(k600), f16(k600), f32(4));
        var r = BucketAssignment.bySize(tensors, LIMITS, List.of(4, 3, 2, 1, 0));
        assertThat(r.buckets()).containsExactly(List.of(4, 2), List.of(3, 1), List.of(0));
    }

    @Test
    void sysMaxsizeMakesOneBucketPerDtype() {
        var one = BucketAssignment.bySize(
                List.of(f32(4), f32(8), f32(30 * MIB), f32(4), f32(4)), List.of(Long.MAX_VALUE), null);
        assertThat(one.buckets()).containsExactly(List.of(0, 1, 2, 3, 4));

        long k600 = 600 * 1024;
        var mixed = BucketAssignment.bySize(
                List.of(f32(k600), f16(k600), f32(k600), f16(k600), f32(4)), List.of(Long.MAX_VALUE), null);
        assertThat(mixed.buckets()).containsExactly(List.of(0, 2, 4), List.of(1, 3));
    }

    @Test
    void twoLeftoversOnTheRebuildPathAreFlaggedAsUnordered() {
        var r = BucketAssignment.bySize(List.of(f32(4), f16(4)), LIMITS, List.of(1, 0));
        assertThat(r.unorderedLeftovers()).isTrue();
        var single = BucketAssignment.bySize(List.of(f32(4), f32(4)), LIMITS, List.of(1, 0));
        assertThat(single.unorderedLeftovers()).isFalse();
    }
}

package io.pathproof.ddp;

import io.pathproof.scenario.DType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A port of {@code compute_bucket_assignment_by_size} (torch/csrc/distributed/c10d/reducer.cpp; the same logic in
 * v1.13.1 and v2.6.0 — a diff shows only {@code c10::optional} → {@code std::optional}). Dense tensors only: DDP's
 * sparse-gradient parameters ({@code expect_sparse_gradient}) are not part of a workload here.
 *
 * <p>Rules kept exactly: one accumulator per key (dtype; every DDP parameter of a rank lives on one device, so the
 * device part of {@code BucketKey} is constant); a bucket closes when its size is {@code >=} its limit, with the
 * crossing tensor inside; each key has its own cursor into {@code limits}, which advances after every close and
 * stops at the last limit; leftovers follow, each with the limit in force when it was last filled; without
 * {@code tensorIndices} (construction) the result is sorted by smallest index.
 */
final class BucketAssignment {
    private BucketAssignment() {}

    /** One tensor as the assignment sees it. */
    record Tensor(long bytes, DType dtype) {}

    /**
     * The result: buckets of parameter indices (in append order) and the limit of each.
     * {@code unorderedLeftovers} is true when more than one key had a leftover on the rebuild path, where torch emits
     * them in {@code std::unordered_map} iteration order. That order is the hash table's, not the language's:
     * measured on torch 1.13.1 and 2.11.0 (libstdc++, x86-64; testdata/torch-*-measured.txt) it was the reverse of
     * the order in which the keys were first seen, for every pair and triple of float32/float16/bfloat16/float64
     * tried — libstdc++ links a node that opens a new hash bucket at the front of its list. This port emits that
     * order and the planner says it rests on an observation.
     */
    record Result(List<List<Integer>> buckets, List<Long> limits, boolean unorderedLeftovers) {}

    private static final class Accumulator {
        final List<Integer> indices = new ArrayList<>();
        long size;
        long limit;
    }

    static Result bySize(List<Tensor> tensors, List<Long> limits, List<Integer> tensorIndices) {
        if (limits.isEmpty()) {
            throw new IllegalArgumentException("bucket size limits: empty");
        }
        boolean construction = tensorIndices == null || tensorIndices.isEmpty();
        List<List<Integer>> buckets = new ArrayList<>();
        List<Long> bucketLimits = new ArrayList<>();
        Map<DType, Accumulator> accumulators = new LinkedHashMap<>();
        Map<DType, Integer> cursors = new LinkedHashMap<>();
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = tensors.get(i);
            int index = construction ? i : tensorIndices.get(i);
            Accumulator b = accumulators.computeIfAbsent(t.dtype(), k -> new Accumulator());
            b.indices.add(index);
            b.size = Math.addExact(b.size, t.bytes());
            int cursor = cursors.computeIfAbsent(t.dtype(), k -> 0);
            b.limit = limits.get(cursor);
            if (b.size >= b.limit) {
                buckets.add(List.copyOf(b.indices));
                bucketLimits.add(b.limit);
                accumulators.put(t.dtype(), new Accumulator());
                if (cursor + 1 < limits.size()) {
                    cursors.put(t.dtype(), cursor + 1);
                }
            }
        }
        int leftovers = 0;
        List<Accumulator> rest = new ArrayList<>(accumulators.values());
        if (!construction) {
            java.util.Collections.reverse(rest);
        }
        for (Accumulator b : rest) {
            if (!b.indices.isEmpty()) {
                buckets.add(List.copyOf(b.indices));
                bucketLimits.add(b.limit);
                leftovers++;
            }
        }
        if (construction) {
            // Sort by the smallest tensor index of each bucket; those are unique, so the order is deterministic.
            List<Integer> order = new ArrayList<>();
            for (int i = 0; i < buckets.size(); i++) {
                order.add(i);
            }
            order.sort(Comparator.comparingInt(i -> min(buckets.get(i))));
            List<List<Integer>> sortedBuckets = new ArrayList<>();
            List<Long> sortedLimits = new ArrayList<>();
            for (int i : order) {
                sortedBuckets.add(buckets.get(i));
                sortedLimits.add(bucketLimits.get(i));
            }
            return new Result(List.copyOf(sortedBuckets), List.copyOf(sortedLimits), false);
        }
        return new Result(List.copyOf(buckets), List.copyOf(bucketLimits), leftovers > 1);
    }

    private static int min(List<Integer> xs) {
        int m = Integer.MAX_VALUE;
        for (int x : xs) {
            m = Math.min(m, x);
        }
        return m;
    }
}

package io.pathproof.ddp;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Version;
import java.util.ArrayList;
import java.util.List;

/**
 * The DDP bucketing rules of one range of torch versions, as data. Every rule that differs between versions lives in
 * a row of {@link #TABLE}; the planner holds no version {@code if}s.
 *
 * <p>What a row decides:
 *
 * <ul>
 *   <li>{@code firstBucketFollowsCap}: whether a {@code bucket_cap_mb} the user passed replaces the 1 MiB first-bucket
 *       limit. false: torch 1.13 {@code _ddp_init_helper} always passes {@code [_DEFAULT_FIRST_BUCKET_BYTES, cap]} when
 *       it buckets at construction, and the Reducer always gets {@code first_bucket_bytes_cap =
 *       _DEFAULT_FIRST_BUCKET_BYTES} for the rebuild (torch/nn/parallel/distributed.py@v1.13.1). true: torch 2.6
 *       passes {@code [cap]} alone and {@code first_bucket_bytes_cap = cap} when {@code bucket_cap_mb} is given
 *       ({@code bucket_bytes_cap_default}, torch/nn/parallel/distributed.py@v2.6.0; the same in
 *       distributed.py:826-850 and :1218-1235 and the Reducer's first-bucket argument at :1270-1274 @2.11.0);
 *       torch 2.14
 *       {@code _BucketCapacityConfig.create} computes the same limits when no {@code bucket_cap_mb_list} is given.
 *   <li>{@code rebuildIteration} / {@code staticGraphRebuildIteration}: the first iteration that reduces rebuilt
 *       buckets ({@code _rebuild_buckets} runs at the start of the forward after the first backward that recorded a
 *       ready order; with static_graph the ready order is recorded only from the second backward,
 *       {@code static_graph_after_first_iteration}, reducer.cpp).
 * </ul>
 */
record TorchDdpRules(
        String id,
        Version from,
        Version until,
        boolean firstBucketFollowsCap,
        int rebuildIteration,
        int staticGraphRebuildIteration,
        String source) {

    /** {@code kDefaultFirstBucketBytes} (torch/csrc/distributed/c10d/reducer.hpp, all versions read). */
    static final long DEFAULT_FIRST_BUCKET_BYTES = 1024L * 1024;

    /** {@code kDefaultBucketBytesCap}: 25 MiB, the default of {@code bucket_cap_mb} (reducer.hpp; distributed.py). */
    static final double DEFAULT_BUCKET_CAP_MB = 25;

    /** Python's {@code sys.maxsize} on a 64-bit build: "one bucket per (dtype, device)". */
    static final long SYS_MAXSIZE = Long.MAX_VALUE;

    static final List<TorchDdpRules> TABLE = List.of(
            new TorchDdpRules(
                    "torch-1.13",
                    Version.of(1, 13, 0),
                    Version.of(2, 0, 0),
                    false,
                    1,
                    2,
                    "torch/nn/parallel/distributed.py and torch/csrc/distributed/c10d/reducer.cpp @v1.13.1 (read and"
                            + " measured, gloo)"),
            new TorchDdpRules(
                    "torch-2.5+",
                    Version.of(2, 5, 0),
                    null,
                    true,
                    1,
                    2,
                    "torch/nn/parallel/distributed.py and reducer.cpp @v2.6.0 (read), distributed.py @2.11.0 (read and"
                            + " measured, gloo) and @v2.14.1 (read); 2.5.0 and 2.7-2.10 not read, assumed equal to 2.6.0"));

    static TorchDdpRules forVersion(Version torch) {
        if (torch == null) {
            throw PathproofException.badInput("versions.torch: missing (the bucket rules depend on it)");
        }
        for (TorchDdpRules r : TABLE) {
            if (torch.compareTo(r.from) >= 0 && (r.until == null || torch.compareTo(r.until) < 0)) {
                return r;
            }
        }
        List<String> known = new ArrayList<>();
        for (TorchDdpRules r : TABLE) {
            known.add(r.until == null ? ">= " + r.from : r.from + " to before " + r.until);
        }
        throw PathproofException.badInput("versions.torch: DDP bucket rules of torch " + torch
                + " were not checked against its source (checked: " + String.join(", ", known) + ")");
    }

    /** Bytes of {@code bucket_cap_mb}: {@code int(bucket_cap_mb * 1024 * 1024)} as Python computes it. */
    static long capBytes(Double bucketCapMb) {
        double mb = bucketCapMb == null ? DEFAULT_BUCKET_CAP_MB : bucketCapMb;
        return (long) (mb * 1024 * 1024);
    }

    /** The {@code bucket_size_limits} {@code _ddp_init_helper} passes to the construction assignment. */
    List<Long> constructionLimits(boolean staticGraph, boolean findUnused, boolean capIsDefault, long cap) {
        if (staticGraph || !findUnused) {
            // "Can remove this branching once #73732 is landed": no bucketing in the first iteration unless
            // find_unused_parameters=True and static_graph=False (distributed.py, _ddp_init_helper, 1.13 and 2.x).
            return List.of(SYS_MAXSIZE);
        }
        if (firstBucketFollowsCap && !capIsDefault) {
            return List.of(cap);
        }
        return List.of(DEFAULT_FIRST_BUCKET_BYTES, cap);
    }

    /** {@code [first_bucket_bytes_cap_, bucket_bytes_cap_]} of {@code Reducer::rebuild_buckets}. */
    List<Long> rebuildLimits(boolean capIsDefault, long cap) {
        long first = firstBucketFollowsCap && !capIsDefault ? cap : DEFAULT_FIRST_BUCKET_BYTES;
        return List.of(first, cap);
    }

    /** Whether DDP rebuilds: {@code should_rebuild_buckets() = (static_graph_ || !find_unused_parameters_)}. */
    boolean rebuilds(boolean staticGraph, boolean findUnused) {
        return staticGraph || !findUnused;
    }

    int firstRebuiltIteration(boolean staticGraph) {
        return staticGraph ? staticGraphRebuildIteration : rebuildIteration;
    }
}

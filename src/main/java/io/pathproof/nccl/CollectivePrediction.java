package io.pathproof.nccl;

import java.math.BigDecimal;
import java.util.List;

/**
 * NCCL's decision for one AllReduce: algorithm and protocol (names and ids of nccl_common.h), the tuner's time
 * estimate exactly as the TUNING line prints it (float arithmetic, {@code %f}), the launch shape (channels used,
 * gridX, blockX), ring steps, bus factor and bytes, transport, and an expected kernel time from link bandwidths that is
 * a separate number from the tuner estimate (seed common error 6). {@code tuningLine} is the TUNING line this NCCL
 * version prints for it (null when the version prints none at INFO); {@code noKernel} is true for one rank (a copy).
 * {@code tuningTable} holds every (algorithm, protocol) time the selection compared.
 */
public record CollectivePrediction(
        int bucket,
        long bytes,
        String algorithm,
        int algorithmId,
        String protocol,
        int protocolId,
        BigDecimal tunerTimeUs,
        int channels,
        int gridX,
        int blockX,
        int reduceScatterSteps,
        int allGatherSteps,
        double busFactor,
        long busBytes,
        String transport,
        BigDecimal expectedTimeUs,
        String kernelName,
        String tuningLine,
        boolean noKernel,
        List<TuningEntry> tuningTable,

        @com.fasterxml.jackson.annotation.JsonInclude(com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
        String wireDtype) {
    public CollectivePrediction {
        tuningTable = tuningTable == null ? List.of() : List.copyOf(tuningTable);
    }

    /** Returns the same prediction for another bucket index. */
    public CollectivePrediction forBucket(int index) {
        return Records.with(this, "bucket", index);
    }

    /**
     * The same prediction, its elements on the wire of another type than the bucket's (torch's name, e.g. float16):
     * a comm hook that compresses casts each bucket before the collective.
     */
    public CollectivePrediction onTheWire(String dtype) {
        return Records.with(this, "wireDtype", dtype);
    }

    /** One cell of the cost table: latency (µs), algorithm bandwidth (GB/s), time (µs; null = not available). */
    public record TuningEntry(
            String algorithm, String protocol, BigDecimal latencyUs, BigDecimal bandwidthGBs, BigDecimal timeUs) {}
}

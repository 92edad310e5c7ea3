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
    List<TuningEntry> tuningTable) {
  public CollectivePrediction {
    tuningTable = tuningTable == null ? List.of() : List.copyOf(tuningTable);
  }

  /** Returns the same prediction for another bucket index. */
  public CollectivePrediction forBucket(int index) {
    return new CollectivePrediction(index, bytes, algorithm, algorithmId, protocol, protocolId, tunerTimeUs, channels,
        gridX, blockX, reduceScatterSteps, allGatherSteps, busFactor, busBytes, transport, expectedTimeUs, kernelName,
        tuningLine, noKernel, tuningTable);
  }

  /** One cell of the cost table: latency (µs), algorithm bandwidth (GB/s), time (µs; null = not available). */
  public record TuningEntry(String algorithm, String protocol, BigDecimal latencyUs, BigDecimal bandwidthGBs, BigDecimal timeUs) {}
}

package io.pathproof.nccl;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Scenario;

/**
 * The public entry of the NCCL model: for a scenario (topology, NCCL version, ranks, env), the communicator NCCL will
 * build and its decision for an AllReduce of a given size.
 */
public final class NcclModel {
  private NcclModel() {}

  /** Builds the model; throws a bad-input error for an unsupported version or an impossible topology. */
  public static NcclModel of(Scenario scenario) {
    throw PathproofException.usage("nccl model: not built yet");
  }

  public CommunicatorPrediction communicator() {
    throw new UnsupportedOperationException();
  }

  /** NCCL's decision for one AllReduce of {@code nBytes} of {@code dtype}, for bucket {@code bucketIndex}. */
  public CollectivePrediction allReduce(int bucketIndex, long nBytes, DType dtype) {
    throw new UnsupportedOperationException();
  }
}

package io.pathproof.nccl;

import java.util.List;

/**
 * What ncclCommInitRank will settle on for the scenario's communicator: channel counts after Postset and the env
 * clamps, p2p channels, the ring and tree graphs, transport per peer kind, and the INIT lines it will print.
 * {@code cannotPredict} is non-null when an input the model needs is missing (then the numbers are not meaningful).
 */
public record CommunicatorPrediction(
    int nRanks,
    int nNodes,
    int collChannels,
    int p2pChannels,
    int p2pChannelsPerPeer,
    int nvlsChannels,
    GraphSummary ringGraph,
    GraphSummary treeGraph,
    String transport,
    List<String> ringOrders,
    String channelsInitLine,
    String threadThresholdsLine,
    String cannotPredict,
    List<String> notes) {
  public CommunicatorPrediction {
    ringOrders = ringOrders == null ? List.of() : List.copyOf(ringOrders);
    notes = notes == null ? List.of() : List.copyOf(notes);
  }
}

package io.pathproof.nccl;

/**
 * The outcome of one NCCL graph search (graph/search.cc ncclTopoCompute) as the {@code Pattern …} GRAPH line prints
 * it: pattern, channels, intra/inter bandwidth per channel (GB/s), path types, sameChannels.
 */
public record GraphSummary(
    int pattern, int nChannels, double bwIntra, double bwInter, String typeIntra, String typeInter, boolean sameChannels) {}

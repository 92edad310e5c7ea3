package io.pathproof.nccl;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * The outcome of one NCCL graph search (graph/search.cc ncclTopoCompute) as the {@code Pattern …} GRAPH line prints
 * it: pattern, crossNic, channels, intra/inter bandwidth per channel (GB/s), path types, sameChannels. crossNic (0, 1,
 * or 2: NICs of consecutive ring channels paired, search.cc@v2.28.9-1:559-573) is left out of the JSON when 0, so
 * predictions sealed before it was listed keep their seal.
 */
public record GraphSummary(
        int pattern,
        int nChannels,
        double bwIntra,
        double bwInter,
        String typeIntra,
        String typeInter,
        boolean sameChannels,
        @JsonInclude(JsonInclude.Include.NON_DEFAULT) int crossNic) {}

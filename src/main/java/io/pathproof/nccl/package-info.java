/**
 * The NCCL model: what ncclCommInitRank builds for a scenario and what NCCL decides for each AllReduce.
 *
 * <p>Ported from the NVIDIA/nccl sources at the tags v2.22.3-1, v2.23.4-1, v2.24.3-1, v2.28.9-1, v2.29.2-1 (spot
 * checks) and v2.30.7-1:
 * graph/topo.cc and topo.h (the system: nodes, links, bandwidths), graph/paths.cc (paths, P2P level, p2p channels),
 * graph/search.cc (ncclTopoCompute: the ring and tree search), graph/connect.cc (ncclTopoPostset, the channel
 * clamps), graph/tuning.cc (the cost model), enqueue.cc (the selection, topoGetAlgoInfo, scheduleCollTasksToPlan)
 * and device/generate.py (kernel names). The log lines it predicts follow the format strings of those versions:
 * the INIT lines of init.cc ("%d coll channels, ..."), tuning.cc ("threadThresholds ...") and the TUNING line of
 * enqueue.cc (2.22: "%ld Bytes -> Algo %d proto %d time %f"; 2.24+: "%s: %ld Bytes -> Algo %s proto %s
 * channel{Lo..Hi}={%d..%d}"). Per-version differences are data in {@link io.pathproof.nccl.NcclVersionTable};
 * where the research notes and the source disagree, docs/nccl-model-notes.md says so.
 *
 * <p>One public entry, {@link io.pathproof.nccl.NcclModel}, with the values it returns and NCCL's own vocabulary,
 * {@link io.pathproof.nccl.NcclAlgorithm} and {@link io.pathproof.nccl.NcclProtocol}, which the readers of NCCL's logs
 * and the checks of its decisions use as well; the rest is package-private.
 */
package io.pathproof.nccl;

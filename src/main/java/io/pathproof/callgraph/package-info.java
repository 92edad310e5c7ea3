/**
 * The 35-stage call graph (25 implementation + 10 acceptance stages) of a DDP gradient AllReduce as a resource CSV,
 * with owners and the evidence kinds per stage, and its coverage by a run. Source files named in the CSV are those of
 * PyTorch 2.5/2.6 and NCCL 2.22.3 (the seed's versions); NCCL 2.28 and 2.30 keep the same files.
 */
package io.pathproof.callgraph;

/**
 * The DDP room: which gradient buckets torch's {@code DistributedDataParallel} builds for a workload, at construction
 * and after the rebuild, per torch version. Ported from {@code torch/nn/parallel/distributed.py} and
 * {@code torch/csrc/distributed/c10d/reducer.cpp} of torch v1.13.1 and v2.6.0 (both read in full), the Python of
 * 2.11.0 (read, and the plan checked against torch 2.11.0 run on gloo) and of v2.14.1; torch 2.5.0 follows the 2.6.0
 * rules without having been read itself (see docs/ddp-model-notes.md). Entry:
 * {@link io.pathproof.ddp.BucketPlanner}.
 */
package io.pathproof.ddp;

/**
 * {@code pathproof run}: starts a real, instrumented DDP job and leaves a run directory of evidence. The only package
 * that starts processes. The harness ({@code harness.py}, a resource of this package) uses public torch API only and
 * was checked against torch 1.13.0a0 (Debian python3-torch 1.13.1, Python 3.11, CPU, gloo, no Kineto) and torch
 * 2.11.0+cu130 (NCCL 2.28.9, one H200). Worker environment as set by torchrun
 * ({@code torch/distributed/elastic/agent/server/local_elastic_agent.py@v1.13.1}): RANK, LOCAL_RANK, WORLD_SIZE,
 * LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT.
 */
package io.pathproof.run;

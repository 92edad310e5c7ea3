/**
 * Acceptance: a sealed {@code pathproof.prediction/1} against the {@link io.pathproof.evidence.Evidence} of one run,
 * check by check, as in the seed's acceptance table (payload, buckets, collective, algorithm, protocol, channels,
 * launch shape, transport, kernels, replicas). Public entry: {@link io.pathproof.accept.Acceptance}.
 *
 * <p>Evidence facts are read only through the published Evidence records, so a reader may change without a check
 * changing with it. Checked against the
 * log formats of NCCL 2.22.3 (TUNING with {@code time %f}) and 2.28.9 (TUNING with {@code channel{Lo..Hi}}, no
 * time at INFO), and the facts of the real one-H200 run (one rank: no TUNING line, no NCCL kernel). Rules kept:
 * protocol only from TUNING, never a kernel symbol (all AllReduce kernels are named {@code …_RING_LL},
 * device/generate.py:138-149@v2.22.3-1); gridX against the channels used for the size, never collChannels; P2P never
 * called GDR; the tuner estimate never compared with a kernel duration; missing evidence is UNPROVEN, and so is a row
 * that relies on a rank's file that is missing, torn, another rank's or short of iterations. NCCL's profiler
 * plugin, when the run asked for it, is a third witness of algorithm, protocol, channels and threads. People's own
 * evidence counts as such: DDP's logging dumped under any name ({@code ddp-logging}) and DDP's own debug log
 * ({@code ddp-log}, TORCH_DISTRIBUTED_DEBUG; its construction bucket sizes are a kind of evidence, its rebuild line
 * only refutes). A row that cannot be judged is listed UNPROVEN with its reason, never left out (torch-version,
 * nccl-version, run-made-for-prediction; nccl-version is N/A on gloo), and a row cites only files it read, or says in
 * words what it read where a fact has no file of its own.
 */
package io.pathproof.accept;

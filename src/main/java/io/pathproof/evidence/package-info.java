/**
 * The evidence room: one reader per format, joined by {@link io.pathproof.evidence.Ingest} into one
 * {@link io.pathproof.evidence.Evidence} where every fact carries its {@link io.pathproof.evidence.Source}. Each reader
 * hands over its own small record of one file ({@code Facts.Log}, {@code Facts.Trace}, {@code Facts.Ncu},
 * {@code Facts.Flight}, {@code Facts.Profiler}, {@code Facts.DdpLogging}), beside the file's rank, size and problems
 * ({@code FileFacts}); {@code Assembly} joins them across files ({@code NcclJoin} the NCCL logs' communicators).
 *
 * <p>Formats and the versions each reader was checked against:
 *
 * <ul>
 *   <li><b>NCCL debug logs</b> ({@code NCCL_DEBUG=INFO}, any {@code NCCL_DEBUG_SUBSYS}), format strings read in the
 *       NVIDIA/nccl sources at tags v2.5.7-1, v2.9.9-1, v2.19.3-1, v2.22.3-1, v2.23.4-1, v2.24.3-1, v2.28.9-1 and
 *       v2.30.7-1 (file:line cited where each is parsed), and tested on real logs of 2.5.6, 2.5.7, 2.9.9, 2.18-era,
 *       2.19.3, 2.2x and 2.28.9 (test resources). Prefixes: NCCL's own {@code host:pid:tid [dev]}, torchrun
 *       {@code [rankN]:}, mpirun {@code [job,rank]<stdout>:}, {@code [N] }, timestamps, none.
 *       <ul>
 *         <li>TUNING: {@code %ld Bytes -> Algo %d proto %d time %f} (2.22, enqueue.cc:1613@v2.22.3-1), the same
 *             prefixed by the op (2.23, enqueue.cc:1855@v2.23.4-1), {@code %s: %ld Bytes -> Algo %s proto %s
 *             channel{Lo..Hi}={%d..%d}} (≥ 2.24, enqueue.cc:678@v2.24.3-1 … enqueue.cc:822@v2.30.7-1).
 *         <li>Where the docs and the source disagree the source wins: the ≥ 2.24 line no longer prints the time
 *             (only a TRACE build does), so {@code timeUs} is null there, never guessed.
 *       </ul>
 *   <li><b>Kineto chrome traces</b> (torch.profiler {@code export_chrome_trace}, .json and .json.gz): the object form
 *       with {@code distributedInfo} (torch 2.x; checked on torch 2.11.0+cu130) and the legacy bare array (torch
 *       1.13); categories {@code kernel}/{@code Kernel}, {@code gpu_memcpy}, {@code gpu_memset},
 *       {@code user_annotation} {@code nccl:*}, {@code cpu_op} {@code record_param_comms}.
 *   <li><b>Nsight Systems SQLite</b> exports: {@code CUPTI_ACTIVITY_KIND_KERNEL}, {@code StringIds},
 *       {@code NVTX_EVENTS}, columns discovered at run time. Not checked against a real export (Nsight Systems is
 *       not installed on the capture machines): the tests build a database with those table and column names.
 *   <li><b>Nsight Compute CSV</b> ({@code --csv --page raw} and {@code --page details}), checked on Nsight Compute
 *       2025.3 output.
 *   <li><b>PyTorch flight recorder</b> JSON dumps ({@code _dump_nccl_trace_json}) and the pickle torch writes by
 *       default (TORCH_NCCL_DEBUG_INFO_TEMP_FILE; FlightRecorderDetail.hpp dump → pickle_str, torch::jit::Pickler,
 *       protocol 2), schema versions "2.3" to "2.10" (checked on "2.10" from torch 2.11). The pickle is read by
 *       {@link io.pathproof.evidence.PickleReader}, which knows only the plain-data opcodes and refuses the rest.
 *   <li><b>DDP's own record</b>, {@code ddp._get_ddp_logging_data()} saved as JSON under any name, recognised by the
 *       keys DDP sets at its construction (logger.cpp:173-200@v1.13.1; the rank is the data's own), read by
 *       {@code DdpLoggingReader}; checked on dumps of torch 1.13 (Debian's 1.13.1, test resources ddp-debug/) and
 *       2.11.0+cu130 (samples/h200-1rank-accepted). The run's own {@code ddp-logging-rank{r}.json} is the same
 *       object, read by {@link io.pathproof.evidence.HarnessReader}.
 *   <li><b>DDP's own debug log</b> ({@code TORCH_DISTRIBUTED_DEBUG=INFO} or {@code DETAIL}) in any text log, also among
 *       NCCL's lines: "Reducer initialized with", "DDP Initialized with" and its key: value lines, the runtime stats,
 *       "buckets rebuilt with size limits", Python's "Reducer buckets have been rebuilt in this iteration.", read by
 *       {@code DdpLines} (format strings and their lines at v1.13.1 and v2.11.0 cited there), tested on real logs of
 *       torch 1.13 (glog's prefix, a thread per rank) and 2.11.0+cu130 (c10's prefix, torch's own {@code [rankN]:}),
 *       each rank in its own file and all ranks in one.
 *   <li><b>pathproof's NCCL emulator</b> lines (native/nccl-emulator): real and reported busId and compute
 *       capability per rank, kernel launch shapes (as kernel facts of the log, without times).
 * </ul>
 *
 * <p>Launcher prefixes (srun {@code --label}, mpirun {@code --tag-output}, torchrun) are kept as labels, never as the
 * NCCL rank. A line torn by several writers is split at each NCCL prefix.
 *
 * <p>The NCCL log reader is one class per log-line family behind {@code NcclLogReader}: {@code LinePrefix},
 * {@code CommLines} (comm init lines, attribution of lines to communicators), {@code CollLines} (COLL, TUNING),
 * {@code ConnectorLines}, {@code InitLines}, {@code TuningTableLines} (the table of latencies and bandwidths rank 0
 * prints at init: a few lines per communicator, read as text only), {@code EmulatorLines}. Each other reads its usual
 * shapes on the bytes and leaves any other shape to its regex, which gives the same facts (held to it by a test) and
 * names what is wrong.
 *
 * <p>A run directory's per-rank files are also checked whole, rank by rank ({@code RankIntegrity}, against the table of
 * per-rank kinds in {@code RankEvidence}: each kind's file, how it is read to its end, the iterations it covers and the
 * acceptance rows that rely on it): readers keep what they can read of a damaged file, and
 * {@link io.pathproof.evidence.Evidence#integrity()} says what they could not, so that no verdict rests on part of
 * the ranks unawares.
 *
 * <p>Readers never execute or trust what they read (pickles as plain data only, SQLite opened read-only, identifiers in SQL only from
 * the schema); bad input becomes a {@link io.pathproof.evidence.Problem} with file and line, never a fact. A kernel
 * name's suffix is never read as the protocol.
 */
package io.pathproof.evidence;

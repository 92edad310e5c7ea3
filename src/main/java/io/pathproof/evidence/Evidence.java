package io.pathproof.evidence;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.List;
import java.util.Map;

/**
 * Everything read from one run: normalized facts, each with its {@link Source}, plus the problems met while reading.
 * The JSON names are a published contract: scripts and {@code accept}/{@code diagnose} rely on them.
 */
public record Evidence(
        String runDir,
        List<FileRead> files,
        Nccl nccl,
        List<Kernel> kernels,
        List<Range> ranges,
        Ddp ddp,
        List<Step> steps,
        Replicas replicas,
        List<PeerAccess> peerAccess,
        List<FlightRecord> flightRecorder,
        JsonNode manifest,
        List<Finding> findings,
        List<Problem> problems,
        List<Distributed> distributed,
        List<Copy> copies,
        List<FlightDump> flightRecorderDumps,
        Emulation emulation,
        @JsonInclude(JsonInclude.Include.NON_NULL) NcclProfiler ncclProfiler,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<TraceClock> traceClocks,
        @JsonInclude(JsonInclude.Include.NON_NULL) Integrity integrity) {

    /** Evidence built by hand, a fact at a time; what is not set is empty (lists) or absent (null). */
    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding every fact of this evidence, to change some. */
    public Builder toBuilder() {
        return new Builder()
                .runDir(runDir)
                .files(files)
                .nccl(nccl)
                .kernels(kernels)
                .ranges(ranges)
                .ddp(ddp)
                .steps(steps)
                .replicas(replicas)
                .peerAccess(peerAccess)
                .flightRecorder(flightRecorder)
                .manifest(manifest)
                .findings(findings)
                .problems(problems)
                .distributed(distributed)
                .copies(copies)
                .flightRecorderDumps(flightRecorderDumps)
                .emulation(emulation)
                .ncclProfiler(ncclProfiler)
                .traceClocks(traceClocks)
                .integrity(integrity);
    }

    /** Builds an {@link Evidence} by name, for callers (tests, tools) that hold only some of its facts. */
    public static final class Builder {
        private String runDir;
        private List<FileRead> files = List.of();
        private Nccl nccl;
        private List<Kernel> kernels = List.of();
        private List<Range> ranges = List.of();
        private Ddp ddp;
        private List<Step> steps = List.of();
        private Replicas replicas;
        private List<PeerAccess> peerAccess = List.of();
        private List<FlightRecord> flightRecorder = List.of();
        private JsonNode manifest;
        private List<Finding> findings = List.of();
        private List<Problem> problems = List.of();
        private List<Distributed> distributed = List.of();
        private List<Copy> copies = List.of();
        private List<FlightDump> flightRecorderDumps = List.of();
        private Emulation emulation;
        private NcclProfiler ncclProfiler;
        private List<TraceClock> traceClocks = List.of();
        private Integrity integrity;

        private Builder() {}

        public Builder runDir(String runDir) {
            this.runDir = runDir;
            return this;
        }

        public Builder files(List<FileRead> files) {
            this.files = files;
            return this;
        }

        public Builder nccl(Nccl nccl) {
            this.nccl = nccl;
            return this;
        }

        public Builder kernels(List<Kernel> kernels) {
            this.kernels = kernels;
            return this;
        }

        public Builder ranges(List<Range> ranges) {
            this.ranges = ranges;
            return this;
        }

        public Builder ddp(Ddp ddp) {
            this.ddp = ddp;
            return this;
        }

        public Builder steps(List<Step> steps) {
            this.steps = steps;
            return this;
        }

        public Builder replicas(Replicas replicas) {
            this.replicas = replicas;
            return this;
        }

        public Builder peerAccess(List<PeerAccess> peerAccess) {
            this.peerAccess = peerAccess;
            return this;
        }

        public Builder flightRecorder(List<FlightRecord> flightRecorder) {
            this.flightRecorder = flightRecorder;
            return this;
        }

        public Builder manifest(JsonNode manifest) {
            this.manifest = manifest;
            return this;
        }

        public Builder findings(List<Finding> findings) {
            this.findings = findings;
            return this;
        }

        public Builder problems(List<Problem> problems) {
            this.problems = problems;
            return this;
        }

        public Builder distributed(List<Distributed> distributed) {
            this.distributed = distributed;
            return this;
        }

        public Builder copies(List<Copy> copies) {
            this.copies = copies;
            return this;
        }

        public Builder flightRecorderDumps(List<FlightDump> flightRecorderDumps) {
            this.flightRecorderDumps = flightRecorderDumps;
            return this;
        }

        public Builder emulation(Emulation emulation) {
            this.emulation = emulation;
            return this;
        }

        public Builder ncclProfiler(NcclProfiler ncclProfiler) {
            this.ncclProfiler = ncclProfiler;
            return this;
        }

        public Builder traceClocks(List<TraceClock> traceClocks) {
            this.traceClocks = traceClocks;
            return this;
        }

        public Builder integrity(Integrity integrity) {
            this.integrity = integrity;
            return this;
        }

        public Evidence build() {
            return new Evidence(
                    runDir,
                    files,
                    nccl,
                    kernels,
                    ranges,
                    ddp,
                    steps,
                    replicas,
                    peerAccess,
                    flightRecorder,
                    manifest,
                    findings,
                    problems,
                    distributed,
                    copies,
                    flightRecorderDumps,
                    emulation,
                    ncclProfiler,
                    traceClocks,
                    integrity);
        }
    }

    /**
     * Whether anything at all was read: a file with at least one fact, or any of a run directory's own files (manifest,
     * hook records, steps, DDP logging, replica digests, peer access). The one test of "nothing readable" that ingest,
     * accept, diagnose, report and prove share, so that a directory ingest reads is never refused by the verbs after it.
     */
    @com.fasterxml.jackson.annotation.JsonIgnore
    public boolean anythingRead() {
        if (files != null && files.stream().anyMatch(f -> f.facts() > 0)) {
            return true;
        }
        return ddp != null
                || steps != null && !steps.isEmpty()
                || manifest != null
                || replicas != null
                || peerAccess != null && !peerAccess.isEmpty();
    }

    /** A file that was read, the format it was read as, its rank. */
    public record FileRead(String path, FileKind kind, Integer rank, long bytes, long facts) {}

    /** NCCL debug-log facts, all communicators of all ranks. */
    public record Nccl(
            String version,
            Source versionSource,
            List<Communicator> communicators,
            List<Tuning> tuning,
            List<Coll> colls,
            Map<String, String> envOverrides,
            Map<String, Source> envSources,
            List<Warning> warnings) {}

    /**
     * One communicator (by commId; ranks seen in the evidence listed). {@code transports} are distinct transport names
     * ("P2P/CUMEM", "P2P/IPC", "P2P/direct pointer", "SHM", "NET/IB", "NET/Socket"), {@code connections} per channel per
     * peer. {@code collChannels} comes from the {@code N coll channels} line (as {@code collnetChannels}, null where the
     * version prints none), else from the total of the ring lines
     * ({@code Channel 00/12 : …}); {@code ringChannels} holds the channel of each of {@code rings} (a log may hold only
     * some, e.g. channels 12 to 15 of an excerpt; null in evidence written before it was kept: then rings are channels 0,
     * 1, …). {@code connectedTrees} is null (unknown) when the log does not say: since NCCL 2.22
     * trees are connected lazily, on the first tree collective (group.cc:147@v2.22.3-1), so the line may never come.
     * {@code networks}: the distinct networks its ranks said NCCL uses ({@code Using network %s}), also of ranks whose
     * rank the log does not name. {@code tuningTable}: the table of latencies and bandwidths rank 0 printed at init
     * (null where no rank's log holds one: NCCL prints it only with the TUNING subsystem, and only on rank 0).
     */
    public record Communicator(
            String commId,
            List<Integer> ranks,
            Integer nRanks,
            Integer nNodes,
            Integer localRanks,
            Integer collChannels,
            Integer p2pChannels,
            Integer p2pChannelsPerPeer,
            Integer nvlsChannels,
            Integer collnetChannels,
            List<String> rings,
            List<Integer> ringChannels,
            List<String> trees,
            List<Graph> graphs,
            String threadThresholds,
            List<String> transports,
            List<Connection> connections,
            boolean connectedRings,
            Boolean connectedTrees,
            List<RankInit> rankInits,
            Source source,
            List<String> launcherLabels,
            List<String> networks,
            TuningTable tuningTable) {
        /** The channel of {@code rings().get(i)}: from {@link #ringChannels}, else {@code i} (evidence before it). */
        public int ringChannel(int i) {
            return ringChannels == null || i >= ringChannels.size() ? i : ringChannels.get(i);
        }
    }

    /**
     * The table of latency (µs) and algorithm bandwidth (GB/s) per function, algorithm and protocol that rank 0 of a
     * communicator prints at init, with the threads per block of each algorithm and protocol ("Max NThreads"):
     * ncclTopoTuneModel's comm->latencies, comm->bandwidths and comm->maxThreads (graph/tuning.cc:504-533@v2.28.9-1,
     * :323-349@v2.19.3-1; before 2.18 one "Latency/AlgBw" header of "algorithm/protocol" columns,
     * tuning.cc:264-285@v2.17.1-1, and no Max NThreads in 2.5, tuning.cc:159-175@v2.5.7-1). Values are kept as printed
     * ({@code %8.1f/%6.1f}). {@code rank}: the rank whose log printed it (0, but any rank's is read). A table
     * cut short keeps the cells read; a row whose header was lost is not guessed.
     */
    public record TuningTable(Integer rank, List<TuningCell> cells, List<TuningThreads> maxThreads) {
        /** The printed cell of (function, algorithm, protocol), or null. */
        public TuningCell cell(String function, String algorithm, String protocol) {
            for (TuningCell c : cells) {
                if (c.function().equals(function)
                        && c.algorithm().equals(algorithm)
                        && c.protocol().equals(protocol)) {
                    return c;
                }
            }
            return null;
        }

        /** The printed Max NThreads of (algorithm, protocol), or null. */
        public TuningThreads threads(String algorithm, String protocol) {
            for (TuningThreads t : maxThreads) {
                if (t.algorithm().equals(algorithm) && t.protocol().equals(protocol)) {
                    return t;
                }
            }
            return null;
        }
    }

    /** One cell of a printed tuning-table row: the function, algorithm and protocol it is of, as printed. */
    public record TuningCell(
            String function,
            String algorithm,
            String protocol,
            BigDecimal latencyUs,
            BigDecimal bandwidthGBs,
            Source source) {}

    /** One cell of the "Max NThreads" row: comm->maxThreads[algorithm][protocol]. */
    public record TuningThreads(String algorithm, String protocol, int maxThreads, Source source) {}

    /**
     * The comm-init facts of one rank of a communicator. {@code nvmlDev} and the {@code Init timings} line (total and
     * per phase, seconds as printed) are null where the log does not print them; so is {@code network}, the network
     * NCCL chose for it ({@code Using network %s}: "IB", "Socket", a net plugin's name such as "Libfabric").
     */
    public record RankInit(
            int rank,
            Integer cudaDev,
            String busId,
            String host,
            Integer pid,
            Integer nvmlDev,
            BigDecimal initTotalS,
            Map<String, BigDecimal> initPhasesS,
            Source source,
            EmulatedDevice emulated,
            String launcherLabel,
            String network) {}

    /**
     * What pathproof's NCCL emulator said about this rank's device: the real busId and the one NCCL was made to report
     * (both in NCCL's {@code %lx} form, as {@code busId} prints), and the compute capability if that was faked too.
     */
    public record EmulatedDevice(
            String realBusId,
            String reportedBusId,
            Integer realComputeCapability,
            Integer reportedComputeCapability,
            Source source) {}

    /**
     * What pathproof's NCCL profiler plugin (native/nccl-profiler) recorded: {@code status} "loaded" (its records in
     * {@code colls}) or "not-loaded" with {@code message} saying why, e.g. "profiler plugin not loaded (NCCL wants
     * v4)". The evidence's {@code ncclProfiler} is null (and absent from JSON) when the run did not ask for it.
     */
    public record NcclProfiler(String status, String message, Integer apiVersion, List<ProfiledColl> colls) {}

    /**
     * One distinct NCCL decision of one rank as NCCL's profiler reported it, over {@code calls} collectives:
     * {@code event} "coll" (a task: algorithm, protocol, channels, warps = threads / 32). Durations are GPU-clock spans of the complete calls (null when
     * none), {@code firstSeq} NCCL's sequence number of the first; {@code source} the first line.
     */
    public record ProfiledColl(
            Integer rank,
            String commId,
            String event,
            String func,
            long count,
            String datatype,
            String algorithm,
            String protocol,
            Integer channels,
            Integer warps,
            long calls,
            long incomplete,
            Long firstSeq,
            Long minDurNs,
            Long maxDurNs,
            Long sumDurNs,
            String clock,
            Source source) {
        /** This record standing for {@code calls} records like it: how many, how many did not end, their durations. */
        ProfiledColl aggregated(long calls, long incomplete, Long minDurNs, Long maxDurNs, Long sumDurNs) {
            return new ProfiledColl(
                    rank,
                    commId,
                    event,
                    func,
                    count,
                    datatype,
                    algorithm,
                    protocol,
                    channels,
                    warps,
                    calls,
                    incomplete,
                    firstSeq,
                    minDurNs,
                    maxDurNs,
                    sumDurNs,
                    clock,
                    source);
        }

        /** Threads per block (warps × 32), or null. */
        public Integer threads() {
            return warps == null ? null : warps * 32;
        }

        /** count × the size of NCCL's datatype (ncclTypeSize, src/include/collectives.h:42@v2.28.9-1), or null. */
        public Long bytes() {
            if (datatype == null) {
                return null;
            }
            int size =
                    switch (datatype) {
                        case "ncclInt8", "ncclUint8", "ncclFloat8e4m3", "ncclFloat8e5m2" -> 1;
                        case "ncclFloat16", "ncclBfloat16" -> 2;
                        case "ncclInt32", "ncclUint32", "ncclFloat32" -> 4;
                        case "ncclInt64", "ncclUint64", "ncclFloat64" -> 8;
                        default -> 0;
                    };
            return size == 0 ? null : count * size;
        }
    }

    /** A {@code Pattern …} graph line; {@code crossNic} as the search ended (0, 1, or 2: consecutive channels' NICs paired). */
    public record Graph(
            int pattern,
            int crossNic,
            int nChannels,
            double bwIntra,
            double bwInter,
            String typeIntra,
            String typeInter,
            Integer sameChannels,
            Source source) {
        /** The same search result, wherever it was printed. */
        public boolean sameShape(Graph o) {
            return pattern == o.pattern
                    && crossNic == o.crossNic
                    && nChannels == o.nChannels
                    && bwIntra == o.bwIntra
                    && bwInter == o.bwInter
                    && typeIntra.equals(o.typeIntra)
                    && typeInter.equals(o.typeInter)
                    && java.util.Objects.equals(sameChannels, o.sameChannels);
        }
    }

    /**
     * One connector line: channel, from rank → to rank, transport (with modifiers such as "/read"). {@code shared}: a NET
     * connection through the proxy's shared buffers ("/Shared", net.cc:315@v2.28.9-1; NCCL_NET_SHARED_BUFFERS, PXN).
     * {@code pxnProxyRank}: the rank whose proxy sends for this one when PXN relays the data through a peer's NIC
     * ("NET/%s/%d(%d)", net.cc:317@v2.28.9-1, first in net.cc:187@v2.12.7-1), null when the line names none.
     */
    public record Connection(
            int channel,
            int fromRank,
            int toRank,
            String transport,
            boolean read,
            boolean gdr,
            Source source,
            boolean shared,
            Integer pxnProxyRank) {}

    /**
     * A TUNING line. {@code timeUs} only in versions that print it (≤ 2.23); {@code channelLo/Hi} only ≥ 2.24. Absent
     * fields are null. Identical TUNING lines of one rank and communicator are kept once, with {@code lines} counting
     * them (a 4 GB log repeats the same decision every iteration); {@code source} is the first. {@code commId} is null
     * when unknown.
     */
    public record Tuning(
            Integer rank,
            String op,
            long bytes,
            String algorithm,
            Integer algorithmId,
            String protocol,
            Integer protocolId,
            BigDecimal timeUs,
            Integer channelLo,
            Integer channelHi,
            Source source,
            String commId,
            long lines) {}

    /**
     * A COLL line (one NCCL API call). Identical COLL lines (same rank, communicator, op, count, datatype, op, nranks)
     * are kept once with {@code calls} counting them; {@code opCount} and {@code source} are those of the first.
     * {@code commId} is null when unknown.
     */
    public record Coll(
            Integer rank,
            String op,
            String opCount,
            long count,
            int datatype,
            int redOp,
            Integer nRanks,
            Source source,
            String commId,
            long calls) {}

    /**
     * A WARN line. {@code where}: the NCCL source line that printed it, as its prefix names it ("proxy.cc:512", from
     * 2.29 on with the function: "init.cc:904 (ncclCommInitRankFunc)"), null where the line has no prefix.
     */
    public record Warning(Integer rank, String message, Source source, String where) {}

    /**
     * A GPU kernel (Kineto, nsys or ncu), or an NCCL kernel launch printed by pathproof's NCCL emulator (then from the
     * log: no times, {@code smemBytes} and {@code clusterSize} as passed to cuLaunchKernelEx). Times in µs;
     * {@code startNs}/{@code durNs} exact where the format allows.
     */
    public record Kernel(
            Integer rank,
            String name,
            int[] grid,
            int[] block,
            BigDecimal durUs,
            Long startNs,
            Long durNs,
            Integer device,
            Integer stream,
            boolean nccl,
            Map<String, String> collective,
            Source source,
            Integer smemBytes,
            Integer clusterSize) {
        /** The name of a kernel known from an emulator launch line (no time): every launch of the run, not a trace window. */
        public static final String LAUNCH_LINE = "NCCL kernel launch";
    }

    /** A CPU-side range such as {@code nccl:all_reduce} or an NVTX range, and memcpy events. */
    public record Range(Integer rank, String name, String category, Long startNs, Long durNs, Source source) {}

    /**
     * DDP's evidence: the comm hook's records, {@code _get_ddp_logging_data()} per rank (the run's own files or a user's
     * dump of it), and the messages of DDP's own debug log ({@code log}, empty where no log held any).
     */
    public record Ddp(
            List<BucketRecord> buckets,
            Map<String, JsonNode> logging,
            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<DdpLogMessage> log) {}

    /**
     * One message of DDP's own debug log ({@code TORCH_DISTRIBUTED_DEBUG=INFO} or {@code DETAIL}), as the rank printed
     * it: {@code message} says which (see {@code DdpLines}: {@code debug-level}, {@code reducer-initialized},
     * {@code ddp-initialized}, {@code runtime-stats}, {@code buckets-rebuilt}, {@code buckets-rebuilt-notice}),
     * {@code values} what it states under torch's own names (as printed), {@code printedAt} the line of torch's source
     * that printed it as the log names it ({@code reducer.cpp:1724}; null for Python's logging), {@code rank} the rank
     * the message, the launcher's tag, its process or the file's name says (null where none does), {@code source} the
     * message's first line.
     */
    public record DdpLogMessage(
            Integer rank, String message, Map<String, String> values, String printedAt, Source source) {
        public DdpLogMessage {
            if (message == null || source == null) {
                throw new IllegalArgumentException("a DDP log message needs its kind and where it was read");
            }
            values = values == null
                    ? Map.of()
                    : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(values));
        }

        /** The value printed under {@code key}, or null. */
        public String value(String key) {
            return values.get(key);
        }
    }

    /**
     * One comm-hook call: rank × iteration × bucket, with three different time boundaries (ns, host clock of that rank):
     * hook entry ("ready"), future done, GPU done (null on CPU).
     */
    public record BucketRecord(
            int rank,
            int iteration,
            int index,
            long bytes,
            boolean isLast,
            List<String> params,
            Long readyNs,
            Long futureDoneNs,
            Long gpuDoneNs,
            Source source) {}

    /**
     * One training step's time, and where the harness wrote them its phase boundaries on the host clock ({@code null}
     * for step rows written before it did, e.g. the committed GPU samples).
     */
    public record Step(
            int rank,
            int iteration,
            double ms,
            boolean measured,
            Source source,
            @JsonInclude(JsonInclude.Include.NON_NULL) HostPhases hostPhases,
            @JsonInclude(JsonInclude.Include.NON_NULL) StepLoad load) {}

    /**
     * What the machine gave one rank during one step, from the step row's {@code cpuMs} (the process's CPU time),
     * {@code runQueueMs} (the main thread runnable but not running, {@code /proc/thread-self/schedstat}'s second field:
     * the machine busy with something else) and {@code loadavg1}. Written by the stand-in harness and by the
     * instrumentation of a user's own job alike; {@code runQueueMs} is absent where the kernel keeps no schedstat.
     */
    public record StepLoad(
            double cpuMs,
            @JsonInclude(JsonInclude.Include.NON_NULL) Double runQueueMs,
            Double loadavg1) {
        public StepLoad {
            if (cpuMs < 0 || runQueueMs != null && runQueueMs < 0) {
                throw new IllegalArgumentException("fields cpuMs, runQueueMs: negative");
            }
        }
    }

    /**
     * A step's phase boundaries, {@code time.time_ns()} of the rank's host (the clock of the hook records): forward
     * called, {@code loss.backward()} called and returned, {@code opt.step()} called and returned. With {@code issueOnly}
     * (a CUDA run) the calls only enqueued kernels: the boundaries say when the host issued each phase, never how long
     * the GPU ran it. From the step row's {@code hostForwardStartNs}, {@code hostBackwardStartNs},
     * {@code hostBackwardEndNs}, {@code hostOptimizerStartNs}, {@code hostOptimizerEndNs} and {@code hostPhases}
     * ("issue" or "work"); {@code forwardRunQueueMs} and {@code optimizerRunQueueMs} ({@code hostForwardRunQueueMs},
     * {@code hostOptimizerRunQueueMs}, both or neither) are the main thread's wait for a core inside those two phases,
     * absent in rows written before them and where the kernel keeps no schedstat.
     */
    public record HostPhases(
            long forwardStartNs,
            long backwardStartNs,
            long backwardEndNs,
            long optimizerStartNs,
            long optimizerEndNs,
            boolean issueOnly,
            @JsonInclude(JsonInclude.Include.NON_NULL) Double forwardRunQueueMs,
            @JsonInclude(JsonInclude.Include.NON_NULL) Double optimizerRunQueueMs) {
        /** Phases without their run-queue waits. */
        public HostPhases(
                long forwardStartNs,
                long backwardStartNs,
                long backwardEndNs,
                long optimizerStartNs,
                long optimizerEndNs,
                boolean issueOnly) {
            this(
                    forwardStartNs,
                    backwardStartNs,
                    backwardEndNs,
                    optimizerStartNs,
                    optimizerEndNs,
                    issueOnly,
                    null,
                    null);
        }

        public HostPhases {
            if ((forwardRunQueueMs == null) != (optimizerRunQueueMs == null)
                    || forwardRunQueueMs != null && (forwardRunQueueMs < 0 || optimizerRunQueueMs < 0)
                    || forwardRunQueueMs != null
                            && (forwardRunQueueMs > (backwardStartNs - forwardStartNs) / 1e6 + 1
                                    || optimizerRunQueueMs > (optimizerEndNs - optimizerStartNs) / 1e6 + 1)) {
                throw new IllegalArgumentException("fields hostForwardRunQueueMs, hostOptimizerRunQueueMs: both or "
                        + "neither, never negative, never longer than their phase");
            }
            if (!(forwardStartNs <= backwardStartNs
                    && backwardStartNs <= backwardEndNs
                    && backwardEndNs <= optimizerStartNs
                    && optimizerStartNs <= optimizerEndNs)) {
                throw new IllegalArgumentException(
                        "phase boundaries out of order (forward start <= backward start <= backward end"
                                + " <= optimizer start <= optimizer end)");
            }
        }
    }

    /** Replica equality after training (digests per rank). */
    public record Replicas(Boolean equal, List<Digest> digests, Source source) {
        /**
         * The ranks' gradients at their end, compared where DDP promises them equal: every rank wrote them, its last
         * backward was one iteration and DDP averaged it (not under {@code no_sync}). {@code groups}: the ranks by
         * gradient digest there; null with {@code notCompared} saying why where they cannot be compared; null
         * altogether where no rank wrote gradients.
         */
        public GradientGroups averagedGradients() {
            List<Digest> ds = digests == null ? List.of() : digests;
            List<Gradients> gs = ds.stream()
                    .map(Digest::gradients)
                    .filter(java.util.Objects::nonNull)
                    .toList();
            if (gs.isEmpty()) {
                return null;
            }
            java.util.TreeSet<Integer> iterations = new java.util.TreeSet<>();
            gs.forEach(g -> iterations.add(g.iteration()));
            if (gs.size() < ds.size() || iterations.size() > 1) {
                return new GradientGroups(null, null, "the ranks' last backward was not one iteration " + iterations);
            }
            int it = iterations.first();
            if (gs.stream().anyMatch(g -> !g.averaged())) {
                return new GradientGroups(
                        it, null, "the last backward (iteration " + it + ") ran without gradient sync (no_sync)");
            }
            Map<String, List<Integer>> by = new java.util.TreeMap<>();
            for (Digest d : ds) {
                by.computeIfAbsent(d.gradients().sha256(), k -> new java.util.ArrayList<>())
                        .add(d.rank());
            }
            return new GradientGroups(it, by, null);
        }
    }

    /** The ranks' gradients by digest at the iteration DDP averaged them ({@link Replicas#averagedGradients}). */
    public record GradientGroups(Integer iteration, Map<String, List<Integer>> groups, String notCompared) {
        public boolean differ() {
            return groups != null && groups.size() > 1;
        }
    }

    /** One rank's parameters at its end, hashed, and the gradients it held then (null where the file has none). */
    public record Digest(
            int rank,
            String sha256,
            List<Double> samples,
            @JsonInclude(JsonInclude.Include.NON_NULL) Gradients gradients) {
        public Digest(int rank, String sha256, List<Double> samples) {
            this(rank, sha256, samples, null);
        }
    }

    /**
     * The gradients a rank held at its end, hashed in parameter order ({@code held} of them; a missing gradient counts
     * as one), with the iteration of the backward that made them and whether DDP averaged them there
     * ({@code require_backward_grad_sync}): after an averaged backward every rank holds the same gradients.
     */
    public record Gradients(String sha256, int iteration, boolean averaged, int held) {}

    /** Peer access and copy bandwidth between two GPUs. */
    public record PeerAccess(int fromRank, int toRank, boolean canAccess, Double copyGBs, Source source) {}

    /** One flight-recorder entry; {@code processGroup} from the dump's pg_config, by the entry's pg_name. */
    public record FlightRecord(
            Integer rank,
            long recordId,
            String profilingName,
            Long collectiveSeqId,
            List<List<Long>> inputSizes,
            List<String> inputDtypes,
            String state,
            Long timeCreatedNs,
            Double durationMs,
            Source source,
            ProcessGroup processGroup) {}

    /** A process group as torch names it: name ("0"), description ("default_pg"), size and member ranks. */
    public record ProcessGroup(String name, String desc, Integer size, List<Integer> ranks) {}

    /**
     * One flight-recorder dump as a whole: its schema version, NCCL version (comm_lib_version), process groups and
     * per-group progress (pg_status), and whether it was read from JSON or from torch's pickle.
     */
    public record FlightDump(
            Integer rank,
            String version,
            String ncclVersion,
            List<ProcessGroup> processGroups,
            Map<String, PgStatus> pgStatus,
            String format,
            Source source) {}

    /** Sequence numbers of the last collective enqueued, started and completed on one process group. */
    public record PgStatus(Long lastEnqueued, Long lastStarted, Long lastCompleted) {}

    /**
     * A Kineto trace's clock: its {@code ts} (µs; {@code startNs} of its kernels, ranges and copies) plus
     * {@code baseNs} (the trace's {@code baseTimeNanoseconds}) is the Unix-epoch time in ns, the clock the harness's
     * hook records use ({@code time.time_ns()}). Absent from torch 1.13's bare-array traces.
     */
    public record TraceClock(Integer rank, long baseNs, Source source) {}

    /**
     * A Kineto trace's {@code distributedInfo}: the rank's view of the job. {@code torchNcclBuild}: its
     * {@code nccl_version}, which torch's profiler takes from torch.cuda.nccl.version() (torch/profiler/profiler.py
     * _get_distributed_info), a compile-time constant (torch/csrc/cuda/nccl.cpp version(): NCCL_MAJOR/MINOR/PATCH of
     * the headers torch was built against). It is not the library that ran: a pip-upgraded nvidia-nccl package,
     * LD_LIBRARY_PATH or LD_PRELOAD load another under the same torch, so it is never the run's NCCL version.
     */
    public record Distributed(
            Integer rank,
            Integer worldSize,
            String backend,
            String torchNcclBuild,
            List<ProcessGroup> processGroups,
            Source source) {}

    /**
     * A memcpy or memset on the GPU (Kineto gpu_memcpy/gpu_memset, nsys CUPTI_ACTIVITY_KIND_MEMCPY/MEMSET). {@code kind}:
     * HtoD, DtoH, DtoD, HtoH, PtoP, … as printed, or "memset".
     */
    public record Copy(
            Integer rank,
            String kind,
            Long bytes,
            Long startNs,
            Long durNs,
            Integer device,
            Integer stream,
            Source source) {}

    /**
     * Evidence that the run was emulated (N ranks on fewer GPUs with pathproof's NCCL patch): the manifest's
     * {@code emulation} object, and the EMULATOR/ORACLE lines in NCCL logs. NCCL's decisions in such a run are real;
     * its timings are not physical.
     */
    public record Emulation(JsonNode manifest, Source manifestSource, long logLines, Source firstLogLine) {}

    /**
     * Whether each rank's evidence is whole, for a run directory: how many ranks ran ({@code worldSize}, and which
     * manifest field says so in {@code worldSizeFrom}; the ranks the files name where the manifest does not say), and for
     * each kind of per-rank file (hook records, steps, DDP logging, NCCL log, kernel trace, flight recorder, replica
     * digests) whether every rank's file is there, read to its end and covers the iterations. {@code gaps} lists every
     * hole, each naming its rank and file:line; a row that relies on a kind with a gap is not a PASS.
     * {@code laterSessions}: the folders of the DDP sessions the command built after this one (rundir.DdpSessions),
     * each a run of its own that this evidence does not include.
     */
    public record Integrity(
            Integer worldSize,
            String worldSizeFrom,
            List<KindCheck> kinds,
            List<Gap> gaps,
            @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> laterSessions) {
        public Integrity {
            kinds = List.copyOf(kinds);
            gaps = List.copyOf(gaps);
            laterSessions = laterSessions == null ? List.of() : List.copyOf(laterSessions);
        }

        public Integrity(Integer worldSize, String worldSizeFrom, List<KindCheck> kinds, List<Gap> gaps) {
            this(worldSize, worldSizeFrom, kinds, gaps, List.of());
        }

        public boolean complete() {
            return gaps.isEmpty();
        }

        /**
         * The gaps a row relies on: those of every kind that names the row (see {@link KindCheck#usedBy}) and whose
         * evidence the row cites ({@code cited}, the row's kinds of evidence; null: whatever it cites), and of a row about
         * one rank ({@code kernels/rank2}, {@code launch-shape/rank2/bucket0}) only that rank's and the run's own. A row
         * that did not read a kind at all (world-size from the manifest, not from DDP logging) does not rest on its gaps.
         */
        public List<Gap> gapsFor(String rowId, java.util.Collection<EvidenceKind> cited) {
            Integer rank = rankOf(rowId);
            List<Gap> out = new java.util.ArrayList<>();
            for (KindCheck k : kinds) {
                if (!k.usedBy(rowId) || cited != null && !cited.contains(k.evidence())) {
                    continue;
                }
                for (Gap g : gaps) {
                    if (g.kind() == k.kind() && (rank == null || g.rank() < 0 || g.rank() == rank)) {
                        out.add(g);
                    }
                }
            }
            return out;
        }

        private static Integer rankOf(String rowId) {
            java.util.regex.Matcher m =
                    java.util.regex.Pattern.compile("(?:^|/)rank(\\d+)(?:/|$)").matcher(rowId);
            return m.find() ? Integer.valueOf(m.group(1)) : null;
        }
    }

    /**
     * One kind of per-rank evidence: its file pattern ({@code hook-rank{r}.jsonl}), the acceptance rows that rely on it
     * (row ids or their part before "/" or "-") and the kind of evidence such a row cites when it read these files
     * ({@code evidence}: {@code hook}, {@code replicas} …), what diagnose uses it for, whether this run has it at all
     * ({@code expected}: some rank wrote it, or the manifest says every rank did) and the ranks whose file is whole.
     */
    public record KindCheck(
            EvidenceKind kind,
            String files,
            List<String> rows,
            EvidenceKind evidence,
            String uses,
            boolean expected,
            List<Integer> completeRanks) {
        public KindCheck {
            rows = List.copyOf(rows);
            completeRanks = List.copyOf(completeRanks);
        }

        /** A row relies on this kind when one of its names is the row's id, or the id's part before "/" or "-". */
        public boolean usedBy(String rowId) {
            for (String r : rows) {
                if (rowId.equals(r) || rowId.startsWith(r + "/") || rowId.startsWith(r + "-")) {
                    return true;
                }
            }
            return false;
        }
    }

    /**
     * One hole in the evidence of one rank ({@code rank} -1: the run's own file, such as replicas.json): the file, its
     * 1-based line (0: the file as a whole) and what is wrong — missing, empty, a torn last line, a line that is not
     * JSON, another rank's records, iterations it does not cover.
     */
    public record Gap(EvidenceKind kind, int rank, String file, long line, String problem) {
        /** {@code file:line}, or the file alone for the file as a whole. */
        public String where() {
            return line > 0 ? file + ":" + line : file;
        }

        @Override
        public String toString() {
            return (rank < 0 ? "" : "rank " + rank + ": ") + where() + ": " + problem;
        }
    }

    /**
     * A conclusion drawn across facts, e.g. ranks of one communicator disagreeing on channels. The same finding drawn in
     * many files is listed once: {@code count} says how often, {@code sources} holds the first few.
     */
    public record Finding(String kind, String message, List<Source> sources, long count) {
        /** A finding drawn once. */
        public static Finding once(String kind, String message, List<Source> sources) {
            return new Finding(kind, message, sources, 1);
        }
    }
}

package io.pathproof.accept;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.FileKind;
import io.pathproof.evidence.Source;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Null-safe views of an {@link Evidence}: every list may be absent in a run that lacked a tool, and the manifest is
 * read defensively (absent fields give null, never an exception). The harness's fault-knob record ({@code inject}) is
 * never read here.
 */
final class EvidenceView {
    private final Evidence e;
    /** Indices into {@link #kernels()} of the NCCL AllReduce kernels, by rank (null: the kernel names none). */
    private Map<Integer, List<Integer>> allReduceByRank;
    /** The flight recorder's bucket AllReduces by rank and iteration, joined once per acceptance. */
    private TreeMap<Integer, TreeMap<Integer, List<FlightBuckets.Collective>>> flightBuckets;

    EvidenceView(Evidence e) {
        this.e = e;
    }

    static <T> List<T> list(List<T> l) {
        return l == null ? List.of() : l;
    }

    Evidence evidence() {
        return e;
    }

    boolean hasNcclLog() {
        Evidence.Nccl n = e.nccl();
        return n != null
                && (!list(n.communicators()).isEmpty()
                        || !list(n.tuning()).isEmpty()
                        || !list(n.colls()).isEmpty()
                        || n.version() != null);
    }

    List<Evidence.Communicator> communicators() {
        return e.nccl() == null ? List.of() : list(e.nccl().communicators());
    }

    List<Evidence.Tuning> tuning() {
        return e.nccl() == null ? List.of() : list(e.nccl().tuning());
    }

    List<Evidence.Coll> colls() {
        return e.nccl() == null ? List.of() : list(e.nccl().colls());
    }

    List<Evidence.BucketRecord> hooks() {
        return e.ddp() == null ? List.of() : list(e.ddp().buckets());
    }

    Map<String, JsonNode> ddpLogging() {
        return e.ddp() == null || e.ddp().logging() == null ? Map.of() : e.ddp().logging();
    }

    /** The messages of DDP's own debug log (TORCH_DISTRIBUTED_DEBUG) of one kind, e.g. "ddp-initialized". */
    List<Evidence.DdpLogMessage> ddpLog(String message) {
        List<Evidence.DdpLogMessage> out = new ArrayList<>();
        if (e.ddp() != null && e.ddp().log() != null) {
            for (Evidence.DdpLogMessage m : e.ddp().log()) {
                if (m.message().equals(message)) {
                    out.add(m);
                }
            }
        }
        return out;
    }

    List<Evidence.Kernel> kernels() {
        return list(e.kernels());
    }

    List<Evidence.Range> ranges() {
        return list(e.ranges());
    }

    List<Evidence.FlightRecord> flightRecords() {
        return list(e.flightRecorder());
    }

    /**
     * True when some kernel-trace file (Kineto, nsys, ncu) was read, or kernels are present — and the reader did not
     * find that GPU kernel activity went uncaptured (collectives but zero NCCL kernels, HTA #360: then no kernel fact
     * can be proven either way).
     */
    boolean hasKernelTrace() {
        for (Evidence.Finding f : list(e.findings())) {
            if ("missing-nccl-kernels".equals(f.kind())) {
                return false;
            }
        }
        if (!kernels().isEmpty()) {
            return true;
        }
        for (Evidence.FileRead f : list(e.files())) {
            if (f.kind() != null && f.kind().kernels()) {
                return true;
            }
        }
        return false;
    }

    /** NCCL AllReduce kernels of one rank (null rank = a single-rank trace), in launch order where known. */
    List<Evidence.Kernel> allReduceKernels(int rank, boolean singleRank) {
        if (allReduceByRank == null) {
            // Indexed once: the rows ask per rank, and a scan of every rank's kernels per rank is quadratic in ranks.
            allReduceByRank = new HashMap<>();
            for (int i = 0; i < kernels().size(); i++) {
                Evidence.Kernel k = kernels().get(i);
                if (k.nccl()
                        && k.name() != null
                        && k.name().toLowerCase(Locale.ROOT).contains("allreduce")) {
                    allReduceByRank
                            .computeIfAbsent(k.rank(), r -> new ArrayList<>())
                            .add(i);
                }
            }
        }
        List<Integer> own = allReduceByRank.getOrDefault(rank, List.of());
        // A kernel that names no rank is rank 0's, or the one rank's.
        List<Integer> unnamed = singleRank || rank == 0 ? allReduceByRank.getOrDefault(null, List.of()) : List.of();
        List<Evidence.Kernel> out = new ArrayList<>(own.size() + unnamed.size());
        int a = 0;
        int b = 0;
        while (a < own.size() || b < unnamed.size()) { // in the evidence's order, as the sort below is stable
            boolean fromOwn = b >= unnamed.size() || (a < own.size() && own.get(a) < unnamed.get(b));
            out.add(kernels().get(fromOwn ? own.get(a++) : unnamed.get(b++)));
        }
        out.sort(Comparator.comparing(Evidence.Kernel::startNs, Comparator.nullsLast(Comparator.naturalOrder())));
        return out;
    }

    /**
     * The AllReduce calls of a rank as the trace's {@code nccl:all_reduce} ranges. Kineto writes each such annotation
     * twice, once on the CPU ({@code user_annotation}) and once on the GPU timeline ({@code gpu_user_annotation}): one
     * call is counted once, from the CPU side where present.
     */
    List<Evidence.Range> allReduceRanges(int rank, boolean singleRank) {
        List<Evidence.Range> cpu = new ArrayList<>();
        List<Evidence.Range> other = new ArrayList<>();
        for (Evidence.Range r : ranges()) {
            boolean rankMatches = r.rank() != null ? r.rank() == rank : singleRank || rank == 0;
            if (rankMatches
                    && r.name() != null
                    && r.name().toLowerCase(Locale.ROOT).endsWith(":all_reduce")) {
                if (r.category() != null
                        && r.category().toLowerCase(Locale.ROOT).startsWith("gpu_")) {
                    other.add(r);
                } else {
                    cpu.add(r);
                }
            }
        }
        return cpu.isEmpty() ? other : cpu;
    }

    JsonNode manifest() {
        return e.manifest();
    }

    /** A manifest field by path, or a missing node. */
    JsonNode manifestAt(String... path) {
        JsonNode n = e.manifest();
        if (n == null) {
            return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
        }
        for (String p : path) {
            n = n.path(p);
        }
        return n;
    }

    /**
     * A fact as a row cites it: its value, the kind of evidence it was read from, and where — a file (and line) that was
     * read, or words that say what it is where the fact has no file of its own ("ddp logging rank 0 backend_name").
     */
    record Cited(String value, EvidenceKind kind, String where) {}

    /** The backend named by the manifest, DDP's own logging or DDP's debug log ({@code backend_name}), lower case. */
    String backend() {
        Cited c = backendCited();
        return c == null ? null : c.value();
    }

    /** As {@link #backend()}, with where it was read; null if nothing names it. */
    Cited backendCited() {
        for (String k : new String[] {"backend", "backendName"}) {
            JsonNode b = manifestAt(k);
            if (b.isTextual() && !b.asText().isBlank()) {
                return new Cited(
                        b.asText().trim().toLowerCase(Locale.ROOT),
                        EvidenceKind.MANIFEST,
                        manifestFile() + " (" + k + ")");
            }
        }
        for (Map.Entry<String, JsonNode> log : new TreeMap<>(ddpLogging()).entrySet()) {
            JsonNode b = log.getValue() == null ? null : log.getValue().get("backend_name");
            if (b != null && b.isTextual()) {
                return new Cited(
                        b.asText().trim().toLowerCase(Locale.ROOT),
                        EvidenceKind.DDP_LOGGING,
                        ddpLoggingCite(log.getKey(), "backend_name"));
            }
        }
        for (Evidence.DdpLogMessage m : ddpLog("ddp-initialized")) {
            String b = m.value("backend_name");
            if (b != null && !b.isBlank()) {
                return new Cited(
                        b.trim().toLowerCase(Locale.ROOT), EvidenceKind.DDP_LOG, src(m.source()) + " (backend_name)");
            }
        }
        return null;
    }

    /**
     * The NCCL version the evidence names ({@link Evidence.Nccl#version()}: NCCL's own "NCCL version" line first, else a
     * flight-recorder dump's {@code comm_lib_version}), with the kind of evidence of the file it was read in; null if
     * none does.
     */
    Cited ncclVersionCited() {
        Evidence.Nccl n = e.nccl();
        if (n == null || n.version() == null || n.versionSource() == null) {
            return null;
        }
        EvidenceKind kind = EvidenceKind.NCCL_LOG;
        for (Evidence.FileRead f : list(e.files())) {
            if (f.path().equals(n.versionSource().file())) {
                kind = f.kind() == FileKind.FLIGHT_RECORDER ? EvidenceKind.FLIGHT_RECORDER : EvidenceKind.NCCL_LOG;
            }
        }
        return new Cited(n.version(), kind, n.versionSource().toString());
    }

    /**
     * "; the traces name only the NCCL torch was built with (V, torch.cuda.nccl.version(), a compile-time constant),
     * not the library the run loaded" where a trace's distributedInfo names one, else "": said where no evidence names
     * the NCCL that ran, so that the build version is seen and not taken for it.
     */
    String torchNcclBuild() {
        java.util.TreeSet<String> builds = new java.util.TreeSet<>();
        String at = null;
        for (Evidence.Distributed d : list(e.distributed())) {
            if (d.torchNcclBuild() != null && builds.add(d.torchNcclBuild()) && at == null) {
                at = src(d.source());
            }
        }
        return builds.isEmpty()
                ? ""
                : "; the traces name only the NCCL torch was built with (" + String.join(", ", builds) + ", " + at
                        + ": torch.cuda.nccl.version(), a compile-time constant), not the library the run loaded";
    }

    /**
     * Where rank {@code rank}'s DDP logging {@code key} was read: the dump's file where a user's dump of
     * {@code _get_ddp_logging_data()} gave it, else what it is ("ddp logging rank 0 bucket_sizes", the run's own
     * {@code ddp-logging-rank0.json}).
     */
    String ddpLoggingCite(String rank, String key) {
        for (Evidence.FileRead f : list(e.files())) {
            if (f.kind() == FileKind.DDP_LOGGING
                    && f.rank() != null
                    && Integer.toString(f.rank()).equals(rank)) {
                return f.path() + " (DDP logging rank " + rank + " " + key + ")";
            }
        }
        return "ddp logging rank " + rank + " " + key;
    }

    /**
     * The run's start time: the manifest's start field ({@code start}, {@code startedAt}, {@code startTime},
     * {@code createdAt}; ISO-8601 or epoch seconds / ms / ns), else the earliest flight-recorder
     * {@code time_created_ns} (wall-clock epoch ns, {@code c10::getTime()}). Null when neither is present.
     */
    Dated runStart() {
        Dated best = null;
        for (String k : new String[] {"start", "startedAt", "startTime", "started", "start_time", "createdAt"}) {
            Instant t = instant(manifestAt(k));
            if (t != null) {
                best = new Dated(t, "manifest." + k, manifestFile());
                break;
            }
        }
        for (Evidence.FlightRecord fr : flightRecords()) {
            // Epoch ns after 2001-09-09 (1e18): anything smaller is a monotonic clock, not a date.
            if (fr.timeCreatedNs() != null && fr.timeCreatedNs() > 1_000_000_000_000_000_000L) {
                Instant t = Instant.ofEpochSecond(0, fr.timeCreatedNs());
                if (best == null || t.isBefore(best.time())) {
                    best = new Dated(
                            t,
                            "flight-recorder time_created_ns",
                            fr.source() == null
                                    ? "flight recorder"
                                    : fr.source().toString());
                }
            }
        }
        return best;
    }

    /** The manifest's path: the run directory's manifest.json, where the harness reader reads it. */
    String manifestFile() {
        return (e.runDir() == null ? "" : e.runDir() + "/") + "manifest.json";
    }

    /** A time and where it was read. */
    record Dated(Instant time, String what, String where) {}

    static Instant instant(JsonNode n) {
        if (n == null || n.isMissingNode() || n.isNull()) {
            return null;
        }
        if (n.isNumber()) {
            double v = n.asDouble();
            if (v > 1e17) {
                return Instant.ofEpochSecond(0, n.asLong());
            }
            if (v > 1e11) {
                return Instant.ofEpochMilli(n.asLong());
            }
            if (v > 0) {
                return Instant.ofEpochMilli(Math.round(v * 1000));
            }
            return null;
        }
        if (n.isTextual()) {
            String s = n.asText().trim();
            try {
                return Instant.parse(s);
            } catch (DateTimeParseException ex) {
                try {
                    return OffsetDateTime.parse(s).toInstant();
                } catch (DateTimeParseException ex2) {
                    return null;
                }
            }
        }
        return null;
    }

    /** {@link FlightBuckets#byRankIteration}, computed on first use: several row families read it. */
    TreeMap<Integer, TreeMap<Integer, List<FlightBuckets.Collective>>> flightBuckets() {
        if (flightBuckets == null) {
            flightBuckets = FlightBuckets.byRankIteration(this);
        }
        return flightBuckets;
    }

    /** Hook records grouped by rank then iteration, each list in bucket-index order. */
    TreeMap<Integer, TreeMap<Integer, List<Evidence.BucketRecord>>> hooksByRankIteration() {
        TreeMap<Integer, TreeMap<Integer, List<Evidence.BucketRecord>>> m = new TreeMap<>();
        for (Evidence.BucketRecord b : hooks()) {
            m.computeIfAbsent(b.rank(), r -> new TreeMap<>())
                    .computeIfAbsent(b.iteration(), i -> new ArrayList<>())
                    .add(b);
        }
        for (TreeMap<Integer, List<Evidence.BucketRecord>> byIt : m.values()) {
            for (List<Evidence.BucketRecord> l : byIt.values()) {
                l.sort(Comparator.comparingInt(Evidence.BucketRecord::index));
            }
        }
        return m;
    }

    static String src(Source s) {
        return s == null ? null : s.toString();
    }
}

package io.pathproof.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The per-rank evidence of a run directory, one entry per kind: the file each rank writes, how such a file is read
 * to its end, the iterations its records must cover, when the run's manifest promises it, and the acceptance rows that
 * rely on it (by row id: a listed name is the id itself or its prefix before "/" or "-", so {@code buckets} names
 * {@code buckets-construction}, {@code launch-shape} names {@code launch-shape/rank2/bucket0}). This is the one place
 * that says so: a new kind of per-rank file is one entry here, and {@link RankIntegrity} checks it for every rank,
 * accept makes the rows named here UNPROVEN where it has a gap, and diagnose refuses a run that has one.
 *
 * <p>The row names are the accept room's row ids, kept here as data beside the file they read: the reader knows the
 * file, and a kind's rows are one fact about it.
 */
enum RankEvidence {
    HOOK(
            EvidenceKind.HOOK,
            "hook-rank(\\d+)\\.jsonl",
            Form.JSON_LINES,
            Cover.ITERATION_BUCKETS,
            List.of("parameter-bytes", "buckets", "completion-order", "bus-bytes", "predicted-before-run"),
            EvidenceKind.HOOK,
            "diagnose: bucket layout, compute outside communication",
            m -> m.path("hookedIterations").isArray()
                    && !m.path("hookedIterations").isEmpty()),
    STEPS(
            EvidenceKind.STEPS,
            "steps-rank(\\d+)\\.jsonl",
            Form.JSON_LINES,
            Cover.ITERATIONS,
            List.of("predicted-before-run"),
            EvidenceKind.STEPS,
            "diagnose: step time, machine load",
            m -> m.path("iters").asInt(0) > 0 || userJob(m)),
    DDP_LOGGING(
            EvidenceKind.DDP_LOGGING,
            "ddp-logging-rank(\\d+)\\.json",
            Form.JSON_OBJECT,
            Cover.NONE,
            List.of("parameter-bytes", "buckets", "world-size"),
            EvidenceKind.DDP_LOGGING,
            "diagnose: DDP flags (ddp-config)",
            m -> m.path("harnessFinished").asBoolean(false)),
    NCCL_LOG(
            EvidenceKind.NCCL_LOG,
            "nccl-rank(\\d+)\\.log",
            Form.TEXT_LINES,
            Cover.NONE,
            List.of(
                    "collective",
                    "algorithm",
                    "protocol",
                    "tuner-time",
                    "coll-channels",
                    "ring-order",
                    "transport",
                    "launch-shape",
                    "evidence-consistency",
                    "bus-bytes"),
            EvidenceKind.NCCL_LOG,
            "diagnose: algorithm, protocol, transport, channels, NCCL env",
            m -> false),
    KERNEL_TRACE(
            EvidenceKind.KERNEL_TRACE,
            "trace-rank(\\d+)\\.json(?:\\.gz)?",
            Form.READER,
            Cover.NONE,
            List.of("launch-shape", "kernels", "busbw"),
            EvidenceKind.KERNEL_TRACE,
            "diagnose: threads, NCCL kernel time",
            m -> false),
    FLIGHT_RECORDER(
            EvidenceKind.FLIGHT_RECORDER,
            "flight-recorder-rank(\\d+)\\.json",
            Form.READER,
            Cover.NONE,
            List.of("collective", "predicted-before-run"),
            EvidenceKind.FLIGHT_RECORDER,
            "accept: second witness of each collective",
            m -> false),
    /**
     * One rank's parameter digest ({"rank":r,"sha256":…,"samples":[first,last,mean]}), written by a user's job: its
     * instrumentation (manifest {@code instrumentation}) writes one per rank when it finishes.
     */
    REPLICA(
            EvidenceKind.REPLICA,
            "replica-rank(\\d+)\\.json",
            Form.JSON_OBJECT,
            Cover.NONE,
            List.of("replicas"),
            EvidenceKind.REPLICAS,
            "diagnose: correctness",
            m -> m.path("harnessFinished").asBoolean(false) && userJob(m)),
    /** Rank 0's gathered digests of every rank: one file, one {@code digests[]} entry per rank. */
    REPLICAS(
            EvidenceKind.REPLICAS,
            "(replicas)\\.json",
            Form.DIGESTS,
            Cover.NONE,
            List.of("replicas"),
            EvidenceKind.REPLICAS,
            "diagnose: correctness",
            m -> m.path("harnessFinished").asBoolean(false) && !userJob(m));

    /**
     * The run instrumented a user's own job (python/pathproof_torch; its rank 0 records how in the manifest's
     * {@code instrumentation}): every rank writes its own digest, and no rank gathers them.
     */
    private static boolean userJob(JsonNode manifest) {
        return manifest.path("instrumentation").isObject();
    }

    /** How a file of the kind is read to its end. */
    enum Form {
        /** One JSON object a line; every line ends with a newline, a torn last line is a gap. */
        JSON_LINES,
        /** Text lines (an NCCL debug log): not empty, and its last line ends with a newline. */
        TEXT_LINES,
        /** One JSON object, with the rank in its {@code rank} field where it has one. */
        JSON_OBJECT,
        /** A format with its own reader (Kineto trace, flight-recorder dump): that reader's problems are its gaps. */
        READER,
        /** One file for the run with one {@code digests[]} entry per rank. */
        DIGESTS
    }

    /** The iterations a rank's records must cover. */
    enum Cover {
        NONE,
        /** One record per iteration: the manifest's warm-up + measured iterations, else every iteration another rank has. */
        ITERATIONS,
        /**
         * Every bucket of every hooked iteration: the manifest's {@code hookedIterations}, else every iteration another rank
         * has, each with buckets 0..k and bucket k the last ({@code isLast}).
         */
        ITERATION_BUCKETS
    }

    final EvidenceKind kind;
    final Pattern file;
    final Form form;
    final Cover cover;
    final List<String> rows;
    /** The kind of evidence an acceptance row cites when it read these files ({@code AcceptanceRow.evidence}). */
    final EvidenceKind evidence;

    final String uses;
    /** True where the run's manifest says every rank wrote this kind, so a kind missing on all ranks is a gap too. */
    final Predicate<JsonNode> promised;

    RankEvidence(
            EvidenceKind kind,
            String file,
            Form form,
            Cover cover,
            List<String> rows,
            EvidenceKind evidence,
            String uses,
            Predicate<JsonNode> promised) {
        this.kind = kind;
        this.file = Pattern.compile(file);
        this.form = form;
        this.cover = cover;
        this.rows = rows;
        this.evidence = evidence;
        this.uses = uses;
        this.promised = promised;
    }

    /** One file per run (its rank group matches no number) rather than one per rank. */
    boolean perRun() {
        return form == Form.DIGESTS;
    }

    /** The rank a file of this kind belongs to, -1 for the one file of a per-run kind, null when it is not of the kind. */
    Integer rankOf(String fileName) {
        Matcher m = file.matcher(fileName);
        if (!m.matches()) {
            return null;
        }
        return perRun() ? -1 : Integer.valueOf(m.group(1));
    }

    /** The file pattern as people write it: {@code hook-rank{r}.jsonl}. */
    String pattern() {
        String p = file.pattern()
                .replace("(\\d+)", "{r}")
                .replace("(?:\\.gz)?", "[.gz]")
                .replace("\\.", ".");
        return p.replace("(", "").replace(")", "");
    }
}

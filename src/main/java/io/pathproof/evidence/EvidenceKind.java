package io.pathproof.evidence;

import com.fasterxml.jackson.annotation.JsonValue;
import java.util.Collection;
import java.util.stream.Collectors;

/**
 * A kind of evidence an acceptance row cites ({@code AcceptanceRow.evidence}) and a per-rank file of a run directory
 * is ({@link Evidence.KindCheck}): one source the observation was read from, independent of the others. The label is
 * how the JSON and the tables name it.
 */
public enum EvidenceKind {
    /** The harness's gradient hook records ({@code hook-rank{r}.jsonl}). */
    HOOK("hook"),
    /** The harness's per-iteration step times ({@code steps-rank{r}.jsonl}). */
    STEPS("steps"),
    NCCL_LOG("nccl-log"),
    KERNEL_TRACE("kernel-trace"),
    /** One rank's own parameter digest ({@code replica-rank{r}.json}). */
    REPLICA("replica"),
    /** The parameter digests of every rank, compared. */
    REPLICAS("replicas"),
    MANIFEST("manifest"),
    FLIGHT_RECORDER("flight-recorder"),
    /** A dump of DDP's {@code _get_ddp_logging_data()}. */
    DDP_LOGGING("ddp-logging"),
    /** DDP's own debug log lines. */
    DDP_LOG("ddp-log"),
    /** The prediction's own seal. */
    SEAL("seal"),
    NCCL_PROFILER("nccl-profiler"),
    /** The peer access and copy bandwidth between GPUs ({@code peer-access-rank{r}.json}). */
    PEER_ACCESS("peer-access");

    private final String label;

    EvidenceKind(String label) {
        this.label = label;
    }

    @JsonValue
    public String label() {
        return label;
    }

    /** The kind a label names; a label no kind has is a programming error in a table that lists kinds. */
    public static EvidenceKind ofLabel(String label) {
        for (EvidenceKind k : values()) {
            if (k.label.equals(label)) {
                return k;
            }
        }
        throw new IllegalArgumentException("no evidence kind '" + label + "'");
    }

    /** The labels of {@code kinds}, in their order, between {@code sep}. */
    public static String join(String sep, Collection<EvidenceKind> kinds) {
        return kinds.stream().map(EvidenceKind::label).collect(Collectors.joining(sep));
    }

    @Override
    public String toString() {
        return label;
    }
}

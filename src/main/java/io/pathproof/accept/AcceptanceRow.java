package io.pathproof.accept;

import io.pathproof.evidence.EvidenceKind;
import java.util.List;

/**
 * One line of the acceptance table: what the sealed prediction said, what the run shows, the verdict, the independent
 * kinds of evidence behind the observation ({@code hook}, {@code nccl-log}, {@code kernel-trace}, {@code replicas},
 * {@code manifest}, {@code flight-recorder}, {@code ddp-logging}, {@code ddp-log} (DDP's own debug log), {@code seal};
 * the {@code evidence-integrity} row also {@code steps} and {@code replica}) and where each fact was read.
 */
public record AcceptanceRow(
        String id,
        String check,
        String expected,
        String observed,
        Verdict verdict,
        List<EvidenceKind> evidence,
        List<String> provenance) {
    public AcceptanceRow {
        if (id == null || id.isBlank() || check == null || verdict == null) {
            throw new IllegalArgumentException("acceptance row needs an id, a check and a verdict");
        }
        expected = expected == null ? "" : expected;
        observed = observed == null ? "" : observed;
        evidence = evidence == null ? List.of() : List.copyOf(evidence);
        provenance = provenance == null ? List.of() : List.copyOf(provenance);
        if (verdict == Verdict.PASS && evidence.isEmpty()) {
            // A pass needs at least one kind of evidence behind it: missing evidence is UNPROVEN, never PASS.
            throw new IllegalArgumentException("row " + id + ": PASS without evidence");
        }
    }
}

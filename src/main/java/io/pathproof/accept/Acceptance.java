package io.pathproof.accept;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.pathproof.core.Json;
import io.pathproof.evidence.Evidence;
import io.pathproof.predict.Prediction;
import java.util.List;
import java.util.Locale;

/**
 * The public entry of the accept room: a sealed prediction against the evidence of one run → an
 * {@link AcceptanceTable}, and that table as text, JSON, Markdown (CI summaries) or JUnit XML.
 */
public final class Acceptance {
    private Acceptance() {}

    /** Checks every predicted fact against the evidence. Never throws for missing evidence: that is UNPROVEN. */
    public static AcceptanceTable accept(Prediction prediction, Evidence evidence) {
        if (prediction == null || evidence == null) {
            throw new IllegalArgumentException("accept needs a prediction and evidence");
        }
        Checks checks = new Checks(prediction, evidence);
        List<AcceptanceRow> rows = IntegrityChecks.apply(evidence.integrity(), checks.run());
        String sha = prediction.seal() == null ? null : prediction.seal().sha256();
        return AcceptanceTable.of(sha, evidence.runDir(), checks.backend(), rows, evidence.integrity());
    }

    /** One of table, json, markdown; throws IllegalArgumentException for another name. */
    public static String render(AcceptanceTable t, String format) {
        return switch (format == null ? "table" : format.toLowerCase(Locale.ROOT)) {
            case "table", "text" -> AcceptanceFormat.text(t);
            case "json" -> toJson(t);
            case "markdown", "md" -> AcceptanceFormat.markdown(t);
            default -> throw new IllegalArgumentException("unknown format '" + format + "' (table, json, markdown)");
        };
    }

    public static String toJson(AcceptanceTable t) {
        try {
            return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(t);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The integrity summary under a table: how many ranks ran, whose files are whole, each gap with its file:line, and
     * the later DDP sessions of the command the table leaves out; empty where the evidence is not a run directory.
     */
    public static List<String> integrity(AcceptanceTable t) {
        return AcceptanceFormat.integrity(t);
    }

    /** JUnit XML: one testcase per row; FAIL → failure, UNPROVEN and N/A → skipped (with the reason). */
    public static String toJunitXml(AcceptanceTable t) {
        return AcceptanceFormat.junit(t);
    }
}

package io.pathproof.accept;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.pathproof.core.ExitCode;
import io.pathproof.evidence.Evidence;
import java.util.List;

/**
 * The acceptance of one sealed prediction against one run. {@code verdict} is FAIL when any row fails, UNPROVEN when
 * none fails but at least one could not be proven, otherwise PASS (N/A rows do not count either way; a table with no
 * PASS row at all is UNPROVEN). {@code integrity}: whether each rank's evidence was whole (absent where the evidence
 * is not a run directory); a row relying on a gap is UNPROVEN.
 */
public record AcceptanceTable(
        String schema,
        String prediction,
        String run,
        String backend,
        Verdict verdict,
        Counts counts,
        List<AcceptanceRow> rows,
        @JsonInclude(JsonInclude.Include.NON_NULL) Evidence.Integrity integrity) {
    public static final String SCHEMA = "pathproof.acceptance/1";

    public AcceptanceTable {
        rows = rows == null ? List.of() : List.copyOf(rows);
    }

    /** How many rows got each verdict. */
    public record Counts(int pass, int fail, int unproven, int notApplicable) {}

    static AcceptanceTable of(
            String prediction, String run, String backend, List<AcceptanceRow> rows, Evidence.Integrity integrity) {
        int p = 0;
        int f = 0;
        int u = 0;
        int n = 0;
        for (AcceptanceRow r : rows) {
            switch (r.verdict()) {
                case PASS -> p++;
                case FAIL -> f++;
                case UNPROVEN -> u++;
                case NOT_APPLICABLE -> n++;
                default -> throw new IllegalStateException();
            }
        }
        Verdict v = f > 0 ? Verdict.FAIL : (u > 0 || p == 0) ? Verdict.UNPROVEN : Verdict.PASS;
        return new AcceptanceTable(SCHEMA, prediction, run, backend, v, new Counts(p, f, u, n), rows, integrity);
    }

    /**
     * The exit code of {@code accept}: 1 when any row FAILs (the prediction is refuted). UNPROVEN rows are not a
     * refutation, so by default they leave the exit code 0 (the overall verdict still says UNPROVEN); with
     * {@code strict} anything short of proof (any UNPROVEN row, or no PASS row at all) also exits 1.
     */
    @JsonIgnore
    public int exitCode(boolean strict) {
        if (verdict == Verdict.FAIL) {
            return ExitCode.FAIL;
        }
        if (strict && verdict != Verdict.PASS) {
            return ExitCode.FAIL;
        }
        return ExitCode.OK;
    }

    /** The row with this id, or null. */
    public AcceptanceRow row(String id) {
        for (AcceptanceRow r : rows) {
            if (r.id().equals(id)) {
                return r;
            }
        }
        return null;
    }
}

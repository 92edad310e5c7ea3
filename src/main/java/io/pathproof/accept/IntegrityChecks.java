package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.List;

/**
 * Rows on incomplete evidence. A row is only as good as the files it read: where a rank's file it relies on (the
 * evidence room's table of per-rank kinds says which rows each kind feeds) is missing, empty, torn, another rank's or
 * short of iterations, what the row saw is a part of the run, and a PASS — or a FAIL — on a part is not a verdict on
 * the run. Such a row is UNPROVEN, naming the rank and file:line; what it saw is kept in its observed text.
 */
final class IntegrityChecks {
    /** Gaps named in one row's observed text; the rest are counted. */
    private static final int NAMED = 2;

    private IntegrityChecks() {}

    /** Provenance entries of the integrity row. */
    private static final int CITED = 8;

    /**
     * The row of the run's evidence as a whole: every rank's file of every kind this run has is present, read to its end
     * and covers the iterations. A gap in a kind no other row reads (the steps, which only diagnose reads) still keeps the
     * table from an all-PASS verdict. None where the evidence is not a run directory.
     */
    static AcceptanceRow row(Evidence.Integrity integrity, String manifestFile) {
        if (integrity == null) {
            return null;
        }
        String ranks = integrity.worldSize() == null ? "?" : Integer.toString(integrity.worldSize());
        Row r = new Row(
                        "evidence-integrity",
                        "every rank's per-rank files present, read to their end, covering the iterations")
                .expected("each kind of per-rank file whole on " + ranks + "/" + ranks + " ranks ("
                        + integrity.worldSizeFrom() + ")");
        List<String> whole = new ArrayList<>();
        for (Evidence.KindCheck k : integrity.kinds()) {
            if (k.expected()) {
                r.kind(k.kind());
                whole.add(k.kind() + " " + k.completeRanks().size() + "/" + ranks);
            }
        }
        if (whole.isEmpty()) {
            return r.unproven("no per-rank file of any kind, and the manifest promises none")
                    .build();
        }
        if (integrity.complete()) {
            r.prov(manifestFile);
            return r.pass(String.join(", ", whole)).build();
        }
        List<String> named = new ArrayList<>();
        for (Evidence.Gap g : integrity.gaps()) {
            if (named.size() < NAMED) {
                named.add(g.toString());
            }
            if (r.provenanceSize() < CITED) {
                r.prov(g.where());
            }
        }
        int more = integrity.gaps().size() - named.size();
        return r.unproven(integrity.gaps().size() + " gap(s): " + String.join("; ", named)
                        + (more > 0 ? " (and " + more + " more)" : "") + "; whole: " + String.join(", ", whole))
                .build();
    }

    /** The rows, each that relies on a gap made UNPROVEN; N/A rows (no meaning for this run) stay N/A. */
    static List<AcceptanceRow> apply(Evidence.Integrity integrity, List<AcceptanceRow> rows) {
        if (integrity == null || integrity.complete()) {
            return rows;
        }
        List<AcceptanceRow> out = new ArrayList<>();
        for (AcceptanceRow r : rows) {
            // A verdict rests only on what the row read; an UNPROVEN row is told the gaps of whatever kind names it.
            List<Evidence.Gap> gaps = r.verdict() == Verdict.NOT_APPLICABLE
                    ? List.of()
                    : integrity.gapsFor(r.id(), r.verdict() == Verdict.UNPROVEN ? null : r.evidence());
            out.add(gaps.isEmpty() ? r : incomplete(r, gaps));
        }
        return out;
    }

    private static AcceptanceRow incomplete(AcceptanceRow r, List<Evidence.Gap> gaps) {
        List<String> named = new ArrayList<>();
        List<String> prov = new ArrayList<>();
        for (Evidence.Gap g : gaps) {
            if (named.size() < NAMED) {
                named.add(g.toString());
            }
            if (!prov.contains(g.where())) {
                prov.add(g.where());
            }
        }
        String more = gaps.size() > NAMED
                ? " (and " + (gaps.size() - NAMED) + " more gap" + (gaps.size() - NAMED == 1 ? "" : "s") + ")"
                : "";
        String observed = "evidence incomplete: " + String.join("; ", named) + more + "; on what was read: "
                + r.verdict().label() + (r.observed().isEmpty() ? "" : ", " + r.observed());
        for (String p : r.provenance()) {
            if (!prov.contains(p)) {
                prov.add(p);
            }
        }
        return new AcceptanceRow(r.id(), r.check(), r.expected(), observed, Verdict.UNPROVEN, r.evidence(), prov);
    }
}

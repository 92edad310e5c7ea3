package io.pathproof.accept;

import io.pathproof.core.Xml;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import java.util.ArrayList;
import java.util.List;

/** Renderings of an acceptance table. Pure functions to strings: only the CLI prints. */
final class AcceptanceFormat {
    private AcceptanceFormat() {}

    static String text(AcceptanceTable t) {
        String[] head = {"id", "check", "expected", "observed", "verdict", "evidence"};
        List<String[]> cells = new ArrayList<>();
        for (AcceptanceRow r : t.rows()) {
            cells.add(new String[] {
                r.id(),
                r.check(),
                clip(r.expected(), 48),
                clip(r.observed(), 72),
                r.verdict().label(),
                EvidenceKind.join(",", r.evidence())
            });
        }
        int[] w = new int[head.length];
        for (int i = 0; i < head.length; i++) {
            w[i] = head[i].length();
            for (String[] c : cells) {
                w[i] = Math.max(w[i], c[i].length());
            }
        }
        // The check column is long; show id, expected, observed, verdict, evidence.
        int[] cols = {0, 2, 3, 4, 5};
        StringBuilder sb = new StringBuilder();
        line(sb, head, w, cols);
        for (String[] c : cells) {
            line(sb, c, w, cols);
        }
        sb.append('\n').append(summary(t)).append('\n');
        for (String l : integrity(t)) {
            sb.append(l).append('\n');
        }
        for (AcceptanceRow r : t.rows()) {
            if (r.verdict() == Verdict.FAIL) {
                sb.append("FAIL ")
                        .append(r.id())
                        .append(": ")
                        .append(r.observed())
                        .append(" [")
                        .append(String.join(", ", r.provenance()))
                        .append("]\n");
            }
        }
        return sb.toString();
    }

    private static void line(StringBuilder sb, String[] c, int[] w, int[] cols) {
        StringBuilder l = new StringBuilder();
        for (int i : cols) {
            l.append(String.format("%-" + w[i] + "s  ", c[i]));
        }
        sb.append(l.toString().stripTrailing()).append('\n');
    }

    static String summary(AcceptanceTable t) {
        AcceptanceTable.Counts c = t.counts();
        return "verdict " + t.verdict().label() + ": " + c.pass() + " PASS, " + c.fail() + " FAIL, " + c.unproven()
                + " UNPROVEN, " + c.notApplicable() + " N/A (backend " + t.backend() + ")";
    }

    /** Gaps listed under the integrity line; the rest are counted (every one is in the JSON). */
    private static final int GAPS_LISTED = 12;

    /**
     * The integrity summary: how many ranks ran and from where that is known, per kind of per-rank file how many ranks'
     * files are whole, the kinds this run does not have, then each gap with its rank and file:line. Empty where the
     * evidence is not a run directory.
     */
    static List<String> integrity(AcceptanceTable t) {
        Evidence.Integrity in = t.integrity();
        List<String> out = new ArrayList<>();
        if (in == null) {
            return out;
        }
        List<String> kinds = new ArrayList<>();
        List<String> absent = new ArrayList<>();
        for (Evidence.KindCheck k : in.kinds()) {
            if (k.expected()) {
                kinds.add(k.kind() + " " + k.completeRanks().size() + "/"
                        + (in.worldSize() == null ? "?" : in.worldSize()));
            } else {
                absent.add(k.kind().label());
            }
        }
        // The rows the gaps made UNPROVEN: those resting on a damaged kind, and the integrity row itself.
        long unproven = t.rows().stream()
                .filter(r -> r.observed().startsWith("evidence incomplete:")
                        || (r.id().equals("evidence-integrity") && r.verdict() == Verdict.UNPROVEN))
                .count();
        out.add("integrity: " + (in.worldSize() == null ? "world size unknown" : in.worldSize() + " rank(s)") + " ("
                + in.worldSizeFrom() + "); "
                + (in.complete() ? "every rank's files whole: " : "ranks with whole files: ") + String.join(", ", kinds)
                + (absent.isEmpty() ? "" : "; not in this run: " + String.join(", ", absent))
                + (in.complete() ? "" : "; " + in.gaps().size() + " gap(s), " + unproven + " row(s) UNPROVEN on them"));
        for (int i = 0; i < in.gaps().size() && i < GAPS_LISTED; i++) {
            out.add("  gap " + in.gaps().get(i));
        }
        if (in.gaps().size() > GAPS_LISTED) {
            out.add("  … and " + (in.gaps().size() - GAPS_LISTED) + " more gap(s) (all in --format json)");
        }
        if (!in.laterSessions().isEmpty()) {
            out.add("  the command built its DDP job again after this session: this table is the first session's; "
                    + "each later one is a run of its own (accept --run DIR): "
                    + String.join(", ", in.laterSessions()));
        }
        return out;
    }

    static String markdown(AcceptanceTable t) {
        StringBuilder sb = new StringBuilder();
        String icon =
                switch (t.verdict()) {
                    case PASS -> "✅";
                    case FAIL -> "❌";
                    default -> "⚠️";
                };
        sb.append("### ")
                .append(icon)
                .append(" pathproof accept: ")
                .append(t.verdict().label())
                .append("\n\n");
        sb.append(summary(t))
                .append(t.prediction() == null ? "" : "; prediction sha256 `" + t.prediction() + "`")
                .append("\n\n");
        List<String> integrity = integrity(t);
        if (!integrity.isEmpty()) {
            sb.append("**Evidence ").append(md(integrity.get(0))).append("**\n\n");
            for (String l : integrity.subList(1, integrity.size())) {
                sb.append("- ").append(md(l.strip())).append('\n');
            }
            if (integrity.size() > 1) {
                sb.append('\n');
            }
        }
        sb.append("| id | check | expected | observed | verdict | evidence | provenance |\n");
        sb.append("|---|---|---|---|---|---|---|\n");
        for (AcceptanceRow r : t.rows()) {
            sb.append("| `")
                    .append(md(r.id()))
                    .append("` | ")
                    .append(md(r.check()))
                    .append(" | ")
                    .append(md(r.expected()))
                    .append(" | ")
                    .append(md(r.observed()))
                    .append(" | **")
                    .append(r.verdict().label())
                    .append("** | ")
                    .append(md(EvidenceKind.join(", ", r.evidence())))
                    .append(" | ")
                    .append(md(String.join(", ", r.provenance())))
                    .append(" |\n");
        }
        return sb.toString();
    }

    private static String md(String s) {
        return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ");
    }

    private static String clip(String s, int n) {
        return s.length() <= n ? s : s.substring(0, n - 1) + "…";
    }

    static String junit(AcceptanceTable t) {
        AcceptanceTable.Counts c = t.counts();
        StringBuilder sb = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        sb.append("<testsuite name=\"pathproof.accept\" tests=\"")
                .append(t.rows().size())
                .append("\" failures=\"")
                .append(c.fail())
                .append("\" errors=\"0\" skipped=\"")
                .append(c.unproven() + c.notApplicable())
                .append("\">\n");
        for (AcceptanceRow r : t.rows()) {
            sb.append("  <testcase classname=\"pathproof.accept\" name=\"")
                    .append(xml(r.id()))
                    .append("\">");
            String detail = "expected: " + r.expected() + "; observed: " + r.observed() + "; evidence: "
                    + EvidenceKind.join(",", r.evidence()) + "; provenance: " + String.join(", ", r.provenance());
            switch (r.verdict()) {
                case FAIL ->
                    sb.append("<failure message=\"")
                            .append(xml(r.observed()))
                            .append("\">")
                            .append(xml(detail))
                            .append("</failure>");
                case UNPROVEN ->
                    sb.append("<skipped message=\"UNPROVEN: ")
                            .append(xml(r.observed()))
                            .append("\"/>");
                case NOT_APPLICABLE ->
                    sb.append("<skipped message=\"N/A: ")
                            .append(xml(r.observed()))
                            .append("\"/>");
                case PASS -> sb.append("<system-out>").append(xml(detail)).append("</system-out>");
                default -> throw new IllegalStateException();
            }
            sb.append("</testcase>\n");
        }
        sb.append("</testsuite>\n");
        return sb.toString();
    }

    /**
     * A control character in a row (an ANSI colour code in a log line) is written as a space: JUnit viewers show the
     * message as text, and this file has always read so.
     */
    private static String xml(String s) {
        return Xml.escape(s, " ");
    }
}

package io.pathproof.diagnose;

import io.pathproof.evidence.EvidenceKind;
import java.util.Locale;

/** Renderings of a diagnosis and of a fix verification. Strings only: the CLI prints. */
final class DiagnosisFormat {
    private DiagnosisFormat() {}

    static String text(Diagnosis d) {
        StringBuilder sb = new StringBuilder();
        heading(sb, d);
        correctness(sb, d.correctness());
        stepTime(sb, d.regression());
        fingerprint(sb, d);
        eliminated(sb, d);
        rootCause(sb, d.rootCause());
        candidates(sb, d);
        return sb.toString();
    }

    private static void heading(StringBuilder sb, Diagnosis d) {
        sb.append("diagnosis: ")
                .append(d.conclusion())
                .append("  (baseline ")
                .append(d.baseline())
                .append(", variant ")
                .append(d.variant())
                .append(")\n");
    }

    private static void correctness(StringBuilder sb, Diagnosis.Correctness c) {
        sb.append("1. correctness: ")
                .append(c.verdict().label())
                .append(" — ")
                .append(c.evidence())
                .append('\n');
    }

    private static void stepTime(StringBuilder sb, Diagnosis.Regression r) {
        sb.append("2. step time: ").append(r.verdict());
        if (r.ratio() != null) {
            sb.append(" — ").append(step(r));
        }
        sb.append('\n');
        if (r.why() != null) {
            sb.append("   ").append(r.why()).append('\n');
        }
        if (r.ratio() != null) {
            sb.append("   rule: ").append(r.rule()).append('\n');
        }
    }

    /** The path layers side by side, then the configuration facts that differ. */
    private static void fingerprint(StringBuilder sb, Diagnosis d) {
        sb.append("3. fingerprint:\n");
        for (Diagnosis.LayerDiff l : d.diffs()) {
            sb.append(String.format(
                    "   %-12s %s %s%s%n",
                    l.layer(),
                    l.changed() ? "CHANGED" : "same   ",
                    l.baseline(),
                    l.changed() ? " → " + l.variant() : ""));
        }
        for (Diagnosis.ConfigChange c : d.configuration()) {
            sb.append(String.format(
                    "   %-12s CHANGED %s: %s → %s (%s)%n",
                    "config", c.key(), c.baseline(), c.variant(), EvidenceKind.join(", ", c.evidence())));
        }
    }

    private static void eliminated(StringBuilder sb, Diagnosis d) {
        sb.append("4. eliminated:\n");
        for (Diagnosis.Elimination e : d.eliminated()) {
            sb.append("   - ")
                    .append(e.layer())
                    .append(": ")
                    .append(e.evidence())
                    .append('\n');
        }
        for (Diagnosis.Elimination e : d.unexamined()) {
            sb.append("   ? ")
                    .append(e.layer())
                    .append(" (not examined): ")
                    .append(e.evidence())
                    .append('\n');
        }
    }

    private static void rootCause(StringBuilder sb, Diagnosis.RootCause rc) {
        if (rc == null) {
            sb.append("5. root cause: not determined\n");
            return;
        }
        sb.append("5. root cause: layer ")
                .append(rc.layer())
                .append(", owner ")
                .append(rc.owner())
                .append('\n');
        sb.append("   change: ").append(rc.change()).append('\n');
        for (String e : rc.evidence()) {
            sb.append("   evidence: ").append(e).append('\n');
        }
        sb.append("   fix: ").append(rc.fix()).append('\n');
        for (String w : rc.wrongMitigations()) {
            sb.append("   would not fix it: ").append(w).append('\n');
        }
        sb.append("   prove it: ").append(rc.rerun()).append('\n');
    }

    private static void candidates(StringBuilder sb, Diagnosis d) {
        for (Diagnosis.Candidate c : d.candidates()) {
            sb.append("   candidate: ")
                    .append(c.variable())
                    .append(" (")
                    .append(c.layer())
                    .append(", path ")
                    .append(c.pathAgrees() ? "agrees" : "does not agree")
                    .append("): ")
                    .append(c.change())
                    .append('\n');
        }
    }

    static String markdown(Diagnosis d) {
        StringBuilder sb = new StringBuilder();
        Diagnosis.Regression r = d.regression();
        sb.append("### pathproof diagnose: ")
                .append(d.conclusion())
                .append(r.detected() ? " (regression)" : "")
                .append("\n\n");
        sb.append("| step | result |\n|---|---|\n");
        sb.append("| correctness | ")
                .append(md(d.correctness().verdict().label() + ": "
                        + d.correctness().evidence()))
                .append(" |\n");
        sb.append("| step time | ")
                .append(md(r.verdict()
                        + (r.ratio() == null ? "" : ": " + step(r))
                        + (r.why() == null ? "" : "; " + r.why())))
                .append(" |\n");
        if (r.ratio() != null) {
            sb.append("| rule | ").append(md(r.rule())).append(" |\n");
        }
        if (d.rootCause() != null) {
            Diagnosis.RootCause rc = d.rootCause();
            sb.append("| root cause | ")
                    .append(md(rc.layer() + " (" + rc.owner() + "): " + rc.change()))
                    .append(" |\n");
            sb.append("| fix | ").append(md(rc.fix())).append(" |\n");
            sb.append("| would not fix it | ")
                    .append(md(String.join("; ", rc.wrongMitigations())))
                    .append(" |\n");
            sb.append("| prove it | ").append(md(rc.rerun())).append(" |\n");
        }
        sb.append("\n| layer | baseline | variant | changed |\n|---|---|---|---|\n");
        for (Diagnosis.LayerDiff l : d.diffs()) {
            sb.append("| ")
                    .append(l.layer())
                    .append(" | ")
                    .append(md(l.baseline()))
                    .append(" | ")
                    .append(md(l.variant()))
                    .append(" | ")
                    .append(l.changed() ? "**yes**" : "no")
                    .append(" |\n");
        }
        for (Diagnosis.ConfigChange c : d.configuration()) {
            sb.append("| config `")
                    .append(md(c.key()))
                    .append("` | ")
                    .append(md(c.baseline()))
                    .append(" | ")
                    .append(md(c.variant()))
                    .append(" | **yes** |\n");
        }
        sb.append("\nEliminated, in order:\n");
        for (Diagnosis.Elimination e : d.eliminated()) {
            sb.append("1. **")
                    .append(e.layer())
                    .append("**: ")
                    .append(md(e.evidence()))
                    .append('\n');
        }
        for (Diagnosis.Candidate c : d.candidates()) {
            sb.append("- candidate **")
                    .append(md(c.variable()))
                    .append("** (")
                    .append(c.layer())
                    .append("): ")
                    .append(md(c.change()))
                    .append('\n');
        }
        return sb.toString();
    }

    /** A step-time comparison in one line: medians (pooled runs named), ratio, the 95 % and the rule's interval, steps. */
    static String step(Diagnosis.Regression r) {
        String runs = r.baselineRuns() > 1 || r.variantRuns() > 1
                ? String.format(Locale.ROOT, ", %d and %d runs pooled", r.baselineRuns(), r.variantRuns())
                : "";
        return String.format(
                Locale.ROOT,
                "median %.3f → %.3f ms, ratio %.3f (95%% CI %.3f..%.3f; %s interval %.3f..%.3f, margin ±%s), n=%d/%d%s",
                r.baselineMedianMs(),
                r.variantMedianMs(),
                r.ratio(),
                r.ciLow(),
                r.ciHigh(),
                Diagnoser.pct(r.level()),
                r.ruleLow(),
                r.ruleHigh(),
                Diagnoser.pct(r.margin()),
                r.nBaseline(),
                r.nVariant(),
                runs);
    }

    static String text(FixVerification f) {
        StringBuilder sb = new StringBuilder();
        sb.append("verify-fix: ")
                .append(f.verdict().toUpperCase(java.util.Locale.ROOT))
                .append(" (baseline ")
                .append(f.baseline())
                .append(", fixed ")
                .append(f.fixedRun())
                .append(")\n");
        sb.append("fingerprint equal: ")
                .append(f.fingerprintEqual())
                .append("; correctness: ")
                .append(f.correctness().label())
                .append('\n');
        if (f.medianMs() != null) {
            sb.append(String.format(
                    "step median %.3f ms, baseline band %.3f..%.3f ms%n", f.medianMs(), f.bandLowMs(), f.bandHighMs()));
        }
        if (f.regression() != null && f.regression().ratio() != null) {
            sb.append("against the baseline: ")
                    .append(f.regression().verdict())
                    .append(" — ")
                    .append(step(f.regression()))
                    .append('\n');
        }
        if (f.againstVariant() != null) {
            sb.append("against the variant (")
                    .append(f.variantRun())
                    .append("): ")
                    .append(f.againstVariant().verdict())
                    .append(" — ")
                    .append(step(f.againstVariant()))
                    .append('\n');
        }
        for (String r : f.reasons()) {
            sb.append("- ").append(r).append('\n');
        }
        for (String n : f.notes()) {
            sb.append("note: ").append(n).append('\n');
        }
        return sb.toString();
    }

    static String markdown(FixVerification f) {
        StringBuilder sb = new StringBuilder();
        String icon =
                switch (f.verdict()) {
                    case FixVerification.FIXED -> "✅";
                    case FixVerification.NOTHING_TO_FIX -> "ℹ️";
                    case FixVerification.INCONCLUSIVE -> "❔";
                    default -> "❌";
                };
        sb.append("### pathproof verify-fix: ")
                .append(icon)
                .append(' ')
                .append(f.verdict())
                .append("\n\n");
        sb.append("- fingerprint equal to the baseline's: ")
                .append(f.fingerprintEqual())
                .append('\n');
        sb.append("- correctness: ").append(f.correctness().label()).append('\n');
        if (f.medianMs() != null) {
            sb.append(String.format(
                    "- step median %.3f ms; baseline band %.3f..%.3f ms%n",
                    f.medianMs(), f.bandLowMs(), f.bandHighMs()));
        }
        if (f.againstVariant() != null) {
            sb.append("- against the variant: ")
                    .append(f.againstVariant().verdict())
                    .append(" — ")
                    .append(md(step(f.againstVariant())))
                    .append('\n');
        }
        for (String r : f.reasons()) {
            sb.append("- ").append(md(r)).append('\n');
        }
        for (String n : f.notes()) {
            sb.append("- note: ").append(md(n)).append('\n');
        }
        return sb.toString();
    }

    private static String md(String s) {
        return s == null ? "" : s.replace("|", "\\|").replace("\n", " ");
    }
}

package io.pathproof.report;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.accept.AcceptanceRow;
import io.pathproof.accept.AcceptanceTable;
import io.pathproof.accept.Verdict;
import io.pathproof.core.Json;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.Layer;
import io.pathproof.explain.Explainer;
import io.pathproof.proofdir.Explanation;
import io.pathproof.proofdir.Proof;
import java.io.IOException;
import java.util.List;
import java.util.Locale;

/** report.md (for CI summaries), report.json (one document with everything shown) and report.junit.xml. */
final class Texts {
    private Texts() {}

    static String markdown(Report.Source s) {
        StringBuilder b = new StringBuilder();
        b.append("# ")
                .append(
                        s.proof() != null
                                ? "pathproof proof — " + Esc.md(t(s.proof().scenario()))
                                : "pathproof report")
                .append("\n\n");
        b.append("**").append(Esc.md(Report.verdict(s))).append("**\n\n");
        for (String r : Report.reasons(s)) {
            b.append("- ").append(Esc.md(r)).append('\n');
        }
        if (s.emulated()) {
            b.append("\n> ").append(Esc.md(s.emulationNote())).append("\n");
        }
        if (s.proof() != null && s.proof().backendChoice() != null) {
            Proof.BackendChoice c = s.proof().backendChoice();
            b.append("\nBackend ")
                    .append(Esc.md(t(c.requested())))
                    .append(" → **")
                    .append(Esc.md(t(c.branch())))
                    .append("**: ")
                    .append(Esc.md(t(c.reason())))
                    .append('\n');
        }
        if (s.proof() != null && s.proof().reveal() != null) {
            reveal(b, s.proof().reveal());
        }
        table(b, s.acceptance(), "Acceptance");
        if (s.proof() != null) {
            for (Proof.Sample r : s.proof().recorded()) {
                table(b, r.acceptance(), t(r.name()) + " — " + t(r.label()));
            }
        }
        b.append("\n## Step times\n\nPer measured iteration, the slowest rank's time; one median per run.\n\n"
                + "| run | steps | median ms | 95% CI | p5..p95 |\n|---|---|---|---|---|\n");
        for (String key : s.runs().keySet()) {
            row(b, s.labels().get(key), s.steps().get(key));
        }
        s.pooled().forEach((role, st) -> row(b, Sections.runName(role) + ", " + st.runs() + " runs pooled", st));
        if (s.emulated()) {
            b.append("\n").append(Esc.md(s.emulationNote())).append(": these step times are not physical.\n");
        }
        Diagnosis d = s.diagnosis();
        if (d != null) {
            Diagnosis.RootCause rc = d.rootCause() == null
                    ? new Diagnosis.RootCause(null, null, null, null, null, null, null)
                    : d.rootCause();
            b.append("\n## Diagnosis\n\n")
                    .append(Esc.md(t(d.conclusion())))
                    .append(": layer ")
                    .append(Esc.md(t(rc.layer())))
                    .append(", owner ")
                    .append(Esc.md(t(rc.owner())))
                    .append(" — ")
                    .append(Esc.md(t(rc.change())))
                    .append("\n\nFix: ")
                    .append(Esc.md(t(rc.fix())))
                    .append('\n');
        }
        Explanation ex = s.explain();
        if (ex != null && ex.answers() != null && !ex.answers().isEmpty()) {
            b.append("\n## The 16 questions\n\n");
            for (Explainer.Answer a : ex.answers()) {
                b.append(a.number())
                        .append(". **")
                        .append(Esc.md(t(a.question())))
                        .append("** ")
                        .append(Esc.md(t(a.answer())))
                        .append('\n');
            }
        }
        return b.toString();
    }

    private static void reveal(StringBuilder b, Proof.Reveal r) {
        Proof.Injected inj = Sections.injected(r);
        Proof.Diagnosed dn = Sections.diagnosed(r);
        b.append("\n## Reveal\n\n| injected | diagnosed |\n|---|---|\n| ")
                .append(Esc.md(t(inj.kind())))
                .append(": `")
                .append(Esc.md(Sections.join(inj.settings(), ", ")))
                .append("` (layer ")
                .append(Esc.md(t(inj.layer())))
                .append(") | ")
                .append(Esc.md(t(dn.conclusion())))
                .append(": layer ")
                .append(Esc.md(t(dn.layer())))
                .append(", owner ")
                .append(Esc.md(t(dn.owner())))
                .append(" |\n\n")
                .append(r.match() ? "match" : "MISMATCH")
                .append("; fix ")
                .append(Sections.fixOutcome(r, "verified", "not tried (nothing diagnosed)", "NOT verified"))
                .append(".\n");
    }

    private static String t(String s) {
        return Sections.t(s);
    }

    private static String t(Layer l) {
        return Sections.t(l);
    }

    private static String t(Verdict v) {
        return Sections.t(v);
    }

    private static void row(StringBuilder b, String name, Diagnosis.StepTimes st) {
        b.append("| ")
                .append(Esc.md(name))
                .append(" | ")
                .append(st.n())
                .append(" | ")
                .append(Sections.f3(st.median()))
                .append(" | ")
                .append(Sections.f3(st.ciLow()))
                .append("..")
                .append(Sections.f3(st.ciHigh()))
                .append(" | ")
                .append(Sections.f3(st.p5()))
                .append("..")
                .append(Sections.f3(st.p95()))
                .append(" |\n");
    }

    private static void table(StringBuilder b, AcceptanceTable a, String title) {
        if (a == null) {
            return;
        }
        b.append("\n## ")
                .append(Esc.md(title))
                .append("\n\n")
                .append(Esc.md(t(a.verdict())))
                .append("\n\n")
                .append("| id | expected | observed | verdict | file:line |\n|---|---|---|---|---|\n");
        for (AcceptanceRow r : a.rows()) {
            b.append("| `")
                    .append(Esc.md(t(r.id())))
                    .append("` | ")
                    .append(Esc.md(t(r.expected())))
                    .append(" | ")
                    .append(Esc.md(t(r.observed())))
                    .append(" | ")
                    .append(Esc.md(t(r.verdict())))
                    .append(" | ")
                    .append(Esc.md(Sections.join(r.provenance(), "; ")))
                    .append(" |\n");
        }
        List<String> integrity = io.pathproof.accept.Acceptance.integrity(a);
        if (!integrity.isEmpty()) {
            b.append('\n');
            for (String l : integrity) {
                b.append("- ").append(Esc.md(l.strip())).append('\n');
            }
        }
    }

    /** One document with everything shown; each stage document as its file holds it ({@link Report.Filed}). */
    static String json(Report.Source s) {
        Report.Filed f = s.documents().filed();
        ObjectNode n = Json.mapper().createObjectNode();
        n.put("schema", "pathproof.report/1");
        n.put("verdict", Report.verdict(s));
        n.set("proof", f.proof());
        n.set("acceptance", f.acceptance());
        n.set("diagnosis", f.diagnosis());
        n.set("verifyFix", f.verifyFix());
        n.set("explain", f.explain());
        ObjectNode steps = n.putObject("stepTimes");
        s.steps().forEach((key, st) -> steps.set(key, Json.mapper().valueToTree(st)));
        ObjectNode pooled = n.putObject("stepTimesPooled");
        s.pooled().forEach((role, st) -> pooled.set(role, Json.mapper().valueToTree(st)));
        n.put("emulated", s.emulated());
        try {
            return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(n) + "\n";
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** One suite per acceptance table (FAIL → failure, UNPROVEN and N/A → skipped) and one for the proof's own claims. */
    static String junit(Report.Source s) {
        StringBuilder b = new StringBuilder(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"pathproof report\">\n");
        suite(b, "acceptance", s.acceptance());
        if (s.proof() != null) {
            for (Proof.Sample r : s.proof().recorded()) {
                suite(b, "recorded " + t(r.name()) + " (" + t(r.label()) + ")", r.acceptance());
            }
            Proof.Reveal r =
                    s.proof().reveal() == null ? Sections.NO_REVEAL : s.proof().reveal();
            Proof.Diagnosed dn = Sections.diagnosed(r);
            // An undecided claim is neither passed nor failed: skipped, with the reason, so CI shows it as neither.
            boolean undecidedDiagnosis = "inconclusive".equals(dn.conclusion());
            boolean undecidedFix = undecidedDiagnosis || "inconclusive".equals(r.fixVerdict());
            b.append("  <testsuite name=\"prove\" tests=\"2\">\n");
            claim(
                    b,
                    "diagnosis names the injected layer",
                    r.match(),
                    undecidedDiagnosis,
                    "injected " + t(Sections.injected(r).layer()) + ", diagnosed " + t(dn.layer()));
            claim(b, "diagnosed fix verified", r.fixed(), undecidedFix, "verify-fix against the baseline");
            b.append("  </testsuite>\n");
        }
        return b.append("</testsuites>\n").toString();
    }

    private static void claim(StringBuilder b, String name, boolean ok, boolean undecided, String msg) {
        b.append("    <testcase classname=\"prove\" name=\"")
                .append(Esc.xml(name))
                .append('"');
        if (ok) {
            b.append("/>\n");
        } else if (undecided) {
            b.append("><skipped message=\"")
                    .append(Esc.xml("inconclusive: the step time stayed undecided; " + msg))
                    .append("\"/></testcase>\n");
        } else {
            b.append("><failure message=\"").append(Esc.xml(msg)).append("\"/></testcase>\n");
        }
    }

    private static void suite(StringBuilder b, String name, AcceptanceTable a) {
        if (a == null) {
            return;
        }
        List<AcceptanceRow> rows = a.rows();
        int fail = 0;
        int skip = 0;
        for (AcceptanceRow r : rows) {
            Verdict v = r.verdict();
            fail += v == Verdict.FAIL ? 1 : 0;
            skip += v == Verdict.UNPROVEN || v == Verdict.NOT_APPLICABLE ? 1 : 0;
        }
        b.append(String.format(
                Locale.ROOT,
                "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n",
                Esc.xml(name),
                rows.size(),
                fail,
                skip));
        for (AcceptanceRow r : rows) {
            Verdict v = r.verdict();
            String msg = "expected " + t(r.expected()) + "; observed " + t(r.observed()) + " ["
                    + Sections.join(r.provenance(), "; ") + "]";
            b.append("    <testcase classname=\"")
                    .append(Esc.xml(name))
                    .append("\" name=\"")
                    .append(Esc.xml(t(r.id()) + ": " + t(r.check())))
                    .append('"');
            if (v == Verdict.FAIL) {
                b.append("><failure message=\"").append(Esc.xml(msg)).append("\"/></testcase>\n");
            } else if (v == Verdict.UNPROVEN || v == Verdict.NOT_APPLICABLE) {
                b.append("><skipped message=\"")
                        .append(Esc.xml(v.label() + ": " + msg))
                        .append("\"/></testcase>\n");
            } else {
                b.append("/>\n");
            }
        }
        b.append("  </testsuite>\n");
    }
}

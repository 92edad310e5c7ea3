package io.pathproof.report;

import io.pathproof.accept.AcceptanceRow;
import io.pathproof.accept.AcceptanceTable;
import io.pathproof.accept.Verdict;
import io.pathproof.callgraph.CallGraph;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.FixVerification;
import io.pathproof.diagnose.Layer;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.explain.Explainer;
import io.pathproof.proofdir.Proof;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The sections of report.html, in the order a reader needs them. Every value is escaped where it is appended. */
final class Sections {
    private Sections() {}

    /** A text of a document as the page shows it: nothing where the document has none. */
    static String t(String s) {
        return s == null ? "" : s;
    }

    static String t(Layer l) {
        return l == null ? "" : l.id();
    }

    static String t(Verdict v) {
        return v == null ? "" : v.label();
    }

    static String t(Number n) {
        return n == null ? "" : String.valueOf(n);
    }

    static String join(List<String> l, String sep) {
        return l == null ? "" : String.join(sep, l);
    }

    /** A number a document may lack, as a missing JSON number reads: zero. */
    static double zero(Double d) {
        return d == null ? 0 : d;
    }

    /** A number a document may lack, shown as "—". */
    static double nan(Double d) {
        return d == null ? Double.NaN : d;
    }

    private static void list(StringBuilder b, List<String> l) {
        b.append("<ul>");
        if (l != null) {
            l.forEach(x -> b.append("<li>").append(Esc.html(t(x))).append("</li>"));
        }
        b.append("</ul>");
    }

    static final Proof.Injected NO_FAULT = new Proof.Injected(null, null, null, null);
    static final Proof.Diagnosed NOT_DIAGNOSED = new Proof.Diagnosed(null, null, null, null, null);
    static final Proof.FixApplied NO_FIX = new Proof.FixApplied(null, null, null);
    static final Proof.Reveal NO_REVEAL = new Proof.Reveal(NO_FAULT, NOT_DIAGNOSED, false, NO_FIX, false, null, false);

    static Proof.Injected injected(Proof.Reveal r) {
        return r.injected() == null ? NO_FAULT : r.injected();
    }

    static Proof.Diagnosed diagnosed(Proof.Reveal r) {
        return r.diagnosed() == null ? NOT_DIAGNOSED : r.diagnosed();
    }

    /** The fix's outcome in words: fixed, inconclusive, not tried, else NOT fixed; {@code notTried} says the third. */
    static String fixOutcome(Proof.Reveal r, String fixed, String notTried, String notFixed) {
        return r.fixed()
                ? fixed
                : "inconclusive".equals(r.fixVerdict())
                        ? "inconclusive"
                        : "not tried".equals(r.fixVerdict()) ? notTried : notFixed;
    }

    static void reveal(StringBuilder b, Report.Source s) {
        if (s.proof() == null || s.proof().reveal() == null) {
            return;
        }
        Proof.Reveal r = s.proof().reveal();
        Proof.Injected inj = injected(r);
        Proof.Diagnosed dn = diagnosed(r);
        boolean match = r.match();
        b.append("<section id=\"reveal\"><h2>The reveal: injected fault beside the blind diagnosis</h2>");
        boolean undecided = "inconclusive".equals(dn.conclusion());
        b.append("<p class=\"match ")
                .append(match ? "good" : "bad")
                .append("\">")
                .append(
                        match
                                ? "The diagnosis names the injected layer."
                                : undecided
                                        ? "The diagnosis is inconclusive: the step time stayed undecided, so no layer is named."
                                        : "The diagnosis does NOT name the injected layer.")
                .append("</p><div class=\"reveal\">");
        b.append("<div class=\"card\" id=\"injected\"><h3>Injected (sealed before the variant ran)</h3><p><b>")
                .append(Esc.html(t(inj.kind())))
                .append("</b>: <code>")
                .append(Esc.html(join(inj.settings(), ", ")))
                .append("</code></p><p>layer <b>")
                .append(Esc.html(t(inj.layer())))
                .append("</b></p><p>")
                .append(Esc.html(t(inj.description())))
                .append("</p>");
        Proof.SealedFault f = s.proof().fault() == null
                ? new Proof.SealedFault(null, null, false, null, null)
                : s.proof().fault();
        b.append("<p class=\"small\">fault record sha256 <code>")
                .append(Esc.html(t(f.sealSha256())))
                .append("</code>")
                .append(r.faultSealVerified() ? " (verified at the reveal)" : " (NOT verified)")
                .append(
                        f.drawn()
                                ? "; drawn with seed " + Esc.html(t(f.seed())) + " from: "
                                        + Esc.html(join(f.catalogue(), ", "))
                                : "")
                .append("</p></div>");
        b.append(
                        "<div class=\"card\" id=\"diagnosed\"><h3>Diagnosed blind (two run directories, nothing else)</h3><p><b>")
                .append(Esc.html(t(dn.conclusion())))
                .append("</b>: layer <b>")
                .append(Esc.html(t(dn.layer())))
                .append("</b>, owner ")
                .append(Esc.html(t(dn.owner())))
                .append("</p><p>")
                .append(Esc.html(t(dn.change())))
                .append("</p><p>fix: ")
                .append(Esc.html(t(dn.fix())))
                .append("</p></div></div>");
        Proof.FixApplied fix = r.fix() == null ? NO_FIX : r.fix();
        b.append("<p>Fix applied: ")
                .append(
                        fix.removed().isEmpty()
                                ? "nothing undone"
                                : "undid <code>" + Esc.html(join(fix.removed(), ", ")) + "</code>")
                .append(" — ")
                .append(Esc.html(t(fix.reason())))
                .append(". Verified against the baseline: <b>")
                .append(fixOutcome(r, "fixed", "not tried (nothing was diagnosed)", "NOT fixed"))
                .append("</b>.</p>");
        drift(b, s.proof().drift());
        b.append("</section>\n");
    }

    private static void drift(StringBuilder b, Proof.Drift drift) {
        if (drift == null) {
            return;
        }
        Diagnosis.Regression again = drift.baselineVsBaselineAgain();
        b.append("<p class=\"small\">Against the first baseline: ")
                .append(Esc.html(t(drift.firstVerification())))
                .append(
                        ". Path and replicas were the baseline's, so the baseline was run again under the machine's present load: the two baselines differ by a median ratio of ")
                .append(f3(again == null ? Double.NaN : nan(again.ratio())))
                .append("; against the new baseline the fixed run is <b>")
                .append(
                        drift.verdict() != null
                                ? Esc.html(drift.verdict())
                                : drift.fixedAgainstBaselineAgain() ? "fixed" : "NOT fixed")
                .append("</b>.</p>");
    }

    static void acceptance(StringBuilder b, AcceptanceTable a, String title, String id) {
        if (a == null) {
            if (id.startsWith("recorded-")) {
                b.append("<h3>")
                        .append(Esc.html(title))
                        .append("</h3><p>not accepted: the recording could not be read</p>");
            }
            return;
        }
        b.append("<section id=\"")
                .append(Esc.html(id))
                .append("\"><h2>")
                .append(Esc.html(title))
                .append("</h2><p><b>")
                .append(Esc.html(t(a.verdict())))
                .append("</b>: ")
                .append(counts(a.counts()))
                .append(" (backend ")
                .append(Esc.html(t(a.backend())))
                .append(")</p>");
        b.append(
                "<table><tr><th>id</th><th>check</th><th>expected</th><th>observed</th><th>verdict</th><th>evidence</th><th>file:line</th></tr>");
        for (AcceptanceRow r : a.rows()) {
            String v = t(r.verdict());
            b.append("<tr><td><code>")
                    .append(Esc.html(t(r.id())))
                    .append("</code></td><td>")
                    .append(Esc.html(t(r.check())))
                    .append("</td>")
                    .append(cell(t(r.expected())))
                    .append(cell(t(r.observed())))
                    .append("<td class=\"v-")
                    .append(v.equals("N/A") ? "NA" : Esc.html(v))
                    .append("\">")
                    .append(Esc.html(v))
                    .append("</td><td>")
                    .append(Esc.html(EvidenceKind.join(", ", r.evidence())))
                    .append("</td><td class=\"prov\">")
                    .append(prov(r.provenance()))
                    .append("</td></tr>");
        }
        b.append("</table>");
        List<String> integrity = io.pathproof.accept.Acceptance.integrity(a);
        if (!integrity.isEmpty()) {
            b.append("<ul class=\"integrity\">");
            for (String l : integrity) {
                b.append("<li>").append(Esc.html(l.strip())).append("</li>");
            }
            b.append("</ul>");
        }
        b.append("</section>\n");
    }

    /** "3 PASS, 0 FAIL, 1 UNPROVEN, 2 N/A" (a table without counts counts nothing). */
    static String counts(AcceptanceTable.Counts c) {
        AcceptanceTable.Counts n = c == null ? new AcceptanceTable.Counts(0, 0, 0, 0) : c;
        return n.pass() + " PASS, " + n.fail() + " FAIL, " + n.unproven() + " UNPROVEN, " + n.notApplicable() + " N/A";
    }

    /** file:line citations: the first two shown, the rest folded (a row can cite every rank's file). */
    static String prov(List<String> citations) {
        List<String> l = citations == null ? List.of() : citations;
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < Math.min(2, l.size()); i++) {
            b.append(i == 0 ? "" : "<br>").append(Esc.html(l.get(i)));
        }
        if (l.size() > 2) {
            b.append("<details><summary>").append(l.size() - 2).append(" more</summary>");
            for (int i = 2; i < l.size(); i++) {
                b.append(Esc.html(l.get(i))).append("<br>");
            }
            b.append("</details>");
        }
        return b.toString();
    }

    /**
     * The committed GPU samples accepted again: recordings, not this proof, so they come last and collapsed — each a
     * {@code <details>} with its verdict in the summary line (five open tables once filled 24 000 px above the proof).
     */
    static void recorded(StringBuilder b, Report.Source s) {
        if (s.proof() == null || s.proof().recorded().isEmpty()) {
            return;
        }
        b.append(
                "<section id=\"recorded\"><h2>Recorded GPU samples (not live)</h2><p>These runs were recorded earlier on GPUs and are "
                        + "accepted here again against their own sealed predictions, so that the NCCL rows can be read on a machine without a GPU. "
                        + "Open one to see its table.</p>");
        for (Proof.Sample r : s.proof().recorded()) {
            AcceptanceTable a = r.acceptance();
            b.append("<details class=\"recorded\"><summary><b>")
                    .append(Esc.html(t(r.name())))
                    .append("</b> — ")
                    .append(Esc.html(t(r.label())))
                    .append(" (")
                    .append(Esc.html(t(r.device())))
                    .append("): ")
                    .append(Esc.html(t(r.verdict())));
            if (a != null && a.counts() != null) {
                b.append(" — ").append(counts(a.counts()));
            }
            b.append("</summary>");
            acceptance(
                    b, a, t(r.name()) + " — " + t(r.label()) + " (" + t(r.device()) + ")", "recorded-" + t(r.name()));
            b.append("</details>");
        }
        b.append("</section>\n");
    }

    static void timeline(StringBuilder b, Report.Source s) {
        Evidence e = s.runs().get("baseline");
        if (e == null) {
            e = s.runs().values().stream().findFirst().orElse(null);
        }
        b.append("<section id=\"timeline\"><h2>One iteration, rank by rank</h2>");
        if (s.emulated()) {
            b.append("<p class=\"emulated\">")
                    .append(Esc.html(s.emulationNote()))
                    .append("</p>");
        }
        b.append(Charts.timelineSvg(e)).append("</section>\n");
    }

    /** A run's label as the page says it: prove's re-runs in words. */
    static String runName(String label) {
        return switch (label) {
            case "baselineAgain" -> "baseline again";
            case "fixedAgain" -> "fixed again";
            default -> label;
        };
    }

    /** One row of the step table: a run (or a configuration's runs pooled) with its median as computed once. */
    private static void stepRow(StringBuilder b, String id, String name, io.pathproof.diagnose.Diagnosis.StepTimes st) {
        b.append("<tr id=\"steps-")
                .append(Esc.html(id))
                .append("\"><td>")
                .append(Esc.html(name))
                .append("</td>")
                .append(num(String.valueOf(st.n())))
                .append(num(f3(st.median())))
                .append(num(f3(st.ciLow()) + " .. " + f3(st.ciHigh())))
                .append(num(f3(st.p5()) + " .. " + f3(st.p95())))
                .append("</tr>");
    }

    static void steps(StringBuilder b, Report.Source s) {
        b.append("<section id=\"steps\"><h2>Step times: ")
                .append(Esc.html(String.join(", ", s.labels().values())))
                .append("</h2>");
        b.append(
                "<p>A run's step time is, per measured iteration, the time of its slowest rank (a synchronous step ends when its slowest "
                        + "rank does); its median is the one median this page gives for the run, in this table, the charts and the text.</p>");
        if (s.runs().containsKey("baselineAgain")) {
            b.append(
                            "<p>The machine's load drifts over seconds, so the fixed run was judged like with like: the baseline was run again right after it")
                    .append(
                            s.runs().containsKey("fixedAgain")
                                    ? ", and the fixed configuration once more after that (A/B/A/B); the last look decided."
                                    : " (A/B/A).")
                    .append("</p>");
        }
        if (s.emulated()) {
            b.append("<p class=\"emulated\">")
                    .append(Esc.html(s.emulationNote()))
                    .append(" — these timings are not a measurement of the emulated machine.</p>");
        }
        b.append(
                "<table class=\"steps\"><tr><th>run</th><th>measured steps</th><th>median (ms)</th><th>95% CI of the median (ms)</th><th>p5..p95 (ms)</th></tr>");
        for (String key : s.runs().keySet()) {
            stepRow(b, key, s.labels().get(key), s.steps().get(key));
        }
        s.pooled()
                .forEach((role, st) ->
                        stepRow(b, "pooled-" + role, runName(role) + ", " + st.runs() + " runs pooled", st));
        b.append("</table>");
        sequence(b, s);
        comparison(b, s);
        FixVerification vf = s.verifyFix();
        if (vf != null && vf.bandLowMs() != null && !Double.isNaN(median(s, "fixed"))) {
            b.append("<p>Fixed median ")
                    .append(f3(median(s, "fixed")))
                    .append(" ms against the baseline band (p5..p95) ")
                    .append(f3(vf.bandLowMs()))
                    .append(" .. ")
                    .append(f3(zero(vf.bandHighMs())))
                    .append(" ms: verify-fix <b>")
                    .append(Esc.html(t(vf.verdict())))
                    .append("</b>.</p>");
        }
        b.append(
                "<div class=\"chart\" id=\"chart-steps\"></div><div class=\"chart\" id=\"chart-quantiles\"></div></section>\n");
    }

    /** The variant against the baseline as the diagnosis judged it: ratio, intervals, verdict and rule. */
    private static void comparison(StringBuilder b, Report.Source s) {
        Diagnosis.Regression reg = s.diagnosis() == null ? null : s.diagnosis().regression();
        if (reg == null || reg.ratio() == null) {
            return;
        }
        b.append("<p>Variant / baseline: median ")
                .append(f3(median(s, "baseline")))
                .append(" → ")
                .append(f3(median(s, "variant")))
                .append(" ms, ratio <b>")
                .append(f3(reg.ratio()))
                .append("</b>, 95% bootstrap CI ")
                .append(f3(zero(reg.ciLow())))
                .append(" .. ")
                .append(f3(zero(reg.ciHigh())));
        if (reg.ruleLow() != null) {
            b.append("; the rule's ")
                    .append(Esc.html(pct(zero(reg.level()))))
                    .append(" interval ")
                    .append(f3(reg.ruleLow()))
                    .append(" .. ")
                    .append(f3(zero(reg.ruleHigh())));
        }
        b.append(": <b>").append(Esc.html(t(reg.verdict()))).append("</b>");
        if (reg.why() != null) {
            b.append(" — ").append(Esc.html(reg.why()));
        }
        b.append(" <span class=\"small\">(").append(Esc.html(t(reg.rule()))).append(")</span></p>");
    }

    /** A configuration's median as the table gives it: its runs pooled where it has several, else its one run's. */
    static double median(Report.Source s, String role) {
        io.pathproof.diagnose.Diagnosis.StepTimes st = s.pooled().get(role);
        if (st == null) {
            String key = s.roles().entrySet().stream()
                    .filter(e -> e.getValue().equals(role))
                    .map(Map.Entry::getKey)
                    .findFirst()
                    .orElse(null);
            st = key == null ? null : s.steps().get(key);
        }
        return st == null || st.median() == null ? Double.NaN : st.median();
    }

    /** prove's sequential looks: the rule, and what each look pooled and found, so a reader sees why the runs stopped. */
    static void sequence(StringBuilder b, Report.Source s) {
        Proof.Sequence seq = s.proof() == null ? null : s.proof().sequence();
        if (seq == null || seq.looks().isEmpty()) {
            return;
        }
        b.append(
                        "<div id=\"sequence\"><p>Each step-time comparison prove made is one look of a sequence of K planned looks, judged at α/K "
                                + "(Bonferroni alpha spending, α = 1 %), so the looks together keep a false regression, improvement or no change below 0.5 % each; "
                                + "a look left undecided is settled by more runs of both configurations, pooled like with like (up to ")
                .append(seq.maxRuns())
                .append(" of each), and \"no change\" needs the interval inside ±")
                .append(Esc.html(pct(nan(seq.margin()))))
                .append(
                        ".</p><table><tr><th>sequence</th><th>look</th><th>runs pooled</th>"
                                + "<th>ratio</th><th>rule's interval</th><th>verdict</th><th>steps per side to decide</th></tr>");
        for (Proof.Look l : seq.looks()) {
            b.append("<tr><td>")
                    .append(Esc.html(t(l.sequence())))
                    .append("</td>")
                    .append(num(l.look() + " of " + l.looks()))
                    .append(num(l.baselineRuns() + " + " + l.otherRuns()))
                    .append(num(f3(nan(l.ratio()))))
                    .append(num(
                            f3(nan(l.ruleLow())) + " .. " + f3(nan(l.ruleHigh())) + " (" + pct(nan(l.level())) + ")"))
                    .append("<td>")
                    .append(Esc.html(t(l.verdict())))
                    .append("</td>")
                    .append(num(l.stepsNeeded() != null ? t(l.stepsNeeded()) : "—"))
                    .append("</tr>");
        }
        b.append("</table></div>");
    }

    static String pct(double x) {
        return Double.isFinite(x)
                ? String.format(Locale.ROOT, "%.2f", x * 100)
                                .replaceAll("0+$", "")
                                .replaceAll("\\.$", "") + " %"
                : "—";
    }

    /** A table cell of a number (or a range of numbers): never wrapped inside, digit by digit. */
    static String num(String text) {
        return "<td class=\"num\">" + Esc.html(text) + "</td>";
    }

    /** A cell whose text may be a number: numbers get the unwrapping class, other text wraps as the table needs. */
    static String cell(String text) {
        return NUMBER.matcher(text).matches() ? num(text) : "<td>" + Esc.html(text) + "</td>";
    }

    private static final java.util.regex.Pattern NUMBER =
            java.util.regex.Pattern.compile("[-+]?\\d[\\d.,_]*(e[-+]?\\d+)?\\s?(ms|us|µs|%|s|B|MiB|GiB|x)?");

    static void diagnosis(StringBuilder b, Report.Source s) {
        Diagnosis d = s.diagnosis();
        if (d == null) {
            return;
        }
        Diagnosis.Correctness c = d.correctness() == null ? new Diagnosis.Correctness(null, null) : d.correctness();
        b.append("<section id=\"diagnosis\"><h2>Diagnosis walk</h2><p>Conclusion: <b>")
                .append(Esc.html(t(d.conclusion())))
                .append("</b>. Correctness: <b>")
                .append(Esc.html(t(c.verdict())))
                .append("</b> — ")
                .append(Esc.html(t(c.evidence())))
                .append("</p>");
        b.append(
                "<h3>Path fingerprint, layer by layer</h3><table><tr><th>layer</th><th>baseline</th><th>variant</th><th>changed</th><th>evidence</th></tr>");
        for (Diagnosis.LayerDiff l : d.diffs()) {
            boolean ch = l.changed();
            b.append("<tr><td>")
                    .append(Esc.html(t(l.layer())))
                    .append("</td><td>")
                    .append(Esc.html(t(l.baseline())))
                    .append("</td><td>")
                    .append(Esc.html(t(l.variant())))
                    .append("</td><td class=\"")
                    .append(ch ? "v-FAIL" : "v-NA")
                    .append("\">")
                    .append(ch ? "changed" : "same")
                    .append("</td><td class=\"prov\">")
                    .append(Esc.html(join(l.provenance(), "; ")))
                    .append("</td></tr>");
        }
        b.append("</table>");
        if (!d.configuration().isEmpty()) {
            b.append(
                    "<h3>Configuration diff</h3><table><tr><th>key</th><th>baseline</th><th>variant</th><th>acts on</th></tr>");
            for (Diagnosis.ConfigChange cc : d.configuration()) {
                b.append("<tr><td><code>")
                        .append(Esc.html(t(cc.key())))
                        .append("</code></td><td>")
                        .append(Esc.html(t(cc.baseline())))
                        .append("</td><td>")
                        .append(Esc.html(t(cc.variant())))
                        .append("</td><td>")
                        .append(Esc.html(t(cc.layer())))
                        .append("</td></tr>");
            }
            b.append("</table>");
        }
        b.append("<h3>Layers eliminated</h3><ol>");
        for (Diagnosis.Elimination el : d.eliminated()) {
            b.append("<li><b>")
                    .append(Esc.html(t(el.layer())))
                    .append("</b>: ")
                    .append(Esc.html(t(el.evidence())))
                    .append("</li>");
        }
        b.append("</ol>");
        Diagnosis.RootCause rc = d.rootCause();
        if (rc != null) {
            b.append("<h3>Root cause</h3><p>layer <b>")
                    .append(Esc.html(t(rc.layer())))
                    .append("</b>, owner <b>")
                    .append(Esc.html(t(rc.owner())))
                    .append("</b>: ")
                    .append(Esc.html(t(rc.change())))
                    .append("</p>");
            list(b, rc.evidence());
            b.append("<p><b>Fix</b>: ").append(Esc.html(t(rc.fix()))).append("</p><p><b>Wrong mitigations</b>:</p>");
            list(b, rc.wrongMitigations());
            b.append("<p><b>Proof of the fix</b>: ")
                    .append(Esc.html(t(rc.rerun())))
                    .append("</p>");
        }
        b.append("</section>\n");
    }

    static void callgraph(StringBuilder b, Report.Source s) {
        List<CallGraph.Coverage> cg = s.explain() == null ? null : s.explain().callgraph();
        if (cg == null || cg.isEmpty()) {
            return;
        }
        int covered = 0;
        for (CallGraph.Coverage c : cg) {
            covered += c.covered() ? 1 : 0;
        }
        b.append("<section id=\"callgraph\"><h2>The 35-stage call graph, stage by stage</h2><p>")
                .append(covered)
                .append(" of ")
                .append(cg.size())
                .append(
                        " stages shown by evidence that the stage happened in the baseline run; the others are modelled only.</p>");
        b.append(
                "<table><tr><th>#</th><th>kind</th><th>owner</th><th>stage</th><th>source</th><th>coverage</th><th>cited evidence</th></tr>");
        for (CallGraph.Coverage c : cg) {
            CallGraph.Stage st =
                    c.stage() == null ? new CallGraph.Stage(0, null, null, null, null, null, null) : c.stage();
            boolean cov = c.covered();
            String why = c.status() != null ? c.status() : cov ? "shown" : "modelled only";
            b.append("<tr>")
                    .append(num(String.valueOf(st.id())))
                    .append("<td>")
                    .append(Esc.html(t(st.kind())))
                    .append("</td><td>")
                    .append(Esc.html(t(st.owner())))
                    .append("</td><td>")
                    .append(Esc.html(t(st.name())))
                    .append("</td><td class=\"prov\">")
                    .append(Esc.html(t(st.source())))
                    .append("</td><td class=\"")
                    .append(cov ? "v-PASS" : "v-NA")
                    .append("\">")
                    .append(Esc.html(why))
                    .append("</td><td class=\"prov\">")
                    .append(Esc.html(
                            c.citations() != null ? join(c.citations(), "; ") : EvidenceKind.join(", ", c.present())))
                    .append("</td></tr>");
        }
        b.append("</table></section>\n");
    }

    static void answers(StringBuilder b, Report.Source s) {
        List<Explainer.Answer> a = s.explain() == null ? null : s.explain().answers();
        if (a == null || a.isEmpty()) {
            return;
        }
        b.append("<section id=\"answers\"><h2>The method's 16 questions, answered for this run</h2><ol>");
        for (Explainer.Answer q : a) {
            b.append("<li><b>")
                    .append(Esc.html(t(q.question())))
                    .append("</b><br>")
                    .append(Esc.html(t(q.answer())))
                    .append(" <span class=\"small\">(basis: ")
                    .append(Esc.html(t(q.basis())))
                    .append(")</span></li>");
        }
        b.append("</ol></section>\n");
    }

    /** NCCL's WARN lines, verbatim (as text), with their file:line: a reader must see what the library complained about. */
    static void warnings(StringBuilder b, Report.Source s) {
        List<String> rows = new ArrayList<>();
        for (Map.Entry<String, Evidence> en : s.runs().entrySet()) {
            Evidence e = en.getValue();
            if (e.nccl() == null || e.nccl().warnings() == null) {
                continue;
            }
            for (Evidence.Warning w : e.nccl().warnings()) {
                rows.add("<tr><td>" + Esc.html(en.getKey()) + "</td>"
                        + num(w.rank() == null ? "" : String.valueOf(w.rank())) + "<td><code>" + Esc.html(w.message())
                        + "</code></td><td class=\"prov\">"
                        + Esc.html(w.source() == null ? "" : w.source().toString()) + "</td></tr>");
            }
        }
        if (rows.isEmpty()) {
            return;
        }
        b.append(
                "<section id=\"warnings\"><h2>NCCL warnings in the runs</h2><table><tr><th>run</th><th>rank</th><th>message</th><th>file:line</th></tr>");
        rows.forEach(b::append);
        b.append("</table></section>\n");
    }

    static void phases(StringBuilder b, Report.Source s) {
        if (s.proof() == null) {
            return;
        }
        b.append(
                "<section id=\"phases\"><h2>How the proof ran</h2><table><tr><th>phase</th><th>elapsed (s)</th><th>what it found</th></tr>");
        for (Proof.Phase p : s.proof().phases()) {
            b.append("<tr><td>")
                    .append(Esc.html(t(p.name())))
                    .append("</td>")
                    .append(num(String.format(Locale.ROOT, "%.1f", p.elapsedMs() / 1000.0)))
                    .append("<td>")
                    .append(Esc.html(t(p.detail())))
                    .append("</td></tr>");
        }
        b.append("</table></section>\n");
    }

    static String f3(double d) {
        return Double.isFinite(d) ? String.format(Locale.ROOT, "%.3f", d) : "—";
    }
}

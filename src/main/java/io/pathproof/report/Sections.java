package io.pathproof.report;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The sections of report.html, in the order a reader needs them. Every value is escaped where it is appended. */
final class Sections {
  private Sections() {}

  static String t(JsonNode n) {
    return n == null || n.isNull() || n.isMissingNode() ? "" : n.isValueNode() ? n.asText() : n.toString();
  }

  private static String join(JsonNode arr, String sep) {
    List<String> l = new ArrayList<>();
    if (arr != null) {
      arr.forEach(x -> l.add(t(x)));
    }
    return String.join(sep, l);
  }

  private static void list(StringBuilder b, JsonNode arr) {
    b.append("<ul>");
    if (arr != null) {
      arr.forEach(x -> b.append("<li>").append(Esc.html(t(x))).append("</li>"));
    }
    b.append("</ul>");
  }

  static void reveal(StringBuilder b, Report.Source s) {
    if (s.proof() == null || !s.proof().has("reveal")) {
      return;
    }
    JsonNode r = s.proof().get("reveal");
    JsonNode inj = r.path("injected");
    JsonNode dn = r.path("diagnosed");
    boolean match = r.path("match").asBoolean(false);
    b.append("<section id=\"reveal\"><h2>The reveal: injected fault beside the blind diagnosis</h2>");
    boolean undecided = "inconclusive".equals(t(dn.path("conclusion")));
    b.append("<p class=\"match ").append(match ? "good" : "bad").append("\">").append(match ? "The diagnosis names the injected layer."
        : undecided ? "The diagnosis is inconclusive: the step time stayed undecided, so no layer is named."
        : "The diagnosis does NOT name the injected layer.").append("</p><div class=\"reveal\">");
    b.append("<div class=\"card\" id=\"injected\"><h3>Injected (sealed before the variant ran)</h3><p><b>")
        .append(Esc.html(t(inj.path("kind")))).append("</b>: <code>").append(Esc.html(join(inj.path("settings"), ", "))).append("</code></p><p>layer <b>")
        .append(Esc.html(t(inj.path("layer")))).append("</b></p><p>").append(Esc.html(t(inj.path("description")))).append("</p>");
    JsonNode f = s.proof().path("fault");
    b.append("<p class=\"small\">fault record sha256 <code>").append(Esc.html(t(f.path("sealSha256")))).append("</code>")
        .append(r.path("faultSealVerified").asBoolean(false) ? " (verified at the reveal)" : " (NOT verified)")
        .append(f.path("drawn").asBoolean(false) ? "; drawn with seed " + Esc.html(t(f.path("seed"))) + " from: " + Esc.html(join(f.path("catalogue"), ", ")) : "")
        .append("</p></div>");
    b.append("<div class=\"card\" id=\"diagnosed\"><h3>Diagnosed blind (two run directories, nothing else)</h3><p><b>")
        .append(Esc.html(t(dn.path("conclusion")))).append("</b>: layer <b>").append(Esc.html(t(dn.path("layer")))).append("</b>, owner ")
        .append(Esc.html(t(dn.path("owner")))).append("</p><p>").append(Esc.html(t(dn.path("change")))).append("</p><p>fix: ")
        .append(Esc.html(t(dn.path("fix")))).append("</p></div></div>");
    JsonNode fix = r.path("fix");
    b.append("<p>Fix applied: ").append(fix.path("removed").isEmpty() ? "nothing undone" : "undid <code>" + Esc.html(join(fix.path("removed"), ", ")) + "</code>")
        .append(" — ").append(Esc.html(t(fix.path("reason")))).append(". Verified against the baseline: <b>")
        .append(r.path("fixed").asBoolean(false) ? "fixed" : "inconclusive".equals(t(r.path("fixVerdict"))) ? "inconclusive"
            : "not tried".equals(t(r.path("fixVerdict"))) ? "not tried (nothing was diagnosed)" : "NOT fixed").append("</b>.</p>");
    JsonNode drift = s.proof().path("drift");
    if (!drift.isMissingNode()) {
      b.append("<p class=\"small\">Against the first baseline: ").append(Esc.html(t(drift.path("firstVerification"))))
          .append(". Path and replicas were the baseline's, so the baseline was run again under the machine's present load: the two baselines differ by a median ratio of ")
          .append(f3(drift.path("baselineVsBaselineAgain").path("ratio").asDouble(Double.NaN)))
          .append("; against the new baseline the fixed run is <b>").append(drift.hasNonNull("verdict") ? Esc.html(t(drift.path("verdict")))
              : drift.path("fixedAgainstBaselineAgain").asBoolean() ? "fixed" : "NOT fixed")
          .append("</b>.</p>");
    }
    b.append("</section>\n");
  }

  static void acceptance(StringBuilder b, JsonNode a, String title, String id) {
    if (a == null || a.isNull() || a.isMissingNode()) {
      if (id.startsWith("recorded-")) {
        b.append("<h3>").append(Esc.html(title)).append("</h3><p>not accepted: the recording could not be read</p>");
      }
      return;
    }
    JsonNode c = a.path("counts");
    b.append("<section id=\"").append(Esc.html(id)).append("\"><h2>").append(Esc.html(title)).append("</h2><p><b>")
        .append(Esc.html(t(a.path("verdict")))).append("</b>: ").append(c.path("pass").asInt()).append(" PASS, ").append(c.path("fail").asInt())
        .append(" FAIL, ").append(c.path("unproven").asInt()).append(" UNPROVEN, ").append(c.path("notApplicable").asInt())
        .append(" N/A (backend ").append(Esc.html(t(a.path("backend")))).append(")</p>");
    b.append("<table><tr><th>id</th><th>check</th><th>expected</th><th>observed</th><th>verdict</th><th>evidence</th><th>file:line</th></tr>");
    for (JsonNode r : a.path("rows")) {
      String v = t(r.path("verdict"));
      b.append("<tr><td><code>").append(Esc.html(t(r.path("id")))).append("</code></td><td>").append(Esc.html(t(r.path("check"))))
          .append("</td>").append(cell(t(r.path("expected")))).append(cell(t(r.path("observed"))))
          .append("<td class=\"v-").append(v.equals("N/A") ? "NA" : Esc.html(v)).append("\">").append(Esc.html(v)).append("</td><td>")
          .append(Esc.html(join(r.path("evidence"), ", "))).append("</td><td class=\"prov\">").append(prov(r.path("provenance"))).append("</td></tr>");
    }
    b.append("</table></section>\n");
  }

  /** file:line citations: the first two shown, the rest folded (a row can cite every rank's file). */
  static String prov(JsonNode arr) {
    List<String> l = new ArrayList<>();
    if (arr != null) {
      arr.forEach(x -> l.add(t(x)));
    }
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
    if (s.proof() == null || s.proof().path("recorded").isEmpty()) {
      return;
    }
    b.append("<section id=\"recorded\"><h2>Recorded GPU samples (not live)</h2><p>These runs were recorded earlier on GPUs and are "
        + "accepted here again against their own sealed predictions, so that the NCCL rows can be read on a machine without a GPU. "
        + "Open one to see its table.</p>");
    for (JsonNode r : s.proof().path("recorded")) {
      JsonNode a = r.path("acceptance");
      JsonNode c = a.path("counts");
      b.append("<details class=\"recorded\"><summary><b>").append(Esc.html(r.path("name").asText())).append("</b> — ")
          .append(Esc.html(r.path("label").asText())).append(" (").append(Esc.html(r.path("device").asText())).append("): ")
          .append(Esc.html(r.path("verdict").asText()));
      if (!c.isMissingNode()) {
        b.append(" — ").append(c.path("pass").asInt()).append(" PASS, ").append(c.path("fail").asInt()).append(" FAIL, ")
            .append(c.path("unproven").asInt()).append(" UNPROVEN, ").append(c.path("notApplicable").asInt()).append(" N/A");
      }
      b.append("</summary>");
      acceptance(b, a, r.path("name").asText() + " — " + r.path("label").asText() + " (" + r.path("device").asText() + ")",
          "recorded-" + r.path("name").asText());
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
      b.append("<p class=\"emulated\">").append(Esc.html(s.emulationNote())).append("</p>");
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
    b.append("<tr id=\"steps-").append(Esc.html(id)).append("\"><td>").append(Esc.html(name)).append("</td>").append(num(String.valueOf(st.n())))
        .append(num(f3(st.median()))).append(num(f3(st.ciLow()) + " .. " + f3(st.ciHigh()))).append(num(f3(st.p5()) + " .. " + f3(st.p95())))
        .append("</tr>");
  }

  static void steps(StringBuilder b, Report.Source s) {
    b.append("<section id=\"steps\"><h2>Step times: ").append(Esc.html(String.join(", ", s.labels().values()))).append("</h2>");
    b.append("<p>A run's step time is, per measured iteration, the time of its slowest rank (a synchronous step ends when its slowest "
        + "rank does); its median is the one median this page gives for the run, in this table, the charts and the text.</p>");
    if (s.runs().containsKey("baselineAgain")) {
      b.append("<p>The machine's load drifts over seconds, so the fixed run was judged like with like: the baseline was run again right after it")
          .append(s.runs().containsKey("fixedAgain") ? ", and the fixed configuration once more after that (A/B/A/B); the last look decided." : " (A/B/A).")
          .append("</p>");
    }
    if (s.emulated()) {
      b.append("<p class=\"emulated\">").append(Esc.html(s.emulationNote())).append(" — these timings are not a measurement of the emulated machine.</p>");
    }
    b.append("<table class=\"steps\"><tr><th>run</th><th>measured steps</th><th>median (ms)</th><th>95% CI of the median (ms)</th><th>p5..p95 (ms)</th></tr>");
    for (String key : s.runs().keySet()) {
      stepRow(b, key, s.labels().get(key), s.steps().get(key));
    }
    s.pooled().forEach((role, st) -> stepRow(b, "pooled-" + role, runName(role) + ", " + st.runs() + " runs pooled", st));
    b.append("</table>");
    sequence(b, s);
    JsonNode reg = s.diagnosis() == null ? null : s.diagnosis().path("regression");
    if (reg != null && reg.hasNonNull("ratio")) {
      b.append("<p>Variant / baseline: median ").append(f3(median(s, "baseline"))).append(" → ").append(f3(median(s, "variant")))
          .append(" ms, ratio <b>").append(f3(reg.path("ratio").asDouble())).append("</b>, 95% bootstrap CI ")
          .append(f3(reg.path("ciLow").asDouble())).append(" .. ").append(f3(reg.path("ciHigh").asDouble()));
      if (reg.hasNonNull("ruleLow")) {
        b.append("; the rule's ").append(Esc.html(pct(reg.path("level").asDouble()))).append(" interval ").append(f3(reg.path("ruleLow").asDouble()))
            .append(" .. ").append(f3(reg.path("ruleHigh").asDouble()));
      }
      b.append(": <b>").append(Esc.html(t(reg.path("verdict")))).append("</b>");
      if (reg.hasNonNull("why")) {
        b.append(" — ").append(Esc.html(t(reg.path("why"))));
      }
      b.append(" <span class=\"small\">(").append(Esc.html(t(reg.path("rule")))).append(")</span></p>");
    }
    JsonNode vf = s.verifyFix();
    if (vf != null && vf.hasNonNull("bandLowMs") && !Double.isNaN(median(s, "fixed"))) {
      b.append("<p>Fixed median ").append(f3(median(s, "fixed"))).append(" ms against the baseline band (p5..p95) ")
          .append(f3(vf.path("bandLowMs").asDouble())).append(" .. ").append(f3(vf.path("bandHighMs").asDouble())).append(" ms: verify-fix <b>")
          .append(Esc.html(t(vf.path("verdict")))).append("</b>.</p>");
    }
    b.append("<div class=\"chart\" id=\"chart-steps\"></div><div class=\"chart\" id=\"chart-quantiles\"></div></section>\n");
  }

  /** A configuration's median as the table gives it: its runs pooled where it has several, else its one run's. */
  static double median(Report.Source s, String role) {
    io.pathproof.diagnose.Diagnosis.StepTimes st = s.pooled().get(role);
    if (st == null) {
      String key = s.roles().entrySet().stream().filter(e -> e.getValue().equals(role)).map(Map.Entry::getKey).findFirst().orElse(null);
      st = key == null ? null : s.steps().get(key);
    }
    return st == null || st.median() == null ? Double.NaN : st.median();
  }

  /** prove's sequential looks: the rule, and what each look pooled and found, so a reader sees why the runs stopped. */
  static void sequence(StringBuilder b, Report.Source s) {
    JsonNode seq = s.proof() == null ? null : s.proof().get("sequence");
    if (seq == null || !seq.path("looks").isArray() || seq.path("looks").isEmpty()) {
      return;
    }
    b.append("<div id=\"sequence\"><p>Each step-time comparison prove made is one look of a sequence of K planned looks, judged at α/K "
        + "(Bonferroni alpha spending, α = 1 %), so the looks together keep a false regression, improvement or no change below 0.5 % each; "
        + "a look left undecided is settled by more runs of both configurations, pooled like with like (up to ")
        .append(seq.path("maxRuns").asInt()).append(" of each), and \"no change\" needs the interval inside ±")
        .append(Esc.html(pct(seq.path("margin").asDouble(Double.NaN)))).append(".</p><table><tr><th>sequence</th><th>look</th><th>runs pooled</th>"
            + "<th>ratio</th><th>rule's interval</th><th>verdict</th><th>steps per side to decide</th></tr>");
    for (JsonNode l : seq.path("looks")) {
      b.append("<tr><td>").append(Esc.html(t(l.path("sequence")))).append("</td>").append(num(l.path("look").asInt() + " of " + l.path("looks").asInt()))
          .append(num(l.path("baselineRuns").asInt() + " + " + l.path("otherRuns").asInt())).append(num(f3(l.path("ratio").asDouble(Double.NaN))))
          .append(num(f3(l.path("ruleLow").asDouble(Double.NaN)) + " .. " + f3(l.path("ruleHigh").asDouble(Double.NaN)) + " ("
              + pct(l.path("level").asDouble(Double.NaN)) + ")"))
          .append("<td>").append(Esc.html(t(l.path("verdict")))).append("</td>").append(num(l.hasNonNull("stepsNeeded") ? t(l.path("stepsNeeded")) : "—"))
          .append("</tr>");
    }
    b.append("</table></div>");
  }

  static String pct(double x) {
    return Double.isFinite(x) ? String.format(Locale.ROOT, "%.2f", x * 100).replaceAll("0+$", "").replaceAll("\\.$", "") + " %" : "—";
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
    JsonNode d = s.diagnosis();
    if (d == null) {
      return;
    }
    b.append("<section id=\"diagnosis\"><h2>Diagnosis walk</h2><p>Conclusion: <b>").append(Esc.html(t(d.path("conclusion"))))
        .append("</b>. Correctness: <b>").append(Esc.html(t(d.path("correctness").path("verdict")))).append("</b> — ")
        .append(Esc.html(t(d.path("correctness").path("evidence")))).append("</p>");
    b.append("<h3>Path fingerprint, layer by layer</h3><table><tr><th>layer</th><th>baseline</th><th>variant</th><th>changed</th><th>evidence</th></tr>");
    for (JsonNode l : d.path("diffs")) {
      boolean ch = l.path("changed").asBoolean();
      b.append("<tr><td>").append(Esc.html(t(l.path("layer")))).append("</td><td>").append(Esc.html(t(l.path("baseline")))).append("</td><td>")
          .append(Esc.html(t(l.path("variant")))).append("</td><td class=\"").append(ch ? "v-FAIL" : "v-NA").append("\">").append(ch ? "changed" : "same")
          .append("</td><td class=\"prov\">").append(Esc.html(join(l.path("provenance"), "; "))).append("</td></tr>");
    }
    b.append("</table>");
    if (!d.path("configuration").isEmpty()) {
      b.append("<h3>Configuration diff</h3><table><tr><th>key</th><th>baseline</th><th>variant</th><th>acts on</th></tr>");
      for (JsonNode c : d.path("configuration")) {
        b.append("<tr><td><code>").append(Esc.html(t(c.path("key")))).append("</code></td><td>").append(Esc.html(t(c.path("baseline"))))
            .append("</td><td>").append(Esc.html(t(c.path("variant")))).append("</td><td>").append(Esc.html(t(c.path("layer")))).append("</td></tr>");
      }
      b.append("</table>");
    }
    b.append("<h3>Layers eliminated</h3><ol>");
    for (JsonNode el : d.path("eliminated")) {
      b.append("<li><b>").append(Esc.html(t(el.path("layer")))).append("</b>: ").append(Esc.html(t(el.path("evidence")))).append("</li>");
    }
    b.append("</ol>");
    JsonNode rc = d.path("rootCause");
    if (!rc.isMissingNode() && !rc.isNull()) {
      b.append("<h3>Root cause</h3><p>layer <b>").append(Esc.html(t(rc.path("layer")))).append("</b>, owner <b>").append(Esc.html(t(rc.path("owner"))))
          .append("</b>: ").append(Esc.html(t(rc.path("change")))).append("</p>");
      list(b, rc.path("evidence"));
      b.append("<p><b>Fix</b>: ").append(Esc.html(t(rc.path("fix")))).append("</p><p><b>Wrong mitigations</b>:</p>");
      list(b, rc.path("wrongMitigations"));
      b.append("<p><b>Proof of the fix</b>: ").append(Esc.html(t(rc.path("rerun")))).append("</p>");
    }
    b.append("</section>\n");
  }

  static void callgraph(StringBuilder b, Report.Source s) {
    JsonNode cg = s.explain() == null ? null : s.explain().path("callgraph");
    if (cg == null || cg.isEmpty()) {
      return;
    }
    int covered = 0;
    for (JsonNode c : cg) {
      covered += c.path("covered").asBoolean() ? 1 : 0;
    }
    b.append("<section id=\"callgraph\"><h2>The 35-stage call graph, stage by stage</h2><p>").append(covered).append(" of ").append(cg.size())
        .append(" stages shown by evidence that the stage happened in the baseline run; the others are modelled only.</p>");
    b.append("<table><tr><th>#</th><th>kind</th><th>owner</th><th>stage</th><th>source</th><th>coverage</th><th>cited evidence</th></tr>");
    for (JsonNode c : cg) {
      JsonNode st = c.path("stage");
      boolean cov = c.path("covered").asBoolean();
      String why = c.hasNonNull("status") ? t(c.path("status")) : cov ? "shown" : "modelled only";
      b.append("<tr>").append(num(String.valueOf(st.path("id").asInt()))).append("<td>").append(Esc.html(t(st.path("kind")))).append("</td><td>")
          .append(Esc.html(t(st.path("owner")))).append("</td><td>").append(Esc.html(t(st.path("name")))).append("</td><td class=\"prov\">")
          .append(Esc.html(t(st.path("source")))).append("</td><td class=\"").append(cov ? "v-PASS" : "v-NA").append("\">").append(Esc.html(why))
          .append("</td><td class=\"prov\">").append(Esc.html(c.has("citations") ? join(c.path("citations"), "; ") : join(c.path("present"), ", ")))
          .append("</td></tr>");
    }
    b.append("</table></section>\n");
  }

  static void answers(StringBuilder b, Report.Source s) {
    JsonNode a = s.explain() == null ? null : s.explain().path("answers");
    if (a == null || a.isEmpty()) {
      return;
    }
    b.append("<section id=\"answers\"><h2>The method's 16 questions, answered for this run</h2><ol>");
    for (JsonNode q : a) {
      b.append("<li><b>").append(Esc.html(t(q.path("question")))).append("</b><br>").append(Esc.html(t(q.path("answer"))))
          .append(" <span class=\"small\">(basis: ").append(Esc.html(t(q.path("basis")))).append(")</span></li>");
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
        rows.add("<tr><td>" + Esc.html(en.getKey()) + "</td>" + num(w.rank() == null ? "" : String.valueOf(w.rank())) + "<td><code>" + Esc.html(w.message())
            + "</code></td><td class=\"prov\">" + Esc.html(w.source() == null ? "" : w.source().toString()) + "</td></tr>");
      }
    }
    if (rows.isEmpty()) {
      return;
    }
    b.append("<section id=\"warnings\"><h2>NCCL warnings in the runs</h2><table><tr><th>run</th><th>rank</th><th>message</th><th>file:line</th></tr>");
    rows.forEach(b::append);
    b.append("</table></section>\n");
  }

  static void phases(StringBuilder b, Report.Source s) {
    if (s.proof() == null) {
      return;
    }
    b.append("<section id=\"phases\"><h2>How the proof ran</h2><table><tr><th>phase</th><th>elapsed (s)</th><th>what it found</th></tr>");
    for (JsonNode p : s.proof().path("phases")) {
      b.append("<tr><td>").append(Esc.html(t(p.path("name")))).append("</td>")
          .append(num(String.format(Locale.ROOT, "%.1f", p.path("elapsedMs").asLong() / 1000.0))).append("<td>").append(Esc.html(t(p.path("detail"))))
          .append("</td></tr>");
    }
    b.append("</table></section>\n");
  }

  static String f3(double d) {
    return Double.isFinite(d) ? String.format(Locale.ROOT, "%.3f", d) : "—";
  }
}

package io.pathproof.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.accept.Verdict;
import io.pathproof.core.Json;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.evidence.Evidence;
import java.io.IOException;
import java.util.Locale;
import java.util.Map;

/** report.md (for CI summaries), report.json (one document with everything shown) and report.junit.xml. */
final class Texts {
  private Texts() {}

  private static String t(JsonNode n) {
    return Sections.t(n);
  }

  static String markdown(Report.Source s) {
    StringBuilder b = new StringBuilder();
    b.append("# ").append(s.proof() != null ? "pathproof proof — " + Esc.md(t(s.proof().path("scenario"))) : "pathproof report").append("\n\n");
    b.append("**").append(Esc.md(Report.verdict(s))).append("**\n\n");
    for (String r : Report.reasons(s)) {
      b.append("- ").append(Esc.md(r)).append('\n');
    }
    if (s.emulated()) {
      b.append("\n> ").append(Esc.md(s.emulationNote())).append("\n");
    }
    if (s.proof() != null && s.proof().path("backendChoice").isObject()) {
      JsonNode c = s.proof().get("backendChoice");
      b.append("\nBackend ").append(Esc.md(t(c.path("requested")))).append(" → **").append(Esc.md(t(c.path("branch")))).append("**: ")
          .append(Esc.md(t(c.path("reason")))).append('\n');
    }
    if (s.proof() != null && s.proof().has("reveal")) {
      JsonNode r = s.proof().get("reveal");
      b.append("\n## Reveal\n\n| injected | diagnosed |\n|---|---|\n| ").append(Esc.md(t(r.path("injected").path("kind")))).append(": `")
          .append(Esc.md(String.join(", ", iter(r.path("injected").path("settings"))))).append("` (layer ").append(Esc.md(t(r.path("injected").path("layer"))))
          .append(") | ").append(Esc.md(t(r.path("diagnosed").path("conclusion")))).append(": layer ").append(Esc.md(t(r.path("diagnosed").path("layer"))))
          .append(", owner ").append(Esc.md(t(r.path("diagnosed").path("owner")))).append(" |\n\n").append(r.path("match").asBoolean() ? "match" : "MISMATCH")
          .append("; fix ").append(r.path("fixed").asBoolean() ? "verified" : "inconclusive".equals(t(r.path("fixVerdict"))) ? "inconclusive"
          : "not tried".equals(t(r.path("fixVerdict"))) ? "not tried (nothing diagnosed)" : "NOT verified").append(".\n");
    }
    table(b, s.acceptance(), "Acceptance");
    if (s.proof() != null) {
      for (JsonNode r : s.proof().path("recorded")) {
        table(b, r.path("acceptance"), r.path("name").asText() + " — " + r.path("label").asText());
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
    JsonNode d = s.diagnosis();
    if (d != null) {
      b.append("\n## Diagnosis\n\n").append(Esc.md(t(d.path("conclusion")))).append(": layer ").append(Esc.md(t(d.path("rootCause").path("layer"))))
          .append(", owner ").append(Esc.md(t(d.path("rootCause").path("owner")))).append(" — ").append(Esc.md(t(d.path("rootCause").path("change"))))
          .append("\n\nFix: ").append(Esc.md(t(d.path("rootCause").path("fix")))).append('\n');
    }
    JsonNode ex = s.explain();
    if (ex != null && ex.path("answers").size() > 0) {
      b.append("\n## The 16 questions\n\n");
      for (JsonNode a : ex.path("answers")) {
        b.append(a.path("number").asInt()).append(". **").append(Esc.md(t(a.path("question")))).append("** ").append(Esc.md(t(a.path("answer")))).append('\n');
      }
    }
    return b.toString();
  }

  private static void row(StringBuilder b, String name, Diagnosis.StepTimes st) {
    b.append("| ").append(Esc.md(name)).append(" | ").append(st.n()).append(" | ").append(Sections.f3(st.median())).append(" | ")
        .append(Sections.f3(st.ciLow())).append("..").append(Sections.f3(st.ciHigh())).append(" | ").append(Sections.f3(st.p5())).append("..")
        .append(Sections.f3(st.p95())).append(" |\n");
  }

  private static java.util.List<String> iter(JsonNode arr) {
    java.util.List<String> l = new java.util.ArrayList<>();
    arr.forEach(x -> l.add(x.asText()));
    return l;
  }

  private static void table(StringBuilder b, JsonNode a, String title) {
    if (a == null || a.isMissingNode() || a.isNull()) {
      return;
    }
    b.append("\n## ").append(Esc.md(title)).append("\n\n").append(Esc.md(t(a.path("verdict")))).append("\n\n")
        .append("| id | expected | observed | verdict | file:line |\n|---|---|---|---|---|\n");
    for (JsonNode r : a.path("rows")) {
      b.append("| `").append(Esc.md(t(r.path("id")))).append("` | ").append(Esc.md(t(r.path("expected")))).append(" | ").append(Esc.md(t(r.path("observed"))))
          .append(" | ").append(Esc.md(t(r.path("verdict")))).append(" | ").append(Esc.md(String.join("; ", iter(r.path("provenance"))))).append(" |\n");
    }
  }

  static String json(Report.Source s) {
    ObjectNode n = Json.mapper().createObjectNode();
    n.put("schema", "pathproof.report/1");
    n.put("verdict", Report.verdict(s));
    n.set("proof", s.proof());
    n.set("acceptance", s.acceptance());
    n.set("diagnosis", s.diagnosis());
    n.set("verifyFix", s.verifyFix());
    n.set("explain", s.explain());
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
    StringBuilder b = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"pathproof report\">\n");
    suite(b, "acceptance", s.acceptance());
    if (s.proof() != null) {
      for (JsonNode r : s.proof().path("recorded")) {
        suite(b, "recorded " + r.path("name").asText() + " (" + r.path("label").asText() + ")", r.path("acceptance"));
      }
      JsonNode r = s.proof().path("reveal");
      // An undecided claim is neither passed nor failed: skipped, with the reason, so CI shows it as neither.
      boolean undecidedDiagnosis = "inconclusive".equals(t(r.path("diagnosed").path("conclusion")));
      boolean undecidedFix = undecidedDiagnosis || "inconclusive".equals(t(r.path("fixVerdict")));
      b.append("  <testsuite name=\"prove\" tests=\"2\">\n");
      claim(b, "diagnosis names the injected layer", r.path("match").asBoolean(), undecidedDiagnosis, "injected "
          + t(r.path("injected").path("layer")) + ", diagnosed " + t(r.path("diagnosed").path("layer")));
      claim(b, "diagnosed fix verified", r.path("fixed").asBoolean(), undecidedFix, "verify-fix against the baseline");
      b.append("  </testsuite>\n");
    }
    return b.append("</testsuites>\n").toString();
  }

  private static void claim(StringBuilder b, String name, boolean ok, boolean undecided, String msg) {
    b.append("    <testcase classname=\"prove\" name=\"").append(Esc.xml(name)).append('"');
    if (ok) {
      b.append("/>\n");
    } else if (undecided) {
      b.append("><skipped message=\"").append(Esc.xml("inconclusive: the step time stayed undecided; " + msg)).append("\"/></testcase>\n");
    } else {
      b.append("><failure message=\"").append(Esc.xml(msg)).append("\"/></testcase>\n");
    }
  }

  private static void suite(StringBuilder b, String name, JsonNode a) {
    if (a == null || a.isMissingNode() || a.isNull()) {
      return;
    }
    JsonNode rows = a.path("rows");
    int fail = 0;
    int skip = 0;
    for (JsonNode r : rows) {
      Verdict v = Verdict.of(t(r.path("verdict")));
      fail += v == Verdict.FAIL ? 1 : 0;
      skip += v == Verdict.UNPROVEN || v == Verdict.NOT_APPLICABLE ? 1 : 0;
    }
    b.append(String.format(Locale.ROOT, "  <testsuite name=\"%s\" tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n", Esc.xml(name), rows.size(), fail, skip));
    for (JsonNode r : rows) {
      Verdict v = Verdict.of(t(r.path("verdict")));
      String msg = "expected " + t(r.path("expected")) + "; observed " + t(r.path("observed")) + " [" + String.join("; ", iter(r.path("provenance"))) + "]";
      b.append("    <testcase classname=\"").append(Esc.xml(name)).append("\" name=\"").append(Esc.xml(t(r.path("id")) + ": " + t(r.path("check")))).append('"');
      if (v == Verdict.FAIL) {
        b.append("><failure message=\"").append(Esc.xml(msg)).append("\"/></testcase>\n");
      } else if (v == Verdict.UNPROVEN || v == Verdict.NOT_APPLICABLE) {
        b.append("><skipped message=\"").append(Esc.xml(v.label() + ": " + msg)).append("\"/></testcase>\n");
      } else {
        b.append("/>\n");
      }
    }
    b.append("  </testsuite>\n");
  }
}

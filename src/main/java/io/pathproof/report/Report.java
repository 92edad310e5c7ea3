package io.pathproof.report;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.accept.Acceptance;
import io.pathproof.callgraph.CallGraph;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.explain.Explainer;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The public entry of the report room. {@link #load} gathers what a report shows from a prove directory, or from run
 * directories (baseline, variant, fixed, in that order) plus a sealed prediction and saved acceptance / diagnosis /
 * verify-fix JSON; what is missing and can be computed from the rest (acceptance from prediction and baseline, the
 * diagnosis from two runs, explain and the call graph) is computed here with the owning rooms' public entries.
 * {@link #write} writes report.html, report.md, report.json and report.junit.xml.
 */
public final class Report {
  private Report() {}

  /**
   * What a report shows, as the JSON documents the other rooms write ({@code proof} is prove's summary, null when the
   * report is of runs alone) plus the evidence of each run, by label, for the charts.
   */
  public record Source(JsonNode proof, JsonNode acceptance, JsonNode diagnosis, JsonNode verifyFix, JsonNode explain,
      Map<String, Evidence> runs, Map<String, String> runDirs, List<String> inputs, Map<String, String> roles, Map<String, String> labels,
      Map<String, Diagnosis.StepTimes> steps, Map<String, Diagnosis.StepTimes> pooled) {
    /**
     * {@code roles}: each run's configuration (baseline, variant, fixed, baselineAgain), {@code labels}: its name on
     * the page. {@code steps}: each run's step times and its one median, computed here once from the diagnose room's
     * definition ({@link Diagnosis#stepTimes}) — the table, the charts and the text all read these — and
     * {@code pooled}: the runs of each configuration that has several, pooled as diagnose pools them.
     */
    public Source {
      runs = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(runs));
      runDirs = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(runDirs));
      inputs = List.copyOf(inputs);
      Map<String, String> r = new LinkedHashMap<>();
      Map<String, String> l = new LinkedHashMap<>();
      Map<String, Diagnosis.StepTimes> st = new LinkedHashMap<>();
      Map<String, List<Evidence>> byRole = new LinkedHashMap<>();
      for (Map.Entry<String, Evidence> en : runs.entrySet()) {
        String role = roles != null && roles.containsKey(en.getKey()) ? roles.get(en.getKey()) : roleOf(en.getKey());
        r.put(en.getKey(), role);
        l.put(en.getKey(), labels != null && labels.containsKey(en.getKey()) ? labels.get(en.getKey()) : Sections.runName(en.getKey()));
        st.put(en.getKey(), steps != null && steps.containsKey(en.getKey()) ? steps.get(en.getKey()) : Diagnosis.stepTimes(en.getValue()));
        byRole.computeIfAbsent(role, k -> new ArrayList<>()).add(en.getValue());
      }
      Map<String, Diagnosis.StepTimes> pl = new LinkedHashMap<>();
      for (Map.Entry<String, List<Evidence>> en : byRole.entrySet()) {
        if (en.getValue().size() > 1) {
          pl.put(en.getKey(), pooled != null && pooled.containsKey(en.getKey()) ? pooled.get(en.getKey()) : Diagnosis.stepTimes(en.getValue()));
        }
      }
      roles = java.util.Collections.unmodifiableMap(r);
      labels = java.util.Collections.unmodifiableMap(l);
      steps = java.util.Collections.unmodifiableMap(st);
      pooled = java.util.Collections.unmodifiableMap(pl);
    }

    /** A source whose runs are named by their role alone (run directories, or a proof that lists no runs). */
    public Source(JsonNode proof, JsonNode acceptance, JsonNode diagnosis, JsonNode verifyFix, JsonNode explain, Map<String, Evidence> runs,
        Map<String, String> runDirs, List<String> inputs) {
      this(proof, acceptance, diagnosis, verifyFix, explain, runs, runDirs, inputs, null, null, null, null);
    }

    /** The configuration of a run by the key prove gives it: "fixedAgain" is the fixed configuration run again. */
    static String roleOf(String key) {
      return key.equals("fixedAgain") ? "fixed" : key;
    }

    boolean emulated() {
      for (Evidence e : runs.values()) {
        if (e.manifest() != null && e.manifest().path("emulation").path("emulated").asBoolean(false)) {
          return true;
        }
      }
      return proof != null && proof.path("emulation").path("emulated").asBoolean(false);
    }

    String emulationNote() {
      for (Evidence e : runs.values()) {
        if (e.manifest() != null && e.manifest().path("emulation").hasNonNull("note")) {
          return e.manifest().path("emulation").path("note").asText();
        }
      }
      return "emulated: NCCL decisions real, timings not physical";
    }
  }

  private static final List<String> LABELS = List.of("baseline", "variant", "fixed");

  /** Reads the inputs of {@code report DIR…}. Anything unreadable is a one-line bad-input error naming it. */
  public static Source load(List<Path> inputs) {
    if (inputs == null || inputs.isEmpty()) {
      throw PathproofException.usage("report: give a prove directory, or run directories and JSON files");
    }
    List<String> names = inputs.stream().map(Path::toString).toList();
    if (inputs.size() == 1 && Files.isRegularFile(inputs.get(0).resolve("proof.json"))) {
      return fromProof(inputs.get(0), names);
    }
    Map<String, Evidence> runs = new LinkedHashMap<>();
    Map<String, String> dirs = new LinkedHashMap<>();
    Prediction prediction = null;
    JsonNode acceptance = null;
    JsonNode diagnosis = null;
    JsonNode verify = null;
    for (Path in : inputs) {
      if (Files.isDirectory(in)) {
        if (!Files.isRegularFile(in.resolve("manifest.json"))) {
          throw PathproofException.badInput(in + ": neither a prove directory (proof.json) nor a run directory (manifest.json)");
        }
        if (runs.size() == LABELS.size()) {
          throw PathproofException.usage("report: at most three run directories (baseline, variant, fixed): " + in);
        }
        String label = LABELS.get(runs.size());
        runs.put(label, Ingest.readRun(in));
        dirs.put(label, in.toString());
        continue;
      }
      JsonNode n = json(in);
      String schema = n.path("schema").asText("");
      if (schema.startsWith("pathproof.prediction/")) {
        prediction = PredictionIo.readVerified(in);
      } else if (schema.startsWith("pathproof.acceptance/")) {
        acceptance = n;
      } else if (schema.startsWith("pathproof.diagnosis/")) {
        diagnosis = n;
      } else if (schema.startsWith("pathproof.verify-fix/")) {
        verify = n;
      } else {
        throw PathproofException.badInput(in + ": not a prediction, acceptance, diagnosis or verify-fix JSON (schema '" + schema + "')");
      }
    }
    Evidence baseline = runs.get("baseline");
    Diagnosis typed = null;
    if (acceptance == null && prediction != null && baseline != null) {
      acceptance = Json.mapper().valueToTree(Acceptance.accept(prediction, baseline));
    }
    if (diagnosis == null && runs.containsKey("variant")) {
      typed = Diagnosis.diagnose(baseline, runs.get("variant"));
      diagnosis = Json.mapper().valueToTree(typed);
    }
    if (verify == null && runs.containsKey("fixed")) {
      verify = Json.mapper().valueToTree(Diagnosis.verifyFix(baseline, runs.get("variant"), runs.get("fixed")));
    }
    ObjectNode explain = null;
    if (baseline != null || prediction != null) {
      explain = Json.mapper().createObjectNode();
      if (prediction != null) {
        explain.set("answers", Json.mapper().valueToTree(Explainer.explain(prediction, baseline, typed)));
      }
      explain.set("callgraph", Json.mapper().valueToTree(CallGraph.coverage(baseline)));
    }
    return new Source(null, acceptance, diagnosis, verify, explain, runs, dirs, names);
  }

  private static Source fromProof(Path dir, List<String> names) {
    JsonNode proof = json(dir.resolve("proof.json"));
    JsonNode files = proof.path("files");
    Map<String, Evidence> runs = new LinkedHashMap<>();
    Map<String, String> dirs = new LinkedHashMap<>();
    JsonNode list = proof.path("runs");
    if (list.isArray() && !list.isEmpty()) {
      // Every run prove made, in the order it made them (its sequential extension adds runs of each configuration).
      Map<String, String> roles = new LinkedHashMap<>();
      Map<String, String> shown = new LinkedHashMap<>();
      Map<String, Integer> count = new java.util.HashMap<>();
      for (JsonNode r : list) {
        String role = r.path("role").asText();
        String d = r.path("dir").asText();
        int k = count.merge(role, 1, Integer::sum);
        // The first run of each configuration is keyed by its role alone (the page's ids and the chart data use them).
        String key = k == 1 ? role : role.equals("fixed") && k == 2 ? "fixedAgain" : r.path("label").asText(d).replace(' ', '-');
        if (!d.isEmpty() && Files.isDirectory(dir.resolve(d))) {
          runs.put(key, Ingest.readRun(dir.resolve(d)));
          dirs.put(key, d);
          roles.put(key, role);
          shown.put(key, r.path("label").asText(d));
        }
      }
      return new Source(proof, optional(dir, files, "acceptance"), optional(dir, files, "diagnosis"), files.hasNonNull("verifyFixAgain")
          ? optional(dir, files, "verifyFixAgain") : optional(dir, files, "verifyFix"), optional(dir, files, "explain"), runs, dirs, names, roles,
          shown, null, null);
    }
    List<String> labels = new ArrayList<>(LABELS);
    // A/B/A/B: prove re-runs the baseline right after the fixed run, and the fixed configuration once more after that
    // when the adjacent pair fails only on step time; the last pair decides, so the page shows every run it made.
    labels.add("baselineAgain");
    labels.add("fixedAgain");
    for (String label : labels) {
      if (files.hasNonNull(label) && Files.isDirectory(dir.resolve(files.get(label).asText()))) {
        Path r = dir.resolve(files.get(label).asText());
        runs.put(label, Ingest.readRun(r));
        dirs.put(label, files.get(label).asText());
      }
    }
    return new Source(proof, optional(dir, files, "acceptance"), optional(dir, files, "diagnosis"), files.hasNonNull("verifyFixAgain") ? optional(dir, files, "verifyFixAgain") : optional(dir, files, "verifyFix"),
        optional(dir, files, "explain"), runs, dirs, names);
  }

  private static JsonNode optional(Path dir, JsonNode files, String key) {
    if (!files.hasNonNull(key)) {
      return null;
    }
    Path f = dir.resolve(files.get(key).asText());
    return Files.isRegularFile(f) ? json(f) : null;
  }

  private static JsonNode json(Path f) {
    try {
      return Json.mapper().readTree(f.toFile());
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw PathproofException.badInput(f + ": not JSON (" + io.pathproof.core.Messages.json(e) + ")");
    } catch (IOException e) {
      throw PathproofException.badInput(io.pathproof.core.Messages.io(e, f));
    }
  }

  /** Writes the four files into {@code outDir}; returns the path of report.html. */
  public static Path write(Source src, Path outDir) {
    try {
      Files.createDirectories(outDir);
      Path html = outDir.resolve("report.html");
      // Paths are shown relative to the report (a proof directory travels; the machine's folders mean nothing elsewhere).
      List<String> bases = new ArrayList<>();
      bases.add(outDir.toAbsolutePath().normalize() + "/");
      bases.add(Path.of("").toAbsolutePath().normalize() + "/");
      // A prove directory given as a relative path (report samples/x) is read through that path: strip it as well.
      String given = outDir.normalize().toString();
      if (!outDir.isAbsolute() && !given.isEmpty()) {
        bases.add(given + "/");
      }
      Files.writeString(html, relative(Page.html(src), bases), StandardCharsets.UTF_8);
      Files.writeString(outDir.resolve("report.md"), relative(Texts.markdown(src), bases), StandardCharsets.UTF_8);
      Files.writeString(outDir.resolve("report.json"), relative(Texts.json(src), bases), StandardCharsets.UTF_8);
      Files.writeString(outDir.resolve("report.junit.xml"), relative(Texts.junit(src), bases), StandardCharsets.UTF_8);
      return html;
    } catch (IOException e) {
      throw PathproofException.badInput("report: cannot write into " + outDir + ": " + e.getMessage());
    }
  }

  private static String relative(String text, List<String> bases) {
    String t = text;
    for (String b : bases) {
      if (b.length() > 1) {
        t = t.replace(b, "");
      }
    }
    return t;
  }

  /** The overall verdict shown first: prove's, else the acceptance's, else the diagnosis's conclusion. */
  static String verdict(Source s) {
    if (s.proof() != null && s.proof().hasNonNull("verdict")) {
      return s.proof().get("verdict").asText();
    }
    if (s.acceptance() != null) {
      return "acceptance " + s.acceptance().path("verdict").asText();
    }
    if (s.diagnosis() != null) {
      return "diagnosis: " + s.diagnosis().path("conclusion").asText();
    }
    return "no verdict";
  }

  static boolean good(Source s) {
    String v = verdict(s);
    return v.equals("PROVEN") || v.equals("acceptance PASS") || v.equals("diagnosis: no change");
  }

  static List<String> reasons(Source s) {
    List<String> out = new ArrayList<>();
    if (s.proof() != null) {
      s.proof().path("reasons").forEach(r -> out.add(r.asText()));
    }
    return out;
  }
}

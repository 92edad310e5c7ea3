package io.pathproof.prove;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.accept.Acceptance;
import io.pathproof.accept.AcceptanceTable;
import io.pathproof.callgraph.CallGraph;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.FixVerification;
import io.pathproof.diagnose.Layer;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.explain.Explainer;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.predict.Predictor;
import io.pathproof.report.Report;
import io.pathproof.run.Runner;
import io.pathproof.rundir.RunManifest;
import io.pathproof.rundir.Vocabulary;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * The public entry of the prove room: the seed's whole chapter on one scenario. Every step goes through the public
 * entry of the room that owns it; what each step produced is written to the output directory as it happens, so a
 * failed proof leaves every file behind.
 */
public final class Prove {
  private Prove() {}

  /**
   * What prove runs: pathproof's stand-in job for a scenario ({@link StandIn}) or the user's own launch command
   * ({@link OwnCommand}). {@code label} names it in the proof and the report.
   */
  public sealed interface Job permits StandIn, OwnCommand {
    String label();
  }

  /** pathproof's stand-in job: the scenario's workload on {@code nproc} ranks, emulated when {@code emulate} is set. */
  public record StandIn(Scenario scenario, String label, Runner.Backend backend, int nproc, Runner.Emulate emulate)
      implements Job {
    public StandIn {
      Objects.requireNonNull(scenario, "scenario");
      backend = backend == null ? Runner.Backend.AUTO : backend;
      if (nproc < 1) {
        throw PathproofException.usage("--nproc: must be >= 1, got " + nproc);
      }
    }
  }

  /**
   * The user's own job, run as given ({@code pathproof prove -- COMMAND}); its baseline seals its prediction in the
   * run. {@code topology} is what that prediction is made for (null: the machine the job finds); {@code emulate}
   * runs it on an emulated machine (NCCL decisions real, timings not physical).
   */
  public record OwnCommand(List<String> command, String label, String topology, Runner.Emulate emulate,
      Integer topologyNodes) implements Job {
    /** Without {@code --nodes}: the topology as given. */
    public OwnCommand(List<String> command, String label, String topology, Runner.Emulate emulate) {
      this(command, label, topology, emulate, null);
    }

    public OwnCommand {
      if (command == null || command.isEmpty()) {
        throw PathproofException.usage("prove -- COMMAND: the command is missing");
      }
      command = List.copyOf(command);
      label = label == null ? String.join(" ", command) : label;
    }
  }

  /** How each run is sized and bounded (the shared run flags). */
  public record Sizes(int warmup, int iters, int profileIters, String python, long timeoutSec) {
    public Sizes {
      if (iters < 2 || warmup < 0 || profileIters < 0) {
        throw PathproofException.usage("--iters must be >= 2, --warmup and --profile-iters >= 0");
      }
    }
  }

  /**
   * What to prove. {@code fault} is K=V[,K=V] or null for a fault drawn at random with {@code seed}. {@code maxRuns}:
   * how many runs of each configuration prove may make to decide a step-time comparison ({@link Sequential});
   * {@code rule}: the step-time rule (its equivalence margin; prove plans the looks itself).
   */
  public record Plan(Job job, String fault, long seed, Path out, Sizes sizes, Path samples, String tool,
      List<String> commandLine, BackendChoice choice, int maxRuns, Diagnosis.Rule rule) {
    /** At most this many runs of one configuration unless told otherwise: with four configurations, 12 runs at most. */
    public static final int MAX_RUNS = 3;

    public Plan {
      Objects.requireNonNull(job, "job");
      Objects.requireNonNull(out, "out");
      Objects.requireNonNull(sizes, "sizes");
      commandLine = commandLine == null ? List.of() : List.copyOf(commandLine);
      Objects.requireNonNull(choice, "choice");
      if (maxRuns < 1 || maxRuns > 20) {
        throw PathproofException.usage("--max-runs: between 1 and 20 runs of each configuration, got " + maxRuns);
      }
      rule = rule == null ? Diagnosis.Rule.DEFAULT : rule;
    }

    Runner.Emulate emulate() {
      return job instanceof StandIn si ? si.emulate() : job instanceof OwnCommand oc ? oc.emulate() : null;
    }
  }

  /**
   * How the backend was chosen: {@code requested} (auto, nccl, gloo, or --emulate), the {@code branch} taken (nccl,
   * emulated, gloo), what the runs get (backend, emulation with the library), the scenario auto chose when none was
   * given (null: the one given) and its ranks (null: the scenario's), and one line of why.
   */
  public record BackendChoice(String requested, String branch, Runner.Backend backend, boolean emulate, Path ncclLib,
      String scenario, Integer ranks, String reason) {
    public BackendChoice {
      Objects.requireNonNull(branch, "branch");
      Objects.requireNonNull(backend, "backend");
      Objects.requireNonNull(reason, "reason");
    }

    /** A backend taken as given (--backend nccl|gloo, or a user's command that decides its own). */
    public static BackendChoice given(String requested, String branch, Runner.Backend backend, String reason) {
      return new BackendChoice(requested, branch, backend, false, null, null, null, reason);
    }

    /** --emulate: NCCL with the emulator library {@code ncclLib}, the machine emulated on one GPU. */
    public static BackendChoice emulated(Path ncclLib, String reason) {
      return new BackendChoice("--emulate", "emulated", Runner.Backend.NCCL, true, ncclLib, null, null, reason);
    }

    /** The line prove says first and the proof records, e.g. "auto → gloo: no GPU (…): gloo on the CPU". */
    public String line() {
      return requested + " → " + branch + ": " + reason;
    }
  }

  /**
   * {@code --backend auto} from the probed facts (see {@link AutoBackend}): {@code scenario} is the one given (null
   * when none was), {@code ranks} the ranks asked for (--nproc, else null). Throws exit 7 (NO_GPU) when an NCCL
   * scenario was given and nothing here can run it.
   */
  public static BackendChoice auto(Runner.Machine machine, Runner.EmulatorLibrary library, Scenario scenario, Integer ranks) {
    AutoBackend.Want w = scenario == null ? new AutoBackend.Want(false, false, ranks == null ? 1 : ranks, true)
        : new AutoBackend.Want(true, scenario.backend() == io.pathproof.scenario.Backend.NCCL,
            ranks != null ? ranks : scenario.ranks(), scenario.topology().nodes().size() == 1);
    return AutoBackend.decide(machine, library, w);
  }

  /** Told when a phase ends: its name, milliseconds since prove started, one line of what it found. */
  public interface Progress {
    void phase(String name, long elapsedMs, String detail);
  }

  /** The outcome: exit code (0 only when proven), the output directory, the report and the lines of the reveal. */
  public record Outcome(int exitCode, boolean proven, Path out, Path report, List<String> summary) {
    public Outcome {
      summary = List.copyOf(summary);
    }
  }

  /** The proof document's schema (proof.json, read back by {@code report}). */
  public static final String SCHEMA = "pathproof.proof/1";

  public static Outcome run(Plan plan, Progress progress) {
    Faults.check(plan.fault());
    Proving p = new Proving(plan, progress);
    p.predictAndRunBaseline();
    p.accept();
    p.injectFaultAndRunVariant();
    p.diagnoseBlind();
    p.fixAndVerify();
    p.explain();
    p.reveal();
    return p.report();
  }

  /**
   * One proof in progress, one method per step of the seed's chain. Each step adds its part to the proof document
   * and its phase line as it ends, and writes its files at once, so a proof that fails half way leaves them behind.
   */
  private static final class Proving {
    private final Plan plan;
    private final Progress say;
    private final long t0 = System.nanoTime();
    private final Path out;
    private final ObjectNode proof = Json.mapper().createObjectNode();
    private final ArrayNode phases;
    private final ObjectNode files;
    private final List<String> reasons = new ArrayList<>();
    private final Path predictionFile;
    /** The scenario's own environment: every run gets it; the variant adds the fault, the fixed run what is kept. */
    private final List<String> scenarioEnv = new ArrayList<>();
    private Prediction prediction;
    private Scenario scenario;
    private Evidence baseline;
    private String backend;
    private int ranks;
    private AcceptanceTable table;
    private Fault fault;
    private String faultSha;
    private List<String> variantEnv;
    private ArrayNode runs;
    private Sequential.Looks said;
    private boolean extend;
    private Sequential.Diagnosed dx;
    private Diagnosis diagnosis;
    private Layer diagnosed;
    private boolean undecided;
    private Fix fix;
    private FixVerification fv;
    private List<String> notVerified = new ArrayList<>();
    private ArrayNode recorded;
    private boolean proven;
    private boolean fixed;
    private String verdict;
    private int exit;

    /** The output directory, emptied, and the proof document's head: the tool, the command line, the backend choice. */
    Proving(Plan plan, Progress progress) {
      this.plan = plan;
      say = progress == null ? (n, ms, d) -> { } : progress;
      out = plan.out().toAbsolutePath().normalize();
      prepare(out);
      predictionFile = out.resolve("prediction.json");
      proof.put("schema", SCHEMA);
      proof.put("tool", plan.tool());
      proof.put("createdAt", Instant.now().toString());
      proof.put("scenario", plan.job().label());
      ArrayNode cl = proof.putArray("commandLine");
      plan.commandLine().forEach(cl::add);
      phases = proof.putArray("phases");
      files = proof.putObject("files");
      ObjectNode bc = proof.putObject("backendChoice");
      bc.put("requested", plan.choice().requested());
      bc.put("branch", plan.choice().branch());
      bc.put("reason", plan.choice().reason());
      // Which branch, and why, before anything runs; the caller says it in its first line, so it is only recorded here.
      Prove.phase(phases, (n, ms, d) -> { }, t0, "backend", plan.choice().line());
    }

    private void phase(String name, String detail) {
      Prove.phase(phases, say, t0, name, detail);
    }

    /**
     * 1. predict and seal, before anything runs (the user's own job seals its prediction itself, in its baseline run,
     * before its first gradient AllReduce: its model exists only there); 2. the baseline run.
     */
    void predictAndRunBaseline() {
      Path baselineDir;
      if (plan.job() instanceof StandIn si) {
        prediction = PredictionIo.writeSealed(Predictor.predict(si.scenario()), predictionFile, plan.tool());
        phase("predict", "sealed " + prediction.seal().sha256().substring(0, 12) + " at " + prediction.seal().createdAt() + ": "
            + steady(prediction) + " bucket(s), backend " + prediction.backend());
        si.scenario().env().forEach((k, v) -> scenarioEnv.add(k + "=" + v));
        baselineDir = run(plan, out, "baseline", scenarioEnv, predictionFile);
      } else {
        baselineDir = run(plan, out, "baseline", scenarioEnv, null);
        Path own = Vocabulary.ownPrediction(baselineDir);
        if (own == null) {
          throw PathproofException.badInput("prove: the baseline run sealed no prediction (see "
              + baselineDir.resolve(RunManifest.FILE) + ", instrumentation.predictions)");
        }
        copy(own, predictionFile); // the sealed file as the run wrote it: its seal still holds
        prediction = PredictionIo.readVerified(predictionFile);
        phase("predict", "sealed in the baseline run before its first gradient AllReduce ("
            + own.getFileName() + ", " + prediction.seal().sha256().substring(0, 12) + " at " + prediction.seal().createdAt() + "): "
            + steady(prediction) + " bucket(s), backend " + prediction.backend());
      }
      files.put("prediction", "prediction.json");
      scenario = plan.job() instanceof StandIn si ? si.scenario()
          : Scenarios.fromPredictionInputs(prediction.inputs(), predictionFile.toString());

      files.put("baseline", "baseline");
      baseline = Ingest.readRun(baselineDir);
      backend = baseline.manifest() == null ? "unknown" : baseline.manifest().path("backend").asText("unknown");
      ranks = plan.job() instanceof StandIn si ? si.nproc() : scenario.ranks();
      proof.put("backend", backend);
      proof.put("worldSize", ranks);
      proof.set("emulation", baseline.manifest() == null ? null : baseline.manifest().get("emulation"));
      phase("baseline run", backend + ", " + ranks + " rank(s), " + sizeOf(plan, baseline));
    }

    /** 3. the sealed prediction accepted against the baseline's evidence. */
    void accept() {
      table = Acceptance.accept(prediction, baseline);
      write(out.resolve("acceptance.json"), Acceptance.toJson(table));
      write(out.resolve("acceptance.md"), Acceptance.render(table, "markdown"));
      files.put("acceptance", "acceptance.json");
      if (table.counts().fail() > 0) {
        reasons.add("acceptance: " + table.counts().fail() + " row(s) FAIL");
      }
      phase("accept", table.verdict() + ": " + table.counts().pass() + " PASS, " + table.counts().fail() + " FAIL, "
          + table.counts().unproven() + " UNPROVEN, " + table.counts().notApplicable() + " N/A");
    }

    /** 4. one fault, sealed in prove's own record outside every run directory diagnose reads, and the variant run. */
    void injectFaultAndRunVariant() {
      List<Fault> catalogue = Faults.catalogue(scenario, prediction, backend, ranks, plan.seed());
      if (plan.emulate() != null) {
        // Emulated timings are not physical: a fault seen only in the step time could never be diagnosed here.
        catalogue = catalogue.stream().filter(f -> f.layer() != Layer.COMPUTE).toList();
      }
      fault = plan.fault() == null || plan.fault().equals("random") ? Faults.draw(catalogue, plan.seed())
          : Faults.given(plan.fault(), catalogue);
      String sealed = faultRecord(fault, plan.seed(), catalogue);
      write(out.resolve("fault.sealed.json"), sealed);
      faultSha = sha256(sealed);
      ObjectNode fnode = proof.putObject("fault");
      fnode.put("sealSha256", faultSha);
      fnode.put("file", "fault.sealed.json");
      fnode.put("drawn", plan.fault() == null || plan.fault().equals("random"));
      fnode.put("seed", plan.seed());
      ArrayNode kinds = fnode.putArray("catalogue");
      catalogue.forEach(f -> kinds.add(f.kind()));
      variantEnv = new ArrayList<>(scenarioEnv);
      variantEnv.addAll(fault.settings());
      run(plan, out, "variant", variantEnv, predictionFile);
      files.put("variant", "variant");
      phase("variant run", "one fault of " + catalogue.size() + " kinds, sealed " + faultSha.substring(0, 12));
    }

    /**
     * 5. diagnose blind: run directories, nothing else; an inconclusive step time is settled by more runs of both
     * configurations, interleaved and pooled like with like, the looks sharing the error rates ({@link Sequential}).
     */
    void diagnoseBlind() {
      Evidence ev = Ingest.readRun(out.resolve("variant"));
      runs = proof.putArray("runs");
      addRun(runs, "baseline", "baseline", "baseline");
      addRun(runs, "variant", "variant", "variant");
      ObjectNode seq = proof.putObject("sequence");
      seq.put("maxRuns", plan.maxRuns());
      seq.put("margin", plan.rule().margin());
      seq.put("rule", Sequential.atPairs(Sequential.paired(plan.rule()), plan.maxRuns(), plan.maxRuns()).describe());
      ArrayNode looks = seq.putArray("looks");
      extend = plan.emulate() == null; // emulated timings are never judged: more runs cannot decide them
      Sequential.Runs more = (role, k) -> {
        String name = dirName(role, k);
        Path dir = run(plan, out, name, role.equals("variant") ? variantEnv : scenarioEnv, predictionFile);
        addRun(runs, role, name, label(role, k));
        phase(label(role, k) + " run", "one more run of the " + roleName(role) + " configuration, to decide the step time");
        return Ingest.readRun(dir);
      };
      said = l -> looks.add(Json.mapper().valueToTree(l));
      dx = Sequential.diagnose(baseline, ev, extend ? plan.maxRuns() : 1, plan.rule(), more, said);
      diagnosis = dx.diagnosis();
      write(out.resolve("diagnosis.json"), Diagnosis.render(diagnosis, "json"));
      write(out.resolve("diagnosis.md"), Diagnosis.render(diagnosis, "markdown"));
      files.put("diagnosis", "diagnosis.json");
      diagnosed = diagnosis.rootCause() == null ? Layer.NONE : diagnosis.rootCause().layer();
      phase("diagnose", diagnosis.conclusion() + ": layer " + diagnosed
          + (diagnosis.rootCause() == null ? "" : ", owner " + diagnosis.rootCause().owner()) + lookText(dx.looks()));
      undecided = dx.inconclusive();
      if (undecided) {
        reasons.add("diagnosis inconclusive after " + dx.baselines().size() + " run(s) of each configuration: "
            + diagnosis.regression().why() + runsNeeded(diagnosis.regression()));
      }
    }

    /** 6. the diagnosed fix, applied and verified against the baseline (never on an undecided diagnosis: nothing is named). */
    void fixAndVerify() {
      fix = Fix.apply(diagnosis, fault);
      if (undecided) {
        phase("fix + verify", "skipped: the diagnosis is inconclusive, so no fault is named and no fix can be shown");
        return;
      }
      List<String> fixedEnv = new ArrayList<>(scenarioEnv);
      fixedEnv.addAll(fix.kept());
      Path fixedDir = run(plan, out, "fixed", fixedEnv, predictionFile);
      files.put("fixed", "fixed");
      addRun(runs, "fixed", "fixed", "fixed");
      Sequential.Runs again = (role, k) -> {
        String name = dirName(role, k);
        Path dir = run(plan, out, name, role.equals("fixed") ? fixedEnv : scenarioEnv, predictionFile);
        addRun(runs, role, name, label(role, k));
        if (role.equals("baselineAgain") && k == 1) {
          files.put("baselineAgain", name);
        } else if (role.equals("fixed") && k == 2) {
          files.put("fixedAgain", name);
        }
        phase(label(role, k), role.equals("baselineAgain") ? "the baseline run again right after the fixed run, under the "
            + "machine's present load" : "the fixed configuration run again beside the new baseline");
        return Ingest.readRun(dir);
      };
      Sequential.Verified vx = Sequential.verify(dx, Ingest.readRun(fixedDir), plan.maxRuns(), extend && !fix.removed().isEmpty(),
          plan.rule(), again, said);
      fv = vx.verification();
      verification(out, dx, vx, proof, files);
      notVerified = notVerified(fix, fv);
      if (!notVerified.isEmpty()) {
        reasons.add("verify-fix: " + fv.verdict() + " (" + String.join("; ", notVerified) + ")");
      }
      phase("fix + verify", (fix.removed().isEmpty() ? "nothing undone" : "undid " + String.join(", ", fix.removed()))
          + "; " + (notVerified.isEmpty() ? "fixed" : FixVerification.INCONCLUSIVE.equals(fv.verdict()) ? "inconclusive" : "NOT fixed")
          + lookText(vx.looks()));
    }

    /** 7. explain and the call graph, on the baseline's evidence and this diagnosis; recorded GPU samples accepted. */
    void explain() {
      ObjectNode explain = Json.mapper().createObjectNode();
      explain.set("answers", Json.mapper().valueToTree(Explainer.explain(prediction, baseline, diagnosis)));
      explain.set("callgraph", Json.mapper().valueToTree(CallGraph.coverage(baseline)));
      write(out.resolve("explain.json"), pretty(explain));
      files.put("explain", "explain.json");
      recorded = proof.putArray("recorded");
      if (!backend.equals("nccl")) {
        for (Recorded.Sample r : Recorded.acceptAll(plan.samples())) {
          recorded.add(Json.mapper().valueToTree(r));
        }
      }
      phase("explain", "16 answers, 35 stages" + (recorded.isEmpty() ? "" : "; " + recorded.size() + " recorded GPU sample(s) accepted"));
    }

    /** The reveal: the sealed fault against the layer diagnosed, and the verdict of the whole proof. */
    void reveal() {
      boolean match = fault.layer() == diagnosed;
      if (!match && !undecided) {
        reasons.add("diagnosis named layer " + diagnosed + " but the injected fault acts on " + fault.layer());
      }
      ObjectNode reveal = proof.putObject("reveal");
      reveal.set("injected", Json.mapper().valueToTree(fault));
      ObjectNode dn = reveal.putObject("diagnosed");
      dn.put("conclusion", diagnosis.conclusion());
      dn.put("layer", diagnosed.id());
      dn.put("owner", diagnosis.rootCause() == null ? null : diagnosis.rootCause().owner());
      dn.put("change", diagnosis.rootCause() == null ? null : diagnosis.rootCause().change());
      dn.put("fix", diagnosis.rootCause() == null ? null : diagnosis.rootCause().fix());
      reveal.put("match", match);
      reveal.set("fix", Json.mapper().valueToTree(fix));
      fixed = fv != null && notVerified.isEmpty();
      reveal.put("fixed", fixed);
      reveal.put("fixVerdict", fv == null ? "not tried" : fix.removed().isEmpty() ? "nothing undone" : fv.verdict());
      reveal.put("faultSealVerified", sha256(readString(out.resolve("fault.sealed.json"))).equals(faultSha));
      proven = table.counts().fail() == 0 && match && fixed;
      // Inconclusive only where nothing decided is wrong: no FAIL row, no wrong layer named, no fix refused on evidence.
      boolean refused = table.counts().fail() > 0 || !undecided && !match
          || fv != null && !fixed && !FixVerification.INCONCLUSIVE.equals(fv.verdict());
      verdict = proven ? "PROVEN" : !refused && (undecided || fv != null && FixVerification.INCONCLUSIVE.equals(fv.verdict()))
          ? "INCONCLUSIVE" : "NOT PROVEN";
      exit = verdict.equals("PROVEN") ? ExitCode.OK : verdict.equals("INCONCLUSIVE") ? ExitCode.INCONCLUSIVE : ExitCode.FAIL;
      proof.put("verdict", verdict);
      proof.put("exitCode", exit);
      ArrayNode rs = proof.putArray("reasons");
      reasons.forEach(rs::add);
      phase("reveal", fault.kind() + " (" + String.join(", ", fault.settings()) + ", layer " + fault.layer()
          + ") vs diagnosed " + diagnosed + ": " + (undecided ? "undecided (inconclusive)" : match ? "match" : "MISMATCH"));
    }

    /** 8. proof.json and the report, and the lines that tell the outcome. */
    Outcome report() {
      write(out.resolve("proof.json"), pretty(proof));
      Path html = Report.write(Report.load(List.of(out)), out);
      phase("report", html.getFileName().toString());
      write(out.resolve("proof.json"), pretty(proof)); // with the report phase's time
      return new Outcome(exit, proven, out, html, summary(html));
    }

    private List<String> summary(Path html) {
      List<String> summary = new ArrayList<>();
      summary.add("prove: " + verdict + " — " + plan.job().label() + ", " + backend + ", " + ranks + " rank(s)");
      summary.add("  acceptance: " + table.verdict() + " (" + table.counts().pass() + " PASS, " + table.counts().fail() + " FAIL, "
          + table.counts().unproven() + " UNPROVEN, " + table.counts().notApplicable() + " N/A)");
      summary.add("  injected:  " + fault.kind() + ": " + String.join(", ", fault.settings()) + " (layer " + fault.layer() + "; sealed "
          + faultSha.substring(0, 12) + ")");
      summary.add("  diagnosed: " + diagnosis.conclusion() + ": layer " + diagnosed + (diagnosis.rootCause() == null ? ""
          : ", owner " + diagnosis.rootCause().owner() + " — " + diagnosis.rootCause().change()));
      summary.add("  fix:       " + (fv == null ? "not tried (nothing diagnosed)" : (fix.removed().isEmpty() ? "nothing undone"
          : "undid " + String.join(", ", fix.removed())) + " → " + (fixed ? "verified" : FixVerification.INCONCLUSIVE.equals(fv.verdict())
          ? "inconclusive" : "NOT verified")));
      if (!reasons.isEmpty() && !proven) {
        reasons.forEach(r -> summary.add("  why:       " + r));
      }
      for (JsonNode r : recorded) {
        summary.add("  " + r.path("label").asText() + ": " + r.path("name").asText() + " " + r.path("verdict").asText());
      }
      summary.add("  report:    " + html);
      return summary;
    }
  }

  /**
   * Why the fix is not verified; empty when it is. A fix that undid nothing is never verified, whatever the timings
   * say: the fixed run is then the variant's configuration again, and a step that looks like the baseline's only shows
   * that the machine's load hid the fault, and a loaded machine can hide one as large as the smallest compute fault.
   */
  static List<String> notVerified(Fix fix, FixVerification fv) {
    List<String> out = new ArrayList<>();
    if (fix.removed().isEmpty()) {
      out.add("nothing was undone: the fixed run is the variant's configuration again, so it cannot show a fix");
    }
    if (!fv.fixed()) {
      out.addAll(fv.reasons());
    }
    return out;
  }

  /**
   * Writes the fix verification's files: verify-fix.json (the first look, the fixed run against the diagnosis's
   * runs) and, where prove added runs, verify-fix-look-K.json for the last look K, which decides; proof.drift keeps
   * the first look's outcome and the baselines against the baselines run again (how far the machine's load moved).
   */
  private static void verification(Path out, Sequential.Diagnosed dx, Sequential.Verified vx, ObjectNode proof, ObjectNode files) {
    FixVerification first = Diagnosis.verifyFix(dx.baselines(), dx.variants(), vx.fixed().subList(0, 1), List.of(),
        ruleOf(vx.looks().get(0), dx));
    write(out.resolve("verify-fix.json"), Diagnosis.render(first, "json"));
    files.put("verifyFix", "verify-fix.json");
    if (vx.looks().size() == 1) {
      return;
    }
    String last = "verify-fix-look-" + vx.looks().size() + ".json";
    write(out.resolve(last), Diagnosis.render(vx.verification(), "json"));
    files.put("verifyFixAgain", last);
    ObjectNode dn = proof.putObject("drift");
    dn.put("firstVerification", first.fixed() ? "fixed" : first.verdict() + ": " + String.join("; ", first.reasons()));
    if (!vx.baselinesAgain().isEmpty()) {
      Diagnosis drift = Diagnosis.diagnose(dx.baselines(), vx.baselinesAgain(), dx.diagnosis().regression().margin() == null
          ? Diagnosis.Rule.DEFAULT : Diagnosis.Rule.withMargin(dx.diagnosis().regression().margin()));
      dn.set("baselineVsBaselineAgain", Json.mapper().valueToTree(drift.regression()));
      dn.put("baselineVsBaselineAgainConclusion", drift.conclusion());
    }
    dn.put("fixedAgainstBaselineAgain", vx.verification().fixed());
    dn.put("verdict", vx.verification().verdict());
  }

  /** The rule of a look as the sequence planned it. */
  private static Diagnosis.Rule ruleOf(Sequential.Look l, Sequential.Diagnosed dx) {
    double margin = dx.diagnosis().regression().margin() == null ? Diagnosis.Rule.MARGIN : dx.diagnosis().regression().margin();
    return Sequential.paired(Diagnosis.Rule.withMargin(margin)).at(l.look(), l.looks());
  }

  /** A run's directory: the first of each configuration is named by its role alone, later ones are numbered. */
  static String dirName(String role, int k) {
    return switch (role) {
      case "baseline" -> k == 1 ? "baseline" : "baseline-" + k;
      case "variant" -> k == 1 ? "variant" : "variant-" + k;
      case "fixed" -> k == 1 ? "fixed" : k == 2 ? "fixed-again" : "fixed-again-" + (k - 1);
      case "baselineAgain" -> k == 1 ? "baseline-again" : "baseline-again-" + k;
      default -> throw new IllegalArgumentException("run role " + role);
    };
  }

  /** A run's label on the page and in the phases: "baseline 2", "baseline again", "fixed again 2". */
  static String label(String role, int k) {
    return switch (role) {
      case "baselineAgain" -> k == 1 ? "baseline again" : "baseline again " + k;
      case "fixed" -> k == 1 ? "fixed" : k == 2 ? "fixed again" : "fixed again " + (k - 1);
      default -> k == 1 ? role : role + " " + k;
    };
  }

  private static String roleName(String role) {
    return role.equals("baselineAgain") ? "baseline" : role;
  }

  private static void addRun(ArrayNode runs, String role, String dir, String label) {
    ObjectNode r = runs.addObject();
    r.put("role", role);
    r.put("dir", dir);
    r.put("label", label);
  }

  /**
   * "; 3 pairs of runs (look 1 of 1 that can decide)" where prove made more than one pair; the looks before the rule's
   * pairs cannot decide and are not counted among those that spend the error rate.
   */
  private static String lookText(List<Sequential.Look> looks) {
    Sequential.Look l = looks.get(looks.size() - 1);
    return looks.size() == 1 ? "" : "; " + Math.min(l.baselineRuns(), l.otherRuns()) + " pairs of runs (look " + l.look() + " of " + l.looks()
        + " that can decide)";
  }

  /**
   * What would decide: the pairs of runs the steps needed come to (the step-time rule judges pairs of runs, so a longer
   * run does not stand in for another pair: the machine's drift between runs is measured only by more of them).
   */
  private static String runsNeeded(Diagnosis.Regression r) {
    if (r.stepsNeeded() == null) {
      return "";
    }
    int perRun = Math.max(1, r.nBaseline() / Math.max(1, r.baselineRuns()));
    int runs = Math.max(Diagnosis.Rule.PROVE_PAIRS, (int) Math.ceil(r.stepsNeeded() / (double) perRun));
    return " (" + runs + " pairs of runs of " + perRun + " measured steps each; --max-runs " + runs + " lets prove make them)";
  }

  private static int steady(Prediction p) {
    return p.buckets().rebuilt().isEmpty() ? p.buckets().construction().size() : p.buckets().rebuilt().size();
  }

  private static Path run(Plan plan, Path out, String name, List<String> inject, Path prediction) {
    Path dir = out.resolve(name);
    List<String> cl = withoutFault(plan.commandLine());
    cl.add("(" + name + " run)");
    Sizes z = plan.sizes();
    Runner.Result r;
    if (plan.job() instanceof StandIn si) {
      Runner.Request req = Runner.Request.builder(si.scenario().workload(), dir).labels(si.label(), si.scenario().topology().name())
          .backend(si.backend()).ranks(si.nproc(), 1, 0).sizes(z.iters(), z.warmup(), z.profileIters()).inject(inject)
          .prediction(prediction).timeoutSec(z.timeoutSec()).python(z.python()).recorded(cl, plan.tool()).build();
      r = Runner.run(req, null, si.emulate());
    } else {
      OwnCommand oc = (OwnCommand) plan.job();
      // prove records the hook on every backend: diagnose's compute estimate subtracts each bucket's hook-to-GPU-done
      // interval from the step, which the flight recorder does not give (no host time of a collective's end). A proof
      // run's cost is not the user's training's; `run` leaves the hook out on NCCL.
      r = Runner.wrap(Runner.CommandRequest.of(oc.command(), dir).inject(inject).prediction(prediction)
          .hookEvery(Runner.Instrumentation.DEFAULT_HOOK_EVERY)
          .topology(oc.topology()).timeoutSec(z.timeoutSec()).sizes(z.warmup(), z.profileIters())
          .recorded(cl, plan.tool()).emulate(oc.emulate()).topologyNodes(oc.topologyNodes()).build());
    }
    if (r.exitCode() != 0) {
      throw new PathproofException(r.exitCode(), "prove: the " + name + " run failed: " + r.message());
    }
    return dir;
  }

  /**
   * prove's command line as a run records it: without {@code --fault K=V}, which would name the hidden fault in every
   * run's manifest (diagnose reads manifests; the fault is in prove's sealed record only).
   */
  static List<String> withoutFault(List<String> commandLine) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < commandLine.size(); i++) {
      String a = commandLine.get(i);
      if (a.equals("--")) {
        out.addAll(commandLine.subList(i, commandLine.size())); // the user's command: never prove's flags
        break;
      }
      if (a.equals("--fault")) {
        i++;
      } else if (!a.startsWith("--fault=")) {
        out.add(a);
      }
    }
    return out;
  }

  /** The steps of a run as the reader sees them: the stand-in's sizes are the flags, a user's job decides its own. */
  private static String sizeOf(Plan plan, Evidence e) {
    if (plan.job() instanceof StandIn) {
      return plan.sizes().warmup() + " + " + plan.sizes().iters() + " steps";
    }
    long measured = e.steps() == null ? 0 : e.steps().stream().filter(st -> st.rank() == 0 && st.measured()).count();
    long all = e.steps() == null ? 0 : e.steps().stream().filter(st -> st.rank() == 0).count();
    return (all - measured) + " + " + measured + " steps (the job's own)";
  }

  private static void copy(Path from, Path to) {
    try {
      Files.copy(from, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw PathproofException.badInput("prove: cannot copy " + from + " to " + to + ": " + e.getMessage());
    }
  }

  /**
   * The fault as the schema {@code pathproof.fault/1} writes it ({"env":{…},"knobs":{…}}), with what prove adds
   * (kind, layer, seed, the kinds it was drawn from). Its SHA-256 is shown before the variant runs.
   */
  static String faultRecord(Fault f, long seed, List<Fault> catalogue) {
    ObjectNode n = Json.mapper().createObjectNode();
    n.put("schema", "pathproof.fault/1");
    ObjectNode env = n.putObject("env");
    ObjectNode knobs = n.putObject("knobs");
    for (String s : f.settings()) {
      String k = s.substring(0, s.indexOf('='));
      String v = s.substring(s.indexOf('=') + 1);
      if (k.startsWith("NCCL_") || k.startsWith("TORCH_") || k.startsWith("DDP_")) {
        env.put(k, v);
      } else {
        knobs.put(k, v);
      }
    }
    n.put("kind", f.kind());
    n.put("layer", f.layer().id());
    n.put("description", f.description());
    n.put("seed", seed);
    ArrayNode kinds = n.putArray("drawnFrom");
    catalogue.forEach(c -> kinds.add(c.kind()));
    return pretty(n);
  }

  static String sha256(String s) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void phase(ArrayNode phases, Progress say, long t0, String name, String detail) {
    long ms = (System.nanoTime() - t0) / 1_000_000;
    ObjectNode ph = phases.addObject();
    ph.put("name", name);
    ph.put("elapsedMs", ms);
    ph.put("detail", detail);
    say.phase(name, ms, detail);
  }

  /** The output directory is new or empty: the files of two proofs must never mix. */
  private static void prepare(Path out) {
    try {
      if (Files.exists(out)) {
        if (!Files.isDirectory(out)) {
          throw PathproofException.usage("--out " + out + ": exists and is not a directory");
        }
        try (var l = Files.list(out)) {
          if (l.findAny().isPresent()) {
            throw PathproofException.usage("--out " + out + ": not empty; prove writes a new directory");
          }
        }
      }
      Files.createDirectories(out);
    } catch (IOException e) {
      throw PathproofException.badInput("--out " + out + ": cannot create: " + e.getMessage());
    }
  }

  static String pretty(JsonNode n) {
    try {
      return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(n) + "\n";
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void write(Path f, String text) {
    try {
      Files.writeString(f, text, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw PathproofException.badInput("prove: cannot write " + f + ": " + e.getMessage());
    }
  }

  private static String readString(Path f) {
    try {
      return Files.readString(f, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw PathproofException.badInput("prove: cannot read " + f + ": " + e.getMessage());
    }
  }
}

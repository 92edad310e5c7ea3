package io.pathproof.diagnose;

import io.pathproof.accept.Verdict;
import io.pathproof.core.PathproofException;
import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The diagnosis procedure (seed, 回归根因推理): correctness, effect, fingerprint diff, elimination, root cause. Each side
 * may be several runs of one configuration (prove's extension, or {@code diagnose --baseline A --baseline B …}): the
 * structure is read from each side's first run and must be the same in the others (like with like); the measurements
 * are compared run by run, the i-th runs of the two sides a time-adjacent pair ({@link StepStats}).
 */
final class Diagnoser {
  /** Parameter samples of two runs agree when within this relative distance (summation order alone moves ~1e-7). */
  static final double NUMERICS_RTOL = 1e-3;

  private final Evidence b;
  private final Evidence v;
  private final List<Evidence> bRuns;
  private final List<Evidence> vRuns;
  private final Fingerprint fb;
  private final Fingerprint fv;
  private final List<Fingerprint> bs;
  private final List<Fingerprint> vs;
  /** Each side's load with its runs pooled; null where a run recorded none. */
  private final MachineLoad loadB;
  private final MachineLoad loadV;
  private final Diagnosis.Rule rule;
  /** The variant against the baseline, as diagnose judges it; set by verify-fix's first look at the variant. */
  private Diagnosis variantDiagnosis;

  Diagnoser(Evidence baseline, Evidence variant) {
    this(List.of(baseline), List.of(variant), Diagnosis.Rule.DEFAULT);
  }

  Diagnoser(List<Evidence> baselines, List<Evidence> variants, Diagnosis.Rule rule) {
    this.bRuns = List.copyOf(baselines);
    this.vRuns = List.copyOf(variants);
    this.b = bRuns.get(0);
    this.v = vRuns.get(0);
    this.bs = bRuns.stream().map(Fingerprint::new).toList();
    this.vs = vRuns.stream().map(Fingerprint::new).toList();
    this.fb = bs.get(0);
    this.fv = vs.get(0);
    this.loadB = MachineLoad.of(bRuns);
    this.loadV = MachineLoad.of(vRuns);
    this.rule = Objects.requireNonNull(rule, "rule");
  }

  /**
   * Refuses to pool runs that are not of one configuration: each run of a side must have the first run's configuration
   * (ConfigDiff finds no change) and path fingerprint. Pooling a run with another configuration would average two
   * different jobs and call it one.
   */
  static void alike(List<Evidence> runs, String role) {
    if (runs.size() < 2) {
      return;
    }
    Fingerprint first = new Fingerprint(runs.get(0));
    for (int i = 1; i < runs.size(); i++) {
      List<ConfigDiff.Change> changes = ConfigDiff.diff(runs.get(0), runs.get(i));
      Fingerprint f = new Fingerprint(runs.get(i));
      List<String> differ = new ArrayList<>();
      if (!changes.isEmpty()) {
        differ.add("configuration " + describe(changes));
      }
      for (Layer layer : Layer.PATH) {
        String x = first.path.get(layer) == null ? null : first.path.get(layer).value();
        String y = f.path.get(layer) == null ? null : f.path.get(layer).value();
        if (!Objects.equals(x, y)) {
          differ.add(layer + " " + x + " → " + y);
        }
      }
      if (!differ.isEmpty()) {
        throw PathproofException.usage("the " + role + " runs " + runs.get(0).runDir() + " and " + runs.get(i).runDir()
            + " are not like with like (" + String.join("; ", differ) + "): pool only runs of one configuration");
      }
    }
  }

  private static List<double[]> steps(List<Fingerprint> fs) {
    return fs.stream().map(f -> f.steps).toList();
  }

  private static List<double[]> compute(List<Fingerprint> fs) {
    return fs.stream().map(f -> f.compute).toList();
  }

  private static boolean any(List<double[]> runs) {
    return runs.stream().anyMatch(a -> a.length > 0);
  }

  // ------------------------------------------------------------------ parts
  /**
   * The variant's correctness; with several variant runs, every one is judged and the worst wins (a FAIL in any run is
   * the variant's FAIL, named by its run).
   */
  Diagnosis.Correctness correctness() {
    Diagnosis.Correctness first = correctness(fv);
    if (vs.size() == 1) {
      return first;
    }
    Diagnosis.Correctness unproven = null;
    for (Fingerprint f : vs) {
      Diagnosis.Correctness c = correctness(f);
      if (c.verdict() == Verdict.FAIL) {
        return new Diagnosis.Correctness(Verdict.FAIL, f.e.runDir() + ": " + c.evidence());
      }
      if (c.verdict() == Verdict.UNPROVEN && unproven == null) {
        unproven = new Diagnosis.Correctness(Verdict.UNPROVEN, f.e.runDir() + ": " + c.evidence());
      }
    }
    return unproven != null ? unproven : first;
  }

  private Diagnosis.Correctness correctness(Fingerprint variant) {
    Fingerprint.Correctness c = variant.correctness;
    if (!c.known()) {
      return new Diagnosis.Correctness(Verdict.UNPROVEN, "the variant has no replica digests");
    }
    if (c.broken()) {
      List<Integer> minority = c.minorityRanks();
      return new Diagnosis.Correctness(Verdict.FAIL, "replicas differ after training: rank(s) " + minority + " end with other parameters than "
          + "the rest (" + c.digestGroups().size() + " distinct digests, " + c.source() + ")");
    }
    List<Double> sb = fb.correctness.samples();
    List<Double> sv = c.samples();
    // Another run ends on the same parameters only if it did the same arithmetic in the same order. A changed bucket
    // layout, algorithm, protocol, transport, channel count or launch reorders the floating-point sums of the
    // AllReduce (not associative), and training amplifies that: then the samples of two runs are no evidence.
    List<Layer> reordered = pathDiffs().stream().filter(Diagnosis.LayerDiff::changed).map(Diagnosis.LayerDiff::layer).toList();
    if (!reordered.isEmpty() && !sb.equals(sv)) {
      return new Diagnosis.Correctness(Verdict.PASS, "replicas equal on " + c.digestGroups().values().stream().mapToInt(List::size).sum()
          + " rank(s); the parameter samples differ from the baseline's, but the reduction path changed (" + Layer.joined(reordered)
          + "), which reorders the AllReduce's floating-point sums: no evidence of a wrong gradient (" + c.source() + ")");
    }
    if (!sb.isEmpty() && sb.size() == sv.size()) {
      for (int i = 0; i < sb.size(); i++) {
        double x = sb.get(i);
        double y = sv.get(i);
        if (Double.isNaN(y) != Double.isNaN(x) || Math.abs(x - y) > NUMERICS_RTOL * Math.max(Math.abs(x), Math.abs(y)) + 1e-6) {
          return new Diagnosis.Correctness(Verdict.FAIL, "replicas agree with each other but parameter sample " + i + " is " + y
              + " against " + x + " in the baseline: every rank applied a wrong gradient (" + c.source() + ")");
        }
      }
    }
    return new Diagnosis.Correctness(Verdict.PASS, "replicas equal on " + c.digestGroups().values().stream().mapToInt(List::size).sum()
        + " rank(s)" + (sb.isEmpty() ? "" : " and parameter samples agree with the baseline") + " (" + c.source() + ")");
  }

  /** Either run was made under the NCCL emulator (manifest {@code emulation.emulated}): decisions real, timings not. */
  boolean emulated() {
    return emulated(b) || emulated(v);
  }

  private static boolean emulated(Evidence e) {
    return e.manifest() != null && e.manifest().path("emulation").path("emulated").asBoolean(false);
  }

  static final String EMULATED_RULE = "emulated: NCCL decisions real, timings not physical: the step-time effect cannot be judged "
      + "under emulation";

  Diagnosis.Regression regression() {
    if (emulated()) {
      // Never claim a step-time regression (or its absence) from emulated timings.
      return Diagnosis.Regression.unknown(fb.steps.length, fv.steps.length, EMULATED_RULE);
    }
    if (!any(steps(bs)) || !any(steps(vs))) {
      return Diagnosis.Regression.unknown(fb.steps.length, fv.steps.length, "no step times on " + (!any(steps(bs)) ? "the baseline" : "the variant"));
    }
    return regression(StepStats.compare(steps(bs), steps(vs), rule), loadB, loadV, "median of per-iteration step times (slowest rank)");
  }

  /**
   * A comparison as the public record, with the rule in words. A "no change" is kept only where the load cannot have
   * made it: steps that waited for a CPU are evidence of load, not of the code, so when the steps with each rank's
   * run-queue wait taken out changed decidedly while the whole steps look equal, the equality is the machine's (the
   * calmer run hid a change of the job behind less waiting, as a sleeping variant frees the CPUs its peers wait for)
   * and the comparison is inconclusive.
   */
  private Diagnosis.Regression regression(StepStats.Comparison c, MachineLoad lb, MachineLoad lv, String what) {
    String verdict = c.verdict();
    String why = null;
    Integer needed = c.stepsNeeded();
    if ("no change".equals(verdict) && lb != null && lv != null) {
      StepStats.Comparison ww = StepStats.compare(lb.stepsWithoutWait(), lv.stepsWithoutWait(), rule);
      if (ww.regression() || ww.improvement()) {
        verdict = "inconclusive";
        why = String.format(Locale.ROOT, "the whole steps look alike, but without each rank's run-queue wait the step %s (%s): the runs waited "
            + "for a CPU %.3f and %.3f ms per step, so the machine's load, not the job, may have evened them out", ww.regression() ? "regressed"
            : "improved", ratio(ww), lb.jobWaitMs(), lv.jobWaitMs());
        needed = null;
      }
    }
    if ("inconclusive".equals(verdict) && why == null) {
      why = undecided(c, needed);
    }
    return new Diagnosis.Regression("regression".equals(verdict), round(c.ratio(), 4), round(c.ciLow(), 4), round(c.ciHigh(), 4), verdict,
        round(c.baselineMedian(), 4), round(c.variantMedian(), 4), c.nBaseline(), c.nVariant(), what + "; " + rule.describe(),
        round(c.ruleLow(), 4), round(c.ruleHigh(), 4), rule.level(), rule.margin(), needed, c.runsBaseline(), c.runsVariant(), why);
  }

  /** Why a comparison is undecided, and what would decide it: more steps for one pair, more pairs of runs otherwise. */
  static String undecided(StepStats.Comparison c, Integer needed) {
    Diagnosis.Rule rule = c.rule();
    int perRun = c.stepsPerRun();
    String more = needed == null ? "" : !c.runLevel() && rule.pairs() == 1
        ? String.format(Locale.ROOT, "; about %d steps per side would decide at this noise (%d and %d now)", needed, c.nBaseline(), c.nVariant())
        : String.format(Locale.ROOT, "; about %d time-adjacent pairs of runs (%d steps per side) would decide at this spread (%d now)",
            (needed + perRun - 1) / perRun, needed, c.units());
    if (!c.enoughPairs()) {
      return String.format(Locale.ROOT, "%d time-adjacent pair(s) of runs, and the rule asks for %d before a verdict: one pair cannot tell a "
          + "change of the job from the machine's drift between two runs (its %s interval %.3f..%.3f holds the steps' noise only)",
          c.units(), rule.pairs(), pct(rule.level()), c.ruleLow(), c.ruleHigh()) + more;
    }
    return String.format(Locale.ROOT, "the %s interval %.3f..%.3f neither excludes 1 nor lies inside ±%s", pct(rule.level()), c.ruleLow(),
        c.ruleHigh(), pct(rule.margin())) + (c.runLevel() ? String.format(Locale.ROOT, " (over %d unit(s) of runs, the spread between "
        + "them measured)", c.units()) : "") + more;
  }

  static String pct(double x) {
    String s = String.format(Locale.ROOT, "%.2f", x * 100);
    s = s.contains(".") ? s.replaceAll("0+$", "").replaceAll("\\.$", "") : s;
    return s + " %";
  }

  private static Double round(double x, int digits) {
    double f = Math.pow(10, digits);
    return Math.round(x * f) / f;
  }

  List<Diagnosis.LayerDiff> pathDiffs() {
    List<Diagnosis.LayerDiff> out = new ArrayList<>();
    for (Layer layer : Layer.PATH) {
      Fingerprint.Facet x = fb.path.get(layer);
      Fingerprint.Facet y = fv.path.get(layer);
      if (x == null && y == null) {
        continue;
      }
      List<String> kinds = new ArrayList<>();
      List<String> prov = new ArrayList<>();
      for (Fingerprint.Facet f : new Fingerprint.Facet[] {x, y}) {
        if (f != null) {
          f.kinds().forEach(k -> {
            if (!kinds.contains(k)) {
              kinds.add(k);
            }
          });
          prov.addAll(f.provenance());
        }
      }
      String vx = x == null ? null : x.value();
      String vy = y == null ? null : y.value();
      boolean changed = x != null && y != null && !Objects.equals(vx, vy);
      out.add(new Diagnosis.LayerDiff(layer, vx == null ? "(no evidence)" : vx, vy == null ? "(no evidence)" : vy, changed, kinds, prov));
    }
    return out;
  }

  /** Compute outside communication and NCCL kernel time: measurements, compared with the same bootstrap rule. */
  private StepStats.Comparison computeComparison() {
    if (emulated()) {
      return null;
    }
    return any(compute(bs)) && any(compute(vs)) ? StepStats.compare(compute(bs), compute(vs), rule) : null;
  }

  private StepStats.Comparison kernelComparison() {
    if (emulated()) {
      return null;
    }
    List<double[]> kb = bs.stream().map(f -> f.kernelUs).toList();
    List<double[]> kv = vs.stream().map(f -> f.kernelUs).toList();
    return any(kb) && any(kv) ? StepStats.compare(kb, kv, rule) : null;
  }

  private LoadComparison loadComparison(Diagnosis.Regression reg, StepStats.Comparison compute) {
    if (loadB == null || loadV == null || emulated()) {
      return null;
    }
    double change = reg.baselineMedianMs() == null ? Double.NaN : Math.abs(reg.variantMedianMs() - reg.baselineMedianMs());
    return new LoadComparison(loadB, loadV, StepStats.compare(loadB.stepsWithoutWait(), loadV.stepsWithoutWait(), rule), reg.verdict(),
        compute, jobCpu(loadB, loadV, rule), change);
  }

  private static StepStats.Comparison jobCpu(MachineLoad b, MachineLoad v, Diagnosis.Rule rule) {
    return b.hasJobCpu() && v.hasJobCpu() ? StepStats.compare(b.jobCpuPerStep(), v.jobCpuPerStep(), rule) : null;
  }

  private static String loadNote(LoadComparison load) {
    return load == null ? null : "machine load: baseline " + load.baseline().describe() + "; variant " + load.variant().describe()
        + "; without run-queue wait the step still regressed (" + ratio(load.withoutWait()) + ")";
  }

  /** The step-time effect in one line: the medians (pooled where a side has several runs), the ratio, its intervals, the verdict. */
  static String effect(Diagnosis.Regression reg) {
    return String.format(Locale.ROOT, "step median %.3f → %.3f ms%s (ratio %.3f, 95%% CI %.3f..%.3f; %s interval %.3f..%.3f: %s)",
        reg.baselineMedianMs(), reg.variantMedianMs(), reg.baselineRuns() > 1 || reg.variantRuns() > 1
            ? String.format(Locale.ROOT, " (%d and %d runs pooled; the ratio over the runs)", reg.baselineRuns(), reg.variantRuns()) : "",
        reg.ratio(), reg.ciLow(),
        reg.ciHigh(), pct(reg.level()), reg.ruleLow(), reg.ruleHigh(), reg.verdict());
  }

  /** The path layers that had evidence in both runs and did not change. */
  private static List<Layer> examinedPath(List<Diagnosis.Elimination> eliminated) {
    List<Layer> out = new ArrayList<>();
    for (Diagnosis.Elimination e : eliminated) {
      if (Layer.PATH.contains(e.layer())) {
        out.add(e.layer());
      }
    }
    return out;
  }

  private static String ms(double x) {
    return String.format(Locale.ROOT, "%.3f ms", x);
  }

  private static String ratio(StepStats.Comparison c) {
    return String.format(Locale.ROOT, "ratio %.3f, 95%% CI %.3f..%.3f", c.ratio(), c.ciLow(), c.ciHigh());
  }

  // ------------------------------------------------------------------ diagnosis
  Diagnosis diagnose() {
    Diagnosis.Correctness correctness = correctness();
    Diagnosis.Regression reg = regression();
    List<Diagnosis.LayerDiff> diffs = pathDiffs();
    StepStats.Comparison compute = computeComparison();
    StepStats.Comparison kernels = kernelComparison();
    List<Diagnosis.LayerDiff> all = new ArrayList<>(diffs);
    LoadComparison load = loadComparison(reg, compute);
    if (load != null) {
      all.add(new Diagnosis.LayerDiff(Layer.MACHINE_LOAD, load.baseline().describe(), load.variant().describe() + " (steps without "
          + "run-queue wait: " + ratio(load.withoutWait()) + ")", load.explains(), List.of("manifest"), List.of()));
    }
    boolean computeChanged = compute != null && (compute.regression() || compute.improvement());
    // Compute explains a step change only in the step's own direction: a compute estimate that fell while the step
    // rose (two identical runs under drifting load) is no compute regression.
    boolean computeWithStep = compute != null && (compute.regression() && "regression".equals(reg.verdict())
        || compute.improvement() && "improvement".equals(reg.verdict()));
    boolean kernelChanged = kernels != null && (kernels.regression() || kernels.improvement());
    if (compute != null) {
      all.add(new Diagnosis.LayerDiff(Layer.COMPUTE, "median " + ms(compute.baselineMedian()), "median " + ms(compute.variantMedian())
          + " (" + ratio(compute) + ")", computeChanged, List.of("hook"), List.of()));
    }
    if (kernels != null) {
      all.add(new Diagnosis.LayerDiff(Layer.KERNEL_TIME, String.format(Locale.ROOT, "median %.1f us", kernels.baselineMedian()),
          String.format(Locale.ROOT, "median %.1f us (%s)", kernels.variantMedian(), ratio(kernels)), kernelChanged, List.of("kernel-trace"), List.of()));
    }
    List<ConfigDiff.Change> changes = ConfigDiff.diff(b, v);
    List<Diagnosis.ConfigChange> config = new ArrayList<>();
    for (ConfigDiff.Change c : changes) {
      config.add(new Diagnosis.ConfigChange(c.key(), c.baseline(), c.variant(), c.variable(), c.layer(), c.kinds()));
    }
    Map<String, List<ConfigDiff.Change>> variables = ConfigDiff.byVariable(changes);

    // Elimination, in order.
    List<Diagnosis.Elimination> eliminated = new ArrayList<>();
    List<Diagnosis.Elimination> unexamined = new ArrayList<>();
    if (correctness.verdict() == Verdict.PASS) {
      eliminated.add(new Diagnosis.Elimination(Layer.CORRECTNESS, "wrong results excluded: " + correctness.evidence()));
    } else if (correctness.verdict() == Verdict.UNPROVEN) {
      unexamined.add(new Diagnosis.Elimination(Layer.CORRECTNESS, correctness.evidence()));
    }
    List<Layer> changedLayers = new ArrayList<>();
    for (Layer layer : Layer.PATH) {
      Diagnosis.LayerDiff d = find(diffs, layer);
      if (d == null && layer == Layer.NETWORK) {
        continue; // no communicator across nodes in either run: nothing to examine, not evidence missing
      }
      if (d == null || d.baseline().equals("(no evidence)") || d.variant().equals("(no evidence)")) {
        unexamined.add(new Diagnosis.Elimination(layer, d == null ? "no evidence of this layer in either run"
            : "evidence in only one run (baseline: " + d.baseline() + "; variant: " + d.variant() + ")"));
      } else if (!d.changed()) {
        eliminated.add(new Diagnosis.Elimination(layer, d.baseline() + " in both runs (" + String.join(", ", d.evidence())
            + (d.provenance().isEmpty() ? "" : ": " + String.join(", ", d.provenance())) + ")"));
      } else {
        changedLayers.add(layer);
      }
    }
    if (compute == null) {
      unexamined.add(new Diagnosis.Elimination(Layer.COMPUTE, "no hook records with step times in both runs"));
    } else if (!computeChanged) {
      eliminated.add(new Diagnosis.Elimination(Layer.COMPUTE, "compute outside communication " + ms(compute.baselineMedian()) + " → "
          + ms(compute.variantMedian()) + " per step (" + ratio(compute) + "; hook + steps)"));
    }
    if (changes.isEmpty()) {
      eliminated.add(new Diagnosis.Elimination(Layer.CONFIGURATION,
          "no difference in env, versions, topology or DDP flags (manifest, NCCL env echo, DDP logging)"));
    }

    Diagnosis.RootCause root = null;
    List<Diagnosis.Candidate> candidates = new ArrayList<>();
    String conclusion;
    String effect = emulated() ? "step time not judged: " + EMULATED_RULE : reg.ratio() == null ? "step time unknown" : effect(reg);
    boolean effectSeen = "regression".equals(reg.verdict()) || "improvement".equals(reg.verdict());

    if (correctness.verdict() == Verdict.FAIL) {
      conclusion = "root cause";
      root = Remedies.correctness(correctness, fv.correctness, changedLayers.isEmpty(), effect, describe(variables));
    } else if (variables.size() >= 2) {
      conclusion = "confounded";
      for (Map.Entry<String, List<ConfigDiff.Change>> en : variables.entrySet()) {
        Layer layer = en.getValue().get(0).layer();
        candidates.add(new Diagnosis.Candidate(en.getKey(), layer, describe(en.getValue()), agrees(layer, changedLayers)));
      }
      root = new Diagnosis.RootCause(Layer.CONFIGURATION, Layer.Owner.APPLICATION,
          "confounded: " + variables.size() + " variables changed at once (" + String.join("; ", variables.keySet()) + ")",
          evidence(describe(variables), changedLayers, diffs, effect),
          "change one variable at a time: re-run the baseline with each candidate alone and diagnose each against the baseline",
          List.of("attributing the effect to one of the changes without a run that isolates it (common error 11)",
              "a larger timeout or a larger bucket: neither explains a path change"),
          "for each candidate: pathproof run with only that change, then pathproof diagnose --baseline B --variant THAT_RUN");
    } else if (variables.size() == 1) {
      Map.Entry<String, List<ConfigDiff.Change>> only = variables.entrySet().iterator().next();
      Layer layer = only.getValue().get(0).layer();
      boolean pathAgrees = agrees(layer, changedLayers);
      if (pathAgrees) {
        conclusion = "root cause";
        Layer target = layer == Layer.CONFIGURATION ? changedLayers.get(0) : layer;
        root = Remedies.configured(layer, target, only.getKey(), only.getValue(), changedLayers, diffs, effect, effectSeen, fb);
      } else if (computeWithStep) {
        conclusion = "root cause";
        root = Remedies.compute(compute, effect, "the one configuration change (" + describe(only.getValue()) + ") left the path unchanged",
            loadNote(load));
        candidates.add(new Diagnosis.Candidate(only.getKey(), layer, describe(only.getValue()), false));
      } else if (effectSeen || !changedLayers.isEmpty()) {
        conclusion = "unexplained";
        candidates.add(new Diagnosis.Candidate(only.getKey(), layer, describe(only.getValue()), false));
        root = Remedies.unexplained("the one configuration change (" + describe(only.getValue()) + ") acts on " + layer
            + ", which did not change", changedLayers, diffs, effect);
      } else if ("inconclusive".equals(reg.verdict())) {
        conclusion = "inconclusive";
        candidates.add(new Diagnosis.Candidate(only.getKey(), layer, describe(only.getValue()), false));
        root = Remedies.inconclusive("the configuration changed (" + describe(only.getValue()) + ") and the path did not; " + reg.why(),
            effect, reg);
      } else {
        conclusion = "no change";
        root = Remedies.none("the configuration changed (" + describe(only.getValue()) + ") but neither the path nor the step time did",
            effect);
      }
    } else if (!changedLayers.isEmpty()) {
      conclusion = "root cause";
      root = Remedies.unconfigured(changedLayers.get(0), changedLayers, diffs, effect);
    } else if (load != null && load.explains() && !kernelChanged) {
      conclusion = "confounded by machine load";
      root = Remedies.machineLoad(load, effect);
    } else if (computeWithStep) {
      conclusion = "root cause";
      root = Remedies.compute(compute, effect, "no configuration and no path change", loadNote(load));
    } else if (kernelChanged && effectSeen) {
      conclusion = "root cause";
      root = Remedies.slowerLinks(kernels, effect, fb);
    } else if (computeChanged && compute.regression() && !effectSeen && reg.ratio() != null && reg.ratio() >= 1 + StepStats.MIN_EFFECT) {
      // On a busy machine the step is mostly waiting for the slowest rank, which the compute estimate leaves out: the
      // compute rise is decided while the whole step is not yet. Name it, and say the step-time effect is undecided.
      conclusion = "root cause";
      root = Remedies.compute(compute, effect + "; the step-time effect is undecided at this noise (more iterations decide it)",
          "no configuration and no path change", loadNote(load));
    } else if ("regression".equals(reg.verdict()) && !examinedPath(eliminated).isEmpty() && !(compute != null && compute.improvement())) {
      // Every path layer with evidence is unchanged, nothing was configured differently and the communication did not
      // slow down: what is left of the step is compute, even where its own estimate is too noisy to decide alone.
      conclusion = "root cause";
      root = Remedies.residualCompute(compute, effect, examinedPath(eliminated), loadNote(load));
    } else if (effectSeen) {
      conclusion = "unexplained";
      root = Remedies.unexplained("no configuration, path, compute or kernel-time difference explains the step time", changedLayers, diffs,
          effect);
    } else if ("inconclusive".equals(reg.verdict())) {
      // Thin or loaded data is never "no change": the step time could hide a change of the margin's size.
      conclusion = "inconclusive";
      root = Remedies.inconclusive("no configuration, path, compute or kernel-time difference, and the step time is undecided: " + reg.why(),
          effect, reg);
    } else if ("unknown".equals(reg.verdict())) {
      // Missing evidence is never "no change": without step times the effect is unproven.
      conclusion = "unproven";
      root = Remedies.none("no configuration or path difference in the evidence, but " + reg.rule() + ": the step-time effect is unproven",
          effect);
    } else {
      conclusion = "no change";
      root = Remedies.none("no configuration, path, compute or step-time difference", effect);
    }
    return new Diagnosis(Diagnosis.SCHEMA, b.runDir(), v.runDir(), conclusion, correctness, reg, all, config, eliminated, unexamined, root,
        candidates);
  }

  /**
   * A configuration variable agrees with the path when its layer changed; a version/topology change with any path
   * change. Where the variable's own layer has no evidence in the runs (e.g. no TUNING lines, so no protocol), a change
   * of a layer it feeds counts (protocol → threads and channels, via maxThreads and the nc/nt loop of
   * enqueue.cc:1617-1658@v2.22.3-1); a layer with evidence that did not change never agrees.
   */
  private boolean agrees(Layer layer, List<Layer> changedLayers) {
    if (layer == Layer.CONFIGURATION) {
      return !changedLayers.isEmpty();
    }
    if (layer == Layer.DDP_CONFIG) {
      // The flag is itself the layer: DDP's logging data (_get_ddp_logging_data) records what the reducer ran with.
      return true;
    }
    if (changedLayers.contains(layer)) {
      return true;
    }
    boolean unseen = fb.path.get(layer) == null || fv.path.get(layer) == null;
    if (!unseen) {
      return false;
    }
    for (Layer d : layer.feeds()) {
      if (changedLayers.contains(d)) {
        return true;
      }
    }
    return false;
  }

  static String describe(List<ConfigDiff.Change> cs) {
    List<String> out = new ArrayList<>();
    for (ConfigDiff.Change c : cs) {
      out.add(c.key() + " " + c.baseline() + " → " + c.variant() + " (" + String.join(", ", c.kinds()) + ")");
    }
    return String.join(", ", out);
  }

  private static String describe(Map<String, List<ConfigDiff.Change>> vars) {
    List<String> out = new ArrayList<>();
    vars.values().forEach(l -> out.add(describe(l)));
    return String.join("; ", out);
  }

  static List<String> evidence(String configDiff, List<Layer> changedLayers, List<Diagnosis.LayerDiff> diffs, String effect) {
    List<String> out = new ArrayList<>();
    out.add("configuration diff: " + (configDiff.isEmpty() ? "none" : configDiff));
    for (Layer l : changedLayers) {
      Diagnosis.LayerDiff d = find(diffs, l);
      out.add("path diff " + l + ": " + d.baseline() + " → " + d.variant() + " (" + String.join(", ", d.evidence()) + ")");
    }
    out.add("effect: " + effect);
    return out;
  }

  static Diagnosis.LayerDiff find(List<Diagnosis.LayerDiff> diffs, Layer layer) {
    for (Diagnosis.LayerDiff d : diffs) {
      if (d.layer() == layer) {
        return d;
      }
    }
    return null;
  }

  // ------------------------------------------------------------------ verify-fix
  /**
   * The fixed run(s) ({@code v} here) against the baseline(s), and against the variant(s) where given. What a fix must
   * show: the baseline's path and configuration, correct replicas, and on the step time (seed common error 14) that
   * the variant's regression is gone — the fixed runs clearly faster than the variant, by the diagnose rule, whenever
   * the variant regressed (a fix that undid nothing is never verified by noise that hides the fault), and not slower
   * than the baseline (no regression, median not above the baseline's band). A fixed run faster than the baseline's
   * band is no failure: the machine's load fell between the runs, or more than the fault was undone; it is noted.
   * A comparison the fix rests on that is inconclusive makes the verdict "inconclusive", never "fixed".
   */
  FixVerification verifyFix(List<Evidence> variants, List<Evidence> again) {
    List<String> reasons = new ArrayList<>();
    List<String> undecided = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    List<Diagnosis.LayerDiff> differences = new ArrayList<>();
    boolean equal = true;
    for (Layer layer : Layer.PATH) {
      Fingerprint.Facet x = fb.path.get(layer);
      Fingerprint.Facet y = fv.path.get(layer);
      String vx = x == null ? null : x.value();
      String vy = y == null ? null : y.value();
      if (!Objects.equals(vx, vy)) {
        equal = false;
        differences.add(new Diagnosis.LayerDiff(layer, vx == null ? "(no evidence)" : vx, vy == null ? "(no evidence)" : vy, true,
            List.of(), List.of()));
        reasons.add(layer + " differs from the baseline: " + (vx == null ? "(no evidence)" : vx) + " → " + (vy == null ? "(no evidence)" : vy));
      }
    }
    // A fix of a configuration root cause is checkable only if the configuration is the baseline's again.
    List<ConfigDiff.Change> still = ConfigDiff.diff(b, v);
    if (!still.isEmpty()) {
      reasons.add("configuration still differs from the baseline: " + describe(still));
    }
    Diagnosis.Correctness c = correctness();
    if (c.verdict() == Verdict.FAIL) {
      reasons.add("correctness: " + c.evidence());
    }
    if (fb.correctness.known() && vs.stream().anyMatch(f -> !f.correctness.known())) {
      reasons.add("correctness: the fixed run has no replica digests, the baseline had them");
    }
    String nothing = nothingToFix(variants, undecided);
    if (nothing != null) {
      reasons.add(nothing);
    }
    int structural = reasons.size();
    // The fixed runs were made after the diagnosis's baselines, apart in time: never paired with them.
    Diagnosis.Regression reg = emulated() || !any(steps(bs)) || !any(steps(vs)) ? regression()
        : regression(StepStats.compareUnpaired(steps(bs), steps(vs), rule), loadB, loadV, "median of per-iteration step times (slowest rank)");
    Diagnosis.Regression againstVariant = null;
    Double median = null;
    Double lo = null;
    Double hi = null;
    if (!any(steps(bs)) || !any(steps(vs))) {
      reasons.add("step time: " + reg.rule());
    } else {
      median = round(StepStats.median(StepStats.concat(steps(vs))), 4);
      // Where the rule asks for pairs (prove), the fixed runs are judged only beside the baseline runs made next to
      // them: against the first baselines, made minutes before at another load, the machine's drift is in the step.
      List<String> slower = paired() ? List.of() : notSlower(bs, false, "the baseline", notes);
      double[] band = band(bs);
      List<Fingerprint> fa = again == null ? List.of() : again.stream().map(Fingerprint::new).filter(f -> f.steps.length > 0).toList();
      if (!fa.isEmpty() && paired()) {
        slower = notSlower(fa, true, fa.size() == 1 ? "the baseline run beside it" : "the baseline runs beside them", notes);
        band = band(fa);
        reg = compared(fa, vs, MachineLoad.of(again), loadV);
      } else if (!fa.isEmpty()) {
        // Judged beside the baseline run(s) made right after the fixed run(s); the first baseline bounds the same
        // configuration's spread across runs: a fixed step inside it is not slower than "the baseline" on this machine.
        List<String> first = slower;
        slower = notSlower(fa, true, fa.size() == 1 ? "the baseline run beside it" : "the baseline runs beside them", notes);
        band = band(fa);
        reg = compared(fa, vs, MachineLoad.of(again), loadV);
        if (!slower.isEmpty() && first.isEmpty()) {
          notes.add("slower than the baseline run beside it (" + String.join("; ", slower) + ") but not than the first baseline: "
              + "inside the spread the baseline's own configuration showed across the two runs");
          slower = List.of();
        }
      }
      lo = round(band[0], 4);
      hi = round(band[1], 4);
      reasons.addAll(slower);
      againstVariant = againstVariant(variants, fa, reasons, undecided, notes);
      if ("inconclusive".equals(reg.verdict()) && reasons.isEmpty() && undecided.isEmpty()) {
        notes.add("against the baseline the step time is inconclusive (" + reg.why() + "): not slower by the rule; the fix rests on "
            + (againstVariant != null && "improvement".equals(againstVariant.verdict()) ? "the variant's regression undone" : "the path, the "
            + "configuration and the replicas being the baseline's"));
      }
    }
    boolean onlyStepTime = structural == 0 && (reasons.size() > structural || !undecided.isEmpty());
    String verdict = nothing != null ? FixVerification.NOTHING_TO_FIX : !reasons.isEmpty() ? FixVerification.NOT_FIXED
        : !undecided.isEmpty() ? FixVerification.INCONCLUSIVE : FixVerification.FIXED;
    List<String> why = new ArrayList<>(reasons);
    why.addAll(undecided);
    return new FixVerification(FixVerification.SCHEMA, b.runDir(), v.runDir(), verdict.equals(FixVerification.FIXED), equal, differences,
        c.verdict(), median, lo, hi, reg, why, variants == null || variants.isEmpty() ? null : variants.get(0).runDir(), againstVariant,
        onlyStepTime, notes, verdict);
  }

  /**
   * Why there is nothing for a fix to undo, or null: the variant, diagnosed against the baseline as diagnose would, is
   * correct and shows no change of the job (no change, or a slower step the machine's load explains). A fixed run
   * that looks like the baseline then proves nothing; "FIXED" would claim a repair of a fault that never showed.
   * Where that diagnosis is inconclusive, no fix can be shown either, until more runs decide it ({@code undecided}).
   * Without the variant this cannot be told, and the fixed run is judged against the baseline alone.
   */
  private String nothingToFix(List<Evidence> variants, List<String> undecided) {
    if (variants == null || variants.isEmpty()) {
      return null;
    }
    Diagnosis d = new Diagnoser(bRuns, variants, rule).diagnose();
    variantDiagnosis = d;
    if ("inconclusive".equals(d.conclusion())) {
      undecided.add("the variant against the baseline is inconclusive (" + d.regression().why() + "): whether there is a regression to "
          + "undo is not decided, so no fixed run can show a fix yet");
      return null;
    }
    // Both conclusions come only with correct replicas and the baseline's configuration and path (see diagnose()).
    if (!"no change".equals(d.conclusion()) && !"confounded by machine load".equals(d.conclusion())) {
      return null;
    }
    return "nothing to fix: the variant did not regress against the baseline (diagnose: " + d.conclusion()
        + (d.regression().ratio() == null ? "" : String.format(Locale.ROOT, ", step ratio %.3f", d.regression().ratio()))
        + "), so no fixed run can show that a fix undid anything";
  }

  /** The 5th and 95th percentile of the runs' steps, pooled. */
  private static double[] band(List<Fingerprint> fs) {
    double[] s = StepStats.concat(steps(fs));
    Arrays.sort(s);
    return new double[] {StepStats.quantile(s, 0.05), StepStats.quantile(s, 0.95)};
  }

  private Diagnosis.Regression compared(List<Fingerprint> base, List<Fingerprint> fixed, MachineLoad lb, MachineLoad lf) {
    return regression(StepStats.compare(steps(base), steps(fixed), rule), lb, lf, "median of per-iteration step times (slowest rank)");
  }

  /** The rule asks for time-adjacent pairs of runs (prove's sequence): drift is judged by pairs, not by bands. */
  private boolean paired() {
    return rule.pairs() > 1;
  }

  /**
   * Why the fixed runs' step is slower than {@code base}'s (empty when it is not): its median above the base's band
   * (a single pair's check: the steps of one run bound the other's; with the rule asking for pairs, the band moves
   * with the machine's drift and is left out), or a regression by the diagnose rule, {@code adjacent} when the i-th
   * base run was made next to the i-th fixed run. A median below the band is only noted. Emulated timings are never
   * judged.
   */
  private List<String> notSlower(List<Fingerprint> base, boolean adjacent, String what, List<String> notes) {
    List<String> out = new ArrayList<>();
    if (emulated()) {
      return out;
    }
    double[] band = band(base);
    double median = StepStats.median(StepStats.concat(steps(vs)));
    if (paired()) {
      band = new double[] {Double.NEGATIVE_INFINITY, Double.POSITIVE_INFINITY};
    }
    if (median > band[1]) {
      out.add(String.format(Locale.ROOT, "step median %.3f ms is above %s's band %.3f..%.3f ms", median, what, band[0], band[1]));
    } else if (median < band[0]) {
      notes.add(String.format(Locale.ROOT, "step median %.3f ms is below %s's band %.3f..%.3f ms: faster than the baseline (the "
          + "machine's load fell between the runs, or more than the fault was undone); not a failure of the fix", median, what, band[0], band[1]));
    }
    StepStats.Comparison r = adjacent ? StepStats.compare(steps(base), steps(vs), rule) : StepStats.compareUnpaired(steps(base), steps(vs), rule);
    if (r.regression()) {
      out.add(String.format(Locale.ROOT, "step time still regressed against %s: ratio %.4f (95%% CI %.4f..%.4f)", what, r.ratio(), r.ciLow(),
          r.ciHigh()));
    }
    return out;
  }

  /**
   * The fixed runs against the variant runs, for each regression the variant showed against the baseline (the pair
   * the diagnosis judged): its step time and, where it rose with the step, its compute outside communication. The fix
   * must make each clearly better than the variant (the diagnose rule's improvement), else it did not undo that
   * regression; where that comparison is inconclusive the fix is not yet shown ({@code undecided}). A load that fell
   * after the variant speeds the fixed run up as a fix would; that is why the fixed run is also judged beside a
   * baseline made under the same load (prove's A/B/A).
   */
  private Diagnosis.Regression againstVariant(List<Evidence> variants, List<Fingerprint> beside, List<String> reasons,
      List<String> undecided, List<String> notes) {
    if (variants == null || variants.isEmpty() || emulated() || variants.stream().anyMatch(Diagnoser::emulated)) {
      return null;
    }
    if (variantDiagnosis != null && variantDiagnosis.rootCause() != null
        && variantDiagnosis.rootCause().layer() == Layer.CORRECTNESS) {
      // The fault shown was the replicas diverging, not a step time: the fix undoes it when the fixed run's replicas
      // agree (judged above). A step the variant lost meanwhile is the machine's drift or the fault's own small cost,
      // and the fixed run is still held to a step not slower than the baseline beside it.
      notes.add("the variant's root cause is correctness (replicas diverged): the fix is judged on the replicas, the "
          + "path and a step not slower than the baseline, not on the variant's step time");
      return null;
    }
    List<Fingerprint> fx = variants.stream().map(Fingerprint::new).toList();
    if (!any(steps(fx))) {
      notes.add("the variant has no step times: the fixed run is judged against the baseline alone");
      return null;
    }
    MachineLoad lx = MachineLoad.of(variants);
    StepStats.Comparison regressed = StepStats.compare(steps(bs), steps(fx), rule);
    // With pairs, each side against the baseline runs made next to it: the drift between the diagnosis and the fix
    // cancels in each pair, as it cannot in the fixed runs against variant runs made minutes earlier.
    boolean byPairs = paired() && !beside.isEmpty();
    StepStats.Comparison c = byPairs ? StepStats.compareRatios(steps(beside), steps(vs), steps(bs), steps(fx), rule)
        : StepStats.compareUnpaired(steps(fx), steps(vs), rule);
    Diagnosis.Regression r = regression(c, byPairs ? null : lx, byPairs ? null : loadV, (byPairs ? "fixed against the variant, each over the "
        + "baseline runs made next to it: the ratio (fixed / baseline beside it) / (variant / baseline beside it)" : "fixed against the variant: "
        + "median of per-iteration step times") + "; the variant's regression is undone when the fixed run is an improvement on it (ratio <= "
        + (1 - StepStats.MIN_EFFECT) + " and the rule's interval below 1)");
    StepStats.Comparison variantCompute = any(compute(bs)) && any(compute(fx)) ? StepStats.compare(compute(bs), compute(fx), rule) : null;
    boolean loadOnly = regressed.regression() && loadB != null && lx != null && new LoadComparison(loadB, lx,
        StepStats.compare(loadB.stepsWithoutWait(), lx.stepsWithoutWait(), rule), regressed.verdict(), variantCompute,
        jobCpu(loadB, lx, rule), Math.abs(regressed.variantMedian() - regressed.baselineMedian())).explains();
    if (!regressed.regression()) {
      notes.add(String.format(Locale.ROOT, "the variant's step did not regress against the baseline (%s: %s): no step-time regression to "
          + "undo, the fix is judged on the path, the replicas and a step not slower than the baseline", ratio(regressed), regressed.verdict()));
    } else if (loadOnly) {
      // As diagnose says of that pair: the machine, not the job, slowed the variant, so there is no job regression to undo.
      notes.add(String.format(Locale.ROOT, "the variant's slower step against the baseline (%s) is confounded by machine load (the "
          + "variant waited %.3f ms per step for a CPU, the baseline %.3f ms): no step-time regression of the job to undo", ratio(regressed),
          lx.runQueueMs(), loadB.runQueueMs()));
    } else if (!c.improvement()) {
      String what = String.format(Locale.ROOT, "the fixed run's step median %.3f ms against the variant's %.3f ms (%s; %s interval %.3f..%.3f)",
          c.variantMedian(), c.baselineMedian(), ratio(c), pct(rule.level()), c.ruleLow(), c.ruleHigh());
      // Undecided against the variant but decidedly slower than the baseline: whatever the fixed run is, it kept a
      // regression. Judged like with like: beside the baseline run(s) made right after the fixed run(s) where there
      // are any; a load that rose since the first baseline slows the fixed run as a kept regression would.
      boolean stillSlower = (beside.isEmpty() ? StepStats.compareUnpaired(steps(bs), steps(vs), rule)
          : StepStats.compare(steps(beside), steps(vs), rule)).regression();
      if (c.decided() || stillSlower) {
        reasons.add("the variant's regression is not undone: " + what + " is not clearly faster" + (c.decided() ? ""
            : ", and the fixed run is still slower than the baseline" + (beside.isEmpty() ? "" : " run beside it")));
      } else {
        undecided.add("whether the variant's regression is undone is inconclusive: " + what + "; " + undecided(c, c.stepsNeeded()));
      }
    }
    // As diagnose: a compute rise counts only with a step that rose with it (alone it is the load moving time around),
    // or where diagnose named compute on its own rise with the step undecided (the step at least 2 % slower): the fix of
    // that diagnosis must undo the compute it named.
    boolean computeNamed = !regressed.regression() && variantCompute != null && variantCompute.regression()
        && regressed.ratio() >= 1 + StepStats.MIN_EFFECT;
    if ((regressed.regression() && !loadOnly || computeNamed) && variantCompute != null && any(compute(vs)) && variantCompute.regression()) {
      StepStats.Comparison k = byPairs ? StepStats.compareRatios(compute(beside), compute(vs), compute(bs), compute(fx), rule)
          : StepStats.compareUnpaired(compute(fx), compute(vs), rule);
      if (!k.improvement()) {
        String what = String.format(Locale.ROOT, "compute outside communication %.3f ms per step in the fixed run against the variant's "
            + "%.3f ms (%s)", k.variantMedian(), k.baselineMedian(), ratio(k));
        if (k.decided()) {
          reasons.add("the variant's compute regression is not undone: " + what);
        } else {
          undecided.add("whether the variant's compute regression is undone is inconclusive: " + what);
        }
      }
    }
    return r;
  }
}

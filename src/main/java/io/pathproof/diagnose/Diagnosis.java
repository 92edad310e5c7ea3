package io.pathproof.diagnose;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.evidence.Evidence;
import java.util.List;
import java.util.Locale;

/**
 * A blind diagnosis of a variant run against a baseline run: correctness first, then the step-time effect with a
 * bootstrap interval, then the path fingerprint diff layer by layer, the elimination in that order, and a root cause
 * with its owner, the fix, mitigations that would not fix it and the re-run that proves the fix. Where the
 * configuration changed, a root cause needs the configuration diff, the path diff and the measured effect to agree
 * (seed: 唯一配置diff + path diff + effect); more than one changed variable is "confounded" (common error 11).
 *
 * <p>{@code conclusion} ∈ {@code root cause}, {@code confounded}, {@code confounded by machine load} (the variant waited
 * longer for a CPU and that wait explains the slower step), {@code no change}, {@code unexplained}, {@code unproven} (no
 * difference found, but step times missing). Layers ∈ correctness, ddp-buckets, algorithm, protocol, transport,
 * channels, threads, compute, configuration, ddp-config (DDP flags other than the bucket cap), machine-load, none; owners
 * ∈ PyTorch, NCCL host, NCCL device, CUDA+hardware, application. The public entry of the diagnose room is
 * {@link #diagnose} (and {@link #verifyFix}).
 */
public record Diagnosis(
    String schema,
    String baseline,
    String variant,
    String conclusion,
    Correctness correctness,
    Regression regression,
    List<LayerDiff> diffs,
    List<ConfigChange> configuration,
    List<Elimination> eliminated,
    List<Elimination> unexamined,
    RootCause rootCause,
    List<Candidate> candidates) {
  public static final String SCHEMA = "pathproof.diagnosis/1";

  public Diagnosis {
    diffs = List.copyOf(diffs);
    configuration = List.copyOf(configuration);
    eliminated = List.copyOf(eliminated);
    unexamined = List.copyOf(unexamined);
    candidates = List.copyOf(candidates);
  }

  /** Correctness of the variant: PASS, FAIL or UNPROVEN, and why. */
  public record Correctness(String verdict, String evidence) {}

  /**
   * Step time: ratio of medians variant/baseline with its 95 % bootstrap interval; {@code verdict} is regression, no
   * change, improvement, or unknown (no step times). {@code detected} is true for a regression.
   */
  public record Regression(boolean detected, Double ratio, Double ciLow, Double ciHigh, String verdict, Double baselineMedianMs,
      Double variantMedianMs, int nBaseline, int nVariant, String rule) {}

  /** One layer of the fingerprint in both runs. */
  public record LayerDiff(String layer, String baseline, String variant, boolean changed, List<String> evidence, List<String> provenance) {}

  /** One configuration fact that differs. */
  public record ConfigChange(String key, String baseline, String variant, String variable, String layer, List<String> evidence) {}

  /** A layer excluded (or left unexamined) and the evidence for it. */
  public record Elimination(String layer, String evidence) {}

  /** The root cause. */
  public record RootCause(String layer, String owner, String change, List<String> evidence, String fix, List<String> wrongMitigations,
      String rerun) {}

  /** One candidate of a confounded (or unexplained) diagnosis. */
  public record Candidate(String variable, String layer, String change, boolean pathAgrees) {}

  /**
   * Diagnoses {@code variant} against {@code baseline}; never reads the harness's fault-knob record. Refuses (exit 3)
   * a run whose per-rank evidence is not whole ({@link Evidence#integrity()}): a step time, a layout or a digest with
   * a rank's records cut short or missing is the story of some of the ranks, and a blind diagnosis would tell it as
   * the job's.
   */
  public static Diagnosis diagnose(Evidence baseline, Evidence variant) {
    whole(baseline, "baseline");
    whole(variant, "variant");
    return new Diagnoser(baseline, variant).diagnose();
  }

  /** Throws, naming the first gap's file and line, when a run's per-rank evidence has a gap. */
  static void whole(Evidence e, String role) {
    if (e == null || e.integrity() == null || e.integrity().complete()) {
      return;
    }
    List<Evidence.Gap> gaps = e.integrity().gaps();
    Evidence.Gap g = gaps.get(0);
    throw PathproofException.badInput(g.where() + ": " + g.problem() + " (" + (g.rank() < 0 ? "" : "rank " + g.rank() + "'s ")
        + g.kind() + (gaps.size() > 1 ? "; " + (gaps.size() - 1) + " more gap(s)" : "") + "; pathproof accept --run " + e.runDir()
        + " lists every gap): the " + role + "'s evidence is incomplete, and a diagnosis needs every rank's");
  }

  /**
   * Checks a fixed run against the baseline (seed common error 14: re-run the same acceptance): the path
   * fingerprint and configuration equal the baseline's, the replicas are correct and the step is not slower than the
   * baseline's. Without the variant nothing shows that the fix undid a step-time regression; prefer
   * {@link #verifyFix(Evidence, Evidence, Evidence)}.
   */
  public static FixVerification verifyFix(Evidence baseline, Evidence fixed) {
    whole(baseline, "baseline");
    whole(fixed, "fixed run");
    return new Diagnoser(baseline, fixed).verifyFix(null, null);
  }

  /**
   * As {@link #verifyFix(Evidence, Evidence)}, and where the variant's step regressed against the baseline, the fixed
   * run must also be clearly faster than the variant: the regression is gone, not hidden by noise.
   */
  public static FixVerification verifyFix(Evidence baseline, Evidence variant, Evidence fixed) {
    whole(baseline, "baseline");
    whole(variant, "variant");
    whole(fixed, "fixed run");
    return new Diagnoser(baseline, fixed).verifyFix(variant, null);
  }

  /**
   * Like with like on a machine whose load drifts (prove's A/B/A): {@code baseline} is the run the variant was
   * diagnosed against, {@code baselineAgain} the same configuration run right after the fixed run. The variant's
   * regression is judged on its own pair; the fixed run's step beside {@code baselineAgain}, and a step slower than
   * that one but not than {@code baseline} lies inside the baseline configuration's own spread across runs.
   */
  public static FixVerification verifyFix(Evidence baseline, Evidence variant, Evidence fixed, Evidence baselineAgain) {
    whole(baseline, "baseline");
    whole(variant, "variant");
    whole(fixed, "fixed run");
    whole(baselineAgain, "baseline run again");
    return new Diagnoser(baseline, fixed).verifyFix(variant, baselineAgain);
  }

  /**
   * Adaptive iterations where pathproof runs both baseline and variant (prove): call after each look with all step
   * times so far (slowest rank per iteration) and the number of planned looks; "regression", "no regression" (a
   * slowdown of {@code effect} or more is excluded) or "undecided" (run more iterations, interleaved, up to the cap).
   * Stopping at the first decided look keeps A/A false alarms at ≤ 1 % (the looks share that rate).
   */
  public static String decideSteps(double[] baseline, double[] variant, int looks, double effect) {
    if (baseline.length == 0 || variant.length == 0) {
      return "undecided";
    }
    return StepStats.sequential(baseline, variant, looks, effect);
  }

  /** True when nothing is wrong: no regression, correctness not failed, no path change. */
  public boolean clean() {
    return !regression.detected() && !"FAIL".equals(correctness.verdict()) && "no change".equals(conclusion);
  }

  public static String render(Diagnosis d, String format) {
    return switch (format == null ? "table" : format.toLowerCase(Locale.ROOT)) {
      case "table", "text" -> DiagnosisFormat.text(d);
      case "json" -> json(d);
      case "markdown", "md" -> DiagnosisFormat.markdown(d);
      default -> throw new IllegalArgumentException("unknown format '" + format + "' (table, json, markdown)");
    };
  }

  public static String render(FixVerification f, String format) {
    return switch (format == null ? "table" : format.toLowerCase(Locale.ROOT)) {
      case "table", "text" -> DiagnosisFormat.text(f);
      case "json" -> json(f);
      case "markdown", "md" -> DiagnosisFormat.markdown(f);
      default -> throw new IllegalArgumentException("unknown format '" + format + "' (table, json, markdown)");
    };
  }

  static String json(Object o) {
    try {
      return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(o) + "\n";
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}

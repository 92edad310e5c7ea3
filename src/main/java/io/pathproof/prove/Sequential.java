package io.pathproof.prove;

import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.FixVerification;
import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.List;

/**
 * prove's sequential extension. A comparison that is inconclusive is not settled by a longer run — a
 * user's job decides its own number of steps, prove can only run it again — but by more runs, pooled like with like:
 * <ul>
 *   <li>diagnosis: baseline and variant are run again as a pair (B, V, B, V …, so a load that drifts meets both) and
 *       diagnosed with every run of each side pooled, up to {@code maxRuns} runs of each: {@code maxRuns} looks;
 *   <li>fix verification: where only the step time is left (path, configuration and replicas are the baseline's),
 *       the baseline is run again after the fixed run and the fixed configuration after that (A/B/A/B …), each new
 *       run a look, up to {@code maxRuns} runs of each: {@code 2 × maxRuns} looks.
 * </ul>
 * The error rates hold across the looks by alpha spending: every look of a sequence of K planned looks judges with
 * {@code alpha / K} (Bonferroni), so stopping at the first look that decides keeps a false regression, improvement or
 * no change at or below {@code alpha / 2} each, whatever look it stops at. A sequence that ends undecided is reported
 * inconclusive; prove never calls a fault diagnosed or a fix verified on it.
 */
final class Sequential {
  private Sequential() {}

  /** Makes one more run of a configuration: {@code role} (baseline, variant, fixed, baselineAgain) and its number. */
  interface Runs {
    Evidence run(String role, int number);
  }

  /** Told after each look. */
  interface Looks {
    void look(Look look);
  }

  /** One look: which sequence, its number of the planned ones, the runs pooled per side, and what it found. */
  record Look(String sequence, int look, int looks, int baselineRuns, int otherRuns, String verdict, Double ratio, Double ruleLow,
      Double ruleHigh, Double level, Integer stepsNeeded) {
    static Look of(String sequence, Diagnosis.Rule rule, Diagnosis.Regression r, String verdict) {
      // Steps to decide only where this look left something undecided (a fix verified on its variant comparison can
      // carry an undecided comparison beside the baseline; its steps would read as if the look were open).
      return new Look(sequence, rule.look(), rule.looks(), r.baselineRuns(), r.variantRuns(), verdict, r.ratio(), r.ruleLow(), r.ruleHigh(),
          r.level(), "inconclusive".equals(verdict) ? r.stepsNeeded() : null);
    }
  }

  /** The diagnosis of the last look, the runs it pooled and every look made. */
  record Diagnosed(Diagnosis diagnosis, List<Evidence> baselines, List<Evidence> variants, List<Look> looks) {
    Diagnosed {
      baselines = List.copyOf(baselines);
      variants = List.copyOf(variants);
      looks = List.copyOf(looks);
    }

    boolean inconclusive() {
      return "inconclusive".equals(diagnosis.conclusion());
    }
  }

  /** The verification of the last look, the fixed and adjacent baseline runs it pooled, and every look. */
  record Verified(FixVerification verification, List<Evidence> fixed, List<Evidence> baselinesAgain, List<Look> looks) {
    Verified {
      fixed = List.copyOf(fixed);
      baselinesAgain = List.copyOf(baselinesAgain);
      looks = List.copyOf(looks);
    }
  }

  /**
   * Diagnoses {@code baseline} against {@code variant}; while the conclusion is inconclusive and fewer than
   * {@code maxRuns} runs of each exist, runs both again and diagnoses all of them pooled.
   */
  static Diagnosed diagnose(Evidence baseline, Evidence variant, int maxRuns, Diagnosis.Rule rule, Runs more, Looks said) {
    List<Evidence> bs = new ArrayList<>(List.of(baseline));
    List<Evidence> vs = new ArrayList<>(List.of(variant));
    List<Look> looks = new ArrayList<>();
    Diagnosis.Rule r = rule.at(1, maxRuns);
    Diagnosis d = Diagnosis.diagnose(bs, vs, r);
    looks.add(Look.of("diagnosis", r, d.regression(), d.conclusion()));
    said.look(looks.get(looks.size() - 1));
    for (int k = 2; k <= maxRuns && "inconclusive".equals(d.conclusion()); k++) {
      bs.add(more.run("baseline", k));
      vs.add(more.run("variant", k));
      r = rule.at(k, maxRuns);
      d = Diagnosis.diagnose(bs, vs, r);
      looks.add(Look.of("diagnosis", r, d.regression(), d.conclusion()));
      said.look(looks.get(looks.size() - 1));
    }
    return new Diagnosed(d, bs, vs, looks);
  }

  /**
   * Verifies {@code fixed} against the diagnosis's runs; while only the step time stands between it and "fixed" (not
   * fixed or inconclusive on the step time alone) and {@code extend} allows, runs the baseline again and the fixed
   * configuration again in turn, each judged with all runs of its configuration pooled.
   */
  static Verified verify(Diagnosed dx, Evidence fixed, int maxRuns, boolean extend, Diagnosis.Rule rule, Runs more, Looks said) {
    List<Evidence> fs = new ArrayList<>(List.of(fixed));
    List<Evidence> as = new ArrayList<>();
    List<Look> looks = new ArrayList<>();
    int planned = 2 * maxRuns;
    Diagnosis.Rule r = rule.at(1, planned);
    FixVerification fv = Diagnosis.verifyFix(dx.baselines(), dx.variants(), fs, as, r);
    looks.add(Look.of("fix", r, fv.regression(), fv.verdict()));
    said.look(looks.get(looks.size() - 1));
    for (int look = 2; look <= planned && extend && !fv.fixed() && fv.onlyStepTime(); look++) {
      if (as.size() < fs.size()) {
        as.add(more.run("baselineAgain", as.size() + 1));
      } else {
        fs.add(more.run("fixed", fs.size() + 1));
      }
      r = rule.at(look, planned);
      fv = Diagnosis.verifyFix(dx.baselines(), dx.variants(), fs, as, r);
      looks.add(Look.of("fix", r, fv.regression(), fv.verdict()));
      said.look(looks.get(looks.size() - 1));
    }
    return new Verified(fv, fs, as, looks);
  }
}

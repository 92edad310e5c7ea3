package io.pathproof.prove;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.diagnose.Layer;
import io.pathproof.accept.SyntheticRuns;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.FixVerification;
import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Issue 19 §2: prove settles an inconclusive step time with more runs of both configurations, interleaved and pooled,
 * the looks sharing the error rates (Bonferroni alpha spending), and reports inconclusive where they do not decide —
 * never a fault diagnosed or a fix verified on it. Runs are synthetic here: what is tested is the sequence.
 */
class SequentialTest {
  /** Hands out runs of each configuration, each with its own noise, and records the order they were asked for. */
  static final class Maker implements Sequential.Runs {
    final List<String> asked = new ArrayList<>();
    final Consumer<SyntheticRuns.Spec> baseline;
    final Consumer<SyntheticRuns.Spec> variant;
    final Consumer<SyntheticRuns.Spec> fixed;

    Maker(Consumer<SyntheticRuns.Spec> baseline, Consumer<SyntheticRuns.Spec> variant, Consumer<SyntheticRuns.Spec> fixed) {
      this.baseline = baseline;
      this.variant = variant;
      this.fixed = fixed;
    }

    @Override
    public Evidence run(String role, int number) {
      asked.add(role + " " + number);
      Consumer<SyntheticRuns.Spec> c = role.equals("variant") ? variant : role.equals("fixed") ? fixed : baseline;
      return make(role + "-" + number, 100L * asked.size() + role.hashCode() % 97, c);
    }
  }

  static Evidence make(String dir, long seed, Consumer<SyntheticRuns.Spec> c) {
    SyntheticRuns.Spec s = new SyntheticRuns.Spec();
    s.runDir = "runs/" + dir;
    s.seed = seed;
    c.accept(s);
    return SyntheticRuns.build(s);
  }

  static final Consumer<SyntheticRuns.Spec> NOISY = s -> s.cv = 0.10;

  @Test
  void anUndecidedDiagnosisAddsInterleavedPairsWithAlphaSpendingUntilItDecides() {
    // 8 % slower under 10 % noise (in the communication, so no compute estimate decides it alone): one pair of 48 steps
    // cannot decide; more pairs, pooled, do.
    Consumer<SyntheticRuns.Spec> slower = NOISY.andThen(s -> s.commMs = 1.93 + 0.08 * 2.33);
    Maker m = new Maker(NOISY, slower, NOISY);
    List<Sequential.Look> said = new ArrayList<>();
    Sequential.Diagnosed dx = Sequential.diagnose(make("baseline", 1, NOISY), make("variant", 2, slower), 6, Diagnosis.Rule.DEFAULT, m,
        said::add);
    assertThat(dx.looks().get(0).verdict()).isEqualTo("inconclusive");
    assertThat(dx.inconclusive()).isFalse();
    assertThat(dx.diagnosis().regression().verdict()).isEqualTo("regression");
    assertThat(said).isEqualTo(dx.looks());
    // Interleaved: a baseline, then a variant, for every look after the first.
    int k = dx.looks().size();
    assertThat(k).isBetween(2, 6);
    List<String> order = new ArrayList<>();
    for (int i = 2; i <= k; i++) {
      order.add("baseline " + i);
      order.add("variant " + i);
    }
    assertThat(m.asked).isEqualTo(order);
    // Every look judged with alpha / 6: the 99.83 % interval, whatever look it stopped at.
    assertThat(dx.looks()).allSatisfy(l -> {
      assertThat(l.looks()).isEqualTo(6);
      assertThat(l.level()).isCloseTo(1 - 0.01 / 6, org.assertj.core.data.Offset.offset(1e-12));
    });
    assertThat(dx.diagnosis().regression().rule()).contains("look " + k + " of 6", "Bonferroni");
    assertThat(dx.looks().get(k - 1).baselineRuns()).isEqualTo(k);
  }

  @Test
  void aSequenceThatNeverDecidesIsInconclusiveAndNamesNoFault() {
    // The same job on a very noisy machine: three pairs cannot exclude a 5 % change.
    Consumer<SyntheticRuns.Spec> loud = s -> s.cv = 0.40;
    Maker m = new Maker(loud, loud, loud);
    Sequential.Diagnosed dx = Sequential.diagnose(make("baseline", 1, loud), make("variant", 2, loud), 3, Diagnosis.Rule.DEFAULT, m, l -> { });
    assertThat(dx.looks()).hasSize(3);
    assertThat(dx.inconclusive()).isTrue();
    assertThat(dx.diagnosis().rootCause().layer()).isEqualTo(Layer.NONE);
    assertThat(dx.diagnosis().regression().stepsNeeded()).isGreaterThan(3 * 48);
    assertThat(m.asked).containsExactly("baseline 2", "variant 2", "baseline 3", "variant 3");
    // A fault prove would reveal cannot match a layer never named, and Fix undoes nothing on it.
    assertThat(Fix.apply(dx.diagnosis(), new Fault("compute slowdown", List.of("compute_delay_ms=40"), Layer.COMPUTE, "")).removed()).isEmpty();
  }

  @Test
  void aDecidedDiagnosisMakesNoMoreRuns() {
    Consumer<SyntheticRuns.Spec> much = NOISY.andThen(s -> s.computeMs = 0.40 + 0.5 * 2.33);
    Maker m = new Maker(NOISY, much, NOISY);
    Sequential.Diagnosed dx = Sequential.diagnose(make("baseline", 1, NOISY), make("variant", 2, much), 3, Diagnosis.Rule.DEFAULT, m, l -> { });
    assertThat(dx.looks()).hasSize(1);
    assertThat(m.asked).isEmpty();
    assertThat(dx.diagnosis().regression().verdict()).isEqualTo("regression");
  }

  @Test
  void theFixIsVerifiedBesideBaselinesRunAgainAndNeverOnAnUndecidedLook() {
    // A variant 40 % slower; the fixed run is the baseline's job. Verified at once, or with baselines run again beside
    // it (A/B/A/B) — and wherever it stops, the last look is decided.
    Consumer<SyntheticRuns.Spec> slower = NOISY.andThen(s -> s.computeMs = 0.40 + 0.4 * 2.33);
    Maker m = new Maker(NOISY, slower, NOISY);
    Sequential.Diagnosed dx = Sequential.diagnose(make("baseline", 1, NOISY), make("variant", 2, slower), 3, Diagnosis.Rule.DEFAULT, m, l -> { });
    Sequential.Verified vx = Sequential.verify(dx, make("fixed", 3, NOISY), 3, true, Diagnosis.Rule.DEFAULT, m, l -> { });
    assertThat(vx.verification().verdict()).isEqualTo(FixVerification.FIXED);
    assertThat(vx.looks().get(vx.looks().size() - 1).looks()).isEqualTo(6);
    // A fixed run that kept the fault is never verified, however many runs are made: failing on the step time alone,
    // it is measured again beside the baseline run again, alternating (A/B/A/B …), up to three runs of each.
    Maker kept = new Maker(NOISY, slower, slower);
    Sequential.Verified no = Sequential.verify(dx, make("fixed", 4, slower), 3, true, Diagnosis.Rule.DEFAULT, kept, l -> { });
    assertThat(no.verification().fixed()).isFalse();
    assertThat(no.verification().verdict()).isEqualTo(FixVerification.NOT_FIXED);
    assertThat(kept.asked).containsExactly("baselineAgain 1", "fixed 2", "baselineAgain 2", "fixed 3", "baselineAgain 3");
    // Without leave to extend (an emulated run, or a fix that undid nothing) one look is all.
    Sequential.Verified once = Sequential.verify(dx, make("fixed", 5, slower), 3, false, Diagnosis.Rule.DEFAULT, kept, l -> { });
    assertThat(once.looks()).hasSize(1);
  }

  @Test
  void aFixStillUndecidedAfterEveryRunIsInconclusiveNeverFixed() {
    // A variant 12 % slower under 25 % noise, decided only with several pairs; a fixed run half way back stays
    // undecided against the variant: prove alternates baseline again and fixed again, then says inconclusive.
    Consumer<SyntheticRuns.Spec> loud = s -> s.cv = 0.25;
    Consumer<SyntheticRuns.Spec> slower = loud.andThen(s -> s.computeMs = 0.40 + 0.30 * 2.33);
    Consumer<SyntheticRuns.Spec> half = loud.andThen(s -> s.computeMs = 0.40 + 0.15 * 2.33);
    Maker m = new Maker(loud, slower, half);
    Sequential.Diagnosed dx = Sequential.diagnose(make("baseline", 1, loud), make("variant", 2, slower), 3, Diagnosis.Rule.DEFAULT, m, l -> { });
    Sequential.Verified vx = Sequential.verify(dx, make("fixed", 3, half), 3, true, Diagnosis.Rule.DEFAULT, m, l -> { });
    assertThat(vx.verification().fixed()).isFalse();
    if (vx.verification().verdict().equals(FixVerification.INCONCLUSIVE)) {
      assertThat(vx.looks()).hasSize(6);
    }
    List<String> fixPhase = m.asked.stream().filter(a -> a.startsWith("fixed") || a.startsWith("baselineAgain")).toList();
    for (int i = 0; i < fixPhase.size(); i++) {
      assertThat(fixPhase.get(i)).startsWith(i % 2 == 0 ? "baselineAgain" : "fixed");
    }
  }
}

package io.pathproof.prove;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.accept.SyntheticRuns;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.FixVerification;
import io.pathproof.diagnose.Layer;
import io.pathproof.evidence.Evidence;
import io.pathproof.proofdir.Proof;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Issue 19 §2: prove settles an inconclusive step time with more runs of both configurations, in time-adjacent pairs
 * of alternating order (ABBA) judged pair by pair, the looks that can decide sharing the error rates (Bonferroni alpha
 * spending), and reports inconclusive where they do not decide — never a fault diagnosed or a fix verified on it.
 * Runs are synthetic here: what is tested is the sequence (RecordedDriftTest has it on real runs under drift).
 */
class SequentialTest {
    /** Hands out runs of each configuration, each with its own noise, and records the order they were asked for. */
    static final class Maker implements Sequential.Runs {
        final List<String> asked = new ArrayList<>();
        final Consumer<SyntheticRuns.Spec> baseline;
        final Consumer<SyntheticRuns.Spec> variant;
        final Consumer<SyntheticRuns.Spec> fixed;

        Maker(
                Consumer<SyntheticRuns.Spec> baseline,
                Consumer<SyntheticRuns.Spec> variant,
                Consumer<SyntheticRuns.Spec> fixed) {
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
    void anUndecidedDiagnosisAddsPairsInAlternatingOrderWithAlphaSpendingUntilItDecides() {
        // 25 % slower under 10 % step noise (in the communication, so no compute estimate decides it alone): one pair
        // never
        // decides (the rule asks for three); more pairs, judged pair by pair, do.
        Consumer<SyntheticRuns.Spec> slower = NOISY.andThen(s -> s.commMs = 1.93 + 0.25 * 2.33);
        Maker m = new Maker(NOISY, slower, NOISY);
        List<Proof.Look> said = new ArrayList<>();
        Sequential.Diagnosed dx = Sequential.diagnose(
                make("baseline", 1, NOISY),
                make("variant", 2, slower),
                new Sequential.Options(6, Diagnosis.Rule.DEFAULT, m, said::add));
        assertThat(dx.looks().get(0).verdict()).isEqualTo("inconclusive");
        assertThat(dx.looks().get(0).stepsNeeded())
                .as("at least three pairs' steps")
                .isGreaterThanOrEqualTo(3 * 48);
        assertThat(dx.looks().get(1).verdict()).isEqualTo("inconclusive");
        assertThat(dx.inconclusive()).isFalse();
        assertThat(dx.diagnosis().regression().verdict()).isEqualTo("regression");
        assertThat(said).isEqualTo(dx.looks());
        // ABBA: the second pair variant first, the third baseline first, and so on.
        int k = dx.looks().size();
        assertThat(k).isBetween(3, 6);
        List<String> order = new ArrayList<>();
        for (int i = 2; i <= k; i++) {
            order.addAll(
                    i % 2 == 0 ? List.of("variant " + i, "baseline " + i) : List.of("baseline " + i, "variant " + i));
        }
        assertThat(m.asked).isEqualTo(order);
        // Only the looks with three pairs or more can decide, so only they spend the 1 %: four of them, alpha / 4 each.
        assertThat(dx.looks()).allSatisfy(l -> {
            assertThat(l.looks()).isEqualTo(4);
            assertThat(l.level()).isCloseTo(1 - 0.01 / 4, org.assertj.core.data.Offset.offset(1e-12));
        });
        assertThat(dx.diagnosis().regression().rule())
                .contains("look " + (k - 2) + " of 4", "Bonferroni", "at least 3 pairs");
        assertThat(dx.looks().get(k - 1).baselineRuns()).isEqualTo(k);
    }

    @Test
    void aSequenceThatNeverDecidesIsInconclusiveAndNamesNoFault() {
        // The same job on a very noisy machine: three pairs cannot exclude a 5 % change.
        Consumer<SyntheticRuns.Spec> loud = s -> s.cv = 0.40;
        Maker m = new Maker(loud, loud, loud);
        Sequential.Diagnosed dx = Sequential.diagnose(
                make("baseline", 1, loud),
                make("variant", 2, loud),
                new Sequential.Options(3, Diagnosis.Rule.DEFAULT, m, l -> {}));
        assertThat(dx.looks()).hasSize(3);
        assertThat(dx.inconclusive()).isTrue();
        assertThat(dx.diagnosis().rootCause().layer()).isEqualTo(Layer.NONE);
        assertThat(dx.diagnosis().regression().stepsNeeded()).isGreaterThan(3 * 48);
        assertThat(dx.diagnosis().regression().why()).contains("time-adjacent pairs of runs");
        assertThat(m.asked).containsExactly("variant 2", "baseline 2", "baseline 3", "variant 3");
        // A fault prove would reveal cannot match a layer never named, and Fix undoes nothing on it.
        assertThat(Fix.apply(
                                dx.diagnosis(),
                                new Fault("compute slowdown", List.of("compute_delay_ms=40"), Layer.COMPUTE, ""))
                        .removed())
                .isEmpty();
    }

    @Test
    void aDiagnosisDecidedWithoutTheStepTimeMakesNoMoreRunsAndAStepChangeWaitsForThreePairs() {
        // A corrupted gradient is found by the replicas: one pair decides.
        Maker m = new Maker(NOISY, NOISY.andThen(s -> s.corruptRank = 1), NOISY);
        Sequential.Diagnosed dx = Sequential.diagnose(
                make("baseline", 1, NOISY),
                make("variant", 2, NOISY.andThen(s -> s.corruptRank = 1)),
                new Sequential.Options(3, Diagnosis.Rule.DEFAULT, m, l -> {}));
        assertThat(dx.looks()).hasSize(1);
        assertThat(m.asked).isEmpty();
        assertThat(dx.diagnosis().rootCause().layer()).isEqualTo(Layer.CORRECTNESS);
        // A step 3x slower is plain in one pair's steps, but one pair cannot tell it from the machine's drift: three
        // pairs.
        Consumer<SyntheticRuns.Spec> much = NOISY.andThen(s -> s.computeMs = 0.40 + 2 * 2.33);
        Maker slow = new Maker(NOISY, much, NOISY);
        Sequential.Diagnosed d3 = Sequential.diagnose(
                make("baseline", 1, NOISY),
                make("variant", 2, much),
                new Sequential.Options(3, Diagnosis.Rule.DEFAULT, slow, l -> {}));
        assertThat(d3.looks()).hasSize(3);
        assertThat(d3.looks().get(0).verdict()).isEqualTo("inconclusive");
        assertThat(d3.diagnosis().regression().verdict()).isEqualTo("regression");
        assertThat(d3.diagnosis().rootCause().layer()).isEqualTo(Layer.COMPUTE);
    }

    @Test
    void theFixIsVerifiedBesideBaselinesRunAgainAndNeverOnAnUndecidedLook() {
        // A variant 3x slower; the fixed run is the baseline's job: judged beside baselines run again next to each
        // fixed
        // run (F B' | B' F | F B'), and wherever it stops, the last look is decided.
        Consumer<SyntheticRuns.Spec> slower = NOISY.andThen(s -> s.computeMs = 0.40 + 2 * 2.33);
        Maker m = new Maker(NOISY, slower, NOISY);
        Sequential.Diagnosed dx = Sequential.diagnose(
                make("baseline", 1, NOISY),
                make("variant", 2, slower),
                new Sequential.Options(3, Diagnosis.Rule.DEFAULT, m, l -> {}));
        assertThat(dx.diagnosis().regression().verdict()).isEqualTo("regression");
        m.asked.clear();
        Sequential.Verified vx = Sequential.verify(
                dx, make("fixed", 3, NOISY), true, new Sequential.Options(3, Diagnosis.Rule.DEFAULT, m, l -> {}));
        assertThat(vx.verification().verdict())
                .as(vx.verification().reasons().toString())
                .isEqualTo(FixVerification.FIXED);
        assertThat(m.asked)
                .containsExactly("baselineAgain 1", "baselineAgain 2", "fixed 2", "fixed 3", "baselineAgain 3");
        assertThat(vx.looks()).hasSize(4);
        assertThat(vx.verification().againstVariant().verdict()).isEqualTo("improvement");
        assertThat(vx.verification().againstVariant().rule()).contains("each over the baseline runs made next to it");
        // A fixed run that kept the fault is never verified, however many runs are made: it is slower than the baseline
        // run beside it, pair after pair.
        Maker kept = new Maker(NOISY, slower, slower);
        Sequential.Verified no = Sequential.verify(
                dx, make("fixed", 4, slower), true, new Sequential.Options(3, Diagnosis.Rule.DEFAULT, kept, l -> {}));
        assertThat(no.verification().fixed()).isFalse();
        assertThat(no.verification().verdict()).isEqualTo(FixVerification.NOT_FIXED);
        assertThat(no.verification().reasons()).anySatisfy(r -> assertThat(r).contains("beside"));
        // Without leave to extend (an emulated run, or a fix that undid nothing) one look is all.
        Sequential.Verified once = Sequential.verify(
                dx, make("fixed", 5, slower), false, new Sequential.Options(3, Diagnosis.Rule.DEFAULT, kept, l -> {}));
        assertThat(once.looks()).hasSize(1);
    }

    @Test
    void aFixStillUndecidedAfterEveryRunIsInconclusiveNeverFixed() {
        // A variant 30 % slower under 25 % noise; a fixed run half way back stays undecided: prove makes the pairs of
        // baseline again and fixed, then says inconclusive, never fixed.
        Consumer<SyntheticRuns.Spec> loud = s -> s.cv = 0.25;
        Consumer<SyntheticRuns.Spec> slower = loud.andThen(s -> s.computeMs = 0.40 + 0.70 * 2.33);
        Consumer<SyntheticRuns.Spec> half = loud.andThen(s -> s.computeMs = 0.40 + 0.35 * 2.33);
        Maker m = new Maker(loud, slower, half);
        Sequential.Diagnosed dx = Sequential.diagnose(
                make("baseline", 1, loud),
                make("variant", 2, slower),
                new Sequential.Options(3, Diagnosis.Rule.DEFAULT, m, l -> {}));
        Sequential.Verified vx = Sequential.verify(
                dx, make("fixed", 3, half), true, new Sequential.Options(3, Diagnosis.Rule.DEFAULT, m, l -> {}));
        assertThat(vx.verification().fixed()).isFalse();
        assertThat(vx.looks().get(vx.looks().size() - 1).verdict())
                .isIn(FixVerification.INCONCLUSIVE, FixVerification.NOT_FIXED, FixVerification.NOTHING_TO_FIX);
        List<String> fixPhase = m.asked.stream()
                .filter(a -> a.startsWith("fixed") || a.startsWith("baselineAgain"))
                .toList();
        assertThat(fixPhase).isSubsetOf("baselineAgain 1", "baselineAgain 2", "fixed 2", "fixed 3", "baselineAgain 3");
    }
}

package io.pathproof.diagnose;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.accept.SyntheticRuns;
import io.pathproof.core.Json;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Source;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Issue 11 §3: diagnosis on a busy machine. The compute estimate never goes negative when gloo's buckets overlap; with
 * every path layer unchanged a regressed step is compute; and a step that is slower only by the time its ranks waited
 * for a CPU is "confounded by machine load", not a compute regression.
 */
class MachineLoadTest {
    /**
     * A gloo × 4 run shaped like the failing CI case: per step, forward + backward, two buckets whose communication
     * overlaps (the second is ready while the first is in flight, so the sum of their intervals exceeds the step).
     */
    static Evidence gloo(String dir, double extraComputeMs, double waitMs, long seed) {
        SplittableRandom rnd = new SplittableRandom(seed);
        List<Evidence.Step> steps = new ArrayList<>();
        List<Evidence.BucketRecord> recs = new ArrayList<>();
        ObjectNode manifest = Json.mapper().createObjectNode();
        manifest.put("schema", "pathproof.run/1");
        manifest.put("backend", "gloo");
        manifest.put("worldSize", 4);
        manifest.putObject("machineLoad").put("cpuCount", 2);
        int line = 1;
        for (int r = 0; r < 4; r++) {
            long t = 1_000_000_000L;
            for (int it = 0; it < 40; it++) {
                double noise = 1 + 0.03 * (rnd.nextDouble() - 0.5);
                double w = waitMs * (1 + 0.05 * (rnd.nextDouble() - 0.5));
                double fwd = (6 + extraComputeMs) * noise + w;
                long ready0 = t + (long) ((fwd + 4) * 1e6);
                long ready1 = ready0 + 2_000_000L;
                long done0 = ready0 + (long) (20e6 * noise);
                long done1 = done0 + 3_000_000L;
                double ms = (done1 - t) / 1e6 + 1.0;
                recs.add(new Evidence.BucketRecord(
                        r,
                        it,
                        1,
                        1 << 20,
                        false,
                        List.of("d"),
                        ready0,
                        done0,
                        null,
                        Source.line(dir + "/hook.jsonl", line)));
                recs.add(new Evidence.BucketRecord(
                        r,
                        it,
                        0,
                        3 << 20,
                        true,
                        List.of("c", "b", "a"),
                        ready1,
                        done1,
                        null,
                        Source.line(dir + "/hook.jsonl", line + 1)));
                Evidence.StepLoad load =
                        it >= 4 ? new Evidence.StepLoad(ms - w - 0.5, w, waitMs > 1 ? 6.0 : 4.0) : null;
                steps.add(new Evidence.Step(r, it, ms, it >= 4, Source.line(dir + "/steps.jsonl", line), null, load));
                line += 2;
                t += (long) (ms * 1e6) + 200_000L;
            }
        }
        Evidence.Replicas rep = new Evidence.Replicas(
                true,
                List.of(
                        new Evidence.Digest(0, "ab", List.of(0.5)),
                        new Evidence.Digest(1, "ab", List.of(0.5)),
                        new Evidence.Digest(2, "ab", List.of(0.5)),
                        new Evidence.Digest(3, "ab", List.of(0.5))),
                Source.line(dir + "/replicas.json", 1));
        Map<String, com.fasterxml.jackson.databind.JsonNode> logging = new TreeMap<>();
        return Evidence.builder()
                .runDir(dir)
                .ddp(new Evidence.Ddp(recs, logging, List.of()))
                .steps(steps)
                .replicas(rep)
                .manifest(manifest)
                .build();
    }

    private static Diagnosis.LayerDiff diff(Diagnosis d, String layer) {
        return d.diffs().stream()
                .filter(x -> x.layer().id().equals(layer))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void communicationTimeIsTheUnionOfTheBucketIntervalsNotTheirSum() {
        // Bucket 1 ready at 5 ms while bucket 0 (0..10 ms) is in flight, done at 20 ms; a third from 30 to 40 ms: 30 ms
        // of
        // communication, where the sum of intervals (35 ms) counts 5 ms twice.
        List<long[]> iv = List.of(
                new long[] {0, 10_000_000L}, new long[] {5_000_000L, 20_000_000L}, new long[] {30_000_000L, 40_000_000L
                });
        assertThat(Fingerprint.unionMs(iv)).isEqualTo(30.0);
        assertThat(Fingerprint.unionMs(List.of(new long[] {30_000_000L, 40_000_000L}, new long[] {0, 10_000_000L})))
                .as("unsorted")
                .isEqualTo(20.0);
        assertThat(Fingerprint.unionMs(List.of())).isZero();
    }

    @Test
    void overlappingGlooBucketsNeverMakeComputeNegative() {
        // The CI case: step 34 → 70 ms, and a sum of bucket intervals (41 ms) longer than the baseline's step.
        Diagnosis d = Diagnosis.diagnose(gloo("base", 0, 0.5, 1), gloo("slow", 36, 0.5, 2));
        assertThat(d.regression().detected()).isTrue();
        Diagnosis.LayerDiff c = diff(d, "compute");
        double base = Double.parseDouble(c.baseline().replace("median ", "").replace(" ms", ""));
        assertThat(base).as(c.toString()).isPositive();
        assertThat(d.conclusion()).isEqualTo("root cause");
        assertThat(d.rootCause().layer()).isEqualTo(Layer.COMPUTE);
        assertThat(d.rootCause().change()).contains("compute outside communication rose");
    }

    @Test
    void aStepSlowerOnlyByItsWaitForACpuIsConfoundedByMachineLoad() {
        // The same job; the variant's ranks waited 10 ms per step for a CPU (another job started between the two runs).
        Diagnosis d = Diagnosis.diagnose(gloo("base", 0, 0.5, 1), gloo("busy", 0, 10.5, 2));
        assertThat(d.regression().detected()).isTrue();
        assertThat(d.conclusion()).isEqualTo("confounded by machine load");
        assertThat(d.rootCause().layer()).isEqualTo(Layer.MACHINE_LOAD);
        assertThat(d.rootCause().change()).startsWith("confounded by machine load");
        assertThat(d.rootCause().evidence()).anySatisfy(e -> assertThat(e).contains("run-queue wait"));
        assertThat(diff(d, "machine-load").changed()).isTrue();
    }

    @Test
    void aComputeFaultOnABusyMachineIsStillCompute() {
        // More load in the variant AND 20 ms more compute: the wait explains only part of the slower step.
        Diagnosis d = Diagnosis.diagnose(gloo("base", 0, 0.5, 1), gloo("slow-busy", 20, 6.5, 2));
        assertThat(d.rootCause().layer()).isEqualTo(Layer.COMPUTE);
        assertThat(d.rootCause().evidence())
                .anySatisfy(e -> assertThat(e).startsWith("machine load:").contains("still regressed"));
        assertThat(diff(d, "machine-load").changed()).isFalse();
    }

    @Test
    void withEveryPathLayerUnchangedTheResidualOfARegressedStepIsCompute() {
        // No comm hook, so no compute estimate at all; the NCCL path (buckets, algorithm, protocol, transport,
        // channels,
        // threads) is the same in both runs and the step regressed: the residual is compute.
        SyntheticRuns.Spec b = new SyntheticRuns.Spec();
        b.runDir = "runs/baseline";
        b.seed = 11;
        b.withHooks = false;
        SyntheticRuns.Spec v = b.copy();
        v.runDir = "runs/variant";
        v.seed = 12;
        v.computeMs = 1.40;
        Diagnosis d = Diagnosis.diagnose(SyntheticRuns.build(b), SyntheticRuns.build(v));
        assertThat(d.regression().detected()).isTrue();
        assertThat(d.conclusion()).isEqualTo("root cause");
        assertThat(d.rootCause().layer()).isEqualTo(Layer.COMPUTE);
        assertThat(d.rootCause().change()).contains("residual is compute");
        assertThat(d.unexamined()).extracting(x -> x.layer().id()).contains("compute");
    }

    @Test
    void unionOfIntervals() {
        assertThat(Fingerprint.unionMs(
                        List.of(new long[] {0, 10_000_000}, new long[] {5_000_000, 12_000_000}, new long[] {
                            20_000_000, 21_000_000
                        })))
                .isEqualTo(13.0);
        assertThat(Fingerprint.unionMs(List.of())).isZero();
    }

    @Test
    void theAdaptiveRuleDecidesOrAsksForMoreIterations() {
        SplittableRandom r = new SplittableRandom(7);
        double[] base = new double[48];
        double[] same = new double[48];
        double[] slow = new double[48];
        for (int i = 0; i < 48; i++) {
            base[i] = 100 * Math.exp(0.10 * gauss(r));
            same[i] = 100 * Math.exp(0.10 * gauss(r));
            slow[i] = 150 * Math.exp(0.10 * gauss(r));
        }
        assertThat(Diagnosis.decideSteps(base, slow, 4, 0.05)).isEqualTo("regression");
        // At CV 10 % 48 iterations can neither call nor exclude a 5 % slowdown: run more.
        assertThat(Diagnosis.decideSteps(base, same, 4, 0.05)).isEqualTo("undecided");
        double[] quiet = new double[48];
        double[] quiet2 = new double[48];
        for (int i = 0; i < 48; i++) {
            quiet[i] = 100 * Math.exp(0.005 * gauss(r));
            quiet2[i] = 100 * Math.exp(0.005 * gauss(r));
        }
        assertThat(Diagnosis.decideSteps(quiet, quiet2, 4, 0.05)).isEqualTo("no regression");
        assertThat(Diagnosis.decideSteps(new double[0], quiet, 4, 0.05)).isEqualTo("undecided");
    }

    private static double gauss(SplittableRandom r) {
        return Math.sqrt(-2 * Math.log(Math.max(r.nextDouble(), 1e-300))) * Math.cos(2 * Math.PI * r.nextDouble());
    }
}

package io.pathproof.diagnose;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.accept.SyntheticRuns;
import io.pathproof.accept.Verdict;
import io.pathproof.core.Json;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Each case builds a baseline and a variant run the way the seed's capstone did (4×V100, NCCL 2.22.3, one 64 MiB
 * bucket, 5 warm-up + 48 measured steps) and changes one thing; the diagnosis must name it without being told, and
 * must not change when the harness's fault-knob record is removed from the variant's manifest.
 */
class DiagnosisTest {
    private static SyntheticRuns.Spec baseline() {
        SyntheticRuns.Spec s = new SyntheticRuns.Spec();
        s.runDir = "runs/baseline";
        s.seed = 11;
        return s;
    }

    private static SyntheticRuns.Spec variant(Consumer<SyntheticRuns.Spec> change) {
        SyntheticRuns.Spec s = baseline().copy();
        s.runDir = "runs/variant";
        s.seed = 12;
        change.accept(s);
        return s;
    }

    /** Diagnoses, and checks that removing the manifest's inject record changes nothing at all. */
    private static Diagnosis diagnose(SyntheticRuns.Spec b, SyntheticRuns.Spec v) {
        Diagnosis d = Diagnosis.diagnose(SyntheticRuns.build(b), SyntheticRuns.build(v));
        Evidence withoutInject = SyntheticRuns.build(v);
        assertThat(withoutInject.manifest().has("inject")).isEqualTo(!v.inject.isEmpty());
        ((ObjectNode) withoutInject.manifest()).remove("inject");
        Diagnosis blind = Diagnosis.diagnose(SyntheticRuns.build(b), withoutInject);
        assertThat(Diagnosis.render(blind, "json")).isEqualTo(Diagnosis.render(d, "json"));
        return d;
    }

    private static List<String> eliminatedLayers(Diagnosis d) {
        return d.eliminated().stream().map(e -> e.layer().id()).toList();
    }

    @Test
    void channelCapIsFoundFromConfigPathAndEffect() {
        SyntheticRuns.Spec v = variant(s -> {
            s.env.put("NCCL_MIN_NCHANNELS", "1");
            s.env.put("NCCL_MAX_NCHANNELS", "1");
            s.inject.put("NCCL_MIN_NCHANNELS", 1);
            s.inject.put("NCCL_MAX_NCHANNELS", 1);
            s.collChannels = 1;
            s.gridX = 1;
            s.commMs = 7.66; // step 2.33 → 8.06 ms as in the seed
            s.kernelUs = 7600;
        });
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.conclusion()).isEqualTo("root cause");
        assertThat(d.correctness().verdict()).isEqualTo(Verdict.PASS);
        assertThat(d.regression().detected()).isTrue();
        assertThat(d.regression().ratio()).isBetween(3.3, 3.6);
        assertThat(d.regression().ciLow()).isGreaterThan(3.0);
        assertThat(d.rootCause().layer()).isEqualTo(Layer.CHANNELS);
        assertThat(d.rootCause().owner()).isEqualTo("NCCL host");
        assertThat(d.rootCause().change()).contains("NCCL_MAX_NCHANNELS unset → 1", "NCCL_MIN_NCHANNELS unset → 1");
        assertThat(d.rootCause().evidence()).anySatisfy(e -> assertThat(e)
                .startsWith("path diff channels: collChannels [12]; gridX [12] → collChannels [1]; gridX [1]"));
        assertThat(d.rootCause().evidence())
                .anySatisfy(e -> assertThat(e).contains("configuration diff, path diff and effect agree"));
        assertThat(d.rootCause().fix()).contains("remove NCCL_MAX_NCHANNELS=1", "remove NCCL_MIN_NCHANNELS=1");
        assertThat(d.rootCause().wrongMitigations())
                .anySatisfy(w -> assertThat(w).contains("timeout"))
                .anySatisfy(w -> assertThat(w).contains("bucket"))
                .anySatisfy(w -> assertThat(w).contains("NVLink"));
        assertThat(d.rootCause().rerun()).contains("verify-fix");
        // Elimination in the seed's order: correctness, buckets, algorithm/protocol, transport; then compute.
        assertThat(eliminatedLayers(d))
                .containsSubsequence(
                        "correctness", "ddp-buckets", "algorithm", "protocol", "transport", "threads", "compute");
        assertThat(eliminatedLayers(d)).doesNotContain("channels");
        // Both the manifest env and NCCL's own echo carry the change.
        assertThat(d.configuration()).anySatisfy(c -> {
            assertThat(c.key()).isEqualTo("env.NCCL_MAX_NCHANNELS");
            assertThat(c.evidence()).contains(EvidenceKind.MANIFEST, EvidenceKind.NCCL_LOG);
        });
    }

    @Test
    void forcedProtocol() {
        SyntheticRuns.Spec v = variant(s -> {
            s.env.put("NCCL_PROTO", "LL");
            s.inject.put("NCCL_PROTO", "LL");
            s.protoId = 0;
            s.blockX = 512;
            s.commMs = 4.9;
            s.kernelUs = 4800;
        });
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.rootCause().layer()).isEqualTo(Layer.PROTOCOL);
        assertThat(d.rootCause().owner()).isEqualTo("NCCL host");
        assertThat(d.rootCause().change()).contains("NCCL_PROTO unset → LL").contains("threads");
        assertThat(d.rootCause().fix()).contains("remove NCCL_PROTO=LL", "SIMPLE");
        assertThat(eliminatedLayers(d))
                .contains("algorithm", "transport", "channels")
                .doesNotContain("protocol");
        assertThat(d.regression().detected()).isTrue();
    }

    @Test
    void forcedProtocolWithoutTuningLinesIsSeenThroughBlockX() {
        SyntheticRuns.Spec b = baseline();
        b.withTuning = false;
        SyntheticRuns.Spec v = variant(s -> {
            s.withTuning = false;
            s.env.put("NCCL_PROTO", "LL");
            s.blockX = 512;
            s.commMs = 4.9;
        });
        v.withTuning = false;
        Diagnosis d = diagnose(b, v);
        assertThat(d.conclusion()).isEqualTo("root cause");
        assertThat(d.rootCause().layer()).isEqualTo(Layer.PROTOCOL);
        assertThat(d.unexamined()).extracting(x -> x.layer().id()).contains("protocol");
        // But a protocol that is in the evidence and did not change does not agree with NCCL_PROTO.
        SyntheticRuns.Spec same = variant(s -> {
            s.env.put("NCCL_PROTO", "LL");
            s.blockX = 512;
            s.commMs = 4.9;
        });
        Diagnosis u = diagnose(baseline(), same);
        assertThat(u.conclusion()).isEqualTo("unexplained");
        assertThat(u.candidates()).extracting(c -> c.layer().id()).containsExactly("protocol");
        assertThat(u.rootCause().change()).startsWith("unexplained: the one configuration change");
        assertThat(u.rootCause().layer()).isEqualTo(Layer.THREADS);
    }

    @Test
    void forcedAlgorithm() {
        SyntheticRuns.Spec v = variant(s -> {
            s.env.put("NCCL_ALGO", "Tree");
            s.algoId = 0;
            s.blockX = 640;
            s.commMs = 3.9;
            s.kernelUs = 3800;
        });
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.rootCause().layer()).isEqualTo(Layer.ALGORITHM);
        assertThat(d.rootCause().fix()).contains("remove NCCL_ALGO=Tree", "RING");
        assertThat(d.conclusion()).isEqualTo("root cause");
    }

    @Test
    void p2pDisabledFallsBackToShm() {
        SyntheticRuns.Spec v = variant(s -> {
            s.env.put("NCCL_P2P_DISABLE", "1");
            s.inject.put("NCCL_P2P_DISABLE", 1);
            s.transport = "SHM/direct/direct";
            s.commMs = 9.5;
            s.kernelUs = 9400;
        });
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.rootCause().layer()).isEqualTo(Layer.TRANSPORT);
        assertThat(d.rootCause().change()).contains("NCCL_P2P_DISABLE unset → 1");
        assertThat(d.rootCause().fix()).contains("remove NCCL_P2P_DISABLE=1", "P2P/IPC");
        assertThat(d.rootCause().wrongMitigations())
                .anySatisfy(w -> assertThat(w).contains("NVLink"));
        assertThat(eliminatedLayers(d)).contains("channels", "algorithm", "protocol");
    }

    @Test
    void threadCountChangesBlockX() {
        SyntheticRuns.Spec v = variant(s -> {
            s.env.put("NCCL_NTHREADS", "256");
            s.blockX = 288;
            s.commMs = 2.6;
            s.kernelUs = 2500;
        });
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.rootCause().layer()).isEqualTo(Layer.THREADS);
        assertThat(d.diffs()).anySatisfy(l -> {
            assertThat(l.layer()).isEqualTo(Layer.THREADS);
            assertThat(l.baseline()).isEqualTo("blockX [544]");
            assertThat(l.variant()).isEqualTo("blockX [288]");
        });
        assertThat(eliminatedLayers(d)).contains("channels");
    }

    @Test
    void bucketCapChange() {
        SyntheticRuns.Spec v = variant(s -> {
            s.bucketCapBytes = 26_214_400L;
            s.inject.put("bucket_cap_mb", 25);
            s.buckets = List.of(26_214_400L, 26_214_400L, 14_680_064L);
            s.commMs = 2.4;
        });
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.rootCause().layer()).isEqualTo(Layer.BUCKETS);
        assertThat(d.rootCause().owner()).isEqualTo("PyTorch");
        assertThat(d.rootCause().change()).contains("ddp.bucket_cap_bytes 67108864 → 26214400 (ddp-logging)");
        assertThat(d.rootCause().fix())
                .contains("restore bucket_cap_mb=64 (DDP bucket_cap_bytes 67108864, now 26214400)");
        assertThat(d.rootCause().wrongMitigations())
                .anySatisfy(w -> assertThat(w).contains("NCCL tuning"));
    }

    @Test
    void computeSlowdownIsDecidedByMeasurementAlone() {
        SyntheticRuns.Spec v = variant(s -> {
            s.computeMs = 1.40;
            s.inject.put("compute_delay_ms", 1);
        });
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.configuration()).isEmpty();
        assertThat(d.regression().detected()).isTrue();
        assertThat(d.rootCause().layer()).isEqualTo(Layer.COMPUTE);
        assertThat(d.rootCause().owner()).isEqualTo("application");
        assertThat(d.rootCause().change()).contains("compute outside communication rose");
        assertThat(d.rootCause().wrongMitigations())
                .anySatisfy(w -> assertThat(w).startsWith("NCCL tuning"));
        assertThat(eliminatedLayers(d))
                .containsSubsequence(
                        "correctness",
                        "ddp-buckets",
                        "algorithm",
                        "protocol",
                        "transport",
                        "channels",
                        "threads",
                        "configuration");
    }

    @Test
    void corruptedGradientOnOneRankIsACorrectnessFailureFirst() {
        SyntheticRuns.Spec v = variant(s -> {
            s.corruptRank = 2;
            s.inject.put("corrupt_grad_rank", 2);
        });
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.correctness().verdict()).isEqualTo(Verdict.FAIL);
        assertThat(d.rootCause().layer()).isEqualTo(Layer.CORRECTNESS);
        assertThat(d.rootCause().change()).contains("rank(s) [2]");
        assertThat(d.regression().detected()).isFalse();
        assertThat(eliminatedLayers(d)).doesNotContain("correctness");
    }

    /**
     * Equal parameters, but the gradients DDP averaged in the last iteration differ on one rank (a job that ends
     * before its optimizer steps, pytorch#69031's shape): a correctness failure, not a pass on equal replicas.
     */
    @Test
    void gradientsThatDifferWhereDdpAveragedThemAreACorrectnessFailure() {
        SyntheticRuns.Spec v = variant(s -> s.unaveragedGradientRank = 1);
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.correctness().verdict()).isEqualTo(Verdict.FAIL);
        assertThat(d.correctness().evidence())
                .contains("the gradients DDP averaged in iteration 52 differ between ranks (2 distinct digests");
        assertThat(d.rootCause().layer()).isEqualTo(Layer.CORRECTNESS);
    }

    @Test
    void anotherReductionOrderIsNoEvidenceOfAWrongGradient() {
        // A smaller bucket cap re-buckets the model; training then ends on slightly other parameters (the AllReduce's
        // sums run in another order), which is the bucket change's doing, not a wrong gradient.
        SyntheticRuns.Spec v = variant(s -> {
            s.buckets = new java.util.ArrayList<>(List.of(SyntheticRuns.MIB64 / 2, SyntheticRuns.MIB64 / 2));
            s.bucketParams = new java.util.ArrayList<>(List.of(List.of("weight.0"), List.of("weight.1")));
            s.bucketCapBytes = SyntheticRuns.MIB64 / 2;
            s.finalSamples = List.of(0.0131, -0.0441, 0.00012);
            s.inject.put("bucket_cap_mb", 32);
        });
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.correctness().verdict()).isEqualTo(Verdict.PASS);
        assertThat(d.correctness().evidence()).contains("reduction path changed (ddp-buckets");
        assertThat(d.rootCause().layer()).isEqualTo(Layer.BUCKETS);
    }

    @Test
    void theSameReductionEndingElsewhereIsAWrongGradientOnEveryRank() {
        SyntheticRuns.Spec v = variant(s -> s.finalSamples = List.of(0.0131, -0.0441, 0.00012));
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.correctness().verdict()).isEqualTo(Verdict.FAIL);
        assertThat(d.correctness().evidence()).contains("every rank applied a wrong gradient");
    }

    @Test
    void aJobThatNeverEndsTheSameTwiceShowsNoWrongGradientAcrossRuns() {
        // Two baseline runs of one configuration already end apart (a GPU backward with atomics, unseeded data): the
        // variant's other parameters are then no evidence. With one baseline the same variant is a FAIL (above).
        SyntheticRuns.Spec again = baseline();
        again.runDir = "runs/baseline-2";
        again.finalSamples = List.of(0.0127, -0.0439, 0.00013);
        SyntheticRuns.Spec v = variant(s -> s.finalSamples = List.of(0.0131, -0.0441, 0.00012));
        Diagnosis d = Diagnosis.diagnose(
                List.of(SyntheticRuns.build(baseline()), SyntheticRuns.build(again)),
                List.of(SyntheticRuns.build(v)),
                Diagnosis.Rule.DEFAULT);
        assertThat(d.correctness().verdict()).isEqualTo(Verdict.PASS);
        assertThat(d.correctness().evidence()).contains("two runs of the baseline already end apart");
    }

    @Test
    void aaRunsShowNoChange() {
        Diagnosis d = diagnose(baseline(), variant(s -> {}));
        assertThat(d.conclusion()).isEqualTo("no change");
        assertThat(d.regression().detected()).isFalse();
        assertThat(d.regression().verdict()).isEqualTo("no change");
        assertThat(d.regression().ciLow()).isLessThan(1.0);
        assertThat(d.regression().ciHigh()).isGreaterThan(1.0);
        assertThat(d.rootCause().layer()).isEqualTo(Layer.NONE);
        assertThat(d.clean()).isTrue();
        assertThat(d.configuration()).isEmpty();
    }

    @Test
    void withoutStepTimesNothingIsCalledNoChange() {
        Evidence e = SyntheticRuns.build(baseline());
        Evidence noSteps = e.toBuilder().ddp(null).steps(List.of()).build();
        Diagnosis d = Diagnosis.diagnose(noSteps, noSteps);
        assertThat(d.conclusion()).isEqualTo("unproven");
        assertThat(d.regression().verdict()).isEqualTo("unknown");
        assertThat(d.regression().detected()).isFalse();
        assertThat(d.clean()).isFalse();
        assertThat(d.unexamined()).extracting(x -> x.layer().id()).contains("compute");
    }

    @Test
    void aManifestWithoutAnEnvRecordIsNotAnEnvChange() {
        Evidence b = SyntheticRuns.build(baseline());
        ((ObjectNode) b.manifest()).remove("env");
        SyntheticRuns.Spec v = variant(s -> s.env.put("NCCL_ALGO", "Ring"));
        Diagnosis d = Diagnosis.diagnose(b, SyntheticRuns.build(v));
        // The variant's NCCL log echoes NCCL_ALGO, and the baseline's log (present) does not: that is a change; the
        // manifest env entries the baseline never recorded are not.
        assertThat(d.configuration()).extracting(Diagnosis.ConfigChange::key).containsExactly("env.NCCL_ALGO");
        assertThat(d.configuration().get(0).evidence()).containsExactly(EvidenceKind.MANIFEST, EvidenceKind.NCCL_LOG);
    }

    @Test
    void twoChangedVariablesAreConfounded() {
        SyntheticRuns.Spec v = variant(s -> {
            s.env.put("NCCL_MAX_NCHANNELS", "1");
            s.env.put("NCCL_PROTO", "LL");
            s.collChannels = 1;
            s.gridX = 1;
            s.protoId = 0;
            s.blockX = 512;
            s.commMs = 12;
            s.kernelUs = 11900;
        });
        Diagnosis d = diagnose(baseline(), v);
        assertThat(d.conclusion()).isEqualTo("confounded");
        assertThat(d.candidates()).extracting(c -> c.layer().id()).containsExactlyInAnyOrder("channels", "protocol");
        assertThat(d.candidates()).allSatisfy(c -> assertThat(c.pathAgrees()).isTrue());
        assertThat(d.rootCause().change()).startsWith("confounded: 2 variables");
    }

    @Test
    void glooRunsWithoutNcclEvidence() {
        SyntheticRuns.Spec b = baseline();
        b.backend = "gloo";
        b.withKernels = false;
        SyntheticRuns.Spec v = b.copy();
        v.runDir = "runs/variant";
        v.seed = 99;
        assertThat(diagnose(b, v).conclusion()).isEqualTo("no change");
        v.computeMs = 2.0;
        Diagnosis d = diagnose(b, v);
        assertThat(d.rootCause().layer()).isEqualTo(Layer.COMPUTE);
        assertThat(d.unexamined()).extracting(x -> x.layer().id()).contains("algorithm", "transport", "channels");
    }

    @Test
    void jsonCarriesThePublishedFields() throws Exception {
        Diagnosis d = diagnose(baseline(), variant(s -> {
            s.env.put("NCCL_MAX_NCHANNELS", "1");
            s.collChannels = 1;
            s.gridX = 1;
            s.commMs = 7.66;
        }));
        JsonNode j = Json.mapper().readTree(Diagnosis.render(d, "json"));
        for (String f : List.of("detected", "ratio", "ciLow", "ciHigh")) {
            assertThat(j.path("regression").has(f)).as(f).isTrue();
        }
        assertThat(j.path("eliminated").get(0).path("layer").asText()).isEqualTo("correctness");
        assertThat(j.path("eliminated").get(0).has("evidence")).isTrue();
        for (String f : List.of("layer", "owner", "change", "evidence", "fix", "wrongMitigations")) {
            assertThat(j.path("rootCause").has(f)).as(f).isTrue();
        }
        assertThat(Diagnosis.render(d, "markdown"))
                .contains("### pathproof diagnose: root cause (regression)", "| channels |");
        assertThat(Diagnosis.render(d, "table")).contains("5. root cause: layer channels, owner NCCL host");
    }

    @Test
    void verifyFixNeedsTheBaselineFingerprintAndStepTimeBack() {
        SyntheticRuns.Spec fixedRun = variant(s -> s.seed = 77);
        FixVerification ok = Diagnosis.verifyFix(SyntheticRuns.build(baseline()), SyntheticRuns.build(fixedRun));
        assertThat(ok.fixed()).as(ok.reasons().toString()).isTrue();
        assertThat(ok.fingerprintEqual()).isTrue();
        assertThat(ok.medianMs()).isBetween(ok.bandLowMs(), ok.bandHighMs());

        SyntheticRuns.Spec still = variant(s -> {
            s.collChannels = 1;
            s.gridX = 1;
            s.commMs = 7.66;
        });
        FixVerification bad = Diagnosis.verifyFix(SyntheticRuns.build(baseline()), SyntheticRuns.build(still));
        assertThat(bad.fixed()).isFalse();
        assertThat(bad.fingerprintEqual()).isFalse();
        assertThat(bad.reasons())
                .anySatisfy(r -> assertThat(r).startsWith("channels differs"))
                .anySatisfy(r -> assertThat(r).contains("above the baseline's band"));
        // Same path but still slow: the fingerprint alone is not enough.
        SyntheticRuns.Spec slow = variant(s -> s.computeMs = 1.2);
        FixVerification slowFix = Diagnosis.verifyFix(SyntheticRuns.build(baseline()), SyntheticRuns.build(slow));
        assertThat(slowFix.fingerprintEqual()).isTrue();
        assertThat(slowFix.fixed()).isFalse();
        assertThat(Diagnosis.render(slowFix, "json")).contains("\"fixed\" : false");
    }

    @Test
    void verifyFixOfAVariantThatDidNotRegressSaysNothingToFixNotFixed() {
        // Issue 19 §3: with nothing wrong in the variant, a fixed run that looks like the baseline was "FIXED".
        Evidence base = SyntheticRuns.build(baseline());
        Evidence unchanged = SyntheticRuns.build(variant(s -> {}));
        assertThat(Diagnosis.diagnose(base, unchanged).conclusion()).isEqualTo("no change");
        FixVerification f = Diagnosis.verifyFix(base, unchanged, SyntheticRuns.build(variant(s -> s.seed = 77)));
        assertThat(f.verdict()).isEqualTo("nothing to fix");
        assertThat(f.fixed()).isFalse();
        assertThat(f.onlyStepTime()).isFalse();
        assertThat(f.reasons()).singleElement().satisfies(r -> assertThat(r)
                .startsWith("nothing to fix: the variant did not regress"));
        assertThat(Diagnosis.render(f, "table"))
                .startsWith("verify-fix: NOTHING TO FIX")
                .doesNotContain("FIXED (");
        assertThat(Diagnosis.render(f, "markdown")).contains("nothing to fix").doesNotContain("✅");
        assertThat(Diagnosis.render(f, "json")).contains("\"verdict\" : \"nothing to fix\"", "\"fixed\" : false");
        // A variant that did regress keeps the verdict it always had.
        Evidence slow = SyntheticRuns.build(variant(s -> s.computeMs = 1.2));
        assertThat(Diagnosis.verifyFix(base, slow, SyntheticRuns.build(variant(s -> s.seed = 77)))
                        .verdict())
                .isEqualTo("fixed");
    }
}

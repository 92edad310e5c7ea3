package io.pathproof.diagnose;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.accept.SyntheticRuns;
import io.pathproof.evidence.Evidence;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 11 §4 and the faults of issues 9 and 10: for every fault kind prove can inject, the diagnosis names the layer
 * and offers a fix, blind — and it does not change when everything in the variant's manifest that could name the fault
 * (inject, knobs, the command lines, the launcher's env record, the injected variables in the env record) is stripped.
 * The NCCL kinds are diagnosed on emulated pairs too, from decision evidence alone, never claiming a step-time effect.
 */
class BlindFaultTest {
    record Fault(String name, String layer, String owner, String fixContains, Consumer<SyntheticRuns.Spec> change) {}

    static final List<Fault> FAULTS = List.of(
            new Fault("channels", "channels", "NCCL host", "remove NCCL_MAX_NCHANNELS=1", s -> {
                s.env.put("NCCL_MIN_NCHANNELS", "1");
                s.env.put("NCCL_MAX_NCHANNELS", "1");
                s.inject.put("NCCL_MIN_NCHANNELS", 1);
                s.inject.put("NCCL_MAX_NCHANNELS", 1);
                s.collChannels = 1;
                s.gridX = 1;
                s.commMs = 7.66;
                s.kernelUs = 7600;
            }),
            new Fault("protocol", "protocol", "NCCL host", "remove NCCL_PROTO=LL128", s -> {
                s.env.put("NCCL_PROTO", "LL128");
                s.inject.put("NCCL_PROTO", "LL128");
                s.protoId = 1;
                s.blockX = 640;
                s.commMs = 2.6;
            }),
            new Fault("algorithm", "algorithm", "NCCL host", "remove NCCL_ALGO=Tree", s -> {
                s.env.put("NCCL_ALGO", "Tree");
                s.inject.put("NCCL_ALGO", "Tree");
                s.algoId = 0;
                s.commMs = 2.9;
            }),
            new Fault("p2p-disabled", "transport", "NCCL host", "remove NCCL_P2P_DISABLE=1", s -> {
                s.env.put("NCCL_P2P_DISABLE", "1");
                s.inject.put("NCCL_P2P_DISABLE", 1);
                s.transport = "SHM/direct/direct";
                s.commMs = 9.5;
            }),
            new Fault("threads", "threads", "NCCL host", "remove NCCL_NTHREADS=256", s -> {
                s.env.put("NCCL_NTHREADS", "256");
                s.inject.put("NCCL_NTHREADS", 256);
                s.blockX = 288;
                s.commMs = 2.4;
            }),
            new Fault("bucket-cap", "ddp-buckets", "PyTorch", "restore bucket_cap_mb=64", s -> {
                s.bucketCapBytes = 26_214_400L;
                s.inject.put("bucket_cap_mb", 25);
                s.buckets = List.of(26_214_400L, 26_214_400L, 14_680_064L);
                s.commMs = 2.4;
            }),
            new Fault("find-unused-parameters", "ddp-config", "PyTorch", "restore find_unused_parameters=False", s -> {
                s.findUnused = true;
                s.inject.put("find_unused_parameters", "true");
            }),
            new Fault("compute", "compute", "application", "forward, backward or the optimizer", s -> {
                s.computeMs = 1.40;
                s.inject.put("compute_delay_ms", 1);
            }),
            new Fault("corrupt-gradient", "correctness", "application", "rank(s) [2]", s -> {
                s.corruptRank = 2;
                s.inject.put("corrupt_grad_rank", 2);
            }));

    static Stream<Arguments> faults() {
        return FAULTS.stream().map(f -> Arguments.of(f.name(), f));
    }

    static SyntheticRuns.Spec baseline(boolean gloo, boolean emulated) {
        SyntheticRuns.Spec s = new SyntheticRuns.Spec();
        s.runDir = "runs/baseline";
        s.seed = 11;
        s.emulated = emulated;
        if (gloo) {
            s.backend = "gloo";
            s.withNcclLog = false;
            s.withKernels = false;
        }
        return s;
    }

    static SyntheticRuns.Spec variant(SyntheticRuns.Spec base, Fault f) {
        SyntheticRuns.Spec s = base.copy();
        s.runDir = "runs/variant";
        s.seed = 12;
        f.change().accept(s);
        return s;
    }

    /** Everything in the manifest that could name the fault: the records the launcher and harness once kept. */
    static Evidence stripped(Evidence e, Map<String, Object> inject) {
        ObjectNode m = e.manifest().deepCopy();
        m.remove(List.of("inject", "knobs"));
        for (String key : List.of("commandLine", "argv")) {
            if (m.get(key) instanceof ArrayNode a) {
                ArrayNode keep = m.putArray(key);
                for (int i = 0; i < a.size(); i++) {
                    String x = a.get(i).asText();
                    if (x.equals("--inject") || x.equals("--knob")) {
                        i++;
                    } else if (inject.keySet().stream().noneMatch(x::contains)) {
                        keep.add(x);
                    }
                }
            }
        }
        for (String key : List.of("env", "launcherEnv")) {
            if (m.get(key) instanceof ObjectNode o) {
                inject.keySet().forEach(o::remove);
            }
        }
        m.remove("rankArgv");
        return e.toBuilder().manifest(m).build();
    }

    private static void assertDiagnosed(Diagnosis d, Fault f) {
        assertThat(d.rootCause().layer().id())
                .as(f.name() + ": " + Diagnosis.render(d, "json"))
                .isEqualTo(f.layer());
        assertThat(d.rootCause().owner()).as(f.name()).isEqualTo(f.owner());
        assertThat(d.rootCause().fix() + " " + d.rootCause().change())
                .as(f.name())
                .contains(f.fixContains());
        assertThat(d.conclusion()).as(f.name()).isEqualTo("root cause");
    }

    private static void assertSameDiagnosis(Diagnosis blind, Diagnosis told, Fault f) {
        assertThat(blind.conclusion()).as(f.name()).isEqualTo(told.conclusion());
        assertThat(blind.rootCause().layer())
                .as(f.name())
                .isEqualTo(told.rootCause().layer());
        assertThat(blind.rootCause().owner())
                .as(f.name())
                .isEqualTo(told.rootCause().owner());
        assertThat(blind.rootCause().fix())
                .as(f.name())
                .isEqualTo(told.rootCause().fix());
        assertThat(blind.regression()).as(f.name()).isEqualTo(told.regression());
        assertThat(blind.correctness()).as(f.name()).isEqualTo(told.correctness());
        assertThat(blind.eliminated().stream().map(Diagnosis.Elimination::layer).toList())
                .isEqualTo(told.eliminated().stream()
                        .map(Diagnosis.Elimination::layer)
                        .toList());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("faults")
    void everyFaultKindIsDiagnosedBlindOnNccl(String name, Fault f) {
        SyntheticRuns.Spec b = baseline(false, false);
        SyntheticRuns.Spec v = variant(b, f);
        Evidence variant = SyntheticRuns.build(v);
        Diagnosis told = Diagnosis.diagnose(SyntheticRuns.build(b), variant);
        assertDiagnosed(told, f);
        Evidence blind = stripped(variant, v.inject);
        assertThat(blind.manifest().toString()).doesNotContain("inject").doesNotContain("--knob");
        for (String k : v.inject.keySet()) {
            assertThat(blind.manifest().toString()).as(k).doesNotContain(k);
        }
        assertSameDiagnosis(Diagnosis.diagnose(SyntheticRuns.build(b), blind), told, f);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("faults")
    void theGlooKindsAreDiagnosedBlindOnGloo(String name, Fault f) {
        if (!List.of("bucket-cap", "find-unused-parameters", "compute", "corrupt-gradient")
                .contains(f.name())) {
            return; // NCCL decisions do not exist on gloo
        }
        SyntheticRuns.Spec b = baseline(true, false);
        SyntheticRuns.Spec v = variant(b, f);
        Evidence variant = SyntheticRuns.build(v);
        Diagnosis told = Diagnosis.diagnose(SyntheticRuns.build(b), variant);
        assertDiagnosed(told, f);
        assertSameDiagnosis(Diagnosis.diagnose(SyntheticRuns.build(b), stripped(variant, v.inject)), told, f);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("faults")
    void emulatedPairsAreDiagnosedFromDecisionsAloneAndNeverClaimAStepTimeEffect(String name, Fault f) {
        if (List.of("compute", "corrupt-gradient", "find-unused-parameters").contains(f.name())) {
            return; // issue 9's emulated kinds: the NCCL decisions and the bucket cap
        }
        SyntheticRuns.Spec b = baseline(false, true);
        SyntheticRuns.Spec v = variant(b, f);
        Evidence variant = SyntheticRuns.build(v);
        Diagnosis d = Diagnosis.diagnose(SyntheticRuns.build(b), variant);
        assertDiagnosed(d, f);
        assertThat(d.regression().detected()).isFalse();
        assertThat(d.regression().verdict()).isEqualTo("unknown");
        assertThat(d.regression().rule()).contains("cannot be judged under emulation");
        assertThat(d.rootCause().evidence())
                .anySatisfy(e -> assertThat(e).contains("cannot be judged under emulation"));
        assertThat(d.diffs()).noneMatch(x -> x.layer() == Layer.COMPUTE || x.layer() == Layer.KERNEL_TIME);
        if (f.name().equals("channels")) {
            assertThat(d.rootCause().fix()).contains("remove NCCL_MIN_NCHANNELS=1");
            assertThat(d.rootCause().wrongMitigations())
                    .anySatisfy(w -> assertThat(w).contains("NVLink"))
                    .anySatisfy(w -> assertThat(w).contains("bucket"))
                    .anySatisfy(w -> assertThat(w).contains("timeout"));
        }
        assertSameDiagnosis(Diagnosis.diagnose(SyntheticRuns.build(b), stripped(variant, v.inject)), d, f);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("faults")
    void verifyFixAcceptsTheBaselineAgainAndRefusesTheFault(String name, Fault f) {
        SyntheticRuns.Spec b = baseline(false, false);
        SyntheticRuns.Spec fixed = b.copy();
        fixed.runDir = "runs/fixed";
        fixed.seed = 13;
        assertThat(Diagnosis.verifyFix(SyntheticRuns.build(b), SyntheticRuns.build(fixed))
                        .fixed())
                .as(f.name())
                .isTrue();
        FixVerification still = Diagnosis.verifyFix(SyntheticRuns.build(b), SyntheticRuns.build(variant(b, f)));
        assertThat(still.fixed()).as(f.name() + ": " + still.reasons()).isFalse();
    }

    @org.junit.jupiter.api.Test
    void ingestNeverOpensTheSealedFaultAndDiagnoseNeverNamesIt(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Files.writeString(
                dir.resolve("manifest.json"), "{\"schema\":\"pathproof.run.manifest/1\",\"backend\":\"gloo\"}");
        java.nio.file.Files.writeString(
                dir.resolve("steps-rank0.jsonl"), "{\"rank\":0,\"iteration\":0,\"phase\":\"measured\",\"ms\":1.0}\n");
        Evidence without = io.pathproof.evidence.Ingest.read(List.of(dir));
        // A sealed fault that would read as NCCL evidence if it were opened as a log.
        java.nio.file.Files.writeString(
                dir.resolve("fault.sealed.json"),
                "{\"schema\":\"pathproof.fault/1\",\"env\":{\"NCCL_MAX_NCHANNELS\":\"1\"},"
                        + "\"knobs\":{}}\nhost:1:1 [0] NCCL INFO NCCL_MAX_NCHANNELS set by environment to 1.\n");
        Evidence with = io.pathproof.evidence.Ingest.read(List.of(dir));
        assertThat(with.files()).noneMatch(f -> f.path().contains("fault.sealed"));
        assertThat(with.problems()).noneMatch(p -> p.toString().contains("fault.sealed"));
        assertThat(with.files()).isEqualTo(without.files());
        // The diagnose room's sources never name the file.
        for (java.nio.file.Path src : java.nio.file.Files.list(
                        java.nio.file.Path.of("src/main/java/io/pathproof/diagnose"))
                .toList()) {
            assertThat(java.nio.file.Files.readString(src)).as(src.toString()).doesNotContain("fault.sealed");
        }
    }
}

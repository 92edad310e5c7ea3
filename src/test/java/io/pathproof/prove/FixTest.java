package io.pathproof.prove;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.accept.Verdict;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.Layer;
import io.pathproof.diagnose.Regressions;
import io.pathproof.evidence.EvidenceKind;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The fix undoes only what the diagnosis names: a wrong diagnosis leaves the fault in place. */
class FixTest {
    static Diagnosis diagnosis(Layer layer, List<Diagnosis.ConfigChange> config) {
        return diagnosis(layer, "owner", config);
    }

    static Diagnosis diagnosis(Layer layer, String owner, List<Diagnosis.ConfigChange> config) {
        return new Diagnosis(
                Diagnosis.SCHEMA,
                "b",
                "v",
                "root cause",
                new Diagnosis.Correctness(Verdict.PASS, ""),
                Regressions.of("regression", 2.0, 1.9, 2.1, 1.0, 2.0, ""),
                List.of(),
                config,
                List.of(),
                List.of(),
                new Diagnosis.RootCause(layer, owner, "change", List.of(), "the fix", List.of(), "rerun"),
                List.of());
    }

    @Test
    void aConfiguredCauseUndoesTheSettingsTheConfigurationDiffNames() {
        Fault cap =
                new Fault("channel cap", List.of("NCCL_MIN_NCHANNELS=1", "NCCL_MAX_NCHANNELS=1"), Layer.CHANNELS, "");
        Diagnosis d = diagnosis(
                Layer.CHANNELS,
                List.of(
                        new Diagnosis.ConfigChange(
                                "env.NCCL_MIN_NCHANNELS",
                                "unset",
                                "1",
                                "NCCL channel limits",
                                Layer.CHANNELS,
                                List.of(EvidenceKind.NCCL_LOG)),
                        new Diagnosis.ConfigChange(
                                "env.NCCL_MAX_NCHANNELS",
                                "unset",
                                "1",
                                "NCCL channel limits",
                                Layer.CHANNELS,
                                List.of(EvidenceKind.NCCL_LOG))));
        Fix f = Fix.apply(d, cap);
        assertThat(f.removed()).containsExactly("NCCL_MIN_NCHANNELS=1", "NCCL_MAX_NCHANNELS=1");
        assertThat(f.kept()).isEmpty();
    }

    @Test
    void theBucketCapIsUndoneFromDdpsOwnRecordInBytes() {
        Fault cap = new Fault("bucket-cap change", List.of("bucket_cap_mb=0.78125"), Layer.BUCKETS, "");
        Diagnosis d = diagnosis(
                Layer.BUCKETS,
                List.of(new Diagnosis.ConfigChange(
                        "ddp.bucket_cap_bytes",
                        "26214400",
                        "819200",
                        "DDP bucket cap",
                        Layer.BUCKETS,
                        List.of(EvidenceKind.DDP_LOGGING))));
        assertThat(Fix.apply(d, cap).removed()).containsExactly("bucket_cap_mb=0.78125");
    }

    @Test
    void anApplicationLayerIsUndoneOnlyWhenTheDiagnosisNamesThatLayer() {
        Fault slow = new Fault("compute slowdown", List.of("compute_delay_ms=40"), Layer.COMPUTE, "");
        assertThat(Fix.apply(diagnosis(Layer.COMPUTE, List.of()), slow).removed())
                .containsExactly("compute_delay_ms=40");
        Fix wrong = Fix.apply(diagnosis(Layer.CORRECTNESS, List.of()), slow);
        assertThat(wrong.removed()).isEmpty();
        assertThat(wrong.kept()).containsExactly("compute_delay_ms=40");
        Fault proto = new Fault("protocol", List.of("NCCL_PROTO=LL"), Layer.PROTOCOL, "");
        assertThat(Fix.apply(diagnosis(Layer.COMPUTE, List.of()), proto).removed())
                .as("compute names no NCCL variable")
                .isEmpty();
    }

    @Test
    void aFixThatUndidNothingIsNeverVerifiedWhateverTheTimingsSay() {
        // Diagnosed "none", nothing undone, and the fixed run (the variant's configuration again) passed verify-fix
        // because the machine's load hid the kept delay: prove must still refuse to call it verified.
        Fault slow = new Fault("compute slowdown", List.of("compute_delay_ms=46"), Layer.COMPUTE, "");
        Fix nothing = Fix.apply(diagnosis(Layer.NONE, List.of()), slow);
        assertThat(nothing.removed()).isEmpty();
        io.pathproof.diagnose.FixVerification looksFine = new io.pathproof.diagnose.FixVerification(
                io.pathproof.diagnose.FixVerification.SCHEMA,
                "b",
                "f",
                true,
                true,
                List.of(),
                Verdict.PASS,
                30.0,
                25.0,
                40.0,
                Regressions.of("no change", 1.0, 0.9, 1.1, 30.0, 30.0, ""),
                List.of(),
                "v",
                null,
                false,
                List.of(),
                io.pathproof.diagnose.FixVerification.FIXED);
        assertThat(Proving.notVerified(nothing, looksFine))
                .singleElement()
                .asString()
                .startsWith("nothing was undone");
        Fix undone = Fix.apply(diagnosis(Layer.COMPUTE, List.of()), slow);
        assertThat(Proving.notVerified(undone, looksFine)).isEmpty();
    }

    /**
     * A slowed emulated node shows in no configuration: it is undone when the diagnosis names the network as the
     * hardware's (a change without a configuration change), never on another layer or on NCCL's network variables.
     */
    @Test
    void aSlowedNodeIsRestoredOnlyWhenTheNetworkIsNamedAsTheHardwares() {
        Fault slow = new Fault("one node's NICs slower", List.of("node_nic_mbps=1:100000"), Layer.NETWORK, "");
        assertThat(Fix.apply(diagnosis(Layer.NETWORK, Layer.Owner.HARDWARE, List.of()), slow)
                        .removed())
                .containsExactly("node_nic_mbps=1:100000");
        assertThat(Fix.apply(diagnosis(Layer.NETWORK, "NCCL host", List.of()), slow)
                        .kept())
                .as("named as NCCL's own choice: no NIC was restored")
                .containsExactly("node_nic_mbps=1:100000");
        assertThat(Fix.apply(diagnosis(Layer.ALGORITHM, Layer.Owner.HARDWARE, List.of()), slow)
                        .removed())
                .isEmpty();
        Fault gdr = new Fault("GPUDirect RDMA off", List.of("NCCL_NET_GDR_LEVEL=LOC"), Layer.NETWORK, "");
        assertThat(Fix.apply(diagnosis(Layer.NETWORK, Layer.Owner.HARDWARE, List.of()), gdr)
                        .removed())
                .as("a variable is undone only where the configuration diff names it")
                .isEmpty();
    }
}

package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.ddp.Bucket;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.CommunicatorPrediction;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.scenario.DType;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AcceptanceTest {
    @TempDir
    Path tmp;

    private Prediction sealed(Prediction p) {
        Path f = tmp.resolve("prediction-" + System.nanoTime() + ".json");
        PredictionIo.writeSealed(p, f, "pathproof-test");
        return PredictionIo.readVerified(f);
    }

    private static SyntheticRuns.Spec seedRun() {
        return new SyntheticRuns.Spec();
    }

    /** The run {@code s} against the seed's prediction as made for it: its versions, and the seal its manifest records. */
    private AcceptanceTable accept(SyntheticRuns.Spec s) {
        Prediction p = sealed(SyntheticRuns.seedPredictionFor(s));
        return Acceptance.accept(p, SyntheticRuns.madeFor(p, SyntheticRuns.build(s)));
    }

    @Test
    void seedRunPassesEveryRowWithEvidenceAndProvenance() {
        AcceptanceTable t = accept(seedRun());
        assertThat(t.rows()).allSatisfy(r -> {
            assertThat(r.verdict()).as(r.id() + ": " + r.observed()).isEqualTo(Verdict.PASS);
            assertThat(r.evidence()).as(r.id()).isNotEmpty();
            assertThat(r.provenance()).as(r.id()).isNotEmpty();
        });
        assertThat(t.verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.exitCode(false)).isZero();
        assertThat(t.exitCode(true)).isZero();
        assertThat(t.rows())
                .extracting(AcceptanceRow::id)
                .contains(
                        "seal",
                        "predicted-before-run",
                        "parameter-bytes",
                        "buckets-construction",
                        "buckets-rebuilt",
                        "collective/bucket0",
                        "algorithm/bucket0",
                        "protocol/bucket0",
                        "tuner-time/bucket0",
                        "coll-channels",
                        "launch-shape/rank0/bucket0",
                        "launch-shape/rank3/bucket0",
                        "transport/0->1",
                        "transport/3->0",
                        "kernels/rank2",
                        "replicas",
                        "completion-order",
                        "bus-bytes/bucket0",
                        "busbw/bucket0");
        assertThat(t.row("launch-shape/rank2/bucket0").observed()).contains("gridX 12 blockX 544");
        assertThat(t.row("launch-shape/rank2/bucket0").evidence()).containsExactly(EvidenceKind.KERNEL_TRACE);
        assertThat(t.row("collective/bucket0").provenance().get(0)).startsWith("runs/baseline/nccl.rank0.log:");
        assertThat(t.row("bus-bytes/bucket0").observed()).startsWith("100663296 B");
    }

    @Test
    void protocolIsNeverTakenFromTheKernelSymbol() {
        // The symbol says RING_LL, TUNING says proto 2 (Simple): the row follows TUNING and passes.
        SyntheticRuns.Spec s = seedRun();
        assertThat(s.kernelName).endsWith("_RING_LL");
        assertThat(accept(s).row("protocol/bucket0").verdict()).isEqualTo(Verdict.PASS);
        // Without TUNING the kernel symbol proves nothing: neither PASS nor FAIL.
        s.withTuning = false;
        AcceptanceRow r = accept(s).row("protocol/bucket0");
        assertThat(r.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(r.evidence()).doesNotContain(EvidenceKind.KERNEL_TRACE);
        // And a prediction of LL is not confirmed by an _LL symbol either.
        Prediction ll = withCollective(
                SyntheticRuns.seedPrediction(),
                c -> new CollectivePrediction(
                        c.bucket(),
                        c.bytes(),
                        c.algorithm(),
                        c.algorithmId(),
                        "LL",
                        0,
                        c.tunerTimeUs(),
                        c.channels(),
                        c.gridX(),
                        512,
                        3,
                        3,
                        c.busFactor(),
                        c.busBytes(),
                        c.transport(),
                        c.expectedTimeUs(),
                        c.kernelName(),
                        null,
                        false,
                        List.of(),
                        null));
        assertThat(Acceptance.accept(sealed(ll), SyntheticRuns.build(s))
                        .row("protocol/bucket0")
                        .verdict())
                .isEqualTo(Verdict.UNPROVEN);
    }

    @Test
    void tunerEstimateIsNeverComparedWithAKernelDuration() {
        SyntheticRuns.Spec s = seedRun();
        s.withTuning = false;
        s.kernelUs = 867.660767; // a kernel that happens to last exactly the tuner's estimate proves nothing about it
        AcceptanceRow r = accept(s).row("tuner-time/bucket0");
        assertThat(r.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(r.evidence()).doesNotContain(EvidenceKind.KERNEL_TRACE);
        // A TUNING line with another time fails even when the kernel matches the estimate.
        s.withTuning = true;
        s.tunerTimeUs = new BigDecimal("937.210000");
        assertThat(accept(s).row("tuner-time/bucket0").verdict()).isEqualTo(Verdict.FAIL);
    }

    @Test
    void newerNcclPrintsNoTunerTimeSoTheRowIsNotApplicableButTheChannelRangeWitnessesGridX() {
        SyntheticRuns.Spec s = seedRun();
        s.modernTuning = true;
        s.ncclVersion = "2.28.9";
        AcceptanceTable t = accept(s);
        assertThat(t.row("tuner-time/bucket0").verdict()).isEqualTo(Verdict.NOT_APPLICABLE);
        assertThat(t.row("tuner-time/bucket0").observed()).contains("2.28.9");
        assertThat(t.row("algorithm/bucket0").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.row("launch-shape/rank0/bucket0").evidence())
                .contains(EvidenceKind.KERNEL_TRACE, EvidenceKind.NCCL_LOG);
        assertThat(t.verdict()).isEqualTo(Verdict.PASS);
        // Without a kernel trace, the TUNING range proves gridX but blockX stays unproven.
        s.withKernels = false;
        AcceptanceRow r = accept(s).row("launch-shape/rank0/bucket0");
        assertThat(r.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(r.observed()).contains("TUNING channel range gives [12]");
    }

    @Test
    void gridXIsComparedWithTheChannelsUsedForTheSizeNotWithCollChannels() {
        // A size that uses 11 of 12 channels: the prediction says gridX 11 while collChannels is 12.
        Prediction p11 = withCollective(
                SyntheticRuns.seedPrediction(),
                c -> new CollectivePrediction(
                        c.bucket(),
                        c.bytes(),
                        c.algorithm(),
                        c.algorithmId(),
                        c.protocol(),
                        c.protocolId(),
                        c.tunerTimeUs(),
                        11,
                        11,
                        544,
                        3,
                        3,
                        c.busFactor(),
                        c.busBytes(),
                        c.transport(),
                        c.expectedTimeUs(),
                        c.kernelName(),
                        null,
                        false,
                        List.of(),
                        null));
        SyntheticRuns.Spec s = seedRun();
        s.gridX = 11;
        AcceptanceTable t = Acceptance.accept(sealed(p11), SyntheticRuns.build(s));
        assertThat(t.row("coll-channels").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.row("launch-shape/rank1/bucket0").verdict()).isEqualTo(Verdict.PASS);
        // The same evidence with gridX = collChannels = 12 refutes a prediction of 11.
        s.gridX = 12;
        AcceptanceTable t2 = Acceptance.accept(sealed(p11), SyntheticRuns.build(s));
        assertThat(t2.row("launch-shape/rank1/bucket0").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t2.row("coll-channels").verdict()).isEqualTo(Verdict.PASS);
    }

    @Test
    void channelCapRunFailsChannelsAndGridXButNotAlgorithm() {
        SyntheticRuns.Spec s = seedRun();
        s.collChannels = 1;
        s.gridX = 1;
        s.env.put("NCCL_MAX_NCHANNELS", "1");
        AcceptanceTable t = accept(s);
        assertThat(t.row("coll-channels").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t.row("coll-channels").observed()).isEqualTo("[1] coll channels");
        assertThat(t.row("launch-shape/rank0/bucket0").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t.row("algorithm/bucket0").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t.exitCode(false)).isEqualTo(1);
    }

    @Test
    void p2pIsNeverCalledGdr() {
        SyntheticRuns.Spec s = seedRun();
        s.gdrFlagOnConnections = true;
        AcceptanceRow r = accept(s).row("transport/0->1");
        assertThat(r.verdict()).isEqualTo(Verdict.PASS);
        assertThat(r.observed()).startsWith("P2P/IPC").contains("not GPUDirect RDMA");
        // A prediction of GPUDirect RDMA is refuted by a P2P connection.
        Prediction gdr = withComm(SyntheticRuns.seedPrediction(), "NET/IB/GDRDMA");
        assertThat(Acceptance.accept(sealed(gdr), SyntheticRuns.build(s))
                        .row("transport/0->1")
                        .verdict())
                .isEqualTo(Verdict.FAIL);
        // P2P/IPC where P2P/CUMEM was definitely predicted: the mechanism, not the family (issue 11 §2).
        Prediction cumem = withComm(SyntheticRuns.seedPrediction(), "P2P/CUMEM");
        AcceptanceRow c =
                Acceptance.accept(sealed(cumem), SyntheticRuns.build(s)).row("transport/1->2");
        assertThat(c.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(c.observed()).contains("predicted mechanism P2P/CUMEM: another mechanism");
        // SHM where P2P was predicted fails.
        s.transport = "SHM/direct/direct";
        s.gdrFlagOnConnections = false;
        assertThat(accept(s).row("transport/2->3").verdict()).isEqualTo(Verdict.FAIL);
    }

    @Test
    void gpuDirectRdmaIsTheNetConnectionsMechanism() {
        // "via NET/emu/0/GDRDMA": the connector's GDR flag is part of a NET connection's mechanism, both ways.
        SyntheticRuns.Spec s = seedRun();
        s.transport = "NET/emu";
        s.gdrFlagOnConnections = true;
        Prediction gdr = withComm(SyntheticRuns.seedPrediction(), "NET/emu/GDRDMA");
        Prediction host = withComm(SyntheticRuns.seedPrediction(), "NET/emu");
        AcceptanceRow used =
                Acceptance.accept(sealed(gdr), SyntheticRuns.build(s)).row("transport/0->1");
        assertThat(used.verdict()).isEqualTo(Verdict.PASS);
        assertThat(used.observed()).startsWith("NET/emu/GDRDMA");
        AcceptanceRow unexpected =
                Acceptance.accept(sealed(host), SyntheticRuns.build(s)).row("transport/0->1");
        assertThat(unexpected.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(unexpected.observed()).contains("predicted mechanism NET/emu: another mechanism");
        s.gdrFlagOnConnections = false; // GPUDirect off (NCCL_NET_GDR_LEVEL=LOC): NCCL stages through host memory
        AcceptanceRow off =
                Acceptance.accept(sealed(gdr), SyntheticRuns.build(s)).row("transport/0->1");
        assertThat(off.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(off.observed()).startsWith("NET/emu;").contains("predicted mechanism NET/emu/GDRDMA");
        assertThat(Acceptance.accept(sealed(host), SyntheticRuns.build(s))
                        .row("transport/0->1")
                        .verdict())
                .isEqualTo(Verdict.PASS);
    }

    @Test
    void aCallAnnotatedOnCpuAndGpuTimelinesIsCountedOnce() {
        Evidence e = SyntheticRuns.build(seedRun());
        List<Evidence.Range> ranges = new java.util.ArrayList<>(e.ranges());
        for (Evidence.Range r : e.ranges()) {
            ranges.add(
                    new Evidence.Range(r.rank(), r.name(), "gpu_user_annotation", r.startNs(), r.durNs(), r.source()));
        }
        Evidence twice = e.toBuilder().ranges(ranges).build();
        AcceptanceRow r =
                Acceptance.accept(sealed(SyntheticRuns.seedPrediction()), twice).row("kernels/rank1");
        assertThat(r.verdict()).isEqualTo(Verdict.PASS);
        assertThat(r.observed()).isEqualTo("3 NCCL AllReduce kernel(s) for 3 all_reduce call(s)");
    }

    @Test
    void aMissingKernelFails() {
        Evidence e = SyntheticRuns.build(seedRun());
        List<Evidence.Kernel> ks = new java.util.ArrayList<>(e.kernels());
        ks.removeIf(k -> k.nccl() && k.rank() == 3 && k.source().event() > 30);
        Evidence fewer = e.toBuilder().kernels(ks).build();
        AcceptanceRow r =
                Acceptance.accept(sealed(SyntheticRuns.seedPrediction()), fewer).row("kernels/rank3");
        assertThat(r.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(r.observed()).startsWith("1 NCCL AllReduce kernel(s) for 3");
    }

    @Test
    void crossRankDisagreementFailsAndUncapturedKernelsAreUnproven() {
        Evidence e = SyntheticRuns.build(seedRun());
        Evidence.Finding disagree = Evidence.Finding.once(
                "cross-rank-disagreement",
                "coll channels: rank 0 has 12 but rank 2 has 11 (ranks of one communicator must agree; NVIDIA/nccl #1136)",
                List.of(io.pathproof.evidence.Source.line("runs/baseline/nccl.rank2.log", 77)));
        Evidence.Finding uncaptured = Evidence.Finding.once(
                "missing-nccl-kernels",
                "LOUD: 3 collective(s) recorded but ZERO NCCL kernels",
                List.of(io.pathproof.evidence.Source.event("runs/baseline/trace.rank0.json", 1)));
        List<Evidence.Kernel> noNccl =
                e.kernels().stream().filter(k -> !k.nccl()).toList();
        Evidence f = e.toBuilder()
                .kernels(noNccl)
                .findings(List.of(disagree, uncaptured))
                .build();
        AcceptanceTable t = Acceptance.accept(sealed(SyntheticRuns.seedPrediction()), f);
        assertThat(t.row("evidence-consistency").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t.row("evidence-consistency").provenance()).containsExactly("runs/baseline/nccl.rank2.log:77");
        assertThat(t.row("kernels/rank0").verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(t.row("launch-shape/rank0/bucket0").verdict()).isEqualTo(Verdict.UNPROVEN);
        // Without findings, the same run's NCCL facts agree.
        assertThat(accept(seedRun()).row("evidence-consistency").verdict()).isEqualTo(Verdict.PASS);
    }

    @Test
    void unequalReplicasFailEvenWhenEveryKernelRan() {
        SyntheticRuns.Spec s = seedRun();
        s.corruptRank = 2;
        AcceptanceTable t = accept(s);
        assertThat(t.row("replicas").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t.row("replicas").observed()).contains("ranks [2]");
        assertThat(t.row("kernels/rank2").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.exitCode(false)).isEqualTo(1);
    }

    @Test
    void missingEvidenceIsUnprovenNeverPass() {
        SyntheticRuns.Spec s = seedRun();
        s.withReplicas = false;
        s.withKernels = false;
        AcceptanceTable t = accept(s);
        assertThat(t.row("replicas").verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(t.row("kernels/rank0").verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(t.row("busbw/bucket0").verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(t.verdict()).isEqualTo(Verdict.UNPROVEN);
        // Documented choice: UNPROVEN is not a refutation (exit 0) unless --strict.
        assertThat(t.exitCode(false)).isZero();
        assertThat(t.exitCode(true)).isEqualTo(1);

        Evidence empty = Evidence.builder().runDir("runs/empty").build();
        AcceptanceTable e = Acceptance.accept(sealed(SyntheticRuns.seedPrediction()), empty);
        assertThat(e.rows())
                .filteredOn(r -> r.verdict() == Verdict.PASS)
                .extracting(AcceptanceRow::id)
                .containsExactly("seal");
        assertThat(e.row("predicted-before-run").verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(e.verdict()).isEqualTo(Verdict.UNPROVEN);
    }

    @Test
    void aPredictionWrittenAfterTheRunStartedFails() {
        SyntheticRuns.Spec s = seedRun();
        s.start = "2026-07-12T00:30:00Z";
        AcceptanceRow r = accept(s).row("predicted-before-run");
        assertThat(r.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(r.observed()).contains("common error 1");
        assertThat(r.evidence()).containsExactly(EvidenceKind.MANIFEST);
    }

    @Test
    void completionOrderFailsOnARealInversion() {
        Evidence e = SyntheticRuns.build(seedRun());
        List<Evidence.BucketRecord> hs = new java.util.ArrayList<>(e.ddp().buckets());
        Evidence.BucketRecord b = hs.get(7);
        // GPU done 2 ms before the future: beyond any clock-mapping slack.
        hs.set(
                7,
                new Evidence.BucketRecord(
                        b.rank(),
                        b.iteration(),
                        b.index(),
                        b.bytes(),
                        b.isLast(),
                        b.params(),
                        b.readyNs(),
                        b.futureDoneNs(),
                        b.futureDoneNs() - 2_000_000L,
                        b.source()));
        Evidence.BucketRecord c = hs.get(9);
        // Hook ready after the future completed: impossible on one clock.
        hs.set(
                9,
                new Evidence.BucketRecord(
                        c.rank(),
                        c.iteration(),
                        c.index(),
                        c.bytes(),
                        c.isLast(),
                        c.params(),
                        c.futureDoneNs() + 1,
                        c.futureDoneNs(),
                        c.gpuDoneNs(),
                        c.source()));
        Evidence bad = e.toBuilder()
                .ddp(new Evidence.Ddp(hs, e.ddp().logging(), List.of()))
                .build();
        AcceptanceRow r =
                Acceptance.accept(sealed(SyntheticRuns.seedPrediction()), bad).row("completion-order");
        assertThat(r.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(r.observed()).startsWith("210/212 bucket records in order");
        assertThat(r.provenance())
                .containsExactly(b.source().toString(), c.source().toString());
    }

    @Test
    void aRunMadeForAnotherPredictionFails() {
        Prediction p = sealed(SyntheticRuns.seedPrediction());
        Evidence e = SyntheticRuns.build(seedRun());
        ((com.fasterxml.jackson.databind.node.ObjectNode) e.manifest())
                .putObject("prediction")
                .put("sha256", p.seal().sha256());
        assertThat(Acceptance.accept(p, e).row("run-made-for-prediction").verdict())
                .isEqualTo(Verdict.PASS);
        ((com.fasterxml.jackson.databind.node.ObjectNode) e.manifest())
                .putObject("prediction")
                .put("sha256", "ab".repeat(32));
        AcceptanceRow r = Acceptance.accept(p, e).row("run-made-for-prediction");
        assertThat(r.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(r.provenance()).containsExactly("runs/baseline/manifest.json (prediction.sha256)");
        // Listed, UNPROVEN with the reason, when the manifest names no prediction (a run started without --prediction).
        AcceptanceRow none =
                Acceptance.accept(p, SyntheticRuns.build(seedRun())).row("run-made-for-prediction");
        assertThat(none.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(none.observed())
                .isEqualTo("the run's manifest names no prediction seal (the run was started without --prediction)");
        // ... and when there is no manifest at all.
        Evidence bare = SyntheticRuns.build(seedRun());
        Evidence noManifest = bare.toBuilder().manifest(null).build();
        assertThat(Acceptance.accept(p, noManifest)
                        .row("run-made-for-prediction")
                        .observed())
                .isEqualTo("no manifest: nothing in the evidence says which prediction the run was made for");
    }

    @Test
    void aPredictionSealedInTheRunIsTheOneTheRunWasMadeFor() {
        // run -- COMMAND seals its predictions itself and lists them, one per stage, under instrumentation.predictions.
        Prediction p = sealed(SyntheticRuns.seedPredictionFor(seedRun()));
        Evidence e = SyntheticRuns.build(seedRun());
        com.fasterxml.jackson.databind.node.ArrayNode seals = ((com.fasterxml.jackson.databind.node.ObjectNode)
                        e.manifest())
                .putObject("instrumentation")
                .put("mode", "command")
                .putArray("predictions");
        seals.addObject()
                .put("stage", "construction")
                .put("file", "prediction.json")
                .put("sha256", "cd".repeat(32));
        seals.addObject()
                .put("stage", "ready-order")
                .put("file", "prediction-addendum.json")
                .put("sha256", p.seal().sha256());
        AcceptanceRow r = Acceptance.accept(p, e).row("run-made-for-prediction");
        assertThat(r.verdict()).as(r.observed()).isEqualTo(Verdict.PASS);
        assertThat(r.provenance()).contains("runs/baseline/manifest.json (instrumentation.predictions[1].sha256)");
    }

    @Test
    void aBrokenSealFails() {
        Prediction good = sealed(SyntheticRuns.seedPrediction());
        Prediction tampered = new Prediction(
                good.schema(),
                good.inputs(),
                "gloo",
                good.buckets(),
                good.communicator(),
                good.collectives(),
                good.assumptions(),
                good.seal());
        AcceptanceTable t = Acceptance.accept(tampered, SyntheticRuns.build(seedRun()));
        assertThat(t.row("seal").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t.row("seal").observed()).contains("seal broken");
    }

    @Test
    void glooRunListsNcclRowsAsNotApplicableAndNeverCountsThemAsPass() {
        SyntheticRuns.Spec s = seedRun();
        s.backend = "gloo";
        s.withKernels = false;
        Prediction gloo = new Prediction(
                Prediction.SCHEMA,
                SyntheticRuns.seedPredictionFor(s).inputs(),
                "gloo",
                SyntheticRuns.seedPrediction().buckets(),
                SyntheticRuns.seedPrediction().communicator(),
                SyntheticRuns.seedPrediction().collectives(),
                List.of(),
                null);
        for (Prediction p : List.of(
                gloo, SyntheticRuns.seedPredictionFor(s))) { // by prediction, and by manifest with no NCCL evidence
            Prediction sealed = sealed(p);
            AcceptanceTable t = Acceptance.accept(sealed, SyntheticRuns.madeFor(sealed, SyntheticRuns.build(s)));
            for (String id : List.of(
                    "collective/bucket0",
                    "algorithm/bucket0",
                    "protocol/bucket0",
                    "tuner-time/bucket0",
                    "coll-channels",
                    "launch-shape/rank0/bucket0",
                    "transport",
                    "kernels/rank0",
                    "bus-bytes/bucket0",
                    "busbw/bucket0",
                    "nccl-version")) {
                assertThat(t.row(id).verdict()).as(id).isEqualTo(Verdict.NOT_APPLICABLE);
                assertThat(t.row(id).observed()).as(id).isEqualTo("not applicable (backend gloo)");
            }
            assertThat(t.backend()).isEqualTo("gloo");
            assertThat(t.row("completion-order").verdict()).isEqualTo(Verdict.PASS);
            assertThat(t.row("completion-order").observed()).contains("GPU: n/a (CPU)");
            assertThat(t.row("buckets-rebuilt").verdict()).isEqualTo(Verdict.PASS);
            assertThat(t.counts().pass()
                            + t.counts().notApplicable()
                            + t.counts().fail()
                            + t.counts().unproven())
                    .isEqualTo(t.rows().size());
            if (p == gloo) {
                assertThat(t.row("backend").verdict()).isEqualTo(Verdict.PASS);
                assertThat(t.verdict()).isEqualTo(Verdict.PASS);
            } else {
                // An NCCL prediction is not accepted by a gloo run: the NCCL rows stay N/A, the backend row fails.
                assertThat(t.row("backend").verdict()).isEqualTo(Verdict.FAIL);
                assertThat(t.verdict()).isEqualTo(Verdict.FAIL);
            }
        }
    }

    @Test
    void aRunOfAnotherWorldSizeFails() {
        SyntheticRuns.Spec s = seedRun();
        s.worldSize = 2;
        AcceptanceTable t = Acceptance.accept(sealed(SyntheticRuns.seedPrediction()), SyntheticRuns.build(s));
        assertThat(t.row("world-size").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t.row("world-size").observed()).startsWith("2 rank(s)");
        assertThat(t.verdict()).isEqualTo(Verdict.FAIL);
    }

    @Test
    void oneRankH200RunExpectsNoKernelAndNoTuning() {
        // The real H200 capture: 1 rank, NCCL 2.28.9, 64 coll channels, no TUNING line, no NCCL kernel (a memcpy).
        SyntheticRuns.Spec s = seedRun();
        s.ncclVersion = "2.28.9";
        Prediction p = SyntheticRuns.seedPredictionFor(s);
        CommunicatorPrediction cp = new CommunicatorPrediction(
                1,
                1,
                64,
                64,
                64,
                0,
                null,
                null,
                "none",
                List.of(),
                null,
                null,
                null,
                List.of(),
                null,
                null,
                List.of(),
                java.util.Map.of(),
                List.of());
        CollectivePrediction c = p.collectives().get(0);
        CollectivePrediction copy = new CollectivePrediction(
                0, c.bytes(), "RING", 1, "SIMPLE", 2, null, 0, 0, 0, 0, 0, 0.0, 0L, "none", null, null, null, true,
                List.of(), null);
        p = new Prediction(Prediction.SCHEMA, p.inputs(), "nccl", p.buckets(), cp, List.of(copy), List.of(), null);
        s.ranks = 1;
        s.collChannels = 64;
        s.ncclVersion = "2.28.9";
        s.withTuning = false;
        s.withKernels = true;
        s.kernelName = "not-nccl";
        Prediction sealed = sealed(p);
        AcceptanceTable t =
                Acceptance.accept(sealed, withoutNcclKernels(SyntheticRuns.madeFor(sealed, SyntheticRuns.build(s))));
        assertThat(t.row("coll-channels").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.row("algorithm/bucket0").verdict()).isEqualTo(Verdict.NOT_APPLICABLE);
        assertThat(t.row("launch-shape/rank0/bucket0").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.row("kernels/rank0").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.row("transport").verdict()).isEqualTo(Verdict.NOT_APPLICABLE);
        assertThat(t.row("bus-bytes/bucket0").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.verdict()).isEqualTo(Verdict.PASS);
    }

    @Test
    void bucketParametersAreComparedByNameWithoutTheDdpModulePrefix() {
        SyntheticRuns.Spec s = seedRun();
        s.bucketParams = List.of(List.of("module.weight"));
        assertThat(accept(s).row("buckets-rebuilt").verdict()).isEqualTo(Verdict.PASS);
        s.bucketParams = List.of(List.of("bias"));
        AcceptanceRow r = accept(s).row("buckets-rebuilt");
        assertThat(r.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(r.observed()).contains("params [bias] (expected [weight])");
    }

    @Test
    void wrongBucketsFail() {
        SyntheticRuns.Spec s = seedRun();
        s.buckets = List.of(26_214_400L, 26_214_400L, 14_680_064L);
        s.bucketParams = List.of(List.of("weight"));
        AcceptanceTable t = accept(s);
        assertThat(t.row("buckets-rebuilt").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t.row("buckets-rebuilt").observed()).contains("3 bucket(s)");
        assertThat(t.row("collective/bucket0").verdict()).isEqualTo(Verdict.FAIL);
    }

    @Test
    void aBusBandwidthAboveTheLinkCeilingFails() {
        SyntheticRuns.Spec s = seedRun();
        s.kernelUs = 500; // 201 GB/s bus bandwidth against a 96 GB/s ceiling: the model is wrong
        AcceptanceRow r = accept(s).row("busbw/bucket0");
        assertThat(r.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(r.observed()).contains("ceiling");
    }

    @Test
    void renderingsCarryEveryRow() throws Exception {
        SyntheticRuns.Spec s = seedRun();
        s.corruptRank = 1;
        s.withKernels = false;
        AcceptanceTable t = accept(s);
        JsonNode j = Json.mapper().readTree(Acceptance.render(t, "json"));
        assertThat(j.path("verdict").asText()).isEqualTo("FAIL");
        assertThat(j.path("rows").size()).isEqualTo(t.rows().size());
        JsonNode row = j.path("rows").get(0);
        for (String f : List.of("id", "check", "expected", "observed", "verdict", "evidence", "provenance")) {
            assertThat(row.has(f)).as(f).isTrue();
        }
        assertThat(j.toString()).contains("\"UNPROVEN\"");
        String xml = Acceptance.toJunitXml(t);
        assertThat(xml.split("<testcase ", -1)).hasSize(t.rows().size() + 1);
        assertThat(xml.split("<failure ", -1)).hasSize(t.counts().fail() + 1);
        assertThat(xml.split("<skipped ", -1))
                .hasSize(t.counts().unproven() + t.counts().notApplicable() + 1);
        assertThat(xml).contains("name=\"replicas\"><failure");
        javax.xml.parsers.DocumentBuilderFactory.newInstance()
                .newDocumentBuilder()
                .parse(new java.io.ByteArrayInputStream(xml.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
        String md = Acceptance.render(t, "markdown");
        assertThat(md)
                .contains(
                        "| id | check | expected | observed | verdict | evidence | provenance |",
                        "**FAIL**",
                        "`transport/0->1`");
        String text = Acceptance.render(t, "table");
        assertThat(text).contains("verdict FAIL", "FAIL replicas:");
    }

    // ---------------------------------------------------------------- helpers
    private static Evidence withoutNcclKernels(Evidence e) {
        List<Evidence.Kernel> ks = e.kernels().stream().filter(k -> !k.nccl()).toList();
        return e.toBuilder().kernels(ks).build();
    }

    @Test
    void transportTheModelCannotChooseIsSplitIntoFamilyAndMechanism() {
        SyntheticRuns.Spec s = seedRun(); // P2P/IPC on every peer
        Prediction either = withComm(SyntheticRuns.seedPrediction(), "P2P/CUMEM or P2P/IPC: cuMem support unknown");
        AcceptanceTable t = Acceptance.accept(sealed(either), SyntheticRuns.build(s));
        AcceptanceRow family = t.row("transport/0->1");
        assertThat(family.verdict()).isEqualTo(Verdict.PASS);
        assertThat(family.check()).startsWith("transport family");
        AcceptanceRow mech = t.row("transport-mechanism/0->1");
        assertThat(mech.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(mech.observed()).startsWith("P2P/IPC").contains("cuMem support unknown");
        assertThat(mech.expected()).isEqualTo("P2P/CUMEM or P2P/IPC");
        assertThat(mech.evidence()).containsExactly(EvidenceKind.NCCL_LOG);
        // A mechanism that is none of the alternatives fails; another family fails the family row.
        s.transport = "P2P/direct pointer";
        assertThat(Acceptance.accept(sealed(either), SyntheticRuns.build(s))
                        .row("transport-mechanism/0->1")
                        .verdict())
                .isEqualTo(Verdict.FAIL);
        s.transport = "SHM/direct/direct";
        AcceptanceTable shm = Acceptance.accept(sealed(either), SyntheticRuns.build(s));
        assertThat(shm.row("transport/0->1").verdict()).isEqualTo(Verdict.FAIL);
        // A definite prediction keeps one row per peer.
        assertThat(accept(seedRun()).row("transport-mechanism/0->1")).isNull();
    }

    @Test
    void ringOrderIsJudgedAsACycleAndMissingOrdersAreUnproven() {
        Prediction p = withRings(SyntheticRuns.seedPrediction(), List.of("0 1 2 3", "0 3 2 1"));
        SyntheticRuns.Spec s = seedRun();
        s.rings = List.of("1 2 3 0", "2 1 0 3"); // the same two rings, printed from other ranks
        assertThat(Acceptance.accept(sealed(p), SyntheticRuns.build(s))
                        .row("ring-order")
                        .verdict())
                .isEqualTo(Verdict.PASS);
        s.rings = List.of("0 2 1 3", "0 3 2 1");
        AcceptanceRow bad = Acceptance.accept(sealed(p), SyntheticRuns.build(s)).row("ring-order");
        assertThat(bad.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(bad.observed()).startsWith("channel 0: 0 2 1 3");
        s.rings = List.of();
        assertThat(Acceptance.accept(sealed(p), SyntheticRuns.build(s))
                        .row("ring-order")
                        .verdict())
                .isEqualTo(Verdict.UNPROVEN);
        // A prediction without orders lists no such row.
        assertThat(accept(seedRun()).row("ring-order")).isNull();
    }

    /** A log that holds only some ring lines (an excerpt: channel 1 alone) is judged channel by channel. */
    @Test
    void aRingIsComparedWithThePredictedRingOfItsOwnChannel() {
        Prediction p = withRings(SyntheticRuns.seedPrediction(), List.of("0 1 2 3", "0 3 2 1"));
        SyntheticRuns.Spec s = seedRun();
        s.rings = List.of("0 3 2 1");
        s.ringChannels = List.of(1);
        AcceptanceRow one = Acceptance.accept(sealed(p), SyntheticRuns.build(s)).row("ring-order");
        assertThat(one.verdict()).isEqualTo(Verdict.PASS);
        assertThat(one.observed()).contains("channel 1: 0 3 2 1");
        s.rings = List.of("0 1 2 3");
        AcceptanceRow bad = Acceptance.accept(sealed(p), SyntheticRuns.build(s)).row("ring-order");
        assertThat(bad.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(bad.observed()).startsWith("channel 1: 0 1 2 3 (expected 0 3 2 1)");
        s.ringChannels = List.of(7);
        assertThat(Acceptance.accept(sealed(p), SyntheticRuns.build(s))
                        .row("ring-order")
                        .verdict())
                .isEqualTo(Verdict.UNPROVEN);
    }

    @Test
    void busBandwidthIsNotJudgedOnAnEmulatedRunButDecisionsAre() {
        SyntheticRuns.Spec s = seedRun();
        s.emulated = true;
        AcceptanceTable t = accept(s);
        assertThat(t.row("busbw/bucket0").verdict()).isEqualTo(Verdict.NOT_APPLICABLE);
        assertThat(t.row("busbw/bucket0").observed()).contains("emulated");
        for (String id : List.of(
                "algorithm/bucket0",
                "protocol/bucket0",
                "coll-channels",
                "launch-shape/rank0/bucket0",
                "transport/0->1",
                "kernels/rank0")) {
            assertThat(t.row(id).verdict()).as(id).isEqualTo(Verdict.PASS);
        }
    }

    private static Prediction withRings(Prediction p, List<String> rings) {
        CommunicatorPrediction c = p.communicator();
        return new Prediction(
                p.schema(),
                p.inputs(),
                p.backend(),
                p.buckets(),
                new CommunicatorPrediction(
                        c.nRanks(),
                        c.nNodes(),
                        c.collChannels(),
                        c.p2pChannels(),
                        c.p2pChannelsPerPeer(),
                        c.nvlsChannels(),
                        null,
                        null,
                        c.transport(),
                        rings,
                        null,
                        null,
                        null,
                        List.of(),
                        null,
                        null,
                        List.of(),
                        java.util.Map.of(),
                        List.of()),
                p.collectives(),
                p.assumptions(),
                null);
    }

    @Test
    void aCannotPredictNoteVoidsEveryRowItTouchesAndOnlyThose() {
        // NVLS possibly on (Hopper NVSwitch): algorithm, protocol, tuner time, coll channels, launch shape and bus
        // bandwidth
        // rest on it; transport, bus bytes and the collective's count do not.
        String note = "cannot predict: NVLS may be enabled on this NVSwitch sm90 system";
        Prediction nvls = withNote(
                SyntheticRuns.seedPrediction(),
                note,
                java.util.Map.of(
                        note,
                        List.of("algorithm", "protocol", "tuner-time", "coll-channels", "launch-shape", "busbw")));
        AcceptanceTable t = Acceptance.accept(sealed(nvls), SyntheticRuns.build(seedRun()));
        for (String id : List.of(
                "algorithm/bucket0",
                "protocol/bucket0",
                "tuner-time/bucket0",
                "coll-channels",
                "launch-shape/rank0/bucket0",
                "launch-shape/rank3/bucket0",
                "busbw/bucket0")) {
            assertThat(t.row(id).verdict()).as(id).isEqualTo(Verdict.UNPROVEN);
            assertThat(t.row(id).observed()).as(id).contains(note);
        }
        for (String id : List.of("transport/0->1", "bus-bytes/bucket0", "collective/bucket0")) {
            assertThat(t.row(id).verdict()).as(id).isEqualTo(Verdict.PASS);
        }
        // Nor can a disclaimed row FAIL: a run with other decisions stays UNPROVEN there.
        SyntheticRuns.Spec other = seedRun();
        other.algoId = 0;
        other.protoId = 0;
        other.gridX = 3;
        AcceptanceTable o = Acceptance.accept(sealed(nvls), SyntheticRuns.build(other));
        assertThat(o.row("algorithm/bucket0").verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(o.row("protocol/bucket0").verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(o.row("launch-shape/rank0/bucket0").verdict()).isEqualTo(Verdict.UNPROVEN);
        // A note sealed without voids (before they existed) voids every voidable row, transport included.
        Prediction old = withNote(SyntheticRuns.seedPrediction(), note, null);
        AcceptanceTable ot = Acceptance.accept(sealed(old), SyntheticRuns.build(seedRun()));
        assertThat(ot.row("transport").verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(ot.row("algorithm/bucket0").verdict()).isEqualTo(Verdict.UNPROVEN);
    }

    @Test
    void thePredictionSaysWhichFieldsANoteVoids() {
        // The h200-x8 preset with NVLS left on (the preset turns it off).
        io.pathproof.scenario.Scenario x8 = io.pathproof.scenario.Scenarios.load("h200-x8");
        io.pathproof.nccl.NcclModel m = io.pathproof.nccl.NcclModel.of(new io.pathproof.scenario.Scenario(
                x8.name(), x8.workload(), x8.topology(), x8.versions(), x8.ranks(), java.util.Map.of(), x8.backend()));
        CommunicatorPrediction c = m.communicator();
        assertThat(c.cannotPredict()).contains("NVLS");
        assertThat(c.voids()).hasSize(1);
        assertThat(c.voids().values().iterator().next())
                .contains("algorithm", "protocol", "launch-shape")
                .doesNotContain("transport");
        assertThat(c.voidedBy("launch-shape")).contains("NVLS");
        assertThat(c.voidedBy("transport")).isNull();
    }

    private static Prediction withNote(Prediction p, String note, java.util.Map<String, List<String>> voids) {
        CommunicatorPrediction c = p.communicator();
        return new Prediction(
                p.schema(),
                p.inputs(),
                p.backend(),
                p.buckets(),
                new CommunicatorPrediction(
                        c.nRanks(),
                        c.nNodes(),
                        c.collChannels(),
                        c.p2pChannels(),
                        c.p2pChannelsPerPeer(),
                        c.nvlsChannels(),
                        null,
                        null,
                        c.transport(),
                        List.of(),
                        null,
                        null,
                        note,
                        List.of(),
                        voids,
                        null,
                        List.of(),
                        java.util.Map.of(),
                        List.of()),
                p.collectives(),
                p.assumptions(),
                null);
    }

    private static Prediction withCollective(Prediction p, java.util.function.UnaryOperator<CollectivePrediction> f) {
        return new Prediction(
                p.schema(),
                p.inputs(),
                p.backend(),
                p.buckets(),
                p.communicator(),
                p.collectives().stream().map(f).toList(),
                p.assumptions(),
                null);
    }

    private static Prediction withComm(Prediction p, String transport) {
        CommunicatorPrediction c = p.communicator();
        return new Prediction(
                p.schema(),
                p.inputs(),
                p.backend(),
                p.buckets(),
                new CommunicatorPrediction(
                        c.nRanks(),
                        c.nNodes(),
                        c.collChannels(),
                        c.p2pChannels(),
                        c.p2pChannelsPerPeer(),
                        c.nvlsChannels(),
                        null,
                        null,
                        transport,
                        List.of(),
                        null,
                        null,
                        null,
                        List.of(),
                        null,
                        null,
                        List.of(),
                        java.util.Map.of(),
                        List.of()),
                p.collectives(),
                p.assumptions(),
                null);
    }

    @SuppressWarnings("unused")
    private static Bucket bucket(int i, long bytes) {
        return new Bucket(i, bytes, List.of("w" + i), false, DType.FLOAT32, bytes);
    }
}

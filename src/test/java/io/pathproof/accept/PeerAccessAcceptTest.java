package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.predict.Predictor;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Topology;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Versions;
import io.pathproof.scenario.Workload;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transport rows on a host whose driver denies peer access between GPUs 0 and 1 only (four L4s under one PCIe
 * switch): NCCL picks the transport per connection (transport.cc@v2.28.9-1:23-42), so 0-1 connects over SHM and the
 * other pairs over P2P. Each connector line is judged against its own pair's prediction: the right mix passes, the
 * denied pair over P2P fails, an allowed pair over SHM fails. The logs are hand-written in NCCL 2.28.9's own line
 * formats (p2p.cc:393, shm.cc's "Channel %02d : ... via SHM/%s/%s", init.cc's "comm ... nRanks" line).
 */
class PeerAccessAcceptTest {
    @TempDir
    Path tmp;

    /** Four GPUs under one PCIe switch, NVLink between every pair where {@code nvlinks}; NVML denies 0-1. */
    private static Topology fourGpus(String model, int cc, int nvlinks) {
        List<Topology.Gpu> gpus = new ArrayList<>();
        List<Topology.NvLink> links = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            gpus.add(new Topology.Gpu(i, model, cc, "0000:0" + i + ":00.0", "sw0", 4, 16, 0));
            for (int j = i + 1; j < 4 && nvlinks > 0; j++) {
                links.add(new Topology.NvLink(i, j, nvlinks));
            }
        }
        return new Topology(
                "x4",
                List.of(new Topology.Node(
                        "h",
                        List.of(new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel")),
                        List.of(new Topology.PciSwitch("sw0", "cpu0", 4, 16)),
                        gpus,
                        links,
                        List.of(),
                        List.of(List.of(0, 1)))));
    }

    private Prediction predicted() {
        return predicted(fourGpus("NVIDIA L4", 89, 0), Map.of("NCCL_CUMEM_ENABLE", "1"));
    }

    private Prediction predicted(Topology t, Map<String, String> env) {
        Workload w = new Workload(
                "one-64mib-fp32",
                List.of(new Parameter("p", List.of(16_777_216L), DType.FLOAT32, true)),
                64.0,
                false,
                false,
                false);
        Scenario s = new Scenario(
                "mixed-peer-access", w, t, new Versions(Version.parse("2.5.0"), Version.parse("2.28.9"), null), 4, env);
        Path f = tmp.resolve("prediction-" + System.nanoTime() + ".json");
        PredictionIo.writeSealed(Predictor.predict(s), f, "pathproof-test");
        return PredictionIo.readVerified(f);
    }

    /** One log per rank: its comm line, then the connector lines it prints as a sender ("via" ...), by rank. */
    private Evidence run(String name, Map<Integer, List<String>> sends) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve(name));
        for (Map.Entry<Integer, List<String>> en : sends.entrySet()) {
            int r = en.getKey();
            String p = "h:" + (4100 + r) + ":" + (4100 + r) + " [" + r + "] NCCL INFO ";
            StringBuilder log = new StringBuilder();
            log.append(p).append("NCCL version 2.28.9+cuda12.8\n");
            log.append(p)
                    .append("comm 0x55d0c0a1e2f0 rank ")
                    .append(r)
                    .append(" nRanks 4 nNodes 1 localRanks 4 localRank ")
                    .append(r)
                    .append(" MNNVL 0\n");
            for (String line : en.getValue()) {
                log.append(p).append(line).append('\n');
            }
            Files.writeString(dir.resolve("nccl-rank" + r + ".log"), log.toString());
        }
        return Ingest.read(List.of(dir));
    }

    @Test
    void eachPairIsJudgedAgainstItsOwnTransport() throws IOException {
        Prediction p = predicted();
        assertThat(p.communicator().transport()).isEqualTo("P2P/CUMEM + SHM");
        assertThat(p.communicator().peerTransports()).containsEntry("0->1", "SHM");
        // The right mix: the ring's pairs over P2P, the denied pair (a send/recv would connect it) over SHM.
        Evidence right = run(
                "right",
                Map.of(
                        0,
                        List.of(
                                "Channel 00/0 : 0[0] -> 2[2] via P2P/CUMEM",
                                "Channel 01/0 : 0[0] -> 2[2] via P2P/CUMEM",
                                "Channel 00 : 0[0] -> 1[1] via SHM/direct/direct"),
                        1,
                        List.of(
                                "Channel 00/0 : 1[1] -> 3[3] via P2P/CUMEM",
                                "Channel 00 : 1[1] -> 0[0] via SHM/direct/direct"),
                        2,
                        List.of("Channel 00/0 : 2[2] -> 1[1] via P2P/CUMEM"),
                        3,
                        List.of("Channel 00/0 : 3[3] -> 0[0] via P2P/CUMEM")));
        AcceptanceTable ok = Acceptance.accept(p, right);
        for (String pair : List.of("0->2", "0->1", "1->3", "1->0", "2->1", "3->0")) {
            AcceptanceRow r = ok.row("transport/" + pair);
            assertThat(r.verdict()).as(pair + ": " + r.observed()).isEqualTo(Verdict.PASS);
        }
        assertThat(ok.row("transport/0->1").expected()).isEqualTo("SHM");
        assertThat(ok.row("transport/0->2").expected()).isEqualTo("P2P/CUMEM");
        assertThat(ok.row("transport/0->1").provenance())
                .anySatisfy(s -> assertThat(s).contains("nccl-rank0.log:"));

        // The denied pair over P2P, and an allowed pair over SHM: each fails on its own pair's prediction.
        Evidence wrong = run(
                "wrong",
                Map.of(
                        0,
                        List.of("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"),
                        1,
                        List.of("Channel 00/0 : 1[1] -> 3[3] via P2P/CUMEM"),
                        2,
                        List.of("Channel 00 : 2[2] -> 1[1] via SHM/direct/direct"),
                        3,
                        List.of("Channel 00/0 : 3[3] -> 0[0] via P2P/CUMEM")));
        AcceptanceTable bad = Acceptance.accept(p, wrong);
        assertThat(bad.row("transport/0->1").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(bad.row("transport/0->1").expected()).isEqualTo("SHM");
        assertThat(bad.row("transport/2->1").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(bad.row("transport/2->1").expected()).isEqualTo("P2P/CUMEM");
        assertThat(bad.row("transport/0->1").observed()).startsWith("P2P/CUMEM");
        assertThat(bad.row("transport/3->0").verdict()).isEqualTo(Verdict.PASS);
        assertThat(bad.row("transport/1->3").verdict()).isEqualTo(Verdict.PASS);
    }

    @Test
    void nvlinkPairsReadWhileTheDeniedPairGoesOverShm() throws IOException {
        // Four A100s with NVLink between every pair, NVML denying 0-1, NCCL told to go on (NCCL_IGNORE_DISABLED_P2P=1,
        // paths.cc@v2.28.9-1:353-362): the NVLink pairs use P2P read (cc 80 over NVLink, paths.cc:368-372; printed
        // "/read", p2p.cc:375, 393), the denied pair SHM.
        Prediction p = predicted(
                fourGpus("NVIDIA A100-SXM4-80GB", 80, 12),
                Map.of("NCCL_CUMEM_ENABLE", "1", "NCCL_IGNORE_DISABLED_P2P", "1"));
        assertThat(p.communicator().transport()).isEqualTo("P2P/CUMEM/read + SHM");
        Evidence e = run(
                "nvlink",
                Map.of(
                        0,
                        List.of(
                                "Channel 00/0 : 0[0] -> 2[2] via P2P/CUMEM/read",
                                "Channel 00 : 0[0] -> 1[1] via SHM/direct/direct"),
                        1,
                        List.of("Channel 00/0 : 1[1] -> 3[3] via P2P/CUMEM/read"),
                        2,
                        List.of("Channel 00/0 : 2[2] -> 1[1] via P2P/CUMEM"),
                        3,
                        List.of("Channel 00/0 : 3[3] -> 0[0] via P2P/CUMEM/read")));
        AcceptanceTable t = Acceptance.accept(p, e);
        assertThat(t.row("transport/0->2").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.row("transport/0->2").observed()).startsWith("P2P/CUMEM/read");
        assertThat(t.row("transport/0->1").verdict()).isEqualTo(Verdict.PASS);
        assertThat(t.row("transport/3->0").verdict()).isEqualTo(Verdict.PASS);
        // written where read was predicted: another mechanism
        assertThat(t.row("transport/2->1").verdict()).isEqualTo(Verdict.FAIL);
        assertThat(t.row("transport/2->1").observed()).contains("predicted mechanism P2P/CUMEM/read");
    }
}

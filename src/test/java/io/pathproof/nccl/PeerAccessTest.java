package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.PeerAccessReader;
import io.pathproof.scenario.Topology;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The driver's peer access between GPUs (NVML's P2P status, `nvidia-smi topo -p2p r`), which NCCL asks before it uses
 * P2P (ncclTopoCheckP2p, graph/paths.cc@v2.28.9-1:337-365): denied on GeForce GPUs and in many virtual machines, where
 * four PCIe GPUs under one switch talk through the CPU over SHM although their path allows P2P.
 */
class PeerAccessTest {
    /** Four PCIe Gen4 GPUs under one switch of an Intel host (a cloud VM's L4s, an RTX workstation): PIX pairs. */
    static Topology fourUnderOneSwitch(List<List<Integer>> denied) {
        List<Topology.Gpu> gpus = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            gpus.add(new Topology.Gpu(i, "NVIDIA L4", 89, "0000:0" + i + ":00.0", "sw0", 4, 16, 0));
        }
        return new Topology(
                "l4x4",
                List.of(new Topology.Node(
                        "h",
                        List.of(new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel")),
                        List.of(new Topology.PciSwitch("sw0", "cpu0", 4, 16)),
                        gpus,
                        List.of(),
                        List.of(),
                        denied)));
    }

    static final String CNS = String.join(
            "\n",
            "        GPU0    GPU1    GPU2    GPU3",
            " GPU0   X       CNS     CNS     CNS",
            " GPU1   CNS     X       CNS     CNS",
            " GPU2   CNS     CNS     X       CNS",
            " GPU3   CNS     CNS     CNS     X",
            "",
            "Legend:",
            "",
            "  X    = Self",
            "  OK   = Status Ok",
            "  CNS  = Chipset not supported",
            "");

    private static NcclModel model(Topology t, Map<String, String> env) {
        return NcclModel.of(Topologies.scenario(t, "2.28.9", 4, env));
    }

    @Test
    void deniedPeerAccessGoesThroughTheCpuOverShm() {
        List<List<Integer>> denied = PeerAccessReader.read(CNS, "p2p.txt");
        assertThat(denied).hasSize(6).contains(List.of(0, 3));
        NcclModel m = model(fourUnderOneSwitch(denied), Map.of());
        assertThat(m.communicator().transport()).isEqualTo("SHM");
        assertThat(m.communicator().ringGraph().typeIntra()).isEqualTo("PHB");
        assertThat(m.communicator().notes())
                .anySatisfy(n -> assertThat(n).contains("peer access denied by the driver (NVML) between GPUs 0-1"));
    }

    @Test
    void allowedPeerAccessKeepsP2pAndUnknownIsSaid() {
        NcclModel ok = model(fourUnderOneSwitch(List.of()), Map.of());
        assertThat(ok.communicator().transport()).startsWith("P2P/");
        assertThat(ok.communicator().ringGraph().typeIntra()).isEqualTo("PIX");
        assertThat(ok.communicator().notes()).noneSatisfy(n -> assertThat(n).contains("P2P over PCIe assumed"));
        NcclModel unknown = model(fourUnderOneSwitch(null), Map.of());
        assertThat(unknown.communicator().transport()).startsWith("P2P/");
        assertThat(unknown.communicator().notes())
                .anySatisfy(n -> assertThat(n).contains("P2P over PCIe assumed allowed by the driver"));
        // NCCL_IGNORE_DISABLED_P2P=2 skips NVML altogether (paths.cc:334-336)
        NcclModel skipped = model(fourUnderOneSwitch(List.of(List.of(0, 1))), Map.of("NCCL_IGNORE_DISABLED_P2P", "2"));
        assertThat(skipped.communicator().transport()).startsWith("P2P/");
    }

    /** The rank pairs a ring order connects, both ways round ("0 2 1 3" connects 0-2, 2-1, 1-3 and 3-0). */
    private static List<List<Integer>> ringPairs(String order) {
        String[] r = order.trim().split(" +");
        List<List<Integer>> pairs = new ArrayList<>();
        for (int i = 0; i < r.length; i++) {
            int a = Integer.parseInt(r[i]);
            int b = Integer.parseInt(r[(i + 1) % r.length]);
            pairs.add(List.of(Math.min(a, b), Math.max(a, b)));
        }
        return pairs;
    }

    @Test
    void oneDeniedPairGoesOverShmAloneAndTheRingAvoidsIt() {
        // NVML denies 0-1 only: NCCL asks per connection (selectTransport, transport.cc@v2.28.9-1:23-42; p2pCanConnect
        // through ncclTopoCheckP2p, transport/p2p.cc:123-131), so 0-1 goes over SHM and every other pair keeps P2P.
        NcclModel m = model(fourUnderOneSwitch(List.of(List.of(0, 1))), Map.of());
        CommunicatorPrediction c = m.communicator();
        assertThat(c.transport()).isEqualTo("P2P/CUMEM or P2P/IPC + SHM: cuMem support unknown");
        assertThat(c.peerTransports()).hasSize(12).containsEntry("0->1", "SHM").containsEntry("1->0", "SHM");
        for (String pair : List.of("0->2", "0->3", "1->2", "1->3", "2->0", "2->1", "2->3", "3->0", "3->1", "3->2")) {
            assertThat(c.peerTransports()).containsEntry(pair, "P2P/CUMEM or P2P/IPC: cuMem support unknown");
            assertThat(c.transportBetween(pair.charAt(0) - '0', pair.charAt(pair.length() - 1) - '0'))
                    .startsWith("P2P/");
        }
        assertThat(c.transportBetween(1, 0)).isEqualTo("SHM");
        // The denied pair's path goes through the CPU (PHB, paths.cc:667-678); the search takes no hop above typeIntra
        // (search.cc:140) and raises typeIntra only when it found nothing (search.cc:1124-1126): a PIX ring exists
        // without 0-1, so the rings and the tree chain never connect that pair.
        assertThat(c.ringGraph().typeIntra()).isEqualTo("PIX");
        assertThat(c.treeGraph().typeIntra()).isEqualTo("PIX");
        assertThat(c.ringOrders()).isNotEmpty().allSatisfy(o -> assertThat(ringPairs(o))
                .doesNotContain(List.of(0, 1)));
        assertThat(c.notes()).anySatisfy(n -> assertThat(n)
                .contains("between GPUs 0-1: only these pairs lose P2P, their traffic goes through the CPU"
                        + " over SHM"));
        // With cuMem asked for, the P2P pairs name one mechanism; the denied pair stays SHM.
        NcclModel cumem = model(fourUnderOneSwitch(List.of(List.of(0, 1))), Map.of("NCCL_CUMEM_ENABLE", "1"));
        assertThat(cumem.communicator().transport()).isEqualTo("P2P/CUMEM + SHM");
        assertThat(cumem.communicator().peerTransports())
                .containsEntry("0->1", "SHM")
                .containsEntry("2->3", "P2P/CUMEM");
    }

    @Test
    void aRingThatCannotAvoidDeniedPairsCrossesOneThroughTheCpu() {
        // 0-1 and 0-2 denied: GPU 0 keeps one P2P peer (3), so no PIX ring exists; the search raises typeIntra to PHB
        // (search.cc@v2.28.9-1:1124-1126) and the ring crosses a denied pair, which connects over SHM.
        NcclModel m = model(fourUnderOneSwitch(List.of(List.of(0, 1), List.of(0, 2))), Map.of());
        CommunicatorPrediction c = m.communicator();
        assertThat(c.ringGraph().typeIntra()).isEqualTo("PHB");
        assertThat(c.peerTransports())
                .containsEntry("0->1", "SHM")
                .containsEntry("2->0", "SHM")
                .containsEntry("0->3", "P2P/CUMEM or P2P/IPC: cuMem support unknown");
        List<String> ringPairTransports = new ArrayList<>();
        for (List<Integer> pr : ringPairs(c.ringOrders().get(0))) {
            ringPairTransports.add(c.transportBetween(pr.get(0), pr.get(1)));
        }
        assertThat(ringPairTransports).contains("SHM").anySatisfy(t -> assertThat(t)
                .startsWith("P2P/"));
    }

    @Test
    void pairsBeyondTheP2pLevelTakeShmWhileTheirNeighboursKeepP2p() {
        // No denial: two sockets, a PCIe switch with two GPUs under each. ncclTopoCheckP2p allows PIX pairs and refuses
        // SYS ones at the default level PXB (paths.cc@v2.28.9-1:318-330), pair by pair.
        List<Topology.Gpu> gpus = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            gpus.add(new Topology.Gpu(i, "NVIDIA L4", 89, "0000:0" + i + ":00.0", i < 2 ? "sw0" : "sw1", 4, 16, 0));
        }
        Topology t = new Topology(
                "l4x4-2s",
                List.of(new Topology.Node(
                        "h",
                        List.of(
                                new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel"),
                                new Topology.Cpu("cpu1", 1, "x86_64", "GenuineIntel")),
                        List.of(
                                new Topology.PciSwitch("sw0", "cpu0", 4, 16),
                                new Topology.PciSwitch("sw1", "cpu1", 4, 16)),
                        gpus,
                        List.of(),
                        List.of(),
                        List.of())));
        CommunicatorPrediction c = model(t, Map.of("NCCL_CUMEM_ENABLE", "0")).communicator();
        assertThat(c.transport()).isEqualTo("P2P/IPC + SHM");
        assertThat(c.peerTransports())
                .containsEntry("0->1", "P2P/IPC")
                .containsEntry("3->2", "P2P/IPC")
                .containsEntry("1->2", "SHM")
                .containsEntry("0->3", "SHM");
        assertThat(c.ringGraph().typeIntra()).isEqualTo("SYS");
        assertThat(c.notes()).noneSatisfy(n -> assertThat(n).contains("peer access denied"));
    }

    @Test
    void peerTransportsAreLeftOutWhereEveryPairAgrees() throws Exception {
        NcclModel uniform = model(fourUnderOneSwitch(List.of()), Map.of());
        assertThat(uniform.communicator().peerTransports()).isEmpty();
        String json = io.pathproof.core.Json.mapper().writeValueAsString(uniform.communicator());
        assertThat(json).doesNotContain("peerTransports");
        CommunicatorPrediction mixed =
                model(fourUnderOneSwitch(List.of(List.of(0, 1))), Map.of()).communicator();
        String mixedJson = io.pathproof.core.Json.mapper().writeValueAsString(mixed);
        assertThat(mixedJson).contains("\"peerTransports\"");
        assertThat(io.pathproof.core.Json.mapper().readValue(mixedJson, CommunicatorPrediction.class))
                .isEqualTo(mixed);
    }

    @Test
    void deniedPeerAccessOverNvlinkStopsNcclUnlessIgnored() {
        Topology nv = Topologies.v100x4nv2("h", "0");
        Topology.Node n = nv.nodes().get(0);
        Topology denied = new Topology(nv.name(), List.of(n.withP2pDenied(List.of(List.of(0, 1)))));
        assertThatThrownBy(() -> model(denied, Map.of()))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("GPUs 0 and 1 are connected by NVLink, yet their peer access is denied")
                .hasMessageContaining("NCCL_IGNORE_DISABLED_P2P=1");
        CommunicatorPrediction ignored =
                model(denied, Map.of("NCCL_IGNORE_DISABLED_P2P", "1")).communicator();
        assertThat(ignored.notes())
                .anySatisfy(n2 -> assertThat(n2).contains("denied by the driver (NVML) between GPUs 0-1"));
        // told to go on, NCCL takes the pair off P2P alone: 0-1 over SHM, the other NVLink pairs keep P2P
        assertThat(ignored.peerTransports())
                .containsEntry("0->1", "SHM")
                .containsEntry("1->0", "SHM")
                .containsEntry("0->2", "P2P/CUMEM or P2P/IPC: cuMem support unknown");
        assertThat(ignored.ringGraph().typeIntra()).isEqualTo("NVL");
        assertThat(ignored.ringOrders())
                .allSatisfy(o -> assertThat(ringPairs(o)).doesNotContain(List.of(0, 1)));
    }

    @Test
    void theReaderRefusesAnotherMatrixAndNamesTheLine() {
        assertThatThrownBy(() -> PeerAccessReader.read(
                        "        GPU0    GPU1\n GPU0   X       NV12\n GPU1   NV12    X\n", "topo-m.txt"))
                .hasMessage("topo-m.txt:2: 'NV12' is not a peer-access status (X, OK, CNS, GNS, TNS, NS, U): give the"
                        + " output of `nvidia-smi topo -p2p r`, not of `topo -m`");
        assertThatThrownBy(() -> PeerAccessReader.read("nothing here\n", "empty.txt"))
                .hasMessageStartingWith("empty.txt: no peer-access matrix");
        // read and write matrices one after the other: a pair denied in either is denied
        String rw = "  GPU0 GPU1\nGPU0 X OK\nGPU1 OK X\n\n  GPU0 GPU1\nGPU0 X NS\nGPU1 NS X\n";
        assertThat(PeerAccessReader.read(rw, "rw.txt")).containsExactly(List.of(0, 1));
        assertThatThrownBy(() -> fourUnderOneSwitch(List.of(List.of(0, 7))))
                .hasMessageContaining("p2pDenied: [0, 7] is not a pair of two of this node's GPU indices");
    }
}

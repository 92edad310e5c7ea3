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

    @Test
    void deniedPeerAccessOverNvlinkStopsNcclUnlessIgnored() {
        Topology nv = Topologies.v100x4nv2("h", "0");
        Topology.Node n = nv.nodes().get(0);
        Topology denied = new Topology(nv.name(), List.of(n.withP2pDenied(List.of(List.of(0, 1)))));
        assertThatThrownBy(() -> model(denied, Map.of()))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("GPUs 0 and 1 are connected by NVLink, yet their peer access is denied")
                .hasMessageContaining("NCCL_IGNORE_DISABLED_P2P=1");
        assertThat(model(denied, Map.of("NCCL_IGNORE_DISABLED_P2P", "1"))
                        .communicator()
                        .notes())
                .anySatisfy(n2 -> assertThat(n2).contains("denied by the driver (NVML) between GPUs 0-1"));
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

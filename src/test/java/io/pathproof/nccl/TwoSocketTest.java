package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.scenario.DType;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Topology;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Eight H200s on PCIe, four under each of two Emerald Rapids sockets (familyid 6, modelid 0xCF in the topology file).
 * What NCCL 2.28.9 itself decided on that machine, emulated on one H200 (samples/emulation-sweep): a 2-channel ring
 * search at 20 GB/s over the 40 GB/s inter-socket link, 4 coll channels, 256 KiB on Ring/LL over 4 channels. NCCL
 * 2.21.5 on the same file (samples/emulation-sweep/nccl-2.21.5) knew no Emerald Rapids: every family-6 model from 0x55
 * on is Skylake to it (graph/topo.cc:502@v2.21.5-1), 10 GB/s between the sockets (topo.cc:74), and it searched 3
 * channels at 3 GB/s, 6 coll channels, 256 KiB on Ring/LL over 6.
 */
class TwoSocketTest {
    @Test
    void theSocketGenerationFromTheDumpSetsTheInterSocketBandwidth() throws URISyntaxException {
        Path xml = Path.of(
                TwoSocketTest.class.getResource("h200-pcie-2socket-x8.xml").toURI());
        Topology t = Scenarios.topology(xml.toString());
        NcclModel m = NcclModel.of(Topologies.scenario(t, "2.28.9", 8, Map.of("NCCL_NVLS_ENABLE", "0")));
        assertThat(m.communicator().ringGraph().nChannels()).isEqualTo(2);
        assertThat(m.communicator().ringGraph().bwIntra()).isEqualTo(20.0);
        assertThat(m.communicator().collChannels()).isEqualTo(4);
        CollectivePrediction p = m.allReduce(0, 262_144L, DType.FLOAT32);
        assertThat(p.protocol()).isEqualTo("LL");
        assertThat(p.gridX()).isEqualTo(4);
        assertThat(p.blockX()).isEqualTo(512);
    }

    @Test
    void beforeNccl226AnEmeraldRapidsSocketIsSkylake() throws URISyntaxException {
        Path xml = Path.of(
                TwoSocketTest.class.getResource("h200-pcie-2socket-x8.xml").toURI());
        Topology t = Scenarios.topology(xml.toString());
        NcclModel m = NcclModel.of(Topologies.scenario(t, "2.21.5", 8, Map.of("NCCL_NVLS_ENABLE", "0")));
        assertThat(m.communicator().ringGraph().nChannels()).isEqualTo(3);
        assertThat(m.communicator().ringGraph().bwIntra()).isEqualTo(3.0);
        assertThat(m.communicator().collChannels()).isEqualTo(6);
        CollectivePrediction p = m.allReduce(0, 262_144L, DType.FLOAT32);
        assertThat(p.protocol()).isEqualTo("LL");
        assertThat(p.gridX()).isEqualTo(6);
        assertThat(p.blockX()).isEqualTo(512);
    }
}

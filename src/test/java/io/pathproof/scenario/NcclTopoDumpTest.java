package io.pathproof.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.PathproofException;
import io.pathproof.nccl.NcclModel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * NCCL's own topology dumps (NCCL_TOPO_DUMP_FILE), as NCCL 2.28.9 wrote them in the emulated runs of samples/ and on
 * the real H200 of ../shared/fixtures/: read as NCCL writes them, and equal, GPU for GPU, to the topology NCCL was
 * given (emulated-topo.xml beside each dump).
 */
class NcclTopoDumpTest {
    static Stream<Path> dumps() throws IOException {
        try (Stream<Path> s = Files.walk(Path.of("samples"))) {
            return s.filter(p -> p.getFileName().toString().equals("nccl-topo.xml")).sorted().toList().stream();
        }
    }

    @Test
    void aSocketNcclListsTwiceIsOneSocketAndItsNicOneNic() {
        Topology t = Scenarios.topology("samples/emulated-h200-x4/run/nccl-topo.xml");
        assertThat(t.nodes()).hasSize(1);
        Topology.Node n = t.nodes().get(0);
        // <cpu numaid="0"> at lines 2 and 19 (the second without "affinity", holding only the virtual NIC), numaid 1.
        assertThat(n.cpus()).extracting(Topology.Cpu::id).containsExactly("cpu0", "cpu1");
        assertThat(n.gpus()).hasSize(4);
        assertThat(n.nics()).extracting(Topology.Nic::name).containsExactly("eth0");
        assertThat(t.inferred())
                .anyMatch(s -> s.contains("cpu0: <cpu numaid=\"0\"> listed again") && s.contains("nccl-topo.xml:19"));
        assertThat(t.inferred()).anyMatch(s -> s.contains("NIC eth0: listed again"));
    }

    @ParameterizedTest
    @MethodSource("dumps")
    void everyDumpInSamplesIsTheMachineNcclWasGiven(Path dump) {
        Path given = dump.resolveSibling("emulated-topo.xml");
        Assumptions.assumeTrue(Files.exists(given), "no emulated-topo.xml beside " + dump);
        Topology fromNccl = Scenarios.topology(dump.toString());
        Topology input = Scenarios.topology(given.toString());
        Topology.Node a = fromNccl.nodes().get(0);
        Topology.Node b = input.nodes().get(0);
        assertThat(fromNccl.nodes()).hasSize(1);
        assertThat(a.gpus()).isEqualTo(b.gpus());
        assertThat(a.nvlinks()).isEqualTo(b.nvlinks());
        assertThat(a.pciSwitches()).isEqualTo(b.pciSwitches());
        assertThat(a.cpus())
                .extracting(Topology.Cpu::id)
                .isEqualTo(b.cpus().stream().map(Topology.Cpu::id).toList());
        // and the model builds the same communicator from either
        for (Topology t : List.of(fromNccl, input)) {
            Scenario s = new Scenario(
                    "dump",
                    Scenarios.workload("one-64mib-fp32"),
                    t,
                    new Versions(Version.parse("2.11.0"), Version.parse("2.28.9"), null),
                    a.gpus().size(),
                    Map.of("NCCL_NVLS_ENABLE", "0"));
            assertThat(NcclModel.of(s).communicator().channelsInitLine())
                    .isEqualTo(
                            NcclModel.of(new Scenario("given", s.workload(), input, s.versions(), s.ranks(), s.env()))
                                    .communicator()
                                    .channelsInitLine());
        }
    }

    @Test
    void theRealH200DumpOfTheFixturesReads() {
        Path fixture = Path.of("../shared/fixtures/h200-1rank/nccl-topo.xml");
        Assumptions.assumeTrue(Files.exists(fixture), "no ../shared/fixtures here");
        Topology t = Scenarios.topology(fixture.toString());
        assertThat(t.nodes().get(0).gpus()).hasSize(1);
        assertThat(t.nodes().get(0).gpus().get(0).computeCapability()).isEqualTo(90);
        assertThat(t.inferred()).anyMatch(s -> s.contains("numaid=-1"));
        Topology emulated = Scenarios.topology("../shared/fixtures/emulated-h200-x4/emulated-topo.xml");
        assertThat(emulated.nodes().get(0).gpus()).hasSize(4);
    }

    @Test
    void twoGpusWithOneDevAndDifferentBusesAreStillRefused() {
        String xml = "<system version=\"1\">\n"
                + "  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\">\n"
                + "    <pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">"
                + "<gpu dev=\"0\" sm=\"90\" rank=\"0\" gdr=\"1\"/></pci>\n"
                + "  </cpu>\n"
                + "  <cpu host_hash=\"0x1\" numaid=\"0\" arch=\"x86_64\" vendor=\"GenuineIntel\" affinity=\"ff\">\n"
                + "    <pci busid=\"0000:2a:00.0\" class=\"0x030200\" link_speed=\"32.0 GT/s PCIe\" link_width=\"16\">"
                + "<gpu dev=\"0\" sm=\"90\" rank=\"1\" gdr=\"1\"/></pci>\n"
                + "  </cpu>\n"
                + "</system>\n";
        assertThatThrownBy(() -> Scenarios.parseTopology(xml, "t.xml", "t", TopologyHints.NONE))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("two GPUs with dev 0");
    }
}

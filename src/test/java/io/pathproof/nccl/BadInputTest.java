package io.pathproof.nccl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Topology;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BadInputTest {
    @ParameterizedTest
    @ValueSource(strings = {"2.5.7", "3.0.0", "2.20.5", "2.31.0"})
    void unsupportedVersionIsABadInputNamingTheSupportedOnes(String v) {
        assertThatThrownBy(() -> NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), v, 4, Map.of())))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("nccl version " + v
                        + " is not modelled; supported: 2.21.x, 2.22.x, 2.23.x, 2.24.x, 2.25.x, 2.26.x, 2.27.0-2.27.4, 2.27.5,"
                        + " 2.27.6-2.27.7, 2.28.x, 2.29.x, 2.30.x")
                .satisfies(e -> assertThat(((PathproofException) e).exitCode()).isEqualTo(ExitCode.BAD_INPUT));
    }

    @Test
    void aPciTreeThatNeverReachesACpuIsAnImpossibleTopology() {
        Topology.Node node = new Topology.Node(
                "box",
                List.of(new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel")),
                List.of(new Topology.PciSwitch("a", "b", 4, 16), new Topology.PciSwitch("b", "a", 4, 16)),
                List.of(
                        new Topology.Gpu(0, "GPU", 80, "1", "a", 4, 16, 0),
                        new Topology.Gpu(1, "GPU", 80, "2", "cpu0", 4, 16, 0)),
                List.of(),
                List.of());
        Topology t = new Topology("loop", List.of(node));
        assertThatThrownBy(() -> NcclModel.of(Topologies.scenario(t, "2.28.9", 2, Map.of())))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("topology.box.pciSwitches[a].parent")
                .hasMessageContaining("no path");
    }

    @Test
    void aSizeThatIsNotWholeElementsIsRejected() {
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.22.3", 4, Map.of()));
        assertThatThrownBy(() -> m.allReduce(0, 6, DType.FLOAT32))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("6 bytes is not a whole number of float32 elements");
    }

    @Test
    void anUnknownProtocolIsAnErrorFrom228AndIgnoredBy222() {
        Map<String, String> env = Map.of("NCCL_PROTO", "Simple,Fast");
        assertThatThrownBy(() -> NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.28.9", 4, env)))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("NCCL_PROTO: unrecognized element \"Fast\"");
        NcclModel m = NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.22.3", 4, env));
        assertThat(m.allReduce(0, 4096, DType.FLOAT32).protocol()).isEqualTo("Simple");
    }

    @Test
    void disablingEveryAlgorithmLeavesNothingToRun() {
        Map<String, String> env = Map.of("NCCL_ALGO", "NVLS");
        assertThatThrownBy(() -> NcclModel.of(Topologies.scenario(Topologies.v100x4nv2("h", "0"), "2.28.9", 4, env))
                        .allReduce(0, 4096, DType.FLOAT32))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("no algorithm/protocol available for AllReduce; NCCL_ALGO was set to NVLS");
    }
}

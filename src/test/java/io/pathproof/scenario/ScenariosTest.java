package io.pathproof.scenario;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ScenariosTest {
    static int exitOf(Runnable r) {
        try {
            r.run();
        } catch (PathproofException e) {
            return e.exitCode();
        }
        return 0;
    }

    @Test
    void everyPresetLoadsAndEveryPresetFileIsIndexed() throws IOException {
        assertThat(Scenarios.scenarioPresets())
                .contains("seed", "h200-x4", "h200-x8", "h800-x8", "cpu-x4-gloo", "h200-1rank");
        assertThat(Scenarios.topologyPresets())
                .contains(
                        "v100-sxm2-x4-nv2",
                        "h200-sxm-x4-nvswitch",
                        "h200-sxm-x8-nvswitch",
                        "h800-sxm-x8-nvswitch",
                        "cpu-x4");
        assertThat(Scenarios.workloadPresets()).contains("one-64mib-fp32");
        for (String s : Scenarios.scenarioPresets()) {
            assertThat(Scenarios.load(s).name()).isEqualTo(s);
        }
        for (String t : Scenarios.topologyPresets()) {
            Topology topo = Scenarios.topology(t);
            assertThat(topo.name()).isEqualTo(t);
            assertThat(topo.inferred()).as("preset %s states every fact", t).isEmpty();
        }
        for (String w : Scenarios.workloadPresets()) {
            assertThat(Scenarios.workload(w).name()).isEqualTo(w);
        }
        // No preset file that the index forgets.
        for (String folder : List.of("workloads", "topologies", "scenarios")) {
            try (InputStream in = getClass().getResourceAsStream("/io/pathproof/scenario/presets/" + folder)) {
                if (in == null) {
                    continue;
                }
                String listing = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                for (String f : listing.split("\n")) {
                    if (f.endsWith(".json")) {
                        String name = f.substring(0, f.length() - 5);
                        assertThat(Presets.Kind.valueOf(kindOf(folder)) != null
                                        && Presets.exists(Presets.Kind.valueOf(kindOf(folder)), name))
                                .as("%s/%s indexed", folder, f)
                                .isTrue();
                    }
                }
            }
        }
    }

    private static String kindOf(String folder) {
        return switch (folder) {
            case "workloads" -> "WORKLOAD";
            case "topologies" -> "TOPOLOGY";
            default -> "SCENARIO";
        };
    }

    @Test
    void seedIsTheMethodsReferenceRun() {
        Scenario s = Scenarios.load("seed");
        assertThat(s.ranks()).isEqualTo(4);
        assertThat(s.backend()).isEqualTo(Backend.NCCL);
        assertThat(s.versions().nccl().toString()).isEqualTo("2.22.3");
        assertThat(s.versions().torch().toString()).isEqualTo("2.5.0");
        assertThat(s.workload().bucketCapMb()).isEqualTo(64.0);
        assertThat(s.workload().parameters()).hasSize(1);
        assertThat(s.workload().gradientBytes()).isEqualTo(67108864L);
        Topology.Node n = s.topology().nodes().get(0);
        assertThat(n.gpus())
                .hasSize(4)
                .allMatch(g -> g.computeCapability() == 70
                        && g.model().equals("Tesla V100-SXM2-32GB")
                        && g.nvswitchLinks() == 0
                        && g.pciGen() == 3);
        assertThat(n.nvlinks()).hasSize(6).allMatch(l -> l.count() == 2);
        assertThat(n.cpus()).hasSize(2).allMatch(c -> "intel".equals(c.vendor()));
    }

    @Test
    void hopperPresets() {
        Scenario h8 = Scenarios.load("h200-x8");
        assertThat(h8.ranks()).isEqualTo(8);
        assertThat(h8.env()).containsEntry("NCCL_NVLS_ENABLE", "0");
        assertThat(h8.versions().nccl().toString()).isEqualTo("2.28.9");
        assertThat(h8.versions().torch().toString()).isEqualTo("2.11.0");
        assertThat(h8.topology().nodes().get(0).gpus())
                .hasSize(8)
                .allMatch(g -> g.nvswitchLinks() == 18 && g.computeCapability() == 90 && g.pciGen() == 5);
        assertThat(Scenarios.load("h200-x4").topology().gpuCount()).isEqualTo(4);
        assertThat(Scenarios.load("h800-x8").topology().nodes().get(0).gpus())
                .allMatch(g -> g.nvswitchLinks() == 8 && g.model().contains("H800"));
        Scenario one = Scenarios.load("h200-1rank");
        assertThat(one.ranks()).isEqualTo(1);
        assertThat(one.topology().gpuCount()).isEqualTo(1);
    }

    @Test
    void glooScenarioHasNoGpuAndNoNccl() {
        Scenario s = Scenarios.load("cpu-x4-gloo");
        assertThat(s.backend()).isEqualTo(Backend.GLOO);
        assertThat(s.topology().gpuCount()).isZero();
        assertThat(s.versions().nccl()).isNull();
        assertThat(s.versions().torch().toString()).isEqualTo("1.13.0");
        assertThat(s.ranks()).isEqualTo(4);
    }

    @Test
    void theVmPresetAgreesWithNcclsOwnDumpOfThatMachine() throws IOException {
        String xml = new String(
                getClass()
                        .getResourceAsStream("testdata/topology-nccl-h200-1rank.input")
                        .readAllBytes(),
                StandardCharsets.UTF_8);
        Topology dumped = Scenarios.parseTopology(xml, "dump", "dump", TopologyHints.NONE);
        Topology preset = Scenarios.topology("h200-x1-vm");
        Topology.Gpu a = dumped.nodes().get(0).gpus().get(0);
        Topology.Gpu b = preset.nodes().get(0).gpus().get(0);
        assertThat(List.of(a.model(), a.computeCapability(), a.busId(), a.pciGen(), a.pciWidth(), a.nvswitchLinks()))
                .isEqualTo(List.of(
                        b.model(), b.computeCapability(), b.busId(), b.pciGen(), b.pciWidth(), b.nvswitchLinks()));
        assertThat(dumped.nodes().get(0).nics().get(0).speedMbps())
                .isEqualTo(preset.nodes().get(0).nics().get(0).speedMbps());
    }

    @Test
    void unknownPresetIsAUsageErrorListingThePresets() {
        assertThatThrownBy(() -> Scenarios.load("no-such-scenario"))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("no-such-scenario")
                .hasMessageContaining("seed, h200-x4");
        assertThat(exitOf(() -> Scenarios.load("no-such-scenario"))).isEqualTo(2);
        assertThat(exitOf(() -> Scenarios.topology("dgx-9"))).isEqualTo(2);
        assertThat(exitOf(() -> Scenarios.workload("gpt-9"))).isEqualTo(2);
    }

    @Test
    void filesAreReadByContentAndErrorsNameTheFile(@TempDir Path dir) throws IOException {
        Path dump = dir.resolve("params.txt");
        Files.writeString(
                dump,
                "{\"name\": \"w\", \"shape\": [3, 4], \"dtype\": \"torch.float16\", \"requires_grad\": true}\n"
                        + "\n{\"name\": \"b\", \"shape\": [3], \"dtype\": \"torch.float16\", \"requires_grad\": false}\n");
        Workload w = Scenarios.workload(dump.toString());
        assertThat(w.name()).isEqualTo("params");
        assertThat(w.parameters()).extracting(Parameter::name).containsExactly("w", "b");
        assertThat(w.gradientBytes()).isEqualTo(24L);
        assertThat(w.bucketCapMb()).isNull();

        Path bad = dir.resolve("bad.json");
        Files.writeString(bad, "{\"parameters\": [\n  {\"name\": \"p\", \"shape\": [4], \"dtype\": \"float32\"\n]}");
        assertThatThrownBy(() -> Scenarios.workload(bad.toString()))
                .hasMessageStartingWith(bad + ":3:")
                .hasMessageContaining("malformed JSON");
        assertThat(exitOf(() -> Scenarios.workload(bad.toString()))).isEqualTo(3);

        Path scen = dir.resolve("my.json");
        Files.writeString(
                scen,
                "{\"workload\": \"params.txt\", \"topology\": \"h200-sxm-x4-nvswitch\","
                        + " \"versions\": {\"torch\": \"2.11.0\", \"nccl\": \"2.28.9\"}}");
        Scenario s = Scenarios.load(scen.toString());
        assertThat(s.ranks()).isEqualTo(4);
        assertThat(s.workload().parameters()).hasSize(2);
        assertThat(s.name()).isEqualTo("my");
    }

    @Test
    void nvidiaSmiHintsFillWhatTheMatrixLacks(@TempDir Path dir) throws IOException {
        String text = new String(
                getClass()
                        .getResourceAsStream("testdata/topology-smi-h200-x8-nvswitch.input")
                        .readAllBytes(),
                StandardCharsets.UTF_8);
        // Drop the nvidia-smi -L lines: then the model must come from a hint.
        String matrixOnly = text.replaceAll("(?m)^GPU \\d+: .*\\n", "");
        Path f = dir.resolve("topo.txt");
        Files.writeString(f, matrixOnly);
        assertThat(exitOf(() -> Scenarios.topology(f.toString()))).isEqualTo(2);
        Topology t = Scenarios.topology(f.toString(), new TopologyHints("NVIDIA H100 80GB HBM3", null, 400000L));
        Topology.Node n = t.nodes().get(0);
        assertThat(n.gpus())
                .allMatch(g -> g.computeCapability() == 90 && g.model().contains("H100"));
        assertThat(n.nics()).extracting(Topology.Nic::name).containsExactly("mlx5_0", "mlx5_1");
        // mlx5_0 shows PXB to GPU0 and GPU1: it sits on their switch.
        assertThat(n.nics().get(0).pciParent()).isEqualTo(n.gpus().get(0).pciParent());
        assertThat(n.gpus().get(1).pciParent()).isEqualTo(n.gpus().get(0).pciParent());
        assertThat(n.nics().get(1).pciParent()).isEqualTo(n.gpus().get(4).pciParent());
        assertThat(t.inferred()).anyMatch(s -> s.contains("NVSwitch"));

        Topology cc = Scenarios.topology(f.toString(), new TopologyHints(null, 90, null));
        assertThat(cc.nodes().get(0).gpus()).allMatch(g -> g.computeCapability() == 90);
        assertThat(cc.inferred()).anyMatch(s -> s.contains("gen3"));
    }

    @Test
    void composeFromCommandLineParts() {
        Scenario s = Scenarios.compose(
                "one-64mib-fp32",
                "v100-sxm2-x4-nv2",
                TopologyHints.NONE,
                "2.5.0",
                "2.22.3",
                null,
                null,
                java.util.Map.of("NCCL_MAX_NCHANNELS", "1"));
        assertThat(s.ranks()).isEqualTo(4);
        assertThat(s.env()).containsEntry("NCCL_MAX_NCHANNELS", "1");
        assertThat(s.backend()).isEqualTo(Backend.NCCL);
        assertThatThrownBy(() ->
                        Scenarios.compose("one-64mib-fp32", "v100-sxm2-x4-nv2", null, "two", "2.22.3", null, 4, null))
                .hasMessageStartingWith("--torch: cannot read version 'two'");
        assertThat(exitOf(() -> Scenarios.compose("one-64mib-fp32", "cpu-x4", null, "1.13.1", null, null, null, null)))
                .isEqualTo(2);
        Scenario gloo = Scenarios.compose("one-64mib-fp32", "cpu-x4", null, "1.13.1", null, null, 2, null);
        assertThat(gloo.backend()).isEqualTo(Backend.GLOO);
        assertThat(exitOf(() ->
                        Scenarios.compose("one-64mib-fp32", "v100-sxm2-x4-nv2", null, "2.5.0", null, null, 4, null)))
                .isEqualTo(3);
    }

    @Test
    void topologyFormatsAreToldByContent() {
        assertThatThrownBy(() -> Scenarios.parseTopology("hello", "x.txt", "x", TopologyHints.NONE))
                .hasMessageStartingWith("x.txt:1: not a topology");
    }
}

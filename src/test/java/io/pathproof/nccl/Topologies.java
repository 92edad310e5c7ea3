package io.pathproof.nccl;

import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Topology;
import io.pathproof.scenario.Version;
import io.pathproof.scenario.Versions;
import io.pathproof.scenario.Workload;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Topologies built directly from the records, as the machines were described (not from presets). */
final class Topologies {
    private Topologies() {}

    static final Workload ONE_64MIB = new Workload(
            "one-64mib-fp32",
            List.of(new Parameter("p", List.of(16_777_216L), DType.FLOAT32, true)),
            64.0,
            false,
            false,
            false);

    /** 4 × V100-SXM2 with two NVLinks between every pair, two PCIe switches under one Intel socket. */
    static Topology v100x4nv2(String host, String busPrefix) {
        List<Topology.Gpu> gpus = new ArrayList<>();
        List<Topology.NvLink> links = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            gpus.add(new Topology.Gpu(
                    i, "Tesla V100-SXM2-32GB", 70, busPrefix + i + ":00.0", i < 2 ? "sw0" : "sw1", 3, 16, 0));
            for (int j = i + 1; j < 4; j++) {
                links.add(new Topology.NvLink(i, j, 2));
            }
        }
        Topology.Node node = new Topology.Node(
                host,
                List.of(new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel")),
                List.of(new Topology.PciSwitch("sw0", "cpu0", 3, 16), new Topology.PciSwitch("sw1", "cpu0", 3, 16)),
                gpus,
                links,
                List.of());
        return new Topology("v100-sxm2-x4-nv2", List.of(node));
    }

    /** n Hopper GPUs of compute capability 90, each with {@code links} NVLinks into the NVSwitch fabric. */
    static Topology.Node hopperNode(String host, String model, int n, int links, boolean nics) {
        List<Topology.Gpu> gpus = new ArrayList<>();
        List<Topology.PciSwitch> sws = new ArrayList<>();
        List<Topology.Nic> nicList = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            String sw = "sw" + i;
            sws.add(new Topology.PciSwitch(sw, i < n / 2 ? "cpu0" : "cpu1", 5, 16));
            gpus.add(new Topology.Gpu(i, model, 90, String.format("%02x:00.0", 0x18 + i * 0x10), sw, 5, 16, links));
            if (nics) {
                nicList.add(new Topology.Nic("mlx5_" + i, sw, 400_000, true, "ib"));
            }
        }
        return new Topology.Node(
                host,
                List.of(
                        new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel"),
                        new Topology.Cpu("cpu1", 1, "x86_64", "GenuineIntel")),
                sws,
                gpus,
                List.of(),
                nicList);
    }

    /** As {@link #hopper} with another compute capability (a Blackwell NVSwitch box: 100). */
    static Topology hopperWithCc(String model, int n, int links, int cc) {
        Topology.Node h = hopperNode("node0", model, n, links, false);
        List<Topology.Gpu> gpus = new ArrayList<>();
        for (Topology.Gpu g : h.gpus()) {
            gpus.add(new Topology.Gpu(
                    g.index(), g.model(), cc, g.busId(), g.pciParent(), g.pciGen(), g.pciWidth(), g.nvswitchLinks()));
        }
        return new Topology(
                model + "-x" + n,
                List.of(new Topology.Node(h.hostname(), h.cpus(), h.pciSwitches(), gpus, h.nvlinks(), h.nics())));
    }

    static Topology hopper(String model, int n, int links) {
        return new Topology(model + "-x" + n, List.of(hopperNode("node0", model, n, links, false)));
    }

    static Topology hopperCluster(int nodes, int perNode) {
        List<Topology.Node> list = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            list.add(hopperNode("node" + i, "NVIDIA H200", perNode, 18, true));
        }
        return new Topology("h200-cluster", list);
    }

    static Scenario scenario(Topology t, String nccl, int ranks, Map<String, String> env) {
        return new Scenario(
                "test", ONE_64MIB, t, new Versions(Version.parse("2.5.0"), Version.parse(nccl), null), ranks, env);
    }
}

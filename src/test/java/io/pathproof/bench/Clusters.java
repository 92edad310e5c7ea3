package io.pathproof.bench;

import io.pathproof.scenario.Topology;
import java.util.ArrayList;
import java.util.List;

/** Large topologies for the benchmarks. */
final class Clusters {
    private Clusters() {}

    /**
     * {@code nodes} hosts of 8 H200 each (18 NVLinks into NVSwitch), two Intel sockets, one PCIe Gen5 switch per GPU
     * with one 400 Gb/s GDR-capable NIC under it.
     */
    static Topology h200(int nodes) {
        List<Topology.Node> out = new ArrayList<>();
        for (int n = 0; n < nodes; n++) {
            List<Topology.Gpu> gpus = new ArrayList<>();
            List<Topology.PciSwitch> sws = new ArrayList<>();
            List<Topology.Nic> nics = new ArrayList<>();
            for (int i = 0; i < 8; i++) {
                sws.add(new Topology.PciSwitch("sw" + i, i < 4 ? "cpu0" : "cpu1", 5, 16));
                gpus.add(new Topology.Gpu(
                        i, "NVIDIA H200", 90, String.format("%02x:00.0", 0x18 + 0x10 * i), "sw" + i, 5, 16, 18));
                nics.add(new Topology.Nic("mlx5_" + i, "sw" + i, 400_000, true, "ib"));
            }
            out.add(new Topology.Node(
                    "node" + n,
                    List.of(
                            new Topology.Cpu("cpu0", 0, "x86_64", "GenuineIntel"),
                            new Topology.Cpu("cpu1", 1, "x86_64", "GenuineIntel")),
                    sws,
                    gpus,
                    List.of(),
                    nics));
        }
        return new Topology("h200-" + nodes + "x8", out);
    }
}

package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.cli.Main;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Topology;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --emulate TOPOLOGY --nodes N} on this CPU machine: what each rank of each emulated node is given (its
 * node's host id and topology file, its busId, the network over loopback), the manifest, and every refusal before a
 * file is written. The stand-in Python of {@link EmulationTest} records each rank's environment.
 */
class EmulatedClusterRunTest {
    @TempDir
    Path tmp;

    private static int run(StringWriter out, StringWriter err, String... args) {
        return Main.run(args, new PrintWriter(out, true), new PrintWriter(err, true));
    }

    @Test
    void eachNodesRanksGetItsHostIdItsTopologyFileAndTheirBusIds() throws Exception {
        Path lib = EmulationTest.patchedLibrary(tmp.resolve("emu"));
        Path out = tmp.resolve("r");
        StringWriter o = new StringWriter();
        StringWriter err = new StringWriter();
        int code = run(
                o,
                err,
                "run",
                "--workload",
                "one-64mib-fp32",
                "--emulate",
                "h200-sxm-x4-nvswitch",
                "--nodes",
                "2",
                "--nic-speed",
                "200000",
                "--nccl-lib",
                lib.toString(),
                "--python",
                EmulationTest.fakePython(tmp).toString(),
                "--iters",
                "2",
                "--warmup",
                "0",
                "--profile-iters",
                "0",
                "--out",
                out.toString());
        assertThat(err.toString()).isEmpty();
        assertThat(code).isZero();
        assertThat(o.toString()).contains("(8 process(es) exited 0)");
        Path dir = out.toAbsolutePath().normalize();
        List<String> busIds = new ArrayList<>();
        for (int rank = 0; rank < 8; rank++) {
            int node = rank / 4;
            Map<String, String> env = EmulationTest.envOf(dir.resolve("env-rank" + rank + ".txt"));
            assertThat(env)
                    .containsEntry("NCCL_HOSTID", "h200-sxm-x4-node-" + node)
                    .containsEntry(
                            "NCCL_TOPO_FILE",
                            dir.resolve("emulated-topo-node" + node + ".xml").toString())
                    .containsEntry("NCCL_NET", "Socket")
                    .containsEntry("NCCL_SOCKET_IFNAME", "lo")
                    .containsEntry("NCCL_IB_DISABLE", "1")
                    .containsEntry("NCCL_NVLS_ENABLE", "0")
                    .containsEntry("PATHPROOF_CUDA_DEVICE", "0")
                    .containsEntry("RANK", Integer.toString(rank))
                    .containsEntry("WORLD_SIZE", "8")
                    .doesNotContainKey("NCCL_NET_PLUGIN");
            busIds.add(env.get("NCCL_EMULATE_BUSID"));
        }
        // Each node reports the same busIds (the real GPU's first): host hashes differ, so NCCL sees no duplicate GPU.
        assertThat(busIds.subList(0, 4))
                .isEqualTo(busIds.subList(4, 8))
                .startsWith("0000:00:06.0")
                .doesNotHaveDuplicates();
        for (int node = 0; node < 2; node++) {
            String xml = Files.readString(dir.resolve("emulated-topo-node" + node + ".xml"));
            assertThat(xml)
                    .contains("<net name=\"lo\" dev=\"0\" speed=\"200000\" port=\"0\" gdr=\"0\"/>")
                    .contains("rank=\"" + 4 * node + "\"");
            for (String b : busIds.subList(0, 4)) {
                assertThat(xml).contains("<pci busid=\"" + b + "\" class=\"0x030200\"");
            }
        }
        // The cluster the prediction is made for, as a topology JSON pathproof reads back.
        Topology cluster =
                Scenarios.topology(dir.resolve("emulated-cluster.json").toString());
        assertThat(cluster.nodes()).hasSize(2);
        assertThat(cluster.nodes().get(1).nics())
                .containsExactly(new Topology.Nic("lo", null, 200_000, false, "socket"));

        JsonNode m = Json.mapper().readTree(dir.resolve("manifest.json").toFile());
        assertThat(m.path("complete").asBoolean()).isTrue();
        assertThat(m.path("nproc").asInt()).isEqualTo(8);
        assertThat(m.path("nnodes").asInt()).isEqualTo(1); // one launcher starts every emulated rank
        assertThat(m.path("topology").asText()).isEqualTo("h200-sxm-x4-nvswitch-x2-nodes");
        JsonNode e = m.path("emulation");
        assertThat(e.path("emulated").asBoolean()).isTrue();
        assertThat(e.path("note").asText()).isEqualTo("emulated: NCCL decisions real, timings not physical");
        assertThat(e.path("timings").asText()).isEqualTo("not physical");
        assertThat(e.path("nodes").asInt()).isEqualTo(2);
        assertThat(e.path("ranksPerNode").asInt()).isEqualTo(4);
        assertThat(e.path("gpus").asInt()).isEqualTo(8);
        assertThat(e.path("transport").asText()).startsWith("NET/Socket over loopback");
        assertThat(e.path("clusterTopology").asText()).isEqualTo("emulated-cluster.json");
        assertThat(e.path("topologyXml").isNull()).isTrue();
        assertThat(e.path("nodeList").get(1).path("hostId").asText()).isEqualTo("h200-sxm-x4-node-1");
        assertThat(e.path("nodeList").get(1).path("topologyXml").asText()).isEqualTo("emulated-topo-node1.xml");
        assertThat(e.path("nodeList")
                        .get(1)
                        .path("nics")
                        .get(0)
                        .path("speedMbps")
                        .asLong())
                .isEqualTo(200_000);
        assertThat(e.path("busIds")).hasSize(8);
    }

    @Test
    void fewerRanksPerNodeAndANetPluginThatKeepsTheTopologysNics() throws Exception {
        Path lib = EmulationTest.patchedLibrary(tmp.resolve("emu"));
        Path plugins = Files.createDirectories(tmp.resolve("net-emu"));
        Files.writeString(plugins.resolve("libnccl-net-emu.so"), "ELF");
        // Two nodes of 4 H200s, each with two 400 Gb/s GPUDirect NICs: Socket over lo cannot, a net plugin can.
        Topology.Node base = Scenarios.topology("h200-sxm-x4-nvswitch").nodes().get(0);
        List<Topology.Nic> nics = List.of(
                new Topology.Nic("mlx5_0", "pcisw0", 400_000, true, "ib"),
                new Topology.Nic("mlx5_1", "pcisw1", 400_000, true, "ib"));
        Topology two = new Topology(
                "hgx-2x4",
                List.of(
                        new Topology.Node("a", base.cpus(), base.pciSwitches(), base.gpus(), base.nvlinks(), nics),
                        new Topology.Node("b", base.cpus(), base.pciSwitches(), base.gpus(), base.nvlinks(), nics)));
        Path file = tmp.resolve("hgx-2x4.json");
        Files.writeString(file, Json.mapper().valueToTree(two).toString());

        StringWriter err0 = new StringWriter();
        assertThat(run(
                        new StringWriter(),
                        err0,
                        "run",
                        "--workload",
                        "one-64mib-fp32",
                        "--emulate",
                        file.toString(),
                        "--nccl-lib",
                        lib.toString(),
                        "--out",
                        tmp.resolve("refused").toString()))
                .isEqualTo(ExitCode.BAD_INPUT);
        assertThat(err0.toString().strip())
                .doesNotContain("\n")
                .contains("node a has 2 NICs")
                .contains("--net-plugin");
        assertThat(tmp.resolve("refused")).doesNotExist();

        Path out = tmp.resolve("r");
        StringWriter err = new StringWriter();
        List<String> twoPerNode = List.of(
                "run",
                "--workload",
                "one-64mib-fp32",
                "--emulate",
                file.toString(),
                "--nproc-per-node",
                "2",
                "--net-plugin",
                plugins.toString(),
                "--nccl-lib",
                lib.toString(),
                "--python",
                EmulationTest.fakePython(tmp).toString(),
                "--iters",
                "2",
                "--warmup",
                "0",
                "--profile-iters",
                "0");
        List<String> args = new ArrayList<>(twoPerNode);
        args.addAll(List.of("--out", out.toString()));
        int code = run(new StringWriter(), err, args.toArray(new String[0]));
        assertThat(err.toString()).isEmpty();
        assertThat(code).isZero();
        Path dir = out.toAbsolutePath().normalize();
        Map<String, String> r2 = EmulationTest.envOf(dir.resolve("env-rank2.txt"));
        assertThat(r2)
                .containsEntry("NCCL_HOSTID", "b")
                .containsEntry("NCCL_NET_PLUGIN", "libnccl-net-emu.so")
                .containsEntry("NCCL_NET", "emu")
                .containsEntry("WORLD_SIZE", "4")
                .containsEntry(
                        "PATHPROOF_NET_EMU_NICS_FILE",
                        dir.resolve("emulated-nics-node1.txt").toString());
        // By name through the library path: NCCL 2.27.3 takes no path there (plugin/plugin_open.cc:63-89@v2.27.3-1).
        assertThat(r2.get("LD_LIBRARY_PATH"))
                .startsWith(
                        plugins.resolve("libnccl-net-emu.so").toAbsolutePath().getParent() + "");
        String xml = Files.readString(dir.resolve("emulated-topo-node1.xml"));
        assertThat(xml)
                .contains("<net name=\"mlx5_1\" dev=\"1\" speed=\"400000\" port=\"0\" gdr=\"1\"/>")
                .doesNotContain("name=\"lo\"");
        // The plugin's list says what the file says, each NIC's device path ending in the busId of its PCI device.
        List<String> list = Files.readAllLines(dir.resolve("emulated-nics-node1.txt"));
        assertThat(list).hasSize(3);
        java.util.regex.Matcher m = java.util.regex.Pattern.compile(
                        "name=mlx5_1 pci=/sys/devices/pci0000:00/(\\S+)" + " speed=400000 gdr=1 port=0")
                .matcher(list.get(2));
        assertThat(m.matches()).as(list.get(2)).isTrue();
        assertThat(xml).contains("<pci busid=\"" + m.group(1) + "\" class=\"0x020000\"");
        JsonNode e =
                Json.mapper().readTree(dir.resolve("manifest.json").toFile()).path("emulation");
        assertThat(e.path("transport").asText()).isEqualTo("NCCL net plugin libnccl-net-emu.so (NCCL_NET_PLUGIN)");
        assertThat(e.path("ranksPerNode").asInt()).isEqualTo(2);
        assertThat(e.path("topologyGpus").asInt()).isEqualTo(4);

        // node_nic_mbps slows node 1's NICs where NCCL and the plugin read them; node 0 and the description stay.
        Path slow = tmp.resolve("slow");
        StringWriter err2 = new StringWriter();
        List<String> slowArgs = new ArrayList<>(twoPerNode);
        slowArgs.addAll(List.of("--inject", "node_nic_mbps=1:100000", "--out", slow.toString()));
        assertThat(run(new StringWriter(), err2, slowArgs.toArray(new String[0])))
                .isZero();
        assertThat(err2.toString()).isEmpty();
        Path sd = slow.toAbsolutePath().normalize();
        assertThat(Files.readString(sd.resolve("emulated-topo-node1.xml")))
                .contains("<net name=\"mlx5_1\" dev=\"1\" speed=\"100000\" port=\"0\" gdr=\"1\"/>")
                .doesNotContain("speed=\"400000\"");
        assertThat(Files.readString(sd.resolve("emulated-topo-node0.xml"))).contains("speed=\"400000\"");
        assertThat(Files.readAllLines(sd.resolve("emulated-nics-node1.txt")).get(2))
                .contains(" speed=100000 ");
        assertThat(Files.readString(sd.resolve("emulated-nics-node0.txt"))).doesNotContain("speed=100000");
        JsonNode m2 = Json.mapper().readTree(sd.resolve("manifest.json").toFile());
        assertThat(m2.path("emulation")
                        .path("nodeList")
                        .get(1)
                        .path("nics")
                        .get(0)
                        .path("speedMbps")
                        .asLong())
                .isEqualTo(100_000);
        // Blind: what diagnose reads names neither the knob nor the slowed speed; the sealed record has it.
        String diagnosed =
                m2.path("topology") + " " + m2.path("env") + " " + m2.path("argv") + " " + m2.path("workload");
        assertThat(diagnosed).doesNotContain("node_nic_mbps").doesNotContain("100000");
        assertThat(Files.readString(sd.resolve("fault.sealed.json"))).contains("node_nic_mbps");
    }

    @Test
    void impossibleShapesAndOwnedVariablesAreRefusedBeforeAnyFile() throws Exception {
        Path lib = EmulationTest.patchedLibrary(tmp.resolve("emu"));
        String[] base = {
            "run",
            "--workload",
            "one-64mib-fp32",
            "--emulate",
            "h200-sxm-x4-nvswitch",
            "--nccl-lib",
            lib.toString(),
            "--out",
            tmp.resolve("r").toString()
        };
        Object[][] cases = {
            {ExitCode.USAGE, "has no NIC: give --nic-speed MBPS", new String[] {"--nodes", "2"}},
            {
                ExitCode.USAGE,
                "NCCL_HOSTID is set by the emulation",
                new String[] {"--nodes", "2", "--nic-speed", "1000", "--inject", "NCCL_HOSTID=x"}
            },
            {
                ExitCode.USAGE,
                "NCCL_NET is set by the emulation",
                new String[] {"--nodes", "2", "--nic-speed", "1000", "--inject", "NCCL_NET=IB"}
            },
            {
                ExitCode.USAGE,
                "--nproc and --topology go without it",
                new String[] {"--nodes", "2", "--nic-speed", "1000", "--nproc", "8"}
            },
            {
                ExitCode.BAD_INPUT,
                "has 4 GPU(s) but 5 rank(s) per node",
                new String[] {"--nodes", "2", "--nic-speed", "1000", "--nproc-per-node", "5"}
            },
            {ExitCode.USAGE, "go with an emulated cluster", new String[] {"--nproc-per-node", "2"}},
            {
                ExitCode.USAGE,
                "the emulated cluster has nodes 0..1",
                new String[] {"--nodes", "2", "--nic-speed", "1000", "--inject", "node_nic_mbps=2:100"}
            },
            {ExitCode.USAGE, "here there is none", new String[] {"--inject", "node_nic_mbps=0:100"}},
            {
                ExitCode.USAGE,
                "expected N:MBPS",
                new String[] {"--nodes", "2", "--nic-speed", "1000", "--inject", "node_nic_mbps=1:0"}
            },
            {
                ExitCode.USAGE,
                "--net-plugin " + tmp.resolve("none") + ": no such file",
                new String[] {
                    "--nodes", "2", "--net-plugin", tmp.resolve("none").toString()
                }
            },
            {
                ExitCode.USAGE,
                "--nnodes must be 1",
                new String[] {
                    "--nodes", "2", "--nic-speed", "1000", "--nnodes", "2", "--rdzv-endpoint", "127.0.0.1:29500"
                }
            },
        };
        for (Object[] c : cases) {
            List<String> args = new ArrayList<>(List.of(base));
            args.addAll(List.of((String[]) c[2]));
            StringWriter err = new StringWriter();
            assertThat(run(new StringWriter(), err, args.toArray(new String[0])))
                    .as(args.toString())
                    .isEqualTo(c[0]);
            assertThat(err.toString().strip())
                    .as(args.toString())
                    .doesNotContain("\n")
                    .contains((String) c[1]);
            assertThat(tmp.resolve("r")).doesNotExist();
        }
        StringWriter err = new StringWriter();
        assertThat(run(
                        new StringWriter(),
                        err,
                        "run",
                        "--workload",
                        "one-64mib-fp32",
                        "--nic-speed",
                        "1000",
                        "--out",
                        tmp.resolve("r").toString()))
                .isEqualTo(ExitCode.USAGE);
        assertThat(err.toString()).contains("go with --emulate TOPOLOGY");
    }

    @Test
    void aUsersCommandIsRefusedWhenItsLauncherStartsAnotherCountAndOtherwiseToldTheNodes() throws Exception {
        Path lib = EmulationTest.patchedLibrary(tmp.resolve("emu"));
        StringWriter err = new StringWriter();
        assertThat(run(
                        new StringWriter(),
                        err,
                        "run",
                        "--emulate",
                        "h200-sxm-x4-nvswitch",
                        "--nodes",
                        "2",
                        "--nic-speed",
                        "400000",
                        "--nccl-lib",
                        lib.toString(),
                        "--out",
                        tmp.resolve("a").toString(),
                        "--",
                        "torchrun",
                        "--nproc_per_node",
                        "4",
                        "train.py"))
                .isEqualTo(ExitCode.USAGE);
        assertThat(err.toString().strip())
                .doesNotContain("\n")
                .contains("the command starts 4 rank(s)")
                .contains("give it --nproc_per_node 8");
        assertThat(tmp.resolve("a")).doesNotExist();
        assertThat(TorchrunFlags.nprocPerNode(List.of("torchrun", "--nproc-per-node=16", "x.py")))
                .isEqualTo(16);
        assertThat(TorchrunFlags.nprocPerNode(List.of("torchrun", "--nproc_per_node", "gpu", "x.py")))
                .isNull();

        // A command that records what it was given (it builds no DDP model, so the run ends with exit 3).
        Path out = tmp.resolve("b");
        Path seen = tmp.resolve("seen.txt");
        int code = run(
                new StringWriter(),
                new StringWriter(),
                "run",
                "--emulate",
                "h200-sxm-x4-nvswitch",
                "--nodes",
                "2",
                "--nic-speed",
                "400000",
                "--nccl-lib",
                lib.toString(),
                "--out",
                out.toString(),
                "--",
                "sh",
                "-c",
                "env > " + seen);
        assertThat(code).isEqualTo(ExitCode.BAD_INPUT);
        Map<String, String> env = EmulationTest.envOf(seen);
        Path dir = out.toAbsolutePath().normalize();
        assertThat(env)
                .containsEntry(
                        "PATHPROOF_TOPOLOGY",
                        dir.resolve("emulated-cluster.json").toString())
                .containsEntry("NCCL_NET", "Socket")
                .doesNotContainKey("PATHPROOF_TOPOLOGY_NODES")
                .doesNotContainKey("NCCL_TOPO_FILE")
                .doesNotContainKey("NCCL_HOSTID");
        JsonNode nodes = Json.mapper().readTree(env.get("PATHPROOF_EMULATE_NODES"));
        assertThat(nodes.path("ranksPerNode").asInt()).isEqualTo(4);
        assertThat(nodes.path("nodes").get(1).path("hostId").asText()).isEqualTo("h200-sxm-x4-node-1");
        assertThat(nodes.path("nodes").get(1).path("topoFile").asText())
                .isEqualTo(dir.resolve("emulated-topo-node1.xml").toString());
        assertThat(nodes.path("nodes").get(1).path("busIds")).hasSize(4);
        assertThat(env.get("PATHPROOF_EMULATE_BUSIDS").split(",")).hasSize(8);
        JsonNode e =
                Json.mapper().readTree(dir.resolve("manifest.json").toFile()).path("emulation");
        assertThat(e.path("nodes").asInt()).isEqualTo(2);
        assertThat(e.path("gpus").asInt()).isEqualTo(8);
    }

    @Test
    void proveOnAnEmulatedClusterPredictsForTheClusterNcclWillSee() throws Exception {
        Path lib = EmulationTest.patchedLibrary(tmp.resolve("emu"));
        Path out = tmp.resolve("p");
        StringWriter err = new StringWriter();
        // The stand-in Python runs no real rank, so prove ends after the baseline; the sealed prediction is what
        // counts.
        run(
                new StringWriter(),
                err,
                "prove",
                "--scenario",
                "h200-x4",
                "--nodes",
                "2",
                "--nic-speed",
                "400000",
                "--emulate",
                "--nccl-lib",
                lib.toString(),
                "--python",
                EmulationTest.fakePython(tmp).toString(),
                "--torch",
                "2.11.0",
                "--iters",
                "2",
                "--warmup",
                "0",
                "--profile-iters",
                "0",
                "--fault",
                "NCCL_PROTO=LL128",
                "--out",
                out.toString());
        JsonNode p = Json.mapper().readTree(out.resolve("prediction.json").toFile());
        JsonNode in = p.path("inputs");
        assertThat(in.path("ranks").asInt()).isEqualTo(8);
        assertThat(in.path("topology").path("nodes")).hasSize(2);
        assertThat(in.path("topology")
                        .path("nodes")
                        .get(1)
                        .path("nics")
                        .get(0)
                        .path("name")
                        .asText())
                .isEqualTo("lo");
        assertThat(in.path("env").path("NCCL_NVLS_ENABLE").asText()).isEqualTo("0");
        JsonNode m = Json.mapper()
                .readTree(out.resolve("baseline").resolve("manifest.json").toFile());
        assertThat(m.path("nproc").asInt()).isEqualTo(8);
        assertThat(m.path("emulation").path("nodes").asInt()).isEqualTo(2);
        assertThat(EmulationTest.envOf(out.resolve("baseline").resolve("env-rank5.txt")))
                .containsEntry("NCCL_HOSTID", "h200-sxm-x4-node-1");
    }

    @Test
    void proveOnAUsersCommandEmulatesTheClusterItNames() throws Exception {
        Path lib = EmulationTest.patchedLibrary(tmp.resolve("emu"));
        Path out = tmp.resolve("p");
        Path seen = tmp.resolve("seen.txt");
        // The command builds no DDP model, so the baseline ends the proof (exit 3); what it was given is the point.
        int code = run(
                new StringWriter(),
                new StringWriter(),
                "prove",
                "--emulate",
                "--nccl-lib",
                lib.toString(),
                "--topology",
                "h200-sxm-x4-nvswitch",
                "--nodes",
                "2",
                "--nproc-per-node",
                "2",
                "--nic-speed",
                "100000",
                "--out",
                out.toString(),
                "--",
                "sh",
                "-c",
                "env > " + seen);
        assertThat(code).isEqualTo(ExitCode.BAD_INPUT);
        Map<String, String> env = EmulationTest.envOf(seen);
        assertThat(env)
                .containsEntry("NCCL_NET", "Socket")
                .containsEntry(
                        "PATHPROOF_TOPOLOGY",
                        out.resolve("baseline")
                                .toAbsolutePath()
                                .normalize()
                                .resolve("emulated-cluster.json")
                                .toString());
        JsonNode nodes = Json.mapper().readTree(env.get("PATHPROOF_EMULATE_NODES"));
        assertThat(nodes.path("ranksPerNode").asInt()).isEqualTo(2);
        assertThat(nodes.path("nodes")).hasSize(2);
        Topology cluster = Scenarios.topology(
                out.resolve("baseline").resolve("emulated-cluster.json").toString());
        assertThat(cluster.gpuCount()).isEqualTo(4);
        assertThat(cluster.nodes().get(0).nics().get(0).speedMbps()).isEqualTo(100_000);
    }
}

package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Scenarios;
import io.pathproof.scenario.Topology;
import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code run --emulate} on this CPU machine: every refusal before a process starts, and a whole launch through a
 * stand-in Python (a shell script that answers the probes and records each rank's environment) to check what each
 * rank is given. The GPU part (the patched NCCL under real torch) runs on a GPU node; see docs/emulation.md.
 */
class EmulationTest {
    static final Topology X4 = Scenarios.topology("h200-sxm-x4-nvswitch");

    static Path patchedLibrary(Path dir) throws Exception {
        Files.createDirectories(dir);
        byte[] body = new byte[3 << 20];
        Arrays.fill(body, (byte) 'N'); // a run of the needle's first byte must not hide it
        byte[] mark = "NCCL_EMULATE_BUSID".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(mark, 0, body, (1 << 20) - 7, mark.length); // across the scanner's 1 MiB buffers
        Files.write(dir.resolve("libnccl.so.2"), body);
        Files.writeString(
                dir.resolve("BUILD-INFO"),
                "nccl_version=2.28.9\npatch=emulator-2.28.patch\n" + "patch_sha256=ab12\narch=sm_90\n");
        return dir;
    }

    static Runner.Request request(
            Path out, int nproc, Runner.Backend backend, Runner.Launcher launcher, List<String> inject, String python) {
        return Runner.Request.builder(RunnerTest.oneParameter(), out)
                .labels("one-64mib-fp32", "h200-sxm-x4-nvswitch")
                .backend(backend)
                .ranks(nproc, 1, 0)
                .sizes(2, 0, 0)
                .inject(inject)
                .launcher(launcher)
                .python(python)
                .recorded(List.of("pathproof", "run"), "pathproof test")
                .build();
    }

    static int exitOf(Runnable r) {
        try {
            r.run();
        } catch (PathproofException e) {
            return e.exitCode();
        }
        return 0;
    }

    @Test
    void everyRefusalComesBeforeTheRunDirectoryAndAnyProcess(@TempDir Path tmp) throws Exception {
        Path lib = patchedLibrary(tmp.resolve("emu"));
        Path out = tmp.resolve("r");
        Runner.Emulate ok = new Runner.Emulate("h200-sxm-x4-nvswitch", X4, lib, null);

        Path empty = Files.createDirectories(tmp.resolve("nolib"));
        assertThatThrownBy(() -> Runner.run(
                        request(out, 4, Runner.Backend.NCCL, Runner.Launcher.AUTO, List.of(), null),
                        null,
                        new Runner.Emulate("x4", X4, empty, null)))
                .hasMessage("--nccl-lib " + empty + ": no libnccl.so.2 there; build it with"
                        + " scripts/build-nccl-emulator.sh NCCL_SRC OUT and pass --nccl-lib OUT")
                .satisfies(e -> assertThat(((PathproofException) e).exitCode()).isEqualTo(ExitCode.USAGE));

        Path stock = Files.createDirectories(tmp.resolve("stock"));
        Files.write(
                stock.resolve("libnccl.so.2"),
                "ELF ncclCommInitRank NCCL_TOPO_FILE".getBytes(StandardCharsets.US_ASCII));
        assertThatThrownBy(() -> Runner.run(
                        request(out, 4, Runner.Backend.NCCL, Runner.Launcher.AUTO, List.of(), null),
                        null,
                        new Runner.Emulate("x4", X4, stock, null)))
                .hasMessageContaining("a stock NCCL (no NCCL_EMULATE_BUSID; it refuses two ranks on one GPU)")
                .hasMessageContaining("scripts/build-nccl-emulator.sh NCCL_SRC OUT")
                .satisfies(e -> assertThat(((PathproofException) e).exitCode()).isEqualTo(ExitCode.USAGE));

        assertThatThrownBy(() -> Runner.run(
                        request(out, 5, Runner.Backend.NCCL, Runner.Launcher.AUTO, List.of(), null), null, ok))
                .hasMessage(
                        "--emulate h200-sxm-x4-nvswitch: --nproc 5 but the topology has 4 GPU(s): one rank per emulated GPU")
                .satisfies(e -> assertThat(((PathproofException) e).exitCode()).isEqualTo(ExitCode.BAD_INPUT));

        Topology two =
                new Topology("two-hosts", List.of(X4.nodes().get(0), X4.nodes().get(0)));
        assertThatThrownBy(() -> Runner.run(
                        request(out, 4, Runner.Backend.NCCL, Runner.Launcher.AUTO, List.of(), null),
                        null,
                        new Runner.Emulate("two-hosts", two, lib, null)))
                .hasMessageContaining("node h200-sxm-x4-node is not joined over loopback")
                .satisfies(e -> assertThat(((PathproofException) e).exitCode()).isEqualTo(ExitCode.BAD_INPUT));

        assertThat(exitOf(() -> Runner.run(
                        request(out, 4, Runner.Backend.GLOO, Runner.Launcher.AUTO, List.of(), null), null, ok)))
                .isEqualTo(ExitCode.USAGE);
        assertThat(exitOf(() -> Runner.run(
                        request(out, 4, Runner.Backend.NCCL, Runner.Launcher.TORCHRUN, List.of(), null), null, ok)))
                .isEqualTo(ExitCode.USAGE);
        assertThatThrownBy(() -> Runner.run(
                        request(out, 4, Runner.Backend.AUTO, Runner.Launcher.AUTO, List.of("NCCL_NVLS_ENABLE=1"), null),
                        null,
                        ok))
                .hasMessage("--emulate: NCCL_NVLS_ENABLE is set by the emulation and cannot be injected");
        assertThat(exitOf(() -> Runner.run(
                        request(out, 4, Runner.Backend.NCCL, Runner.Launcher.AUTO, List.of(), null),
                        null,
                        new Runner.Emulate("x4", X4, lib, 7))))
                .isEqualTo(ExitCode.USAGE);
        assertThat(out).doesNotExist();
    }

    @Test
    void theCommandLineRefusesWithOneLineAndItsExitCode(@TempDir Path tmp) throws Exception {
        StringWriter help = new StringWriter();
        assertThat(io.pathproof.cli.Main.run(
                        new String[] {"run", "--help"},
                        new PrintWriter(help, true),
                        new PrintWriter(new StringWriter(), true)))
                .isZero();
        assertThat(help.toString()).contains("--emulate=TOPOLOGY", "--nccl-lib=DIR", "--emulate-compcap=CC");
        StringWriter err = new StringWriter();
        int code = io.pathproof.cli.Main.run(
                new String[] {
                    "run",
                    "--workload",
                    "one-64mib-fp32",
                    "--emulate",
                    "h200-sxm-x4-nvswitch",
                    "--nccl-lib",
                    tmp.resolve("none").toString(),
                    "--out",
                    tmp.resolve("r").toString()
                },
                new PrintWriter(new StringWriter(), true),
                new PrintWriter(err, true));
        assertThat(code).isEqualTo(ExitCode.USAGE);
        assertThat(err.toString().strip()).doesNotContain("\n").contains("scripts/build-nccl-emulator.sh NCCL_SRC OUT");

        Path lib = patchedLibrary(tmp.resolve("emu"));
        StringWriter err2 = new StringWriter();
        int code2 = io.pathproof.cli.Main.run(
                new String[] {
                    "run",
                    "--workload",
                    "one-64mib-fp32",
                    "--emulate",
                    "v100-sxm2-x4-nv2",
                    "--nproc",
                    "8",
                    "--nccl-lib",
                    lib.toString(),
                    "--out",
                    tmp.resolve("r").toString()
                },
                new PrintWriter(new StringWriter(), true),
                new PrintWriter(err2, true));
        assertThat(code2).isEqualTo(ExitCode.BAD_INPUT);
        assertThat(err2.toString().strip()).doesNotContain("\n").contains("--nproc 8 but the topology has 4 GPU(s)");

        StringWriter err3 = new StringWriter();
        int code3 = io.pathproof.cli.Main.run(
                new String[] {
                    "run",
                    "--workload",
                    "one-64mib-fp32",
                    "--nccl-lib",
                    lib.toString(),
                    "--out",
                    tmp.resolve("r").toString()
                },
                new PrintWriter(new StringWriter(), true),
                new PrintWriter(err3, true));
        assertThat(code3).isEqualTo(ExitCode.USAGE);
        assertThat(tmp.resolve("r")).doesNotExist();
    }

    /** A stand-in for Python: answers the torch probe and the GPU probe, and as a rank records its environment. */
    static Path fakePython(Path tmp) throws Exception {
        Path fake = tmp.resolve("python3");
        Files.writeString(
                fake,
                String.join(
                        "\n",
                        "#!/bin/sh",
                        "if [ \"$1\" = -c ]; then",
                        "  case \"$2\" in",
                        "    *PATHPROOF_GPU*) echo 'PATHPROOF_GPU_NAME NVIDIA H200'; echo 'PATHPROOF_GPU_BUS 00000000:00:06.0' ;;",
                        "    *) printf '3.11.2\\n2.11.0\\n1\\n1\\n1\\n1\\n2.28.9\\n' ;;",
                        "  esac",
                        "  exit 0",
                        "fi",
                        "dir=$3",
                        "env > \"$dir/env-rank$RANK.txt\"",
                        "if [ \"$RANK\" = 0 ]; then",
                        "  sed -i '1s/{/{ \"harnessFinished\": true, \"gpus\": [{\"name\": \"NVIDIA H200\"}],/' \"$dir/manifest.json\"",
                        "fi",
                        "exit 0",
                        ""));
        assertThat(fake.toFile().setExecutable(true)).isTrue();
        return fake;
    }

    static Map<String, String> envOf(Path f) throws Exception {
        Map<String, String> m = new TreeMap<>();
        for (String line : Files.readAllLines(f)) {
            int eq = line.indexOf('=');
            if (eq > 0) {
                m.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return m;
    }

    @Test
    void eachRankGetsItsBusIdTheTopologyThePreloadAndDeviceZero(@TempDir Path tmp) throws Exception {
        Path lib = patchedLibrary(tmp.resolve("nccl-emu"));
        Path out = tmp.resolve("r");
        Runner.Result r = Runner.run(
                request(
                        out,
                        4,
                        Runner.Backend.AUTO,
                        Runner.Launcher.AUTO,
                        List.of("NCCL_PROTO=LL128"),
                        fakePython(tmp).toString()),
                null,
                new Runner.Emulate("h200-sxm-x4-nvswitch", X4, lib, 70));
        assertThat(r.message()).isNull();
        assertThat(r.exitCode()).isZero();
        Path dir = out.toAbsolutePath().normalize();
        List<String> busIds = new ArrayList<>();
        for (int rank = 0; rank < 4; rank++) {
            Map<String, String> env = envOf(dir.resolve("env-rank" + rank + ".txt"));
            assertThat(env)
                    .containsEntry(
                            "NCCL_TOPO_FILE", dir.resolve("emulated-topo.xml").toString())
                    .containsEntry("NCCL_NVLS_ENABLE", "0")
                    .containsEntry("NCCL_MNNVL_ENABLE", "0")
                    .containsEntry("PATHPROOF_CUDA_DEVICE", "0")
                    .containsEntry("NCCL_EMULATE_COMPCAP", "70")
                    .containsEntry("NCCL_PROTO", "LL128")
                    .containsEntry("RANK", Integer.toString(rank));
            assertThat(env.get("LD_PRELOAD"))
                    .startsWith(lib.resolve("libnccl.so.2")
                            .toAbsolutePath()
                            .normalize()
                            .toString());
            busIds.add(env.get("NCCL_EMULATE_BUSID"));
        }
        assertThat(busIds).containsExactly("0000:00:06.0", "0000:2a:00.0", "0000:9a:00.0", "0000:ab:00.0");
        String xml = Files.readString(dir.resolve("emulated-topo.xml"));
        for (String b : busIds) {
            assertThat(xml).contains("<pci busid=\"" + b + "\" class=\"0x030200\"");
        }
        JsonNode m = Json.mapper().readTree(dir.resolve("manifest.json").toFile());
        assertThat(m.path("complete").asBoolean()).isTrue();
        assertThat(m.path("backend").asText()).isEqualTo("nccl");
        assertThat(m.path("launcher").asText()).isEqualTo("spawn");
        JsonNode e = m.path("emulation");
        assertThat(e.path("emulated").asBoolean()).isTrue();
        assertThat(e.path("note").asText()).isEqualTo("emulated: NCCL decisions real, timings not physical");
        assertThat(e.path("topology").asText()).isEqualTo("h200-sxm-x4-nvswitch");
        assertThat(e.path("topologyXml").asText()).isEqualTo("emulated-topo.xml");
        assertThat(e.path("gpus").asInt()).isEqualTo(4);
        assertThat(e.path("realGpu").asText()).isEqualTo("NVIDIA H200");
        assertThat(e.path("library").asText()).isEqualTo("nccl-emu/libnccl.so.2");
        assertThat(e.path("ncclVersion").asText()).isEqualTo("2.28.9");
        assertThat(e.path("patch").asText()).isEqualTo("emulator-2.28.patch");
        assertThat(e.path("patchSha256").asText()).isEqualTo("ab12");
        assertThat(e.path("compCapOverride").asInt()).isEqualTo(70);
        assertThat(e.path("librarySha256").asText())
                .isEqualTo(java.util.HexFormat.of()
                        .formatHex(MessageDigest.getInstance("SHA-256")
                                .digest(Files.readAllBytes(lib.resolve("libnccl.so.2")))));
        List<String> inManifest = new ArrayList<>();
        e.path("busIds").forEach(b -> inManifest.add(b.asText()));
        assertThat(inManifest).isEqualTo(busIds);
    }

    @Test
    void fewerRanksThanGpusUseTheFirstGpusAndAnUnknownRealBusIdIsMadeUp(@TempDir Path tmp) throws Exception {
        Path lib = patchedLibrary(tmp.resolve("emu"));
        Path fake = fakePython(tmp);
        Files.writeString(
                fake, Files.readString(fake).replace("PATHPROOF_GPU_BUS 00000000:00:06.0", "PATHPROOF_GPU_BUS "));
        Path out = tmp.resolve("r");
        Runner.Result r = Runner.run(
                request(out, 2, Runner.Backend.NCCL, Runner.Launcher.SPAWN, List.of(), fake.toString()),
                null,
                new Runner.Emulate(null, Scenarios.topology("v100-sxm2-x4-nv2"), lib.resolve("libnccl.so.2"), null));
        assertThat(r.exitCode()).isZero();
        Path dir = out.toAbsolutePath().normalize();
        assertThat(envOf(dir.resolve("env-rank0.txt")))
                .containsEntry("NCCL_EMULATE_BUSID", "0000:06:00.0")
                .doesNotContainKey("NCCL_EMULATE_COMPCAP");
        assertThat(envOf(dir.resolve("env-rank1.txt"))).containsEntry("NCCL_EMULATE_BUSID", "0000:07:00.0");
        JsonNode e =
                Json.mapper().readTree(dir.resolve("manifest.json").toFile()).path("emulation");
        assertThat(e.path("topology").asText()).isEqualTo("v100-sxm2-x4-nv2");
        assertThat(e.path("realBusId").isNull()).isTrue();
        assertThat(e.path("compCapOverride").isNull()).isTrue();
        assertThat(e.path("busIds")).hasSize(2);
    }

    @Test
    void theCommandLineTakesAnNcclTopologyDumpAndDefaultsToOneRankPerGpu(@TempDir Path tmp) throws Exception {
        Path lib = patchedLibrary(tmp.resolve("emu"));
        Path xml = tmp.resolve("v100-box.xml"); // an NCCL topology dump, as NCCL_TOPO_DUMP_FILE writes one
        Files.writeString(
                xml,
                io.pathproof.scenario.NcclTopoXmlWriter.write(Scenarios.topology("v100-sxm2-x4-nv2"), null)
                        .xml());
        Path out = tmp.resolve("r");
        StringWriter o = new StringWriter();
        StringWriter err = new StringWriter();
        int code = io.pathproof.cli.Main.run(
                new String[] {
                    "run",
                    "--workload",
                    "one-64mib-fp32",
                    "--emulate",
                    xml.toString(),
                    "--emulate-compcap",
                    "70",
                    "--nccl-lib",
                    lib.toString(),
                    "--python",
                    fakePython(tmp).toString(),
                    "--out",
                    out.toString()
                },
                new PrintWriter(o, true),
                new PrintWriter(err, true));
        assertThat(err.toString()).isEmpty();
        assertThat(code).isZero();
        assertThat(o.toString()).contains("(4 process(es) exited 0)");
        JsonNode m = Json.mapper().readTree(out.resolve("manifest.json").toFile());
        assertThat(m.path("nproc").asInt()).isEqualTo(4);
        assertThat(m.path("topology").asText()).isEqualTo("v100-box");
        assertThat(m.path("emulation").path("topology").asText()).isEqualTo(xml.toString());
        assertThat(m.path("emulation").path("compCapOverride").asInt()).isEqualTo(70);
        assertThat(envOf(out.resolve("env-rank3.txt")))
                .containsEntry("NCCL_EMULATE_BUSID", "0000:87:00.0")
                .containsEntry("NCCL_EMULATE_COMPCAP", "70");
    }

    @Test
    void theScannerFindsTheMarkAnywhereAndHashesEveryByte() throws Exception {
        byte[] needle = "NCCL_EMULATE_BUSID".getBytes(StandardCharsets.US_ASCII);
        byte[] data = ("xxNNCCL_EMULATE_BUSIyNCCL_EMULATE_BUSID").getBytes(StandardCharsets.US_ASCII);
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        assertThat(Emulation.scan(new ByteArrayInputStream(data), needle, md)).isTrue();
        assertThat(md.digest()).isEqualTo(MessageDigest.getInstance("SHA-256").digest(data));
        assertThat(Emulation.scan(
                        new ByteArrayInputStream("NCCL_EMULATE_BUSI".getBytes(StandardCharsets.US_ASCII)),
                        needle,
                        MessageDigest.getInstance("SHA-256")))
                .isFalse();
    }
}

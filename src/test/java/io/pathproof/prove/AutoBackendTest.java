package io.pathproof.prove;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import io.pathproof.run.Runner;
import io.pathproof.scenario.Scenarios;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * prove --backend auto, branch by branch, from the facts a probe gives (GPUs torch sees, NCCL in torch) and the
 * emulator library as run's finder really finds and checks it in a directory; the scenarios are the presets.
 */
class AutoBackendTest {
    static final Runner.Machine CPU = new Runner.Machine("/usr/bin/python3", "1.13.1", 0, false);
    static final Runner.Machine ONE_GPU = new Runner.Machine("python3", "2.11.0+cu130", 1, true);
    static final Runner.Machine TWO_GPUS = new Runner.Machine("python3", "2.11.0+cu130", 2, true);
    static final Runner.Machine EIGHT_GPUS = new Runner.Machine("python3", "2.11.0+cu130", 8, true);

    @TempDir
    Path tmp;

    /** A directory as scripts/build-nccl-emulator.sh leaves it; {@code patched} puts the patch's variable in the file. */
    Path library(String name, boolean patched) throws Exception {
        Path dir = Files.createDirectories(tmp.resolve(name));
        String body = "\u007fELF not a real library, but read as one: "
                + (patched ? "getenv(\"NCCL_EMULATE_BUSID\")" : "stock");
        Files.write(dir.resolve("libnccl.so.2"), body.getBytes(StandardCharsets.ISO_8859_1));
        return dir;
    }

    Runner.EmulatorLibrary none() {
        return Runner.findEmulator(null, Map.of(), tmp);
    }

    @Test
    void noGpuIsGlooOnTheCpuDefault() {
        Prove.BackendChoice c = Prove.auto(CPU, null, null, null);
        assertThat(c.branch()).isEqualTo("gloo");
        assertThat(c.backend()).isEqualTo(Runner.Backend.GLOO);
        assertThat(c.emulate()).isFalse();
        assertThat(c.scenario()).isEqualTo("cpu-x4-small");
        assertThat(c.line()).isEqualTo("auto → gloo: no GPU (torch 1.13.1 sees no CUDA device): gloo on the CPU");
    }

    @Test
    void oneGpuWithoutTheEmulatorLibraryIsGloo() {
        Runner.EmulatorLibrary lib = none();
        assertThat(lib.usable()).isFalse();
        Prove.BackendChoice c = Prove.auto(ONE_GPU, lib, null, null);
        assertThat(c.branch()).isEqualTo("gloo");
        assertThat(c.reason()).isEqualTo("1 GPU, no emulator library: gloo on the CPU");
    }

    @Test
    void oneGpuWithThePatchedLibraryIsAnEmulatedH200x4() throws Exception {
        Path dir = library("emu", true);
        Runner.EmulatorLibrary lib = Runner.findEmulator(dir, Map.of(), tmp);
        assertThat(lib.usable()).as(lib.refusal()).isTrue();
        Prove.BackendChoice c = Prove.auto(ONE_GPU, lib, null, null);
        assertThat(c.branch()).isEqualTo("emulated");
        assertThat(c.backend()).isEqualTo(Runner.Backend.NCCL);
        assertThat(c.emulate()).isTrue();
        assertThat(c.ncclLib())
                .isEqualTo(dir.resolve("libnccl.so.2").toAbsolutePath().normalize());
        assertThat(c.scenario()).isEqualTo("h200-x4");
        assertThat(c.ranks()).isEqualTo(4);
        assertThat(Scenarios.load(c.scenario()).topology().gpuCount()).isEqualTo(4);
        assertThat(c.reason())
                .startsWith("1 GPU, emulator library --nccl-lib ")
                .contains("H200 x 4", "timings not physical");
    }

    @Test
    void aStockNcclIsRefusedAndSaidSo() throws Exception {
        Runner.EmulatorLibrary lib = Runner.findEmulator(
                null, Map.of("PATHPROOF_NCCL_EMULATOR", library("stock", false).toString()), tmp);
        assertThat(lib.usable()).isFalse();
        assertThat(lib.how()).isEqualTo("$PATHPROOF_NCCL_EMULATOR");
        Prove.BackendChoice c = Prove.auto(ONE_GPU, lib, null, null);
        assertThat(c.branch()).isEqualTo("gloo");
        assertThat(c.reason())
                .isEqualTo("1 GPU, emulator library $PATHPROOF_NCCL_EMULATOR refused (libnccl.so.2: a stock NCCL (no"
                        + " NCCL_EMULATE_BUSID; it refuses two ranks on one GPU)): gloo on the CPU");
        assertThat(c.reason())
                .as("no path of this machine in what proof.json keeps")
                .doesNotContain(tmp.toString());
    }

    @Test
    void aGivenDirectoryWithoutTheLibraryIsRefusedNotSkipped() throws Exception {
        library("target/nccl-emulator", true); // would be found next, but --nccl-lib named a place first
        Runner.EmulatorLibrary lib = Runner.findEmulator(tmp.resolve("nowhere"), Map.of(), tmp);
        assertThat(lib.usable()).isFalse();
        assertThat(lib.refusal()).isEqualTo("nowhere: no libnccl.so.2 there");
        assertThat(Prove.auto(ONE_GPU, lib, null, null).branch()).isEqualTo("gloo");
    }

    @Test
    void theLibraryIsLookedForInOrder() throws Exception {
        Path given = library("given", true);
        Path fromEnv = library("env", true);
        Path built = library("target/nccl-emulator", true);
        Map<String, String> env = Map.of("PATHPROOF_NCCL_EMULATOR", fromEnv.toString());
        assertThat(Runner.findEmulator(given, env, tmp).file())
                .isEqualTo(given.resolve("libnccl.so.2").toAbsolutePath().normalize());
        assertThat(Runner.findEmulator(null, env, tmp).file())
                .isEqualTo(fromEnv.resolve("libnccl.so.2").toAbsolutePath().normalize());
        Runner.EmulatorLibrary b = Runner.findEmulator(null, Map.of(), tmp);
        assertThat(b.file())
                .isEqualTo(built.resolve("libnccl.so.2").toAbsolutePath().normalize());
        assertThat(b.how()).isEqualTo(Path.of("target", "nccl-emulator").toString());
    }

    @Test
    void twoOrMoreGpusAreNcclOnTheGpuScenario() {
        Prove.BackendChoice two = Prove.auto(TWO_GPUS, null, null, null);
        assertThat(two.branch()).isEqualTo("nccl");
        assertThat(two.emulate()).isFalse();
        assertThat(two.scenario()).isEqualTo("h200-x4");
        assertThat(two.ranks()).isEqualTo(2);
        assertThat(Prove.auto(EIGHT_GPUS, null, null, null).ranks()).isEqualTo(4);
    }

    @Test
    void gpusWithoutNcclInTorchAreGloo() {
        Prove.BackendChoice c = Prove.auto(new Runner.Machine("python3", "2.1.0", 2, false), null, null, null);
        assertThat(c.branch()).isEqualTo("gloo");
        assertThat(c.reason()).contains("torch 2.1.0 has no NCCL");
    }

    @Test
    void aGivenGlooScenarioStaysGlooOnAGpuMachine() {
        Prove.BackendChoice c = Prove.auto(EIGHT_GPUS, null, Scenarios.load("cpu-x4-small"), null);
        assertThat(c.branch()).isEqualTo("gloo");
        assertThat(c.scenario()).isNull();
        assertThat(c.reason()).isEqualTo("the scenario is a gloo one: gloo on the CPU (8 GPUs here, unused)");
    }

    @Test
    void aGivenNcclScenarioRunsLiveWithAGpuPerRankElseEmulatedElseIsRefused() throws Exception {
        var x8 = Scenarios.load("h200-x8");
        assertThat(Prove.auto(EIGHT_GPUS, null, x8, null).branch()).isEqualTo("nccl");
        assertThat(Prove.auto(TWO_GPUS, null, x8, 2).branch()).as("--nproc 2").isEqualTo("nccl");
        Runner.EmulatorLibrary lib = Runner.findEmulator(library("emu", true), Map.of(), tmp);
        Prove.BackendChoice emu = Prove.auto(TWO_GPUS, lib, x8, null);
        assertThat(emu.branch()).isEqualTo("emulated");
        assertThat(emu.scenario()).isNull();
        assertThatThrownBy(() -> Prove.auto(TWO_GPUS, none(), x8, null))
                .isInstanceOfSatisfying(
                        PathproofException.class, e -> assertThat(e.exitCode()).isEqualTo(ExitCode.NO_GPU))
                .hasMessageContaining("fewer than the scenario's 8 ranks");
        assertThatThrownBy(() -> Prove.auto(CPU, null, Scenarios.load("h200-x4"), null))
                .isInstanceOfSatisfying(
                        PathproofException.class, e -> assertThat(e.exitCode()).isEqualTo(ExitCode.NO_GPU))
                .hasMessageContaining("no GPU");
    }
}

package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The emu net plugin (native/nccl-net-emu) as its own selftest checks it, without a GPU: every NCCL version's loader
 * finds the table it looks for first (v8 for 2.21.5, v10 for 2.26/2.27, v11 for 2.28/2.29, v12 for 2.30), and bytes
 * move through each exported table. Skipped only where the machine has no C compiler or no cuda.h (types only).
 */
class NetEmuPluginTest {
    @Test
    void everyExportedTableLoadsAndMovesBytesAsItsNcclVersionCallsIt(@TempDir Path out) throws Exception {
        Process build = new ProcessBuilder("sh", "native/nccl-net-emu/build.sh", out.toString(), "--selftest")
                .redirectErrorStream(true)
                .start();
        String log = new String(build.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(build.waitFor(120, TimeUnit.SECONDS)).as(log).isTrue();
        assumeTrue(
                !log.contains("no cuda.h found") && !log.contains("cc: not found") && !log.contains("gcc: not found"),
                "no C compiler or no cuda.h here: " + log);
        assertThat(build.exitValue()).as(log).isZero();
        for (String[] v : new String[][] {
            {"2.21.5", "v8"}, {"2.26.2", "v10"}, {"2.27.3", "v10"}, {"2.28.9", "v11"}, {"2.30.7", "v12"}
        }) {
            assertThat(log)
                    .contains(
                            "NCCL " + v[0] + " looks up ncclNetPlugin_" + v[1] + " first: finds ncclNetPlugin_" + v[1]);
        }
        assertThat(log).contains("selftest: ok").contains("through v8, v10, v11 and v12 each");
    }
}

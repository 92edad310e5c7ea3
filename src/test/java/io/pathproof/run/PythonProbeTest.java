package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PythonProbeTest {
    @Test
    void explicitChoiceIsTheOnlyCandidate() {
        assertThat(PythonProbe.candidates("/opt/py/bin/python3", "/elsewhere/python3", "/usr/bin"))
                .containsExactly("/opt/py/bin/python3");
    }

    @Test
    void orderIsEnvironmentThenPathThenDebiansPython(@TempDir Path dir) throws Exception {
        Path py = dir.resolve("python3");
        Files.writeString(py, "#!/bin/sh\nexit 1\n");
        assertThat(py.toFile().setExecutable(true)).isTrue();
        String path = dir.resolve("empty") + File.pathSeparator + dir;
        assertThat(PythonProbe.candidates(null, "/env/python3", path))
                .containsExactly("/env/python3", py.toString(), "/usr/bin/python3");
    }

    @Test
    void aPythonWithoutTorchIsRejectedWithAReason(@TempDir Path dir) throws Exception {
        Path fake = dir.resolve("python3");
        Files.writeString(fake, "#!/bin/sh\necho 'ModuleNotFoundError: No module named torch' >&2\nexit 1\n");
        assertThat(fake.toFile().setExecutable(true)).isTrue();
        List<String> why = new ArrayList<>();
        assertThat(PythonProbe.probe(fake.toString(), why)).isNull();
        assertThat(PythonProbe.probe(dir.resolve("absent").toString(), why)).isNull();
        assertThat(why).containsExactly(fake + ": no torch", dir.resolve("absent") + ": cannot run");
    }

    @Test
    void probeReadsTheLastSevenLinesEvenAfterWarnings(@TempDir Path dir) throws Exception {
        Path fake = dir.resolve("python3");
        Files.writeString(
                fake,
                "#!/bin/sh\necho 'UserWarning: something'\nprintf '3.12.3\\n2.11.0+cu130\\n1\\n4\\n1\\n1\\n2.30.7\\n'\n");
        assertThat(fake.toFile().setExecutable(true)).isTrue();
        PythonProbe.Python p = PythonProbe.probe(fake.toString(), new ArrayList<>());
        assertThat(p)
                .isEqualTo(new PythonProbe.Python(
                        fake.toString(), "3.12.3", "2.11.0+cu130", true, 4, true, true, "2.30.7"));
    }

    @Test
    void theRealProbeRunsTheFactsModulesReading() {
        // The probe is the job package's facts module with seven print lines after it: on this machine's Python the
        // module's functions must define and the version line must be a version or "-" (a CPU torch loads no NCCL).
        PythonProbe.Python p = Live.requireTorch();
        assertThat(p.torchVersion()).isNotBlank();
        if (!p.nccl()) {
            assertThat(p.ncclVersion()).as("a torch without NCCL names none").isNull();
        } else {
            assertThat(p.ncclVersion()).matches("\\d+\\.\\d+\\.\\d+");
        }
    }

    @Test
    void torchrunIsAvoidedOnlyForTorch1WithPython311() {
        assertThat(PythonProbe.torchrunWorks(
                        new PythonProbe.Python("p", "3.11.2", "1.13.0a0", false, 0, false, true, null)))
                .isFalse();
        assertThat(PythonProbe.torchrunWorks(
                        new PythonProbe.Python("p", "3.10.12", "1.13.1", false, 0, false, true, null)))
                .isTrue();
        assertThat(PythonProbe.torchrunWorks(
                        new PythonProbe.Python("p", "3.12.3", "2.11.0+cu130", true, 1, true, true, "2.28.9")))
                .isTrue();
    }
}

package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The Python package's own tests ({@code python/tests}, pytest), run by the README's test command so that CI runs
 * them: the instrumentation in real torch processes and the gradient-ready-order model against torch's DDP.
 */
@Tag("live")
class PythonSuiteTest {
    @Test
    void thePythonPackagesTestsPass() throws Exception {
        PythonProbe.Python py = Live.requireTorch();
        Process check = new ProcessBuilder(py.executable(), "-c", "import pytest")
                .redirectErrorStream(true)
                .start();
        if (check.waitFor() != 0) {
            if ("1".equals(System.getenv("PATHPROOF_REQUIRE_LIVE"))) {
                fail("PATHPROOF_REQUIRE_LIVE=1 but " + py.executable()
                        + " has no pytest (Debian: apt-get install python3-pytest)");
            }
            Assumptions.abort("no pytest for " + py.executable());
        }
        ProcessBuilder pb = new ProcessBuilder(py.executable(), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests")
                .directory(Path.of("python").toFile())
                .redirectErrorStream(true);
        pb.environment().remove("PATHPROOF_OUT");
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(600, TimeUnit.SECONDS)).isTrue();
        String text = new String(out, StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as(text).isZero();
        assertThat(List.of(text.split("\n"))).anyMatch(l -> l.matches(".*\\d+ passed.*"));
    }
}

package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run compared with itself differs in nothing: diagnose answered "no change" and verify-fix "FIXED" for it. Given
 * twice — by one name, another spelling of it, or a copy — it is a usage error (exit 2) in one line.
 */
class RunDirsTest {
    static final Path RUN = Path.of("samples/emulated-h200-x4/run");
    static final Path OTHER = Path.of("samples/emulated-h200-x4/variant-channels");

    @TempDir
    Path tmp;

    private static void assertRefused(MainTest.Result r) {
        assertThat(r.code).as(r.out + r.err).isEqualTo(2);
        assertThat(r.err.strip()).doesNotContain("\n").contains("a run compared with itself shows nothing");
        assertThat(r.out).isEmpty();
    }

    @Test
    void diagnoseRefusesTheSameRunTwice() {
        assertRefused(MainTest.run("diagnose", "--baseline", RUN.toString(), "--variant", RUN.toString()));
        assertRefused(MainTest.run(
                "diagnose",
                "--baseline",
                RUN.toString(),
                "--variant",
                RUN.resolve("../run").toString()));
    }

    @Test
    void verifyFixRefusesTheSameRunTwiceInAnyPair() {
        assertRefused(MainTest.run("verify-fix", "--baseline", RUN.toString(), "--fixed", RUN.toString()));
        assertRefused(MainTest.run(
                "verify-fix",
                "--baseline",
                RUN.toString(),
                "--variant",
                OTHER.toString(),
                "--fixed",
                OTHER.toString()));
        assertRefused(MainTest.run(
                "verify-fix", "--baseline", RUN.toString(), "--variant", RUN.toString(), "--fixed", OTHER.toString()));
    }

    @Test
    void aCopyOfARunIsTheSameRun() throws IOException {
        Path copy = tmp.resolve("copy");
        Files.createDirectories(copy);
        try (Stream<Path> s = Files.list(RUN)) {
            s.forEach(f -> {
                try {
                    Files.copy(f, copy.resolve(f.getFileName().toString()));
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
        MainTest.Result r = MainTest.run("diagnose", "--baseline", RUN.toString(), "--variant", copy.toString());
        assertRefused(r);
        assertThat(r.err).contains("copies of one run");
    }

    @Test
    void twoRunsAreStillDiagnosed() {
        MainTest.Result r = MainTest.run("diagnose", "--baseline", RUN.toString(), "--variant", OTHER.toString());
        assertThat(r.code).as(r.err).isIn(0, 1);
        assertThat(r.out).startsWith("diagnosis: ");
    }
}

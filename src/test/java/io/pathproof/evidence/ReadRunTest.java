package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Ingest#readRun}: the one "read a run directory or fail" that accept, diagnose, verify-fix, explain, prove and
 * report share, so that each says the same about a run it cannot use.
 */
class ReadRunTest {
    @TempDir
    Path tmp;

    @Test
    void aRunDirectoryIsRead() {
        Path run = Path.of("samples/emulated-h200-x4/run");
        Evidence e = Ingest.readRun(run);
        assertThat(e.anythingRead()).isTrue();
        assertThat(e.runDir()).isEqualTo(run.toString());
    }

    @Test
    void aMissingDirectoryIsBadInputThatNamesIt() {
        Path gone = tmp.resolve("gone");
        assertThatThrownBy(() -> Ingest.readRun(gone))
                .isInstanceOf(PathproofException.class)
                .hasMessage("no such run directory: " + gone)
                .satisfies(t -> assertThat(((PathproofException) t).exitCode()).isEqualTo(ExitCode.BAD_INPUT));
    }

    @Test
    void aDirectoryWithNothingReadableIsBadInput() throws Exception {
        Files.writeString(tmp.resolve("notes.txt"), "not evidence\n");
        assertThatThrownBy(() -> Ingest.readRun(tmp))
                .isInstanceOf(PathproofException.class)
                .hasMessage(tmp + ": no readable evidence")
                .satisfies(t -> assertThat(((PathproofException) t).exitCode()).isEqualTo(ExitCode.BAD_INPUT));
    }
}

package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The cause of a command that failed before any rank built DDP, read from its stderr as torchrun writes it. */
class StderrCauseTest {
    @TempDir
    Path dir;

    private static String torchrun(String childException) {
        return "WARNING:torch.distributed.run:\n*****\nTraceback (most recent call last):\n"
                + "  File \"train.py\", line 14, in ddp_setup\n    init_process_group(backend=\"nccl\")\n"
                + childException + "\n"
                + "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0\n"
                + "Traceback (most recent call last):\n  File \"/usr/bin/torchrun\", line 33, in <module>\n"
                + "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
                + "Failures:\n[1]:\n  rank      : 1 (local_rank: 1)\n"
                + "Root Cause (first observed failure):\n[0]:\n  time      : 2026-12-04_23:17:42\n"
                + "  rank      : 0 (local_rank: 0)\n  exitcode  : 1 (pid: 27774)\n";
    }

    private StderrCause cause(String text) throws IOException {
        Path f = dir.resolve("command.stderr");
        Files.writeString(f, text);
        return StderrCause.of(f);
    }

    @Test
    void ncclAskedOfATorchWithoutItIsNoGpuNamedByTheChildsExceptionAndTheRootCauseRank() throws IOException {
        StderrCause c = cause(torchrun("RuntimeError: Distributed package doesn't have NCCL built in"));
        assertThat(c.noGpu()).isTrue();
        assertThat(c.rank()).isZero();
        assertThat(c.describe("command.stderr"))
                .isEqualTo("rank 0: RuntimeError: Distributed package doesn't have NCCL built in (command.stderr:6)");
    }

    @Test
    void aScriptsOwnErrorIsItsCauseAndNotAMissingGpu() throws IOException {
        StderrCause c = cause(torchrun("ValueError: batch size must be positive"));
        assertThat(c.noGpu()).isFalse();
        assertThat(c.exception()).isEqualTo("ValueError: batch size must be positive");
    }

    @Test
    void onlyTorchrunsOwnFailureOrNoExceptionNamesNoCause() throws IOException {
        assertThat(cause("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \nkilled\n"))
                .isNull();
        assertThat(StderrCause.of(dir.resolve("absent"))).isNull();
    }
}

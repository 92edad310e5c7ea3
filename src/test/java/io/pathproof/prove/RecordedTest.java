package io.pathproof.prove;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.proofdir.Proof;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Committed GPU samples are accepted again and labelled as recordings, with the day and GPU they were made on. */
class RecordedTest {
    @Test
    void theH200SampleIsAcceptedAndLabelledAsRecorded() {
        List<Proof.Sample> l = Recorded.acceptAll(Path.of("samples"));
        Proof.Sample s = l.stream()
                .filter(x -> x.name().equals("h200-1rank-accepted"))
                .findFirst()
                .orElseThrow();
        assertThat(s.label()).isEqualTo("recorded on 2026-12-02 on GPU");
        assertThat(s.device()).contains("NVIDIA H200", "torch 2.11");
        assertThat(s.verdict()).isEqualTo("PASS");
        assertThat(s.acceptance().counts().fail()).isZero();
    }

    /** A recorded prove directory counts too: its baseline is the run its prediction was sealed for. */
    @Test
    void theEmulatedProveSampleIsAcceptedOnItsBaselineAndLabelledEmulated() {
        Proof.Sample s = Recorded.acceptAll(Path.of("samples")).stream()
                .filter(x -> x.name().equals("emulated-h200-x4-proven"))
                .findFirst()
                .orElseThrow();
        assertThat(s.label())
                .isEqualTo("recorded on 2026-12-03 on GPU (emulated: NCCL decisions real, timings not physical)");
        assertThat(s.acceptance().counts().fail()).isZero();
        assertThat(s.acceptance().counts().pass()).isGreaterThan(30);
    }

    @Test
    void aBrokenSealIsListedNotFatalAndNoFolderIsNoSample(@TempDir Path tmp) throws Exception {
        Path d = tmp.resolve("broken");
        Files.createDirectories(d.resolve("run"));
        Files.writeString(d.resolve("prediction.json"), "{\"schema\":\"pathproof.prediction/1\"}");
        List<Proof.Sample> l = Recorded.acceptAll(tmp);
        assertThat(l).singleElement().satisfies(s -> assertThat(s.verdict()).startsWith("UNREADABLE"));
        assertThat(Recorded.acceptAll(tmp.resolve("none"))).isEmpty();
    }
}

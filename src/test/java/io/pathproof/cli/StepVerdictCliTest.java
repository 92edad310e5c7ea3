package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.core.ExitCode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 19 §2 on the command line: an undecided step time exits 10 (inconclusive), never 0 as "no change"; the
 * equivalence margin is an option and is stated; several runs of a side are pooled with repeated options.
 */
class StepVerdictCliTest {
    static final Path RUN = Path.of("samples/h200-1rank-accepted/run");

    /** The H200 sample's run again under another start time: the same 24 steps, as a second run of one job. */
    static Path again(Path tmp, String name, int minute) throws IOException {
        Path dst = tmp.resolve(name);
        Files.createDirectories(dst);
        try (Stream<Path> l = Files.list(RUN)) {
            for (Path p : l.toList()) {
                Files.copy(p, dst.resolve(p.getFileName().toString()));
            }
        }
        Path m = dst.resolve("manifest.json");
        Files.writeString(
                m, Files.readString(m).replace("2026-12-02T14:02:04", String.format("2026-12-02T14:%02d:04", minute)));
        return dst;
    }

    @Test
    void anUndecidedStepTimeExitsInconclusiveAndTheMarginIsAnOption(@TempDir Path tmp) throws IOException {
        Path a = again(tmp, "a", 10);
        Path b = again(tmp, "b", 11);
        // 24 noisy steps on each side: the 99 % interval (0.87..1.14) cannot exclude a 5 % change. Before: "no change",
        // exit 0.
        MainTest.Result r = MainTest.run("diagnose", "--baseline", a.toString(), "--variant", b.toString());
        assertThat(r.code).as(r.out + r.err).isEqualTo(ExitCode.INCONCLUSIVE);
        assertThat(r.out).startsWith("diagnosis: inconclusive").contains("margin ±5 %", "steps per side would decide");
        // A margin of 20 % is excluded by the same interval: no change, stated, exit 0.
        MainTest.Result wide =
                MainTest.run("diagnose", "--baseline", a.toString(), "--variant", b.toString(), "--margin", "20");
        assertThat(wide.code).as(wide.out + wide.err).isEqualTo(ExitCode.OK);
        assertThat(wide.out).startsWith("diagnosis: no change").contains("margin ±20 %");
        // Runs of each side pooled with repeated options.
        MainTest.Result pooled = MainTest.run(
                "diagnose",
                "--baseline",
                a.toString(),
                "--baseline",
                again(tmp, "a2", 12).toString(),
                "--variant",
                b.toString(),
                "--variant",
                again(tmp, "b2", 13).toString(),
                "--format",
                "json");
        assertThat(pooled.out).contains("\"baselineRuns\" : 2", "\"variantRuns\" : 2", "\"nBaseline\" : 48");
        // A fix cannot be verified against a variant whose change is undecided.
        MainTest.Result fix = MainTest.run(
                "verify-fix",
                "--baseline",
                a.toString(),
                "--variant",
                b.toString(),
                "--fixed",
                again(tmp, "f", 14).toString());
        assertThat(fix.code).as(fix.out + fix.err).isEqualTo(ExitCode.INCONCLUSIVE);
        assertThat(fix.out).startsWith("verify-fix: INCONCLUSIVE");
    }
}

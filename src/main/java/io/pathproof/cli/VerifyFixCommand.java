package io.pathproof.cli;

import io.pathproof.cli.FormatOption.Format;
import io.pathproof.core.ExitCode;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.FixVerification;
import io.pathproof.evidence.Ingest;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Verb {@code verify-fix}: a re-run after a fix against the baseline (seed common error 14). */
@Command(
        name = "verify-fix",
        resourceBundle = "io.pathproof.cli.verify-fix",
        mixinStandardHelpOptions = true,
        description = {
            "Check that a fixed run is back to the baseline: the same path fingerprint, correct replicas, a step not slower",
            "than the baseline's (no regression, median not above its band) and, with --variant, clearly faster than a variant",
            "whose step regressed; \"nothing to fix\" when the variant did not regress at all; \"inconclusive\" when a step-time",
            "comparison the fix rests on is undecided at this noise (repeat --baseline, --variant, --fixed to pool more runs).",
            "Exit 0: fixed; 1: not fixed, or nothing to fix; 2: one run given twice, or pooled runs not like with like; 3:",
            "evidence unreadable or a rank's files incomplete; 10: inconclusive."
        })
public final class VerifyFixCommand extends Verb implements Callable<Integer> {
    @Mixin
    BaselineOption baseline = new BaselineOption();

    @Option(
            names = "--fixed",
            required = true,
            paramLabel = "RUNDIR",
            description = "the run made after the fix (repeat to pool)")
    List<Path> fixed;

    @Option(
            names = "--variant",
            paramLabel = "RUNDIR",
            description =
                    "the run that showed the regression: where its step regressed, the fixed run must be clearly faster than it")
    List<Path> variant;

    /** verify-fix's wording of it is in verify-fix.properties. */
    @Mixin
    MarginOption margin = new MarginOption();

    @Mixin
    FormatOption format = new FormatOption(Format.TABLE, Format.JSON, Format.MARKDOWN);

    /** The parsed command line. */
    record Options(List<Path> baseline, List<Path> variant, List<Path> fixed, Format format, Diagnosis.Rule rule) {
        Options {
            baseline = List.copyOf(baseline);
            variant = variant == null ? List.of() : List.copyOf(variant);
            fixed = List.copyOf(fixed);
        }
    }

    @Override
    public Integer call() {
        Options o = new Options(baseline.baseline, variant, fixed, format.get(), margin.rule());
        RunDirs.distinct(
                "verify-fix",
                RunDirs.given("--baseline", o.baseline(), "--variant", o.variant(), "--fixed", o.fixed()));
        FixVerification f = Diagnosis.verifyFix(
                o.baseline().stream().map(Ingest::readRun).toList(),
                o.variant().stream().map(Ingest::readRun).toList(),
                o.fixed().stream().map(Ingest::readRun).toList(),
                List.of(),
                o.rule());
        out().print(Diagnosis.render(f, o.format().id()));
        out().flush();
        return f.fixed()
                ? ExitCode.OK
                : FixVerification.INCONCLUSIVE.equals(f.verdict()) ? ExitCode.INCONCLUSIVE : ExitCode.FAIL;
    }
}

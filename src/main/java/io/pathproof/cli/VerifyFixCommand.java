package io.pathproof.cli;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.FixVerification;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Verb {@code verify-fix}: a re-run after a fix against the baseline (seed common error 14). */
@Command(name = "verify-fix", mixinStandardHelpOptions = true,
    description = {"Check that a fixed run is back to the baseline: the same path fingerprint, correct replicas, a step not slower",
        "than the baseline's (no regression, median not above its band) and, with --variant, clearly faster than a variant",
        "whose step regressed; \"nothing to fix\" when the variant did not regress at all.",
        "Exit 0: fixed; 1: not fixed, or nothing to fix; 2: one run given twice; 3: evidence unreadable or a rank's files",
        "incomplete."})
public final class VerifyFixCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--baseline", required = true, paramLabel = "RUNDIR", description = "the baseline run")
  Path baseline;

  @Option(names = "--fixed", required = true, paramLabel = "RUNDIR", description = "the run made after the fix")
  Path fixed;

  @Option(names = "--variant", paramLabel = "RUNDIR",
      description = "the run that showed the regression: where its step regressed, the fixed run must be clearly faster than it")
  Path variant;

  @Option(names = "--format", defaultValue = "table", paramLabel = "FORMAT", description = "table, json or markdown (default ${DEFAULT-VALUE})")
  String format;

  /** The parsed command line. */
  record Options(Path baseline, Path variant, Path fixed, String format) {
    Options {
      if (!List.of("table", "json", "markdown").contains(format)) {
        throw PathproofException.usage("--format: '" + format + "' is not one of table, json, markdown");
      }
    }
  }

  @Override
  public Integer call() {
    Options o = new Options(baseline, variant, fixed, format);
    RunDirs.distinct("verify-fix", new RunDirs.Given("--baseline", o.baseline()), new RunDirs.Given("--variant", o.variant()),
        new RunDirs.Given("--fixed", o.fixed()));
    FixVerification f = Diagnosis.verifyFix(RunDirs.read(o.baseline()), o.variant() == null ? null : RunDirs.read(o.variant()),
        RunDirs.read(o.fixed()));
    spec.commandLine().getOut().print(Diagnosis.render(f, o.format()));
    spec.commandLine().getOut().flush();
    return f.fixed() ? ExitCode.OK : ExitCode.FAIL;
  }
}

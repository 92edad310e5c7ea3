package io.pathproof.cli;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.evidence.Evidence;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Verb {@code diagnose}: a variant run against a baseline run, blind. */
@Command(name = "diagnose", mixinStandardHelpOptions = true,
    description = {"Diagnose a variant run against a baseline run without being told what changed: correctness, step time",
        "(median ratio, bootstrap 95%% CI), fingerprint diff layer by layer, elimination, root cause, fix.",
        "Exit 0: no regression and correct; 1: a regression or a correctness failure; 2: the same run given twice;",
        "3: a run's evidence cannot be read, or a rank's files are incomplete (missing, torn, another rank's)."})
public final class DiagnoseCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(names = "--baseline", required = true, paramLabel = "RUNDIR", description = "the baseline run")
  Path baseline;

  @Option(names = "--variant", required = true, paramLabel = "RUNDIR", description = "the run to diagnose")
  Path variant;

  @Option(names = "--format", defaultValue = "table", paramLabel = "FORMAT", description = "table, json or markdown (default ${DEFAULT-VALUE})")
  String format;

  /** The parsed command line. */
  record Options(Path baseline, Path variant, String format) {
    Options {
      if (!List.of("table", "json", "markdown").contains(format)) {
        throw PathproofException.usage("--format: '" + format + "' is not one of table, json, markdown");
      }
    }
  }

  @Override
  public Integer call() {
    Options o = new Options(baseline, variant, format);
    RunDirs.distinct("diagnose", new RunDirs.Given("--baseline", o.baseline()), new RunDirs.Given("--variant", o.variant()));
    Evidence b = RunDirs.read(o.baseline());
    Evidence v = RunDirs.read(o.variant());
    Diagnosis d = Diagnosis.diagnose(b, v);
    spec.commandLine().getOut().print(Diagnosis.render(d, o.format()));
    spec.commandLine().getOut().flush();
    boolean bad = d.regression().detected() || "FAIL".equals(d.correctness().verdict());
    return bad ? ExitCode.FAIL : ExitCode.OK;
  }
}

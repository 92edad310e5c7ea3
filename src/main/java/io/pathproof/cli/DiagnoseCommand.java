package io.pathproof.cli;

import io.pathproof.accept.Verdict;
import io.pathproof.cli.FormatOption.Format;
import io.pathproof.core.ExitCode;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Verb {@code diagnose}: a variant run against a baseline run, blind. */
@Command(
        name = "diagnose",
        mixinStandardHelpOptions = true,
        description = {
            "Diagnose a variant run against a baseline run without being told what changed: correctness, step time",
            "(median ratio, bootstrap 95%% CI), fingerprint diff layer by layer, elimination, root cause, fix.",
            "Step time: regression or improvement when the 99%% interval excludes 1 (ratio >= 2%% from 1); no change only when it",
            "lies inside +-margin (--margin, default 5%%); otherwise inconclusive, with the steps per side that would decide.",
            "Give --baseline and --variant more than once to pool several runs of each configuration (like with like).",
            "Exit 0: no regression and correct; 1: a regression or a correctness failure; 2: the same run given twice, or",
            "runs of one side that are not like with like; 3: a run's evidence cannot be read, or a rank's files are incomplete",
            "(missing, torn, another rank's); 10: inconclusive (the step time is undecided and nothing else decides)."
        })
public final class DiagnoseCommand extends Verb implements Callable<Integer> {
    @Mixin
    BaselineOption baseline = new BaselineOption();

    @Option(
            names = "--variant",
            required = true,
            paramLabel = "RUNDIR",
            description = "the run to diagnose (repeat to pool runs of it)")
    List<Path> variant;

    @Mixin
    MarginOption margin = new MarginOption();

    @Mixin
    FormatOption format = new FormatOption(Format.TABLE, Format.JSON, Format.MARKDOWN);

    /** The parsed command line. */
    record Options(List<Path> baseline, List<Path> variant, Format format, Diagnosis.Rule rule) {
        Options {
            baseline = List.copyOf(baseline);
            variant = List.copyOf(variant);
        }
    }

    @Override
    public Integer call() {
        Options o = new Options(baseline.baseline, variant, format.get(), margin.rule());
        RunDirs.distinct("diagnose", RunDirs.given("--baseline", o.baseline(), "--variant", o.variant()));
        List<Evidence> b = o.baseline().stream().map(Ingest::readRun).toList();
        List<Evidence> v = o.variant().stream().map(Ingest::readRun).toList();
        Diagnosis d = Diagnosis.diagnose(b, v, o.rule());
        out().print(Diagnosis.render(d, o.format().id()));
        out().flush();
        boolean bad = d.regression().detected() || d.correctness().verdict() == Verdict.FAIL;
        return bad ? ExitCode.FAIL : "inconclusive".equals(d.conclusion()) ? ExitCode.INCONCLUSIVE : ExitCode.OK;
    }
}

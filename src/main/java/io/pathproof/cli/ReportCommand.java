package io.pathproof.cli;

import io.pathproof.proofdir.Proof;
import io.pathproof.report.Report;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** Verb {@code report}: report.html, report.md, report.json and report.junit.xml of a proof or of runs. */
@Command(
        name = "report",
        mixinStandardHelpOptions = true,
        versionProvider = ToolVersion.class,
        description = {
            "Write report.html (self-contained, charts inlined, no network), report.md, report.json and report.junit.xml.",
            "DIR… is a prove directory, or run directories (baseline, variant, fixed, in that order) with a sealed prediction",
            "and saved acceptance / diagnosis / verify-fix JSON; what is missing is computed from the rest.",
            "Exit 0: written; 3: an input cannot be read."
        })
public final class ReportCommand extends Verb implements Callable<Integer> {
    @Parameters(
            arity = "1..*",
            paramLabel = "DIR|FILE",
            description = "a prove directory, run directories, prediction/diagnosis JSON")
    List<Path> inputs;

    @Option(names = "--out", description = "where to write (default: the prove directory, else the current directory)")
    Path out;

    /** The parsed command line. */
    record Options(List<Path> inputs, Path out) {
        Options {
            inputs = List.copyOf(inputs);
        }

        /** Where to write: {@code --out}, else the one prove directory given, else the current directory. */
        Path dir() {
            return out != null ? out : inputs.size() == 1 && Proof.in(inputs.get(0)) ? inputs.get(0) : Path.of(".");
        }
    }

    @Override
    public Integer call() {
        Options o = new Options(inputs, out);
        Report.Source s = Report.load(o.inputs());
        Path html = Report.write(s, o.dir());
        out().println("report: " + html + " (+ report.md, report.json, report.junit.xml)");
        return 0;
    }
}

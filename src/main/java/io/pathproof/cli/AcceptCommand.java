package io.pathproof.cli;

import io.pathproof.accept.Acceptance;
import io.pathproof.accept.AcceptanceTable;
import io.pathproof.cli.FormatOption.Format;
import io.pathproof.core.PathproofException;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Verb {@code accept}: a sealed prediction against a run directory. */
@Command(
        name = "accept",
        mixinStandardHelpOptions = true,
        description = {
            "Check a sealed prediction against the evidence of a run, row by row: PASS, FAIL, UNPROVEN or N/A.",
            "Exit 0: no row FAILs (UNPROVEN rows are listed and the overall verdict says UNPROVEN); 1: a row FAILs, or with",
            "--strict anything short of proof; 3: the run's evidence or the prediction file cannot be read; 9: the prediction's",
            "seal is missing or broken."
        })
public final class AcceptCommand extends Verb implements Callable<Integer> {
    @Option(
            names = "--prediction",
            paramLabel = "FILE",
            description =
                    "sealed prediction (predict -o FILE); default: the one the run sealed itself (run -- COMMAND)")
    Path prediction;

    @Option(
            names = "--run",
            required = true,
            paramLabel = "RUNDIR",
            description = "run directory (or an evidence file)")
    Path run;

    @Mixin
    FormatOption format = new FormatOption(Format.TABLE, Format.JSON, Format.MARKDOWN);

    @Option(names = "--junit", paramLabel = "FILE", description = "also write JUnit XML: one testcase per row")
    Path junit;

    @Option(names = "--strict", description = "exit 1 also when a row is UNPROVEN")
    boolean strict;

    /** The parsed command line. */
    record Options(Path prediction, Path run, Format format, Path junit, boolean strict) {}

    /** How a run that sealed no prediction ended, from its manifest (a command that failed before DDP seals none). */
    private static String endedEarly(Path run) {
        try {
            com.fasterxml.jackson.databind.JsonNode m = io.pathproof.core.Json.mapper()
                    .readTree(run.resolve("manifest.json").toFile());
            String why = m.path("incompleteReason").asText("");
            return why.isEmpty()
                    ? ""
                    : " (it ended early, exit " + m.path("exitCode").asText("?") + ": " + why + ")";
        } catch (java.io.IOException | RuntimeException e) {
            return "";
        }
    }

    @Override
    public Integer call() {
        Path own = prediction != null || !Files.isDirectory(run)
                ? null
                : io.pathproof.rundir.Vocabulary.ownPrediction(run);
        if (prediction == null && own == null) {
            throw PathproofException.usage("accept: --prediction FILE is needed: " + run
                    + " holds no prediction sealed in the run" + endedEarly(run));
        }
        Options o = new Options(prediction != null ? prediction : own, run, format.get(), junit, strict);
        Prediction p = PredictionIo.readVerified(o.prediction()); // a broken seal is refused before the run is read
        Evidence e = Ingest.readRun(o.run());
        AcceptanceTable t = Acceptance.accept(p, e);
        out().print(Acceptance.render(t, o.format().id()));
        out().flush();
        if (o.junit() != null) {
            try {
                Path parent = o.junit().toAbsolutePath().getParent();
                if (parent != null) {
                    Files.createDirectories(parent);
                }
                Files.writeString(o.junit(), Acceptance.toJunitXml(t), StandardCharsets.UTF_8);
            } catch (IOException ex) {
                throw PathproofException.badInput("--junit " + o.junit() + ": cannot write: " + ex.getMessage());
            }
        }
        if (t.counts().unproven() > 0 && !o.strict() && t.counts().fail() == 0) {
            err().println("pathproof: " + t.counts().unproven()
                    + " row(s) UNPROVEN (exit 0; --strict makes this exit 1)");
        }
        return t.exitCode(o.strict());
    }
}

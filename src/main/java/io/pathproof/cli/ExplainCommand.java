package io.pathproof.cli;

import io.pathproof.callgraph.CallGraph;
import io.pathproof.cli.FormatOption.Format;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.Ingest;
import io.pathproof.explain.Explainer;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.predict.Predictor;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Verb {@code explain}: the 35-stage call graph with owners, and numeric answers to the method's 16 questions. */
@Command(
        name = "explain",
        resourceBundle = "io.pathproof.cli.table-or-json",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Explain the path: the 35-stage call graph with owners (and, with --run, which stages the run's",
            "evidence shows), then the method's 16 questions answered with this scenario's numbers.",
            "Example: pathproof explain --scenario seed"
        })
public final class ExplainCommand extends Verb implements Callable<Integer> {
    @Mixin
    ScenarioOptions scenario = new ScenarioOptions();

    @Option(
            names = "--prediction",
            paramLabel = "FILE",
            description = "Explain a sealed prediction instead of a scenario.")
    Path prediction;

    @Option(
            names = "--run",
            paramLabel = "RUNDIR",
            description = "Also use a run's evidence (coverage, observed numbers).")
    Path run;

    @Option(
            names = "--baseline",
            paramLabel = "RUNDIR",
            description =
                    "With --run: diagnose the run against this baseline, so that answers 14 and 15 are that diagnosis.")
    Path baseline;

    @Mixin
    FormatOption format = new FormatOption(Format.TABLE, Format.JSON);

    /** The parsed command line. */
    record Options(ScenarioChoice scenario, Path prediction, Path run, Path baseline, Format format) {}

    @Override
    public Integer call() throws Exception {
        Options o = new Options(scenario.choice(), prediction, run, baseline, format.get());
        if (o.prediction() != null && o.scenario().given()) {
            throw PathproofException.usage("give --prediction or a scenario, not both");
        }
        Prediction p = o.prediction() != null
                ? PredictionIo.readVerified(o.prediction())
                : Predictor.predict(o.scenario().given() ? o.scenario().resolve() : defaultSeed());
        if (o.baseline() != null && o.run() == null) {
            throw PathproofException.usage("--baseline needs --run (the run to diagnose against it)");
        }
        Evidence e = o.run() == null ? null : Ingest.readRun(o.run());
        io.pathproof.diagnose.Diagnosis d =
                o.baseline() == null ? null : io.pathproof.diagnose.Diagnosis.diagnose(Ingest.readRun(o.baseline()), e);
        List<Explainer.Answer> answers = Explainer.explain(p, e, d);
        List<CallGraph.Coverage> cov = CallGraph.coverage(e);
        var out = out();
        if (o.format() == Format.JSON) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("callgraph", cov);
            doc.put("answers", answers);
            out.println(Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(doc));
            return 0;
        }
        out.println("35-stage call graph (owner · stage" + (e == null ? "" : " · shown by this run's evidence") + ")");
        for (CallGraph.Coverage c : cov) {
            CallGraph.Stage s = c.stage();
            out.printf(
                    "  %2d %-14s %-13s %s%s%n",
                    s.id(),
                    s.kind(),
                    s.owner(),
                    s.name(),
                    e == null
                            ? "  [" + EvidenceKind.join(",", s.evidence()) + "]"
                            : c.covered() ? "  ✓ " + String.join("; ", c.citations()) : "  — " + c.status());
        }
        out.println();
        for (Explainer.Answer a : answers) {
            out.printf("%2d. %s%n    %s%n    (basis: %s)%n", a.number(), a.question(), a.answer(), a.basis());
        }
        return 0;
    }

    private static io.pathproof.scenario.Scenario defaultSeed() {
        return io.pathproof.scenario.Scenarios.load("seed");
    }
}

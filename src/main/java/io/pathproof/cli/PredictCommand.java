package io.pathproof.cli;

import io.pathproof.cli.FormatOption.Format;
import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.predict.PredictionTable;
import io.pathproof.predict.Predictor;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Verb {@code predict}: DDP buckets and NCCL's per-bucket AllReduce decisions, before anything runs. */
@Command(
        name = "predict",
        resourceBundle = "io.pathproof.cli.table-or-json",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        description = {
            "Predict DDP buckets and, per bucket, what NCCL will do — before anything runs.",
            "Example: pathproof predict --scenario seed --format json -o pred.json"
        })
public final class PredictCommand extends Verb implements Callable<Integer> {
    @Mixin
    ScenarioOptions scenario = new ScenarioOptions();

    @Mixin
    FormatOption format = new FormatOption(Format.TABLE, Format.JSON);

    @Option(
            names = {"-o", "--output"},
            paramLabel = "FILE",
            description = "Write the prediction, sealed, to FILE.")
    Path output;

    @Option(
            names = "--verify",
            paramLabel = "FILE",
            description =
                    "Check the seal of a prediction file and exit: 0 sealed and intact; 9 the file is missing, not a prediction, "
                            + "or its seal is missing or broken.")
    Path verify;

    @Option(
            names = "--ready-order",
            paramLabel = "FILE|LIST",
            description =
                    "The gradient-ready order to rebuild the buckets from (indices of the trainable parameters, first"
                            + " ready first: 3,2,1,0; a JSON list; a ready-order.json; a DDP logging dump). Default: reverse parameter order.")
    String readyOrder;

    @Option(
            names = "--addendum-of",
            paramLabel = "FILE",
            description =
                    "This prediction adds to the sealed prediction FILE (its seal is checked and recorded in the inputs).")
    Path addendumOf;

    /** The parsed command line. */
    record Options(
            ScenarioChoice scenario, Format format, Path output, Path verify, String readyOrder, Path addendumOf) {}

    @Override
    public Integer call() {
        Options o = new Options(scenario.choice(), format.get(), output, verify, readyOrder, addendumOf);
        return o.verify() != null ? verify(o) : predict(o);
    }

    /** {@code --verify FILE}: whether FILE is a sealed, intact prediction, and nothing else. */
    private Integer verify(Options o) {
        if (o.scenario().given() || o.output() != null) {
            throw PathproofException.usage("--verify takes a file alone");
        }
        Prediction p;
        try {
            p = PredictionIo.readVerified(o.verify());
        } catch (PathproofException e) {
            // --verify answers one question, "is this a sealed, intact prediction?": a file that is not there, or not a
            // prediction, has no seal to verify, and the answer is the seal's exit code as the README says (not 3).
            if (e.exitCode() != ExitCode.BAD_INPUT) {
                throw e;
            }
            throw new PathproofException(ExitCode.SEAL_BROKEN, e.getMessage(), e);
        }
        out().println("seal OK: " + o.verify() + " sha256 " + p.seal().sha256() + " created "
                + p.seal().createdAt() + " by " + p.seal().tool());
        return 0;
    }

    private Integer predict(Options o) {
        io.pathproof.scenario.Scenario s = o.scenario().resolve();
        if (o.readyOrder() != null) {
            s = s.withWorkload(s.workload().withReadyOrder(io.pathproof.scenario.ReadyOrder.parse(o.readyOrder())));
        }
        Prediction p = Predictor.predict(s);
        if (o.addendumOf() != null) {
            p = Predictor.addendumOf(
                    p,
                    PredictionIo.readVerified(o.addendumOf()),
                    o.addendumOf().getFileName().toString());
        }
        if (o.output() != null) {
            p = PredictionIo.writeSealed(p, o.output(), ToolVersion.get());
        }
        var out = out();
        out.print(o.format() == Format.JSON ? PredictionIo.toJson(p) + "\n" : PredictionTable.render(p));
        if (o.output() != null && o.format() == Format.TABLE) {
            out.println("sealed: " + o.output() + " sha256 " + p.seal().sha256());
        }
        out.flush();
        return 0;
    }
}

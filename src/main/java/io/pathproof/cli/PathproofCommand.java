package io.pathproof.cli;

import picocli.CommandLine.Command;

/** The root command: one subcommand per verb of the pipeline (DESIGN.md). */
@Command(
        name = "pathproof",
        mixinStandardHelpOptions = true,
        versionProvider = ToolVersion.class,
        description = "Falsifiable predictions and proofs for PyTorch DDP gradient AllReduce over NCCL.",
        subcommands = {
            PredictCommand.class,
            IngestCommand.class,
            RunCommand.class,
            AcceptCommand.class,
            DiagnoseCommand.class,
            VerifyFixCommand.class,
            ExplainCommand.class,
            ProveCommand.class,
            ReportCommand.class
        })
public final class PathproofCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }
}

package io.pathproof.cli;

import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Spec;

/**
 * Verb {@code prove}: the whole pipeline on an embedded default. Until run/accept land it predicts the seed scenario.
 */
@Command(name = "prove", mixinStandardHelpOptions = true,
    description = "Run the whole proof on the embedded default (for now: predict --scenario seed).")
public final class ProveCommand implements Callable<Integer> {
  @Spec CommandLine.Model.CommandSpec spec;

  @Override
  public Integer call() {
    CommandLine predict = spec.parent().commandLine().getSubcommands().get("predict");
    return predict.execute("--scenario", "seed");
  }
}

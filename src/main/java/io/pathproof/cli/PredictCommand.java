package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Verb {@code predict}: not built yet. */
@Command(name = "predict", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class PredictCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    throw PathproofException.usage("predict: not built yet");
  }
}

package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Verb {@code explain}: not built yet. */
@Command(name = "explain", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class ExplainCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    throw PathproofException.usage("explain: not built yet");
  }
}

package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Verb {@code accept}: not built yet. */
@Command(name = "accept", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class AcceptCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    throw PathproofException.usage("accept: not built yet");
  }
}

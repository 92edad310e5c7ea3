package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Verb {@code run}: not built yet. */
@Command(name = "run", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class RunCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    throw PathproofException.usage("run: not built yet");
  }
}

package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Verb {@code diagnose}: not built yet. */
@Command(name = "diagnose", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class DiagnoseCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    throw PathproofException.usage("diagnose: not built yet");
  }
}

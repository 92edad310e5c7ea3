package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Verb {@code verify-fix}: not built yet. */
@Command(name = "verify-fix", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class VerifyFixCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    throw PathproofException.usage("verify-fix: not built yet");
  }
}

package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;

/** Verb {@code ingest}: not built yet. */
@Command(name = "ingest", mixinStandardHelpOptions = true, description = "(not built yet)")
public final class IngestCommand implements Callable<Integer> {
  @Override
  public Integer call() {
    throw PathproofException.usage("ingest: not built yet");
  }
}

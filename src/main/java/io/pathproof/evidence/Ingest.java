package io.pathproof.evidence;

import io.pathproof.core.PathproofException;
import java.nio.file.Path;
import java.util.List;

/** The public entry of the evidence room: read files and directories (run dirs included) into one {@link Evidence}. */
public final class Ingest {
  private Ingest() {}

  public static Evidence read(List<Path> inputs) {
    throw PathproofException.usage("ingest: not built yet");
  }
}

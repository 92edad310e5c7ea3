package io.pathproof.evidence;

import java.nio.file.Path;

/** Reads the harness's own outputs in a run directory (manifest, hook records, steps, replicas, peer access). */
public final class HarnessReader {
  private HarnessReader() {}

  /** Returns null when {@code dir} holds no harness output. */
  public static HarnessFacts read(Path dir) {
    return null;
  }
}

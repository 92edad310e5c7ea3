package io.pathproof.scenario;

import io.pathproof.core.PathproofException;

/**
 * The public entry of the scenario room: presets (JSON resources) and files. Each {@code load} takes a preset name or
 * a file path; a workload file may also be a parameter dump (one JSON object per line).
 */
public final class Scenarios {
  private Scenarios() {}

  public static Scenario load(String nameOrFile) {
    throw PathproofException.usage("scenario loader: not built yet");
  }

  public static Workload workload(String nameOrFile) {
    throw PathproofException.usage("scenario loader: not built yet");
  }

  /** A topology preset, a topology JSON, an NCCL topology dump (XML) or {@code nvidia-smi topo -m} text. */
  public static Topology topology(String nameOrFile) {
    throw PathproofException.usage("scenario loader: not built yet");
  }
}

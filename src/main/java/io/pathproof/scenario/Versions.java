package io.pathproof.scenario;

/** The versions a prediction is made for. CUDA may be null (it changes nothing the model uses). */
public record Versions(Version torch, Version nccl, Version cuda) {
  public Versions {
    if (torch == null || nccl == null) {
      throw io.pathproof.core.PathproofException.badInput("versions: torch and nccl are both required");
    }
  }
}

package io.pathproof.scenario;

/**
 * The versions a prediction is made for. CUDA may be null (it changes nothing the model uses). NCCL may be null only
 * for a job without NCCL (backend gloo on a CPU host); {@link Scenario} refuses a null NCCL with backend nccl.
 */
public record Versions(Version torch, Version nccl, Version cuda) {
    public Versions {
        if (torch == null) {
            throw io.pathproof.core.PathproofException.badInput("versions.torch: required");
        }
    }
}

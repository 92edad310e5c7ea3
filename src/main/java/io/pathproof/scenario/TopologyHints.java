package io.pathproof.scenario;

/**
 * Facts an importer cannot read from its input and the user may give ({@code --gpu-model}, {@code --gpu-cc},
 * {@code --nic-speed}): the GPU model name, its compute capability, and the speed of the NICs in Mb/s. Any may be
 * null. A hint never overrides a fact the input states.
 */
public record TopologyHints(String gpuModel, Integer computeCapability, Long nicSpeedMbps) {
    public static final TopologyHints NONE = new TopologyHints(null, null, null);

    public TopologyHints {
        if (computeCapability != null && (computeCapability < 30 || computeCapability > 200)) {
            throw io.pathproof.core.PathproofException.usage(
                    "gpu compute capability: " + computeCapability + " is not a CUDA capability (e.g. 70, 90)");
        }
        if (nicSpeedMbps != null && nicSpeedMbps <= 0) {
            throw io.pathproof.core.PathproofException.usage("nic speed: must be > 0 Mb/s");
        }
    }
}

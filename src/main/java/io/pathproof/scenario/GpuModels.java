package io.pathproof.scenario;

import java.util.List;
import java.util.regex.Pattern;

/**
 * What a GPU model name tells when an input does not say it: the CUDA compute capability and the PCIe generation of
 * the GPU's host link. Used only by importers for facts their input lacks; every use is reported as inferred.
 * Compute capabilities: NVIDIA's CUDA GPU list (V100 7.0, A100/A800 8.0, H100/H200/H800/H20 9.0, B200 10.0).
 */
final class GpuModels {
    private GpuModels() {}

    /** pciGen 0 = not known from the name. */
    record Known(Pattern name, int computeCapability, int pciGen, String family) {}

    static final List<Known> TABLE = List.of(
            new Known(Pattern.compile("\\bV100\\b"), 70, 3, "V100"),
            new Known(Pattern.compile("\\bA100\\b"), 80, 4, "A100"),
            new Known(Pattern.compile("\\bA800\\b"), 80, 4, "A800"),
            new Known(Pattern.compile("\\bH100\\b"), 90, 5, "H100"),
            new Known(Pattern.compile("\\bH200\\b"), 90, 5, "H200"),
            new Known(Pattern.compile("\\bH800\\b"), 90, 5, "H800"),
            new Known(Pattern.compile("\\bH20\\b"), 90, 5, "H20"),
            new Known(Pattern.compile("\\bB200\\b"), 100, 0, "B200"));

    /** PCI device ids NCCL's XML dump carries ({@code <pci device=...>}) for the models above. */
    record DeviceId(int id, String model) {}

    static final List<DeviceId> DEVICE_IDS = List.of(
            new DeviceId(0x1db1, "Tesla V100-SXM2-16GB"),
            new DeviceId(0x1db5, "Tesla V100-SXM2-32GB"),
            new DeviceId(0x20b0, "NVIDIA A100-SXM4-40GB"),
            new DeviceId(0x20b2, "NVIDIA A100-SXM4-80GB"),
            new DeviceId(0x2330, "NVIDIA H100 80GB HBM3"),
            new DeviceId(0x2335, "NVIDIA H200"));

    static Known lookup(String model) {
        if (model == null) {
            return null;
        }
        for (Known k : TABLE) {
            if (k.name().matcher(model).find()) {
                return k;
            }
        }
        return null;
    }

    static String modelOfDevice(int deviceId) {
        for (DeviceId d : DEVICE_IDS) {
            if (d.id() == deviceId) {
                return d.model();
            }
        }
        return null;
    }

    /** The PCI device id of a model name, exactly as {@link #DEVICE_IDS} spells it; null when not known. */
    static Integer deviceOf(String model) {
        for (DeviceId d : DEVICE_IDS) {
            if (d.model().equals(model)) {
                return d.id();
            }
        }
        return null;
    }

    /** NVLinks a GPU of this capability can have: NCCL's NVML probe bound (graph/xml.cc:768@v2.28.9-1). */
    static int maxNvLinks(int sm) {
        return sm < 60 ? 0 : sm < 70 ? 4 : sm < 80 ? 6 : sm < 90 ? 12 : 18;
    }
}

package io.pathproof.scenario;

import java.util.List;
import java.util.regex.Pattern;

/**
 * What a GPU model name tells when an input does not say it: the CUDA compute capability and the PCIe generation of
 * the GPU's host link. Used only by importers for facts their input lacks; every use is reported as inferred.
 * Compute capabilities: NVIDIA's CUDA GPU list (P100 6.0, V100 7.0, T4 7.5, A100/A800/A30 8.0, A10/A40/RTX A-series and
 * RTX 30x0 8.6, L4/L20/L40/L40S/RTX 6000 Ada/RTX 40x0 8.9, H100/H200/H800/H20/GH200 9.0, B200/GB200 10.0, B300 10.3,
 * RTX 50x0/RTX PRO 6000 12.0); PCIe generations from each product's data sheet (0 where the GPU's host link is not
 * PCIe or not known).
 */
final class GpuModels {
    private GpuModels() {}

    /** pciGen 0 = not known from the name. */
    record Known(Pattern name, int computeCapability, int pciGen, String family) {}

    static final List<Known> TABLE = List.of(
            new Known(Pattern.compile("\\bV100S?\\b"), 70, 3, "V100"),
            new Known(Pattern.compile("\\bP100\\b"), 60, 3, "P100"),
            new Known(Pattern.compile("\\bT4\\b"), 75, 3, "T4"),
            new Known(Pattern.compile("\\bA100\\b"), 80, 4, "A100"),
            new Known(Pattern.compile("\\bA800\\b"), 80, 4, "A800"),
            new Known(Pattern.compile("\\bH100\\b"), 90, 5, "H100"),
            new Known(Pattern.compile("\\bH200\\b"), 90, 5, "H200"),
            new Known(Pattern.compile("\\bH800\\b"), 90, 5, "H800"),
            new Known(Pattern.compile("\\bH20\\b"), 90, 5, "H20"),
            new Known(Pattern.compile("\\bB200\\b"), 100, 0, "B200"),
            new Known(Pattern.compile("\\bGH200\\b"), 90, 5, "GH200"),
            new Known(Pattern.compile("\\bGB200\\b"), 100, 0, "GB200"),
            new Known(Pattern.compile("\\bG?B300\\b"), 103, 0, "B300"),
            new Known(Pattern.compile("\\bA30\\b"), 80, 4, "A30"),
            new Known(Pattern.compile("\\bA10G?\\b"), 86, 4, "A10"),
            new Known(Pattern.compile("\\bA40\\b"), 86, 4, "A40"),
            new Known(Pattern.compile("\\bRTX A[456]000\\b"), 86, 4, "RTX A4000-A6000"),
            new Known(Pattern.compile("\\bRTX 30[5-9]0(?: Ti)?\\b"), 86, 4, "RTX 30x0"),
            new Known(Pattern.compile("\\bL4\\b"), 89, 4, "L4"),
            new Known(Pattern.compile("\\bL20\\b"), 89, 4, "L20"),
            new Known(Pattern.compile("\\bL40S?\\b"), 89, 4, "L40"),
            new Known(Pattern.compile("\\bRTX 6000 Ada\\b"), 89, 4, "RTX 6000 Ada"),
            new Known(Pattern.compile("\\bRTX 40[6-9]0(?: Ti)?\\b"), 89, 4, "RTX 40x0"),
            new Known(Pattern.compile("\\bRTX 50[6-9]0(?: Ti)?\\b"), 120, 5, "RTX 50x0"),
            new Known(Pattern.compile("\\bRTX PRO 6000\\b"), 120, 5, "RTX PRO 6000"));

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

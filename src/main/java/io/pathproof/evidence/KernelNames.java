package io.pathproof.evidence;

/**
 * Recognises NCCL kernels by name: {@code ncclKernel_*} (NCCL ≤ 2.18, e.g. ncclKernel_AllReduce_RING_LL_Sum_float),
 * {@code ncclDevKernel_*} (≥ 2.19, device/generate.py@v2.22.3-1) and the symmetric {@code ncclSymk*} family
 * (device/symmetric@v2.30.7-1). The suffix (…_RING_LL) is never read as the protocol: one kernel per (coll, type,
 * tree-or-not) is emitted and the protocol is chosen at run time (generate.py:138-149@v2.22.3-1; seed common
 * error 7; NVIDIA/nccl #2196).
 */
final class KernelNames {
    private KernelNames() {}

    static boolean isNccl(String name) {
        if (name == null) {
            return false;
        }
        return at(name, "ncclDevKernel_") || at(name, "ncclKernel_") || at(name, "ncclSymk");
    }

    private static boolean at(String name, String prefix) {
        int from = 0;
        while (true) {
            int i = name.indexOf(prefix, from);
            if (i < 0) {
                return false;
            }
            if (i == 0 || !Character.isJavaIdentifierPart(name.charAt(i - 1))) {
                return true;
            }
            from = i + 1;
        }
    }
}

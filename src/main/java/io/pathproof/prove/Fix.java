package io.pathproof.prove;

import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.Layer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The diagnosed fix, applied to the variant's settings. Only the diagnosis decides what is undone: a setting goes
 * when the diagnosis's configuration changes name it (NCCL variables, DDP's bucket cap and flags, as the job itself
 * recorded them), or, for the application's own layers (compute, correctness) that no configuration shows, when the
 * fault acts on the layer the diagnosis names — the owner undoes its change there; likewise an emulated node's degraded
 * NICs, which the hardware's owner restores when the diagnosis names the network without a configuration change. A wrong diagnosis therefore leaves
 * the fault in place and verify-fix fails.
 */
record Fix(List<String> removed, List<String> kept, String reason) {
    Fix {
        removed = List.copyOf(removed);
        kept = List.copyOf(kept);
    }

    /** The emulation's hardware knobs: what they degrade no configuration shows, and the hardware's owner restores. */
    private static final List<String> HARDWARE_KNOBS = List.of("node_nic_mbps");

    static Fix apply(Diagnosis d, Fault fault) {
        List<String> removed = new ArrayList<>();
        List<String> kept = new ArrayList<>();
        Layer layer = d.rootCause() == null ? Layer.NONE : d.rootCause().layer();
        List<String> named = new ArrayList<>();
        for (Diagnosis.ConfigChange c : d.configuration()) {
            named.add(normal(c.key()));
        }
        boolean applicationLayer = layer == Layer.COMPUTE || layer == Layer.CORRECTNESS;
        for (String s : fault.settings()) {
            String key = normal(s.substring(0, s.indexOf('=')));
            boolean byConfig = named.stream()
                    .anyMatch(n -> n.equals(key)
                            || n.endsWith("." + key)
                            || (key.equals("bucket_cap_mb") && n.endsWith("bucket_cap_bytes")));
            // A degraded emulated node (node_nic_mbps) shows in no configuration either: its owner is the hardware's,
            // and the diagnosis names it as a network change without a configuration change.
            boolean hardware = HARDWARE_KNOBS.contains(key)
                    && layer == Layer.NETWORK
                    && Layer.Owner.HARDWARE.equals(d.rootCause().owner());
            boolean byLayer = fault.layer() == layer && (applicationLayer || hardware);
            if ((byConfig && layer != Layer.NONE) || byLayer) {
                removed.add(s);
            } else {
                kept.add(s);
            }
        }
        String reason = removed.isEmpty()
                ? "the diagnosis (" + layer + ") names no setting of the variant, so nothing is undone"
                : "undone as the diagnosis says: "
                        + (d.rootCause() == null ? "" : d.rootCause().fix());
        return new Fix(removed, kept, reason);
    }

    private static String normal(String key) {
        String k = key.toLowerCase(Locale.ROOT);
        return k.startsWith("env.") ? k.substring(4) : k;
    }
}

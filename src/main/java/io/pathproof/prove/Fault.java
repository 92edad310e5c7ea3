package io.pathproof.prove;

import io.pathproof.diagnose.Layer;
import java.util.List;

/**
 * One deliberate fault of a variant run: its kind, the {@code run --inject K=V} settings that make it, and the layer
 * of the path it acts on (the diagnose room's {@link Layer}), which is what the blind diagnosis must name.
 */
public record Fault(String kind, List<String> settings, Layer layer, String description) {
    public Fault {
        if (kind == null || kind.isBlank() || layer == null) {
            throw new IllegalArgumentException("a fault needs a kind and a layer");
        }
        settings = List.copyOf(settings);
        if (settings.isEmpty()) {
            throw new IllegalArgumentException("fault " + kind + ": no setting");
        }
        for (String s : settings) {
            if (s.indexOf('=') <= 0) {
                throw new IllegalArgumentException("fault " + kind + ": '" + s + "' is not K=V");
            }
        }
        description = description == null ? "" : description;
    }

    /** The names the settings set (NCCL_PROTO, bucket_cap_mb …). */
    List<String> keys() {
        return settings.stream().map(s -> s.substring(0, s.indexOf('='))).toList();
    }
}

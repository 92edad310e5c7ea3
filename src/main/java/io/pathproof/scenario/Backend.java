package io.pathproof.scenario;

import com.fasterxml.jackson.annotation.JsonValue;
import io.pathproof.core.PathproofException;
import java.util.Locale;

/** The torch.distributed backend of the job ({@code init_process_group(backend=...)}). */
public enum Backend {
    NCCL,
    GLOO;

    /** The name torch uses ({@code "nccl"}, {@code "gloo"}). */
    @JsonValue
    public String torchName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Backend parse(String s, String field) {
        if (s != null) {
            for (Backend b : values()) {
                if (b.torchName().equals(s.trim().toLowerCase(Locale.ROOT))) {
                    return b;
                }
            }
        }
        throw PathproofException.badInput(field + ": unknown backend '" + s + "' (known: nccl, gloo)");
    }
}

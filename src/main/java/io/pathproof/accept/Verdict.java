package io.pathproof.accept;

import com.fasterxml.jackson.annotation.JsonValue;

/**
 * The verdict of one acceptance row. {@code NOT_APPLICABLE} (printed "N/A") is listed but never counted as a pass:
 * it is used where the check has no meaning for this run (NCCL rows of a gloo run, peers of a one-rank job).
 */
public enum Verdict {
    PASS("PASS"),
    FAIL("FAIL"),
    UNPROVEN("UNPROVEN"),
    NOT_APPLICABLE("N/A");

    private final String label;

    Verdict(String label) {
        this.label = label;
    }

    @JsonValue
    public String label() {
        return label;
    }

    /** The verdict whose {@link #label()} is {@code label} (as acceptance.json holds it), or null for any other word. */
    public static Verdict of(String label) {
        for (Verdict v : values()) {
            if (v.label.equals(label)) {
                return v;
            }
        }
        return null;
    }

    /** Combines the verdicts of the parts of one check: any FAIL fails, then any UNPROVEN, then PASS. */
    static Verdict worst(Verdict a, Verdict b) {
        if (a == FAIL || b == FAIL) {
            return FAIL;
        }
        if (a == UNPROVEN || b == UNPROVEN) {
            return UNPROVEN;
        }
        if (a == PASS || b == PASS) {
            return PASS;
        }
        return NOT_APPLICABLE;
    }
}

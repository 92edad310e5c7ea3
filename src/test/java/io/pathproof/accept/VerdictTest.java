package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** A verdict read back from JSON (report reads acceptance.json) is the enum constant it was written from. */
class VerdictTest {
    @Test
    void everyLabelReadsBackToItsVerdict() {
        for (Verdict v : Verdict.values()) {
            assertThat(Verdict.of(v.label())).isSameAs(v);
        }
        assertThat(Verdict.of("N/A")).isSameAs(Verdict.NOT_APPLICABLE);
    }

    @Test
    void anyOtherWordIsNoVerdict() {
        assertThat(Verdict.of("NOT_APPLICABLE")).isNull();
        assertThat(Verdict.of("fail")).isNull();
        assertThat(Verdict.of("")).isNull();
        assertThat(Verdict.of(null)).isNull();
    }
}

package io.pathproof.accept;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class DecisionChecksTest {
    /** Channel 0 of an emulated 4 x 8 H200 cluster as NCCL 2.27.3 printed it, every one of its 32 ranks. */
    static final String RING = "0 7 6 5 4 3 2 1 8 15 14 13 12 11 10 9 16 23 22 21 20 19 18 17 24 31 30 29 28 27 26 25";

    @Test
    void aRingIsTheSameRingFromAnyRank() {
        assertTrue(DecisionChecks.sameCycle(RING, RING));
        assertTrue(DecisionChecks.sameCycle(
                RING, "8 15 14 13 12 11 10 9 16 23 22 21 20 19 18 17 24 31 30 29 28 27 26 25 0 7 6 5 4 3 2 1"));
        assertFalse(DecisionChecks.sameCycle(
                RING, "0 1 2 3 4 5 6 7 8 15 14 13 12 11 10 9 16 23 22 21 20 19 18 17 24 31 30 29 28 27 26 25"));
    }

    @Test
    void nccl221PrintsTheFirstTwentyRanksOfTheSameRing() {
        // The same shape under NCCL 2.21.5 (rings.cc:9, 18@v2.21.5-1 stops at 20 ranks): before, a FAIL.
        String printed = "0 7 6 5 4 3 2 1 8 15 14 13 12 11 10 9 16 23 22 21";
        assertTrue(DecisionChecks.cut(RING, printed));
        assertTrue(DecisionChecks.sameCycle(RING, printed));
        // a cut line is still judged: another order, or a line cut anywhere but at 20, is not the ring
        assertFalse(DecisionChecks.sameCycle(RING, "0 7 6 5 4 3 2 1 8 15 14 13 12 11 10 9 16 23 21 22"));
        assertFalse(DecisionChecks.sameCycle(RING, "0 7 6 5 4 3 2 1 8 15 14 13 12 11 10 9 16 23 22"));
        assertFalse(DecisionChecks.cut(RING, RING));
    }
}

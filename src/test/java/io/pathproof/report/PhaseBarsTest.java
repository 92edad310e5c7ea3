package io.pathproof.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class PhaseBarsTest {
    static final double LEFT = 90;
    static final double RIGHT = 1000;

    @Test
    void wideBarsCarryTheirLabelsInside() {
        List<PhaseBars.Label> l = PhaseBars.layout(
                List.of(new PhaseBars.Bar("backward", 100, 500), new PhaseBars.Bar("optimizer", 600, 300)),
                LEFT,
                RIGHT);
        assertThat(l)
                .containsExactly(new PhaseBars.Label("backward", 103, 56), new PhaseBars.Label("optimizer", 603, 63));
    }

    /** As a GPU run leaves them: backward issued over 50 px, the optimizer right after it over 8 px. */
    @Test
    void twoNarrowBarsSideBySideNeverShareASpot() {
        List<PhaseBars.Bar> bars =
                List.of(new PhaseBars.Bar("backward", 335, 50), new PhaseBars.Bar("optimizer", 385, 8));
        List<PhaseBars.Label> l = PhaseBars.layout(bars, LEFT, RIGHT);
        assertThat(l).extracting(PhaseBars.Label::phase).containsExactly("backward", "optimizer");
        assertClear(bars, l);
        assertThat(l.get(0).x() + l.get(0).w())
                .as("backward's label is written before its bar, clear of the optimizer's")
                .isLessThanOrEqualTo(335);
    }

    /** On CPU: a wide backward, then the optimizer a sliver at the right edge; its label goes over the backward bar's end. */
    @Test
    void aNarrowBarAtTheRightEdgeIsLabelledBeforeIt() {
        List<PhaseBars.Label> l = PhaseBars.layout(
                List.of(new PhaseBars.Bar("backward", 100, 800), new PhaseBars.Bar("optimizer", 975, 5)), LEFT, RIGHT);
        assertThat(l).contains(new PhaseBars.Label("optimizer", 975 - 3 - 63, 63));
    }

    /**
     * Any two bars in time order, as any run may leave them: no label leaves the chart, covers another label or half
     * covers its own bar.
     */
    @Test
    void noLayoutOfTwoBarsOverlapsOrLeavesTheChart() {
        Random r = new Random(7);
        int labelled = 0;
        for (int i = 0; i < 20000; i++) {
            double a = LEFT + r.nextDouble() * 880;
            double wa = Math.min(980 - 1.5 - a, 1.5 + r.nextDouble() * (r.nextBoolean() ? 30 : 400));
            double b = Math.min(980 - 1.5, a + wa + r.nextDouble() * (r.nextBoolean() ? 5 : 300));
            double wb = Math.max(1.5, Math.min(980 - b, 1.5 + r.nextDouble() * (r.nextBoolean() ? 30 : 400)));
            List<PhaseBars.Bar> bars =
                    List.of(new PhaseBars.Bar("backward", a, wa), new PhaseBars.Bar("optimizer", b, wb));
            List<PhaseBars.Label> l = PhaseBars.layout(bars, LEFT, RIGHT);
            assertClear(bars, l);
            labelled += l.size();
        }
        assertThat(labelled).as("most bars still get a label").isGreaterThan(30000);
    }

    static void assertClear(List<PhaseBars.Bar> bars, List<PhaseBars.Label> labels) {
        for (PhaseBars.Label l : labels) {
            assertThat(l.x()).as("%s label starts in the chart", l).isGreaterThanOrEqualTo(LEFT);
            // Chromium's box of an 11 px monospace label reaches up to 0.4 px past its imposed textLength.
            assertThat(l.x() + l.w())
                    .as("%s label ends in the chart, a margin clear of its edge", l)
                    .isLessThanOrEqualTo(RIGHT - 1);
            for (PhaseBars.Bar b : bars) {
                if (b.phase().equals(l.phase())) {
                    boolean inside = l.x() >= b.x0() && l.x() + l.w() <= b.x1();
                    boolean clear = l.x() + l.w() <= b.x0() || b.x1() <= l.x();
                    assertThat(inside || clear)
                            .as("%s against its own %s", l, b)
                            .isTrue();
                }
            }
            for (PhaseBars.Label o : labels) {
                if (o != l) {
                    assertThat(l.x() + l.w() <= o.x() || o.x() + o.w() <= l.x())
                            .as("%s against %s", l, o)
                            .isTrue();
                }
            }
        }
    }
}

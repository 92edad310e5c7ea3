package io.pathproof.report;

import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A rank's backward and optimizer bars on the timeline, from the step row's host-clock phase boundaries, and where
 * their labels go. A label goes inside its bar when it fits, else beside it inside the chart, over no other label
 * (clear of the other bar where it can be), else nowhere (the colours are named above the chart and each bar has a
 * tooltip): on a GPU the host issues the optimizer right after backward returns, so two narrow bars sit side by side
 * and two labels "after" them would be drawn over each other.
 */
final class PhaseBars {
    private PhaseBars() {}

    private static final String BACKWARD_COLOR = "#afb8c1";
    private static final String OPTIMIZER_COLOR = "#e16f24";

    /**
     * The width a label is given (its textLength): 7 px a character, a little wider than an 11 px monospace glyph. The
     * browser's font is not ours to measure, so the width is imposed rather than estimated: an estimate let a label
     * placed after a bar that ends just short of the edge spill out of the chart when the font ran wider.
     */
    static double labelWidth(String label) {
        return 7.0 * label.length();
    }

    /**
     * How far a label stays from the chart's edges. Chromium's box of an 11 px monospace label reaches up to 0.4 px
     * past the textLength it is given (measured: "optimizer" at textLength 63 has a box 63.375 px wide), so a label
     * laid out to end exactly at the edge was drawn over it.
     */
    static final double EDGE = 2;

    /** A bar in chart pixels. */
    record Bar(String phase, double x0, double w) {
        double x1() {
            return x0 + w;
        }
    }

    /** A placed label: its left edge, width and text-anchor-free position (always drawn from {@code x} to the right). */
    record Label(String phase, double x, double w) {}

    /** Where each bar's label goes; a bar whose label fits nowhere has none. Bars are in time order. */
    static List<Label> layout(List<Bar> bars, double left, double right) {
        Label[] placed = new Label[bars.size()];
        List<double[]> taken = new ArrayList<>();
        for (Bar bar : bars) {
            taken.add(new double[] {bar.x0(), bar.x1()});
        }
        // Inside first: a label inside its own bar crowds nothing else.
        for (int i = 0; i < bars.size(); i++) {
            Bar bar = bars.get(i);
            double t = labelWidth(bar.phase());
            if (bar.w() > t + 6) {
                placed[i] = new Label(bar.phase(), bar.x0() + 3, t);
            }
        }
        // Beside the bar: first, for every bar, clear of the other bar; then over it (the bars are light enough to read
        // text on; on CPU the optimizer is a sliver at the edge right after a wide backward, and needs its name most).
        for (boolean overBars : new boolean[] {false, true}) {
            for (int i = 0; i < bars.size(); i++) {
                Bar bar = bars.get(i);
                double t = labelWidth(bar.phase());
                for (double x : new double[] {bar.x1() + 3, bar.x0() - 3 - t}) {
                    if (placed[i] == null
                            && x >= left + EDGE
                            && x + t <= right - EDGE
                            && free(x, x + t, i, bars, placed, overBars)) {
                        placed[i] = new Label(bar.phase(), x, t);
                    }
                }
            }
        }
        List<Label> out = new ArrayList<>();
        for (Label l : placed) {
            if (l != null) {
                out.add(l);
            }
        }
        return out;
    }

    /** Whether [a, b] overlaps no label placed so far and, unless {@code overBars}, no other bar. */
    private static boolean free(double a, double b, int self, List<Bar> bars, Label[] placed, boolean overBars) {
        for (int j = 0; j < bars.size(); j++) {
            Bar o = bars.get(j);
            if (!overBars && j != self && a < o.x1() && o.x0() < b) {
                return false;
            }
            Label l = placed[j];
            if (l != null && a < l.x() + l.w() && l.x() < b) {
                return false;
            }
        }
        return true;
    }

    /**
     * Draws a rank's two bars and their labels at row {@code y}. On a CUDA run the boundaries are when the host issued
     * the phase (the calls return before the GPU runs it): the row is labelled "host issue" and so is each tooltip.
     */
    static void draw(
            StringBuilder b, int rank, Evidence.HostPhases ph, long t0, double px, int left, int right, int y) {
        String[] phases = {"backward", "optimizer"};
        String[] colors = {BACKWARD_COLOR, OPTIMIZER_COLOR};
        long[][] ns = {{ph.backwardStartNs(), ph.backwardEndNs()}, {ph.optimizerStartNs(), ph.optimizerEndNs()}};
        List<Bar> bars = new ArrayList<>();
        for (int i = 0; i < phases.length; i++) {
            Bar bar = new Bar(phases[i], left + (ns[i][0] - t0) * px, Math.max(1.5, (ns[i][1] - ns[i][0]) * px));
            bars.add(bar);
            String name = ph.issueOnly() ? bar.phase() + " (host issue)" : bar.phase();
            String tip = String.format(
                    Locale.ROOT,
                    "rank %d %s: %.3f ms %s",
                    rank,
                    name,
                    (ns[i][1] - ns[i][0]) / 1e6,
                    ph.issueOnly()
                            ? "from the call to its return on the host; the GPU runs the work later"
                            : "from the call to its return (the work itself, on CPU)");
            b.append(String.format(
                    Locale.ROOT,
                    "<rect class=\"phase-%s\" data-rank=\"%d\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"14\" fill=\"%s\">"
                            + "<title>%s</title></rect>",
                    bar.phase(),
                    rank,
                    bar.x0(),
                    y,
                    bar.w(),
                    colors[i],
                    Esc.html(tip)));
        }
        for (Label l : layout(bars, left, right)) {
            b.append(String.format(
                    Locale.ROOT,
                    "<text class=\"phase-label\" data-rank=\"%d\" x=\"%.1f\" y=\"%d\" textLength=\"%.0f\">%s</text>",
                    rank,
                    l.x(),
                    y + 11,
                    l.w(),
                    Esc.html(l.phase())));
        }
    }
}

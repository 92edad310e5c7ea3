package io.pathproof.report;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** The numbers behind the charts: step-time series and statistics per run, and the SVG timeline of one iteration. */
final class Charts {
    private Charts() {}

    static double median(double[] sorted) {
        int n = sorted.length;
        if (n == 0) {
            return Double.NaN;
        }
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    /**
     * {"runs": {key: {"role", "label", "median", "perIteration": [step time per measured iteration], "quantile": [the same,
     * sorted]}}}: each run's step times as the diagnose room defines them (the slowest rank per iteration), from the
     * source's one computation of them, so the charts show the numbers the tables and the text give.
     */
    static String stepData(Report.Source s) {
        ObjectNode root = Json.mapper().createObjectNode();
        ObjectNode runs = root.putObject("runs");
        for (String key : s.runs().keySet()) {
            Diagnosis.StepTimes st = s.steps().get(key);
            ObjectNode r = runs.putObject(key);
            r.put("role", s.roles().get(key));
            r.put("label", s.labels().get(key));
            if (st.median() != null) {
                r.put("median", round(st.median()));
            }
            ArrayNode per = r.putArray("perIteration");
            st.perIteration().forEach(d -> per.add(round(d)));
            ArrayNode q = r.putArray("quantile");
            st.perIteration().stream().sorted().forEach(d -> q.add(round(d)));
        }
        return root.toString();
    }

    private static double round(double d) {
        return Math.round(d * 1000.0) / 1000.0;
    }

    private static final String[] BUCKET_COLORS = {
        "#0969da", "#8250df", "#bf8700", "#1a7f37", "#cf222e", "#0550ae", "#953800"
    };

    /**
     * An NCCL kernel of the profiler trace on the host clock: the trace's {@code ts} plus its baseTimeNanoseconds is
     * Unix-epoch time, the clock of the hook records ({@code time.time_ns()}), just as the hook's GPU done is a CUDA
     * event mapped onto that clock. Kernels of a trace without that offset (torch 1.13's bare array) have no place here.
     */
    record KernelSpan(int rank, long startNs, long endNs, Evidence.Kernel kernel) {}

    static List<KernelSpan> ncclKernelSpans(Evidence e) {
        if (e == null
                || e.kernels() == null
                || e.traceClocks() == null
                || e.traceClocks().isEmpty()) {
            return List.of();
        }
        Map<String, Long> base = new java.util.HashMap<>();
        e.traceClocks().forEach(c -> base.put(c.source().file(), c.baseNs()));
        List<KernelSpan> out = new ArrayList<>();
        for (Evidence.Kernel k : e.kernels()) {
            Long b = k.source() == null ? null : base.get(k.source().file());
            if (k.nccl() && b != null && k.rank() != null && k.startNs() != null && k.durNs() != null) {
                out.add(new KernelSpan(k.rank(), b + k.startNs(), b + k.startNs() + k.durNs(), k));
            }
        }
        return out;
    }

    /**
     * One iteration, one lane per rank: each bucket's comm hook from ready (hook entry) to future done, then to GPU done
     * where the run has CUDA events, and under it the NCCL kernels of the profiler trace, all on the host clock of the
     * ranks (one machine here). Above the hooks, where the step rows have them, the rank's backward and optimizer from
     * the harness's host-clock phase boundaries: the work itself on CPU, only its issue on CUDA (labelled so). The
     * iteration is the last that every rank recorded with an NCCL kernel in it, else the last that every rank recorded.
     */
    static String timelineSvg(Evidence e) {
        if (e == null
                || e.ddp() == null
                || e.ddp().buckets() == null
                || e.ddp().buckets().isEmpty()) {
            return "<p>No comm-hook records in this run: the timeline cannot be drawn.</p>";
        }
        List<Evidence.BucketRecord> all = e.ddp().buckets();
        TreeSet<Integer> ranks =
                all.stream().map(Evidence.BucketRecord::rank).collect(Collectors.toCollection(TreeSet::new));
        List<KernelSpan> spans = ncclKernelSpans(e);
        Pick pick = iterationToDraw(all, ranks, spans);
        if (pick == null) {
            return "<p>No iteration was recorded by every rank: the timeline cannot be drawn.</p>";
        }
        int it = pick.iteration();
        Lanes l = Lanes.of(all, it, pick.drawn(), phasesOf(e, it, ranks), ranks.size());
        StringBuilder b = new StringBuilder();
        captions(b, l, ranks.size());
        b.append("<svg id=\"timeline-svg\" xmlns=\"http://www.w3.org/2000/svg\" width=\"")
                .append(Lanes.WIDTH)
                .append("\" height=\"")
                .append(l.height())
                .append("\" viewBox=\"0 0 ")
                .append(Lanes.WIDTH)
                .append(' ')
                .append(l.height())
                .append("\" role=\"img\" aria-label=\"per-rank timeline\">");
        axis(b, l);
        int row = 0;
        for (int rank : ranks) {
            lane(b, l, rank, Lanes.TOP + row * l.lane());
            row++;
        }
        b.append("</svg>");
        b.append("<p class=\"small\">")
                .append(Esc.html(stepsOf(e, it)))
                .append(' ')
                .append(Esc.html(collectivesOf(e, spans.size(), l.drawn().size())))
                .append("</p>");
        return b.toString();
    }

    /** The iteration drawn and the NCCL kernels that fall within it. */
    private record Pick(int iteration, List<KernelSpan> drawn) {}

    /** The last iteration every rank recorded with an NCCL kernel in it, else the last every rank recorded; or null. */
    private static Pick iterationToDraw(
            List<Evidence.BucketRecord> all, TreeSet<Integer> ranks, List<KernelSpan> spans) {
        TreeMap<Integer, java.util.Set<Integer>> ranksByIter = new TreeMap<>();
        for (Evidence.BucketRecord br : all) {
            ranksByIter.computeIfAbsent(br.iteration(), k -> new TreeSet<>()).add(br.rank());
        }
        Pick pick = null;
        for (Map.Entry<Integer, java.util.Set<Integer>> en :
                ranksByIter.descendingMap().entrySet()) {
            if (!en.getValue().containsAll(ranks)) {
                continue;
            }
            List<KernelSpan> in = within(spans, all, en.getKey());
            if (pick == null || !in.isEmpty()) {
                pick = new Pick(en.getKey(), in);
            }
            if (!in.isEmpty() || spans.isEmpty()) {
                break;
            }
        }
        return pick;
    }

    /**
     * The timeline's geometry: the iteration's records, the time window [t0, t0 + span] and its scale, and each rank's
     * lane, a row for its host phases and a row for its NCCL kernels where there are any.
     */
    private record Lanes(
            int iteration,
            List<Evidence.BucketRecord> recs,
            List<KernelSpan> drawn,
            Map<Integer, Evidence.HostPhases> phases,
            boolean issueOnly,
            long t0,
            double span,
            double px,
            int kernelRow,
            int phaseRow,
            int lane,
            int height) {
        static final int LEFT = 90;
        static final int WIDTH = 1000;
        static final int TOP = 24;

        static Lanes of(
                List<Evidence.BucketRecord> all,
                int it,
                List<KernelSpan> drawn,
                Map<Integer, Evidence.HostPhases> phases,
                int ranks) {
            List<Evidence.BucketRecord> recs = all.stream()
                    .filter(b -> b.iteration() == it && b.readyNs() != null)
                    .toList();
            boolean issueOnly = phases.values().stream().anyMatch(Evidence.HostPhases::issueOnly);
            long t0 = Math.min(
                    Math.min(
                            recs.stream()
                                    .mapToLong(Evidence.BucketRecord::readyNs)
                                    .min()
                                    .orElse(0),
                            drawn.stream().mapToLong(KernelSpan::startNs).min().orElse(Long.MAX_VALUE)),
                    phases.values().stream()
                            .mapToLong(Evidence.HostPhases::backwardStartNs)
                            .min()
                            .orElse(Long.MAX_VALUE));
            long t1 = Math.max(
                    Math.max(
                            recs.stream().mapToLong(Charts::lastNs).max().orElse(t0 + 1),
                            drawn.stream().mapToLong(KernelSpan::endNs).max().orElse(Long.MIN_VALUE)),
                    phases.values().stream()
                            .mapToLong(Evidence.HostPhases::optimizerEndNs)
                            .max()
                            .orElse(Long.MIN_VALUE));
            double span = Math.max(1, t1 - t0);
            int kernelRow = drawn.isEmpty() ? 0 : 18;
            int phaseRow = phases.isEmpty() ? 0 : 18;
            int lane = 34 + kernelRow + phaseRow;
            int height = TOP + lane * ranks + 40;
            double px = (WIDTH - LEFT - 20) / span;
            return new Lanes(it, recs, drawn, phases, issueOnly, t0, span, px, kernelRow, phaseRow, lane, height);
        }

        /** The x of a time on the host clock. */
        double x(long ns) {
            return LEFT + (ns - t0) * px;
        }
    }

    private static void captions(StringBuilder b, Lanes l, int ranks) {
        b.append(String.format(
                Locale.ROOT,
                "<p>Iteration %d of the %s run: each bar is one bucket's comm hook, from the moment the Reducer hands it over "
                        + "(ready) to the Future's completion; a lighter tail runs on to GPU completion where CUDA events exist. Time 0 is the first event "
                        + "shown (%.3f ms shown; host clock of the ranks).</p>",
                l.iteration(),
                "measured",
                l.span() / 1e6));
        b.append("<p>")
                .append(Esc.html(phasesNote(l.phases(), ranks, l.issueOnly())))
                .append("</p>");
        if (!l.drawn().isEmpty()) {
            b.append(
                    "<p>Under each rank, in grey: the NCCL kernels of the profiler trace, their GPU times placed on the host clock by the trace's own"
                            + " offset (Kineto's baseTimeNanoseconds), as the GPU done of a hook is placed by a CUDA event; the two mappings are independent, so"
                            + " their edges may disagree by a fraction of a millisecond.</p>");
        }
    }

    /** Five grid lines with their times. */
    private static void axis(StringBuilder b, Lanes l) {
        int left = Lanes.LEFT;
        int width = Lanes.WIDTH;
        for (int k = 0; k <= 4; k++) {
            double x = left + (width - left - 20) * k / 4.0;
            b.append(String.format(
                    Locale.ROOT,
                    "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d0d7de\"/>",
                    x,
                    Lanes.TOP - 6,
                    x,
                    l.height() - 30));
            b.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%.1f\" y=\"%d\" text-anchor=\"%s\">%.3f ms</text>",
                    x,
                    l.height() - 14,
                    k == 4 ? "end" : "middle",
                    l.span() / 1e6 * k / 4));
        }
    }

    /** One rank's lane from {@code y} down: its host phases, its buckets' hooks, its NCCL kernels. */
    private static void lane(StringBuilder b, Lanes l, int rank, int y) {
        Evidence.HostPhases ph = l.phases().get(rank);
        if (l.phaseRow() > 0) {
            b.append(String.format(
                    Locale.ROOT,
                    "<text x=\"%d\" y=\"%d\" class=\"small\">%s</text>",
                    l.issueOnly() ? 4 : 14,
                    y + 14,
                    l.issueOnly() ? "host issue" : "host"));
        }
        if (ph != null) {
            PhaseBars.draw(b, rank, ph, l.t0(), l.px(), Lanes.LEFT, Lanes.WIDTH, y + 2);
        }
        y += l.phaseRow();
        b.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\">rank %d</text>", y + 18, rank));
        for (Evidence.BucketRecord br : l.recs()) {
            if (br.rank() == rank) {
                bucketBar(b, l, br, y);
            }
        }
        if (l.kernelRow() > 0) {
            b.append(String.format(Locale.ROOT, "<text x=\"14\" y=\"%d\" class=\"small\">NCCL</text>", y + 42));
        }
        for (KernelSpan ks : l.drawn()) {
            if (ks.rank() == rank) {
                Evidence.Kernel k = ks.kernel();
                String tip = String.format(
                        Locale.ROOT,
                        "%s on rank %d: %.3f ms, grid %s, block %s (%s)",
                        k.name(),
                        rank,
                        (ks.endNs() - ks.startNs()) / 1e6,
                        k.grid() == null ? "?" : Arrays.toString(k.grid()),
                        k.block() == null ? "?" : Arrays.toString(k.block()),
                        k.source());
                b.append(String.format(
                        Locale.ROOT,
                        "<rect class=\"nccl-kernel\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"12\" fill=\"#57606a\"><title>%s</title></rect>",
                        l.x(ks.startNs()),
                        y + 30,
                        Math.max(1.5, (ks.endNs() - ks.startNs()) * l.px()),
                        Esc.html(tip)));
            }
        }
    }

    /** One bucket's hook, ready to the future's completion, and a lighter tail to GPU completion where it is later. */
    private static void bucketBar(StringBuilder b, Lanes l, Evidence.BucketRecord br, int y) {
        String color = BUCKET_COLORS[Math.floorMod(br.index(), BUCKET_COLORS.length)];
        double x0 = l.x(br.readyNs());
        long done = br.futureDoneNs() == null ? br.readyNs() : br.futureDoneNs();
        double w = Math.max(1.5, (done - br.readyNs()) * l.px());
        String tip = String.format(
                Locale.ROOT,
                "bucket %d, %d bytes, %s: ready → future done %.3f ms",
                br.index(),
                br.bytes(),
                String.join(" ", br.params()),
                (done - br.readyNs()) / 1e6);
        b.append(String.format(
                Locale.ROOT,
                "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"22\" fill=\"%s\"><title>%s</title></rect>",
                x0,
                y + 4,
                w,
                color,
                Esc.html(tip)));
        if (br.gpuDoneNs() != null && br.gpuDoneNs() > done) {
            b.append(String.format(
                    Locale.ROOT,
                    "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"22\" fill=\"%s\" fill-opacity=\"0.35\"><title>%s</title></rect>",
                    x0 + w,
                    y + 4,
                    Math.max(1.5, (br.gpuDoneNs() - done) * l.px()),
                    color,
                    Esc.html(String.format(
                            Locale.ROOT,
                            "bucket %d: future done → GPU done %.3f ms",
                            br.index(),
                            (br.gpuDoneNs() - done) / 1e6))));
        }
        b.append(String.format(
                Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" fill=\"#fff\">%d</text>", x0 + 3, y + 19, br.index()));
    }

    /** Each rank's phase boundaries in iteration {@code it}, for the ranks whose step row has them. */
    private static Map<Integer, Evidence.HostPhases> phasesOf(Evidence e, int it, java.util.Set<Integer> ranks) {
        Map<Integer, Evidence.HostPhases> out = new TreeMap<>();
        if (e.steps() != null) {
            for (Evidence.Step st : e.steps()) {
                if (st.iteration() == it && st.hostPhases() != null && ranks.contains(st.rank())) {
                    out.put(st.rank(), st.hostPhases());
                }
            }
        }
        return out;
    }

    private static String phasesNote(Map<Integer, Evidence.HostPhases> phases, int ranks, boolean issueOnly) {
        if (phases.isEmpty()) {
            return "The step rows of this run carry no phase boundaries (written before the harness recorded them), so backward and optimizer"
                    + " have no bars; the whole step's time is given below.";
        }
        String which = phases.size() == ranks
                ? "Above each rank"
                : "Above the " + phases.size() + " of " + ranks + " ranks whose step rows have them";
        if (issueOnly) {
            return which
                    + ": backward (grey; loss.backward() called to returned) and optimizer (orange; opt.step() called to returned) as the host issued"
                    + " them — on a GPU these calls only enqueue kernels and return, so these bars are host issue, not GPU time.";
        }
        return which
                + ": backward (grey; loss.backward() called to returned, DDP's wait for the last bucket included) and optimizer"
                + " (orange; opt.step() called to returned); on CPU the work runs inside these calls, so the bars are the work itself.";
    }

    /** The latest boundary a hook record has. */
    private static long lastNs(Evidence.BucketRecord b) {
        return Math.max(
                b.readyNs(),
                Math.max(b.futureDoneNs() == null ? 0 : b.futureDoneNs(), b.gpuDoneNs() == null ? 0 : b.gpuDoneNs()));
    }

    /** The kernel spans of a rank that overlap that rank's hooks of iteration {@code it} (first ready to last boundary). */
    private static List<KernelSpan> within(List<KernelSpan> spans, List<Evidence.BucketRecord> all, int it) {
        Map<Integer, long[]> window = new TreeMap<>();
        for (Evidence.BucketRecord br : all) {
            if (br.iteration() == it && br.readyNs() != null) {
                window.merge(br.rank(), new long[] {br.readyNs(), lastNs(br)}, (a, c) ->
                        new long[] {Math.min(a[0], c[0]), Math.max(a[1], c[1])});
            }
        }
        return spans.stream()
                .filter(s -> {
                    long[] w = window.get(s.rank());
                    return w != null && s.startNs() <= w[1] && s.endNs() >= w[0];
                })
                .toList();
    }

    private static String stepsOf(Evidence e, int it) {
        if (e.steps() == null) {
            return "";
        }
        String s = e.steps().stream()
                .filter(st -> st.iteration() == it)
                .sorted((a, c) -> Integer.compare(a.rank(), c.rank()))
                .map(st -> String.format(Locale.ROOT, "rank %d %.3f ms", st.rank(), st.ms()))
                .collect(Collectors.joining(", "));
        return s.isEmpty() ? "" : "Whole step " + it + ": " + s + ".";
    }

    private static String collectivesOf(Evidence e, int onHostClock, int drawn) {
        List<String> parts = new ArrayList<>();
        if (e.kernels() != null) {
            List<Evidence.Kernel> k =
                    e.kernels().stream().filter(Evidence.Kernel::nccl).toList();
            if (!k.isEmpty()) {
                // The example is a kernel with a duration (a trace's) where there is one; a log's launch line has none.
                Evidence.Kernel first =
                        k.stream().filter(x -> x.durUs() != null).findFirst().orElse(k.get(0));
                parts.add(String.format(
                        Locale.ROOT,
                        "%d NCCL kernel(s) in the profiled steps, e.g. %s on rank %s: %s µs, grid %s, block %s (%s).",
                        k.size(),
                        first.name(),
                        first.rank(),
                        first.durUs() == null ? "?" : first.durUs().toPlainString(),
                        first.grid() == null ? "?" : Arrays.toString(first.grid()),
                        first.block() == null ? "?" : Arrays.toString(first.block()),
                        first.source()));
                parts.add(
                        onHostClock == 0
                                ? "Their trace has no offset to the host clock (no baseTimeNanoseconds), so they are not drawn."
                                : String.format(
                                        Locale.ROOT,
                                        "%d of them on the host clock, %d drawn in this iteration.",
                                        onHostClock,
                                        drawn));
            }
        }
        if (e.ranges() != null) {
            List<Evidence.Range> g = e.ranges().stream()
                    .filter(r -> r.name() != null
                            && (r.name().startsWith("gloo:") || r.name().startsWith("nccl:")))
                    .toList();
            if (!g.isEmpty()) {
                double medUs = median(g.stream()
                        .filter(r -> r.durNs() != null)
                        .mapToDouble(r -> r.durNs() / 1000.0)
                        .sorted()
                        .toArray());
                parts.add(String.format(
                        Locale.ROOT,
                        "%d collective range(s) in the profiled steps (%s), median %.1f µs (%s).",
                        g.size(),
                        g.get(0).name(),
                        medUs,
                        g.get(0).source()));
            }
        }
        if (parts.isEmpty()) {
            parts.add("No NCCL kernel in the trace (gloo, or one rank: a copy).");
        }
        return String.join(" ", parts);
    }
}

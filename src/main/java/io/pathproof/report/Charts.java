package io.pathproof.report;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.evidence.Evidence;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/** The numbers behind the charts: step-time series and statistics per run, and the SVG timeline of one iteration. */
final class Charts {
  private Charts() {}

  /** Measured step times of a run: count, median with a 95 % bootstrap interval, 5th and 95th percentile. */
  record Stats(int n, double median, double ciLow, double ciHigh, double p5, double p95) {}

  static double[] measured(Evidence e) {
    if (e == null || e.steps() == null) {
      return new double[0];
    }
    return e.steps().stream().filter(Evidence.Step::measured).mapToDouble(Evidence.Step::ms).sorted().toArray();
  }

  static Stats stats(Evidence e) {
    double[] x = measured(e);
    if (x.length == 0) {
      return new Stats(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }
    // Percentile bootstrap of the median, fixed seed: the page shows the same interval each time it is made.
    Random r = new Random(20261202L);
    int b = 1000;
    double[] med = new double[b];
    double[] tmp = new double[x.length];
    for (int i = 0; i < b; i++) {
      for (int j = 0; j < x.length; j++) {
        tmp[j] = x[r.nextInt(x.length)];
      }
      Arrays.sort(tmp);
      med[i] = median(tmp);
    }
    Arrays.sort(med);
    return new Stats(x.length, median(x), med[(int) (0.025 * (b - 1))], med[(int) Math.ceil(0.975 * (b - 1))], pct(x, 0.05), pct(x, 0.95));
  }

  static double median(double[] sorted) {
    int n = sorted.length;
    if (n == 0) {
      return Double.NaN;
    }
    return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  }

  private static double pct(double[] sorted, double q) {
    double pos = q * (sorted.length - 1);
    int lo = (int) Math.floor(pos);
    int hi = (int) Math.ceil(pos);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
  }

  /** {"runs": {label: {"perIteration": [median over ranks], "quantile": [all measured, sorted]}}}. */
  static String stepData(Report.Source s) {
    ObjectNode root = Json.mapper().createObjectNode();
    ObjectNode runs = root.putObject("runs");
    for (Map.Entry<String, Evidence> en : s.runs().entrySet()) {
      Evidence e = en.getValue();
      ObjectNode r = runs.putObject(en.getKey());
      ArrayNode per = r.putArray("perIteration");
      TreeMap<Integer, List<Double>> byIter = new TreeMap<>();
      if (e.steps() != null) {
        for (Evidence.Step st : e.steps()) {
          if (st.measured()) {
            byIter.computeIfAbsent(st.iteration(), k -> new ArrayList<>()).add(st.ms());
          }
        }
      }
      byIter.values().forEach(l -> per.add(round(median(l.stream().mapToDouble(Double::doubleValue).sorted().toArray()))));
      ArrayNode q = r.putArray("quantile");
      for (double d : measured(e)) {
        q.add(round(d));
      }
    }
    return root.toString();
  }

  private static double round(double d) {
    return Math.round(d * 1000.0) / 1000.0;
  }

  private static final String[] BUCKET_COLORS = {"#0969da", "#8250df", "#bf8700", "#1a7f37", "#cf222e", "#0550ae", "#953800"};

  /**
   * One iteration (the last measured one that every rank recorded), one lane per rank: each bucket's comm hook from
   * ready (hook entry) to future done, then to GPU done where the run has CUDA events, on the host clock of the ranks
   * (one machine here). NCCL kernels and gloo ranges from the profiler are listed with their own clock, which the
   * harness does not tie to the host clock, so they are not drawn against it.
   */
  static String timelineSvg(Evidence e) {
    if (e == null || e.ddp() == null || e.ddp().buckets() == null || e.ddp().buckets().isEmpty()) {
      return "<p>No comm-hook records in this run: the timeline cannot be drawn.</p>";
    }
    List<Evidence.BucketRecord> all = e.ddp().buckets();
    TreeSet<Integer> ranks = all.stream().map(Evidence.BucketRecord::rank).collect(Collectors.toCollection(TreeSet::new));
    Integer iter = null;
    TreeMap<Integer, java.util.Set<Integer>> ranksByIter = new TreeMap<>();
    for (Evidence.BucketRecord br : all) {
      ranksByIter.computeIfAbsent(br.iteration(), k -> new TreeSet<>()).add(br.rank());
    }
    for (Map.Entry<Integer, java.util.Set<Integer>> en : ranksByIter.descendingMap().entrySet()) {
      if (en.getValue().containsAll(ranks)) {
        iter = en.getKey();
        break;
      }
    }
    if (iter == null) {
      return "<p>No iteration was recorded by every rank: the timeline cannot be drawn.</p>";
    }
    final int it = iter;
    List<Evidence.BucketRecord> recs = all.stream().filter(b -> b.iteration() == it && b.readyNs() != null).toList();
    long t0 = recs.stream().mapToLong(Evidence.BucketRecord::readyNs).min().orElse(0);
    long t1 = recs.stream().mapToLong(b -> Math.max(b.readyNs(), Math.max(b.futureDoneNs() == null ? 0 : b.futureDoneNs(),
        b.gpuDoneNs() == null ? 0 : b.gpuDoneNs()))).max().orElse(t0 + 1);
    double span = Math.max(1, t1 - t0);
    int left = 90;
    int width = 1000;
    int lane = 34;
    int top = 24;
    int height = top + lane * ranks.size() + 40;
    double px = (width - left - 20) / span;
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "<p>Iteration %d of the %s run: each bar is one bucket's comm hook, from the moment the Reducer hands it over "
        + "(ready) to the Future's completion; a lighter tail runs on to GPU completion where CUDA events exist. Time 0 is the first ready "
        + "of any rank (%.3f ms shown; host clock of the ranks).</p>", it, "measured", span / 1e6));
    b.append("<svg id=\"timeline-svg\" xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(width).append("\" height=\"").append(height)
        .append("\" viewBox=\"0 0 ").append(width).append(' ').append(height).append("\" role=\"img\" aria-label=\"per-rank timeline\">");
    for (int k = 0; k <= 4; k++) {
      double x = left + (width - left - 20) * k / 4.0;
      b.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#d0d7de\"/>", x, top - 6, x, height - 30));
      b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%.3f ms</text>", x, height - 14, span / 1e6 * k / 4));
    }
    int row = 0;
    for (int rank : ranks) {
      int y = top + row * lane;
      b.append(String.format(Locale.ROOT, "<text x=\"4\" y=\"%d\">rank %d</text>", y + 18, rank));
      for (Evidence.BucketRecord br : recs) {
        if (br.rank() != rank) {
          continue;
        }
        String color = BUCKET_COLORS[Math.floorMod(br.index(), BUCKET_COLORS.length)];
        double x0 = left + (br.readyNs() - t0) * px;
        long done = br.futureDoneNs() == null ? br.readyNs() : br.futureDoneNs();
        double w = Math.max(1.5, (done - br.readyNs()) * px);
        String tip = String.format(Locale.ROOT, "bucket %d, %d bytes, %s: ready → future done %.3f ms", br.index(), br.bytes(),
            String.join(" ", br.params()), (done - br.readyNs()) / 1e6);
        b.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"22\" fill=\"%s\"><title>%s</title></rect>",
            x0, y + 4, w, color, Esc.html(tip)));
        if (br.gpuDoneNs() != null && br.gpuDoneNs() > done) {
          b.append(String.format(Locale.ROOT, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"22\" fill=\"%s\" fill-opacity=\"0.35\"><title>%s</title></rect>",
              x0 + w, y + 4, Math.max(1.5, (br.gpuDoneNs() - done) * px), color,
              Esc.html(String.format(Locale.ROOT, "bucket %d: future done → GPU done %.3f ms", br.index(), (br.gpuDoneNs() - done) / 1e6))));
        }
        b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" fill=\"#fff\">%d</text>", x0 + 3, y + 19, br.index()));
      }
      row++;
    }
    b.append("</svg>");
    b.append("<p class=\"small\">").append(Esc.html(stepsOf(e, it))).append(' ').append(Esc.html(collectivesOf(e)))
        .append(" The harness times the whole step (forward, backward, optimizer) but not the optimizer alone, so it has no bar of its own.</p>");
    return b.toString();
  }

  private static String stepsOf(Evidence e, int it) {
    if (e.steps() == null) {
      return "";
    }
    String s = e.steps().stream().filter(st -> st.iteration() == it).sorted((a, c) -> Integer.compare(a.rank(), c.rank()))
        .map(st -> String.format(Locale.ROOT, "rank %d %.3f ms", st.rank(), st.ms())).collect(Collectors.joining(", "));
    return s.isEmpty() ? "" : "Whole step " + it + ": " + s + ".";
  }

  private static String collectivesOf(Evidence e) {
    List<String> parts = new ArrayList<>();
    if (e.kernels() != null) {
      List<Evidence.Kernel> k = e.kernels().stream().filter(Evidence.Kernel::nccl).toList();
      if (!k.isEmpty()) {
        Evidence.Kernel first = k.get(0);
        parts.add(String.format(Locale.ROOT, "%d NCCL kernel(s) in the profiled steps, e.g. %s on rank %s: %s µs, grid %s, block %s (%s).",
            k.size(), first.name(), first.rank(), first.durUs() == null ? "?" : first.durUs().toPlainString(),
            first.grid() == null ? "?" : Arrays.toString(first.grid()), first.block() == null ? "?" : Arrays.toString(first.block()), first.source()));
      }
    }
    if (e.ranges() != null) {
      List<Evidence.Range> g = e.ranges().stream().filter(r -> r.name() != null && (r.name().startsWith("gloo:") || r.name().startsWith("nccl:"))).toList();
      if (!g.isEmpty()) {
        double medUs = median(g.stream().filter(r -> r.durNs() != null).mapToDouble(r -> r.durNs() / 1000.0).sorted().toArray());
        parts.add(String.format(Locale.ROOT, "%d collective range(s) in the profiled steps (%s), median %.1f µs (%s).", g.size(), g.get(0).name(), medUs,
            g.get(0).source()));
      }
    }
    if (parts.isEmpty()) {
      parts.add("No NCCL kernel in the trace (gloo, or one rank: a copy).");
    }
    return String.join(" ", parts);
  }
}

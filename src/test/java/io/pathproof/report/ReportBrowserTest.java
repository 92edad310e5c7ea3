package io.pathproof.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * report.html in a real browser (Debian's chromium, headless), made from the committed H200 sample with a script
 * payload planted in a line of its NCCL log: the page renders, both charts paint their canvas and the timeline is SVG,
 * no script error and no blocked request is recorded, and the payload is shown as text, never run.
 */
class ReportBrowserTest {
    static final String PAYLOAD = "<script>document.body.setAttribute('data-pwned','script')</script>"
            + "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">";

    /** The committed sample's run, copied, with one NCCL WARN line carrying the payload. */
    static Path plantedRun(Path tmp, String name) throws Exception {
        Path src = Path.of("samples/h200-1rank-accepted/run");
        Path dst = tmp.resolve(name);
        ReportTest.copyTree(src, dst);
        Files.writeString(
                dst.resolve("nccl-rank0.log"),
                "vm:520:520 [0] enqueue.cc:1 NCCL WARN " + PAYLOAD + "\n",
                StandardCharsets.UTF_8,
                StandardOpenOption.APPEND);
        return dst;
    }

    /**
     * The committed emulated 4-rank H200 sample's run, copied, with rank 0's NCCL kernels renamed to carry a script
     * (the trace is JSON, so the payload has no double quote): a kernel name from evidence must reach the page as text.
     */
    static Path plantedKernelRun(Path tmp) throws Exception {
        Path src = Path.of("samples/emulated-h200-x4/run");
        Path dst = tmp.resolve("emulated");
        Files.createDirectories(dst);
        try (Stream<Path> l = Files.list(src)) {
            for (Path p : l.toList()) {
                Files.copy(p, dst.resolve(p.getFileName().toString()));
            }
        }
        Path trace = dst.resolve("trace-rank0.json.gz");
        String json;
        try (var in = new java.util.zip.GZIPInputStream(Files.newInputStream(trace))) {
            json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String planted = json.replace("\"name\": \"ncclDevKernel_", "\"name\": \"ncclDevKernel_" + KERNEL_PAYLOAD);
        assertThat(planted).as("rank 0's trace has NCCL kernels to plant into").isNotEqualTo(json);
        try (var out = new java.util.zip.GZIPOutputStream(Files.newOutputStream(trace))) {
            out.write(planted.getBytes(StandardCharsets.UTF_8));
        }
        return dst;
    }

    static final String KERNEL_PAYLOAD = "<script>document.body.setAttribute('data-pwned','kernel')</script>";

    static int attr(String dom, String name) {
        Matcher m = Pattern.compile(name + "=\"(\\d+)\"").matcher(dom);
        assertThat(m.find())
                .as("attribute %s in the DOM after scripts ran", name)
                .isTrue();
        return Integer.parseInt(m.group(1));
    }

    @Test
    void rendersDrawsChartsMakesNoRequestAndShowsAPlantedScriptAsText(@TempDir Path tmp) throws Exception {
        Path chromium = Browser.require();
        Path base = plantedRun(tmp, "baseline");
        Path variant = plantedRun(tmp, "variant");
        Report.Source s = Report.load(List.of(Path.of("samples/h200-1rank-accepted/prediction.json"), base, variant));
        Path out = tmp.resolve("report");
        Path html = Report.write(s, out);
        String page = Files.readString(html);
        // Self-contained: nothing is loaded from anywhere (the only URLs are uPlot's SVG namespace strings, never
        // fetched).
        assertThat(page).doesNotContainPattern("(?i)(src|href)\\s*=\\s*[\"']?(https?:|//)");
        assertThat(page).contains("Content-Security-Policy");

        Browser.Rendered r = Browser.dumpDom(chromium, html, tmp);
        String dom = r.dom();
        assertThat(dom).as(r.log()).contains("id=\"verdict\"");
        assertThat(attr(dom, "data-charts-drawn")).isEqualTo(2);
        assertThat(attr(dom, "data-canvas-painted")).as("painted canvas pixels").isGreaterThan(1000);
        assertThat(attr(dom, "data-svg-shapes")).as("timeline SVG shapes").isGreaterThan(3);
        assertThat(attr(dom, "data-backward-ranks"))
                .as("a GPU sample recorded without phase boundaries has no backward bar")
                .isZero();
        Matcher errors = Pattern.compile("id=\"page-errors\" data-count=\"(\\d+)\">([^<]*)<")
                .matcher(dom);
        assertThat(errors.find()).isTrue();
        assertThat(errors.group(1))
                .as("errors and blocked requests recorded by the page: %s", errors.group(2))
                .isEqualTo("0");
        assertThat(r.log()).doesNotContainPattern("CONSOLE.*(Uncaught|Error|Refused)");
        // The payload: present as text, never executed, no element of its own.
        assertThat(dom).as("an attribute set by the payload").doesNotContain("data-pwned=\"");
        assertThat(dom).contains("&lt;script&gt;document.body.setAttribute");
        assertThat(Files.readString(out.resolve("report.md"))).doesNotContain("<script>document");
        assertThat(Files.readString(out.resolve("report.junit.xml"))).doesNotContain("<script>");
    }

    /** A real two-rank gloo run recorded with phase boundaries: the browser draws a backward and an optimizer bar per rank. */
    @Test
    void theTimelineDrawsBackwardAndOptimizerBarsForEachRank(@TempDir Path tmp) throws Exception {
        Path chromium = Browser.require();
        Path html = Report.write(Report.load(List.of(ReportTest.GLOO_PHASES)), tmp.resolve("report"));
        Browser.Rendered r = Browser.dumpDom(chromium, html, tmp);
        String dom = r.dom();
        assertThat(attr(dom, "data-backward-ranks")).as(r.log()).isEqualTo(2);
        assertThat(attr(dom, "data-optimizer-ranks")).as(r.log()).isEqualTo(2);
        assertThat(attr(dom, "data-phase-labels-outside"))
                .as("phase labels drawn outside the chart")
                .isZero();
        assertThat(attr(dom, "data-phase-labels-overlapping"))
                .as("phase labels drawn over each other")
                .isZero();
        Matcher errors = Pattern.compile("id=\"page-errors\" data-count=\"(\\d+)\">([^<]*)<")
                .matcher(dom);
        assertThat(errors.find()).isTrue();
        assertThat(errors.group(1))
                .as("errors recorded by the page: %s", errors.group(2))
                .isEqualTo("0");
    }

    @Test
    void theTimelineDrawsTheNcclKernelsOfAGpuSampleUnderEachRank(@TempDir Path tmp) throws Exception {
        Path chromium = Browser.require();
        Path run = plantedKernelRun(tmp);
        Report.Source s = Report.load(List.of(Path.of("samples/emulated-h200-x4/prediction.json"), run));
        Path html = Report.write(s, tmp.resolve("report"));
        String page = Files.readString(html);
        // One kernel span per rank at least: the sample's 4 ranks each have an NCCL kernel in the profiled iterations.
        Matcher spans = Pattern.compile("<rect class=\"nccl-kernel\" x=\"([\\d.]+)\" y=\"(\\d+)\" width=\"([\\d.]+)\"")
                .matcher(page);
        java.util.Set<String> rows = new java.util.TreeSet<>();
        while (spans.find()) {
            assertThat(Double.parseDouble(spans.group(1)))
                    .as("a span starts inside the chart")
                    .isBetween(90.0, 980.0);
            rows.add(spans.group(2));
        }
        assertThat(rows).as("kernel rows (one per rank)").hasSize(4);
        assertThat(page).contains("baseTimeNanoseconds");

        Browser.Rendered r = Browser.dumpDom(chromium, html, tmp);
        String dom = r.dom();
        assertThat(attr(dom, "data-kernel-spans")).as(r.log()).isGreaterThanOrEqualTo(4);
        assertThat(dom).as("the planted kernel name did not run").doesNotContain("data-pwned=\"");
        assertThat(dom).contains("ncclDevKernel_&lt;script&gt;document.body.setAttribute");
        Matcher errors = Pattern.compile("id=\"page-errors\" data-count=\"(\\d+)\">([^<]*)<")
                .matcher(dom);
        assertThat(errors.find()).isTrue();
        assertThat(errors.group(1))
                .as("errors recorded by the page: %s", errors.group(2))
                .isEqualTo("0");
    }

    /**
     * Under load the ranks drift apart, so one rank's optimizer can end a little before the chart's right edge: its label
     * then goes after the bar, and must still end inside the chart in the browser's own font. Rank 1's last optimizer is
     * moved to end 2 … 8 % of the span before the latest event, as a busy machine left it in a live prove.
     */
    @Test
    void aPhaseLabelNearTheRightEdgeStaysInsideTheChart(@TempDir Path tmp) throws Exception {
        Path chromium = Browser.require();
        for (double back : new double[] {0.02, 0.050, 0.054, 0.058, 0.08}) {
            Path run = tmp.resolve("run-" + back);
            ReportTest.copyTree(ReportTest.GLOO_PHASES, run);
            var m = io.pathproof.core.Json.mapper();
            List<com.fasterxml.jackson.databind.node.ObjectNode> rows = new java.util.ArrayList<>();
            for (String line : Files.readAllLines(run.resolve("steps-rank1.jsonl"))) {
                rows.add((com.fasterxml.jackson.databind.node.ObjectNode) m.readTree(line));
            }
            var last = rows.get(rows.size() - 1);
            int it = last.get("iteration").asInt();
            long t0 = Long.MAX_VALUE;
            long t1 = Long.MIN_VALUE;
            for (String f : List.of("steps-rank0.jsonl", "steps-rank1.jsonl")) {
                for (String line : Files.readAllLines(run.resolve(f))) {
                    var n = m.readTree(line);
                    if (n.get("iteration").asInt() == it) {
                        t0 = Math.min(t0, n.get("hostBackwardStartNs").asLong());
                        t1 = Math.max(t1, n.get("hostOptimizerEndNs").asLong());
                    }
                }
            }
            long span = t1 - t0;
            long end = t1 - (long) (back * span);
            long start = end - span / 500;
            last.put("hostOptimizerEndNs", end)
                    .put("hostOptimizerStartNs", start)
                    .put(
                            "hostBackwardEndNs",
                            Math.min(last.get("hostBackwardEndNs").asLong(), start));
            StringBuilder out = new StringBuilder();
            for (var r : rows) {
                out.append(m.writeValueAsString(r)).append('\n');
            }
            Files.writeString(run.resolve("steps-rank1.jsonl"), out);
            Path html = Report.write(Report.load(List.of(run)), tmp.resolve("report-" + back));
            Browser.Rendered r = Browser.dumpDom(chromium, html, tmp);
            assertThat(attr(r.dom(), "data-optimizer-ranks")).as(r.log()).isEqualTo(2);
            assertThat(attr(r.dom(), "data-phase-labels-outside"))
                    .as("labels outside the chart, rank 1's optimizer ending %.0f %% early", back * 100)
                    .isZero();
            assertThat(attr(r.dom(), "data-phase-labels-overlapping")).isZero();
        }
    }

    /**
     * The emulated H200 prove recorded on the GPU (samples/emulated-h200-x4-proven): each of its 4 ranks has a backward
     * and an optimizer bar (host issue, the optimizer a sliver right after backward) and an NCCL kernel under its hooks,
     * and no label is drawn over another or out of the chart.
     */
    @Test
    void theEmulatedProveSampleShowsHostIssueBarsAndKernelsForEveryRank(@TempDir Path tmp) throws Exception {
        Path chromium = Browser.require();
        Path html =
                Report.write(Report.load(List.of(Path.of("samples/emulated-h200-x4-proven"))), tmp.resolve("report"));
        Browser.Rendered r = Browser.dumpDom(chromium, html, tmp);
        String dom = r.dom();
        assertThat(attr(dom, "data-backward-ranks")).as(r.log()).isEqualTo(4);
        assertThat(attr(dom, "data-optimizer-ranks")).isEqualTo(4);
        assertThat(attr(dom, "data-kernel-spans")).isGreaterThanOrEqualTo(4);
        assertThat(attr(dom, "data-phase-labels-outside")).isZero();
        assertThat(attr(dom, "data-phase-labels-overlapping")).isZero();
        assertThat(dom).contains(">host issue</text>", "emulated: NCCL decisions real, timings not physical");
    }
}

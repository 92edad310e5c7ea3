package io.pathproof.report;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 19 §4: a report that leads with the proof. One median per run wherever the page gives one (the step table,
 * the charts' legends, the comparison, the fix, the diagnosis); the proof's sections first and the recorded GPU
 * samples collapsed at the end, so the first chart is on the first screen; numbers never wrapped digit by digit;
 * legends that say each run's median instead of "--".
 */
class ReportLayoutTest {
    /** A copy of the two-rank gloo run with every step time of rank {@code slowRank} scaled by {@code factor}. */
    static Path scaled(Path dst, double factor, int slowRank) throws Exception {
        ReportTest.copyTree(ReportTest.GLOO_PHASES, dst);
        for (int r = 0; r < 2; r++) {
            Path f = dst.resolve("steps-rank" + r + ".jsonl");
            StringBuilder out = new StringBuilder();
            for (String line : Files.readAllLines(f)) {
                ObjectNode n = (ObjectNode) Json.mapper().readTree(line);
                double k = r == slowRank ? factor : factor * 0.8;
                n.put("ms", n.get("ms").asDouble() * k);
                out.append(Json.mapper().writeValueAsString(n)).append('\n');
            }
            Files.writeString(f, out);
        }
        Path m = dst.resolve("manifest.json");
        Files.writeString(
                m, Files.readString(m).replaceFirst("\"start\"\\s*:\\s*\"", "\"start\": \"" + dst.getFileName() + "-"));
        return dst;
    }

    /** A prove directory of three runs whose ranks differ, with the diagnosis and verify-fix made as prove makes them. */
    static Path proof(Path dir) throws Exception {
        Map<String, Evidence> runs = new LinkedHashMap<>();
        runs.put("baseline", Ingest.read(List.of(scaled(dir.resolve("baseline"), 1.0, 0))));
        runs.put("variant", Ingest.read(List.of(scaled(dir.resolve("variant"), 1.6, 1))));
        runs.put("fixed", Ingest.read(List.of(scaled(dir.resolve("fixed"), 1.02, 1))));
        Files.writeString(
                dir.resolve("diagnosis.json"),
                Diagnosis.render(Diagnosis.diagnose(runs.get("baseline"), runs.get("variant")), "json"));
        Files.writeString(
                dir.resolve("verify-fix.json"),
                Diagnosis.render(
                        Diagnosis.verifyFix(runs.get("baseline"), runs.get("variant"), runs.get("fixed")), "json"));
        ObjectNode proof = Json.mapper().createObjectNode();
        proof.put("schema", "pathproof.proof/1");
        proof.put("verdict", "PROVEN");
        ObjectNode files = proof.putObject("files");
        for (String r : runs.keySet()) {
            files.put(r, r);
        }
        files.put("diagnosis", "diagnosis.json");
        files.put("verifyFix", "verify-fix.json");
        Files.writeString(dir.resolve("proof.json"), proof.toString());
        return dir;
    }

    static String f3(double d) {
        return String.format(Locale.ROOT, "%.3f", d);
    }

    @Test
    void everyMedianOfARunOnThePageIsTheOneMedianOfThatRun(@TempDir Path tmp) throws Exception {
        Path dir = proof(tmp.resolve("proof"));
        Report.Source s = Report.load(List.of(dir));
        String page = Files.readString(Report.write(s, tmp.resolve("out")));
        Map<String, String> median = new LinkedHashMap<>();
        for (String run : List.of("baseline", "variant", "fixed")) {
            median.put(
                    run,
                    f3(Diagnosis.stepTimes(Ingest.read(List.of(dir.resolve(run))))
                            .median()));
        }
        // The step table.
        for (String run : median.keySet()) {
            Matcher m = Pattern.compile("<tr id=\"steps-" + run + "\"><td>" + run
                            + "</td><td[^>]*>\\d+</td><td[^>]*>([\\d.]+)</td>")
                    .matcher(page);
            assertThat(m.find()).as("a step-table row for %s", run).isTrue();
            assertThat(m.group(1)).as("the table's median of %s", run).isEqualTo(median.get(run));
        }
        // The charts' data (their legends say it).
        JsonNode data = Json.mapper()
                .readTree(between(page, "<script type=\"application/json\" id=\"chart-data\">", "</script>"));
        for (String run : median.keySet()) {
            assertThat(f3(data.at("/runs/" + run + "/median").asDouble()))
                    .as("the chart's median of %s", run)
                    .isEqualTo(median.get(run));
        }
        // The comparison under the table, the fix line, the diagnosis walk and every "step median" the page quotes.
        assertThat(page)
                .contains(
                        "Variant / baseline: median " + median.get("baseline") + " → " + median.get("variant") + " ms");
        assertThat(page).contains("Fixed median " + median.get("fixed") + " ms");
        Matcher quoted = Pattern.compile("step median ([\\d.]+) → ([\\d.]+) ms").matcher(page);
        int n = 0;
        while (quoted.find()) {
            assertThat(quoted.group(1)).isEqualTo(median.get("baseline"));
            assertThat(quoted.group(2)).isEqualTo(median.get("variant"));
            n++;
        }
        assertThat(n).as("the diagnosis quotes the step medians").isPositive();
        Matcher fixedQuoted =
                Pattern.compile("step median ([\\d.]+) ms is (above|below)").matcher(page);
        while (fixedQuoted.find()) {
            assertThat(fixedQuoted.group(1)).isEqualTo(median.get("fixed"));
        }
        // No second step figure per rank: the machine-load lines give waits and CPU, not a per-rank wall median.
        assertThat(page).doesNotContain("per rank and step: wall");
    }

    @Test
    void anInconclusiveProofSaysSoAndClaimsNeitherPassNorFailure(@TempDir Path tmp) throws Exception {
        Path dir = proof(tmp.resolve("proof"));
        ObjectNode proof =
                (ObjectNode) Json.mapper().readTree(dir.resolve("proof.json").toFile());
        proof.put("verdict", "INCONCLUSIVE");
        ObjectNode reveal = proof.putObject("reveal");
        reveal.putObject("injected")
                .put("kind", "compute slowdown")
                .put("layer", "compute")
                .putArray("settings")
                .add("compute_delay_ms=40");
        reveal.putObject("diagnosed").put("conclusion", "inconclusive").put("layer", "none");
        reveal.put("match", false).put("fixed", false).put("fixVerdict", "not tried");
        Files.writeString(dir.resolve("proof.json"), proof.toString());
        Path out = tmp.resolve("out");
        String page = Files.readString(Report.write(Report.load(List.of(dir)), out));
        assertThat(page)
                .contains(
                        "class=\"verdict undecided\" id=\"verdict\">INCONCLUSIVE",
                        "The diagnosis is inconclusive",
                        "not tried (nothing was diagnosed)")
                .doesNotContain("does NOT name the injected layer");
        String junit = Files.readString(out.resolve("report.junit.xml"));
        String prove = junit.substring(junit.indexOf("<testsuite name=\"prove\""));
        assertThat(prove).contains("<skipped message=\"inconclusive: ").doesNotContain("<failure");
        assertThat(Files.readString(out.resolve("report.md"))).contains("fix not tried (nothing diagnosed)");
    }

    /** samples/emulated-h200-x4-proven with five recorded GPU samples added, as a CPU prove shows them. */
    static Path withRecordedSamples(Path dst) throws Exception {
        ReportTest.copyTree(Path.of("samples/emulated-h200-x4-proven"), dst);
        ObjectNode proof =
                (ObjectNode) Json.mapper().readTree(dst.resolve("proof.json").toFile());
        JsonNode acceptance =
                Json.mapper().readTree(dst.resolve("acceptance.json").toFile());
        ArrayNode recorded = proof.putArray("recorded");
        for (int i = 0; i < 5; i++) {
            ObjectNode r = recorded.addObject();
            r.put("name", "sample-" + i);
            r.put("label", "recorded on 2026-12-02 on GPU");
            r.put("device", "NVIDIA H200");
            r.put("verdict", acceptance.path("verdict").asText());
            r.set("acceptance", acceptance);
        }
        Files.writeString(dst.resolve("proof.json"), Json.mapper().writeValueAsString(proof));
        return dst;
    }

    @Test
    void theProofComesFirstAndTheRecordedSamplesLastAndCollapsed(@TempDir Path tmp) throws Exception {
        Path dir = withRecordedSamples(tmp.resolve("proof"));
        String page = Files.readString(Report.write(Report.load(List.of(dir)), tmp.resolve("out")));
        List<Integer> at = new ArrayList<>();
        for (String id : List.of(
                "id=\"verdict\"",
                "id=\"reveal\"",
                "id=\"timeline\"",
                "id=\"steps\"",
                "id=\"diagnosis\"",
                "id=\"acceptance\"",
                "id=\"recorded\"")) {
            assertThat(page).contains(id);
            at.add(page.indexOf(id));
        }
        assertThat(at)
                .as("verdict, reveal, timeline, steps, diagnosis, acceptance, recorded samples: in that order")
                .isSorted();
        String recorded = page.substring(page.indexOf("id=\"recorded\""));
        assertThat(recorded.split("<details class=\"recorded\">", -1)).hasSize(6);
        assertThat(recorded).doesNotContain("<details class=\"recorded\" open");
        assertThat(recorded.indexOf("<table>")).isGreaterThan(recorded.indexOf("<details class=\"recorded\">"));
    }

    /** Measures what a reader sees, from outside the page: appended after the page's own scripts, in the browser. */
    static final String MEASURE = "<script>(function(){"
            + "function top(e){var r=e.getBoundingClientRect();return Math.round(r.top+window.scrollY);}"
            + "var charts=[].slice.call(document.querySelectorAll('#timeline-svg, .uplot'));"
            + "document.body.setAttribute('data-test-first-chart-top',String(charts.length?Math.min.apply(null,charts.map(top)):-1));"
            + "var cells=0,wrapped=0;document.querySelectorAll('td').forEach(function(td){var x=td.textContent.trim();"
            + "if(/^[-+]?\\d[\\d.,]*(\\s?(ms|%|s))?( \\.\\. [-+]?\\d[\\d.,]*)?$/.test(x)){cells++;var r=document.createRange();r.selectNodeContents(td);"
            + "var tops={};[].forEach.call(r.getClientRects(),function(q){if(q.width>0){tops[Math.round(q.top)]=1;}});"
            + "if(Object.keys(tops).length>1){wrapped++;}}});"
            + "document.body.setAttribute('data-test-number-cells',String(cells));document.body.setAttribute('data-test-wrapped-numbers',String(wrapped));"
            + "var lg=[].map.call(document.querySelectorAll('.u-legend'),function(l){return l.textContent;}).join(' | ');"
            + "document.body.setAttribute('data-test-legends',lg.replace(/[\"<>&]/g,' '));"
            + "})();</script>";

    static Path measured(Path html) throws Exception {
        String page = Files.readString(html);
        Path out = html.resolveSibling("measured.html");
        Files.writeString(out, page.replace("</body>", MEASURE + "</body>"));
        return out;
    }

    static String attr(String dom, String name) {
        Matcher m = Pattern.compile(name + "=\"([^\"]*)\"").matcher(dom);
        assertThat(m.find())
                .as("attribute %s in the DOM after scripts ran", name)
                .isTrue();
        return m.group(1);
    }

    @Test
    void inChromiumTheFirstChartIsOnTheFirstScreenNoNumberWrapsAndLegendsSayTheMedians(@TempDir Path tmp)
            throws Exception {
        Path chromium = Browser.require();
        Path html = Report.write(Report.load(List.of(withRecordedSamples(tmp.resolve("proof")))), tmp.resolve("out"));
        Path page = measured(html);
        Browser.Rendered r = Browser.dumpDom(chromium, page, tmp);
        String dom = r.dom();
        int top = Integer.parseInt(attr(dom, "data-test-first-chart-top"));
        assertThat(top)
                .as("the first chart's top, in px from the top of the page: %s", r.log())
                .isBetween(0, 2000);
        assertThat(Integer.parseInt(attr(dom, "data-test-number-cells")))
                .as("table cells holding a number")
                .isGreaterThan(40);
        assertThat(Integer.parseInt(attr(dom, "data-test-wrapped-numbers")))
                .as("numbers wrapped inside their cell")
                .isZero();
        String legends = attr(dom, "data-test-legends");
        assertThat(legends)
                .as("the charts' legends")
                .contains("baseline: median ", "variant: median ", "fixed: median ")
                .doesNotContain("--");

        // The same first 2 000 px as a reader's window shows them: the timeline's first bucket colour (#0969da) is
        // there.
        Path png = tmp.resolve("first-screen.png");
        Browser.screenshot(chromium, html, png, tmp, 1280, 2000);
        BufferedImage img = ImageIO.read(png.toFile());
        assertThat(img.getHeight()).isEqualTo(2000);
        int chartPixels = 0;
        for (int y = 0; y < img.getHeight(); y++) {
            for (int x = 0; x < img.getWidth(); x++) {
                if ((img.getRGB(x, y) & 0xFFFFFF) == 0x0969DA) {
                    chartPixels++;
                }
            }
        }
        assertThat(chartPixels)
                .as("pixels of the charts' first colour in the first 2 000 px")
                .isGreaterThan(500);
    }

    static String between(String s, String a, String b) {
        int i = s.indexOf(a) + a.length();
        return s.substring(i, s.indexOf(b, i));
    }
}

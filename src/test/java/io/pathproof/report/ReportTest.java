package io.pathproof.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.cli.Main;
import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The report without a browser: escaping in every format, the files written, bad input as one line and exit 3. */
class ReportTest {
    @Test
    void jsonInAScriptElementCannotCloseIt() {
        String j = Esc.scriptJson("{\"a\":\"</script><script>alert(1)</script><!--\"}");
        assertThat(j).doesNotContain("<").doesNotContain(">").contains("\\u003c/script\\u003e");
        assertThat(Esc.html("<b a=\"x\">&'")).isEqualTo("&lt;b a=&quot;x&quot;&gt;&amp;&#39;");
        assertThat(Esc.md("a|b\n<i>")).isEqualTo("a\\|b &lt;i&gt;");
        assertThat(Esc.xml("\u0001<x>")).isEqualTo("\uFFFD&lt;x&gt;");
    }

    @Test
    void writesFourFilesWithThePlantedPayloadAsTextEverywhere(@TempDir Path tmp) throws Exception {
        Path base = ReportBrowserTest.plantedRun(tmp, "baseline");
        Report.Source s = Report.load(List.of(Path.of("samples/h200-1rank-accepted/prediction.json"), base));
        Path html = Report.write(s, tmp.resolve("out"));
        String page = Files.readString(html);
        assertThat(page).doesNotContain(ReportBrowserTest.PAYLOAD).contains("&lt;script&gt;document.body");
        assertThat(page)
                .contains(
                        "id=\"acceptance\"",
                        "id=\"timeline-svg\"",
                        "id=\"callgraph\"",
                        "id=\"answers\"",
                        "id=\"warnings\"");
        // The report reads its own paths relative to where it is written: no folder of this machine in it.
        assertThat(page).doesNotContain(tmp.toAbsolutePath().toString() + "/out/");
        assertThat(Files.readString(tmp.resolve("out/report.junit.xml")))
                .startsWith("<?xml")
                .contains("<testsuite name=\"acceptance\"");
        assertThat(Files.readString(tmp.resolve("out/report.json"))).contains("\"schema\" : \"pathproof.report/1\"");
        assertThat(Files.readString(tmp.resolve("out/report.md"))).contains("acceptance PASS");
    }

    /**
     * A run of {@code run -- COMMAND} alone: its own sealed prediction is accepted as {@code accept --run} does, and the
     * page carries the integrity summary under the table (each rank's files, gaps, later DDP sessions).
     */
    @Test
    void aRunAloneIsAcceptedAgainstItsOwnPredictionWithItsIntegrity(@TempDir Path tmp) throws Exception {
        Report.Source s = Report.load(List.of(Path.of("samples/emulated-h200-x4-own-job-no-hook/run")));
        Report.write(s, tmp.resolve("out"));
        assertThat(Files.readString(tmp.resolve("out/report.md")))
                .contains("## Acceptance")
                .contains("- integrity: 4 rank(s)");
        assertThat(Files.readString(tmp.resolve("out/report.html"))).contains("<ul class=\"integrity\"><li>integrity:");
    }

    static final Path GLOO_PHASES = Path.of("src/test/resources/io/pathproof/run/testdata/gloo2-phases");

    /** Rank of each drawn bar of a phase ({@code class="phase-backward" data-rank="0" x=...}), checked to lie in the chart. */
    static java.util.Set<Integer> phaseRanks(String page, String phase) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("<rect class=\"phase-" + phase
                        + "\" data-rank=\"(\\d+)\" x=\"([\\d.]+)\" y=\"\\d+\" width=\"([\\d.]+)\"")
                .matcher(page);
        java.util.Set<Integer> ranks = new java.util.TreeSet<>();
        while (m.find()) {
            double x = Double.parseDouble(m.group(2));
            assertThat(x).as("%s bar starts inside the chart", phase).isBetween(90.0, 980.0);
            assertThat(x + Double.parseDouble(m.group(3)))
                    .as("%s bar ends inside the chart", phase)
                    .isLessThanOrEqualTo(980.1);
            ranks.add(Integer.parseInt(m.group(1)));
        }
        return ranks;
    }

    @Test
    void aGlooRunWithPhaseBoundariesHasABackwardAndAnOptimizerBarPerRank(@TempDir Path tmp) throws Exception {
        Report.Source s = Report.load(List.of(GLOO_PHASES));
        String page = Files.readString(Report.write(s, tmp.resolve("out")));
        assertThat(phaseRanks(page, "backward")).containsExactly(0, 1);
        assertThat(phaseRanks(page, "optimizer")).containsExactly(0, 1);
        assertThat(page)
                .contains(">backward</text>", ">optimizer</text>", "the bars are the work itself")
                .doesNotContain("host issue");
    }

    @Test
    void onACudaRunThePhaseBarsSayHostIssue(@TempDir Path tmp) throws Exception {
        // The recorded gloo run with its rows marked as a CUDA harness marks them: the same boundaries, now issue
        // times.
        Path run = tmp.resolve("run");
        Files.createDirectories(run);
        try (var l = Files.list(GLOO_PHASES)) {
            for (Path p : l.toList()) {
                String t = Files.readString(p);
                Files.writeString(
                        run.resolve(p.getFileName().toString()),
                        t.replace("\"hostPhases\": \"work\"", "\"hostPhases\": \"issue\""));
            }
        }
        String page = Files.readString(Report.write(Report.load(List.of(run)), tmp.resolve("out")));
        assertThat(phaseRanks(page, "backward")).containsExactly(0, 1);
        assertThat(page)
                .contains(
                        ">host issue</text>",
                        "rank 0 backward (host issue): ",
                        "rank 1 optimizer (host issue): ",
                        "not GPU time")
                .doesNotContain("the work itself, on CPU");
    }

    @Test
    void aGpuSampleWithoutPhaseBoundariesStillRendersWithANoteAndNoBars(@TempDir Path tmp) throws Exception {
        Report.Source s = Report.load(List.of(
                Path.of("samples/h200-1rank-accepted/prediction.json"), Path.of("samples/h200-1rank-accepted/run")));
        String page = Files.readString(Report.write(s, tmp.resolve("out")));
        assertThat(page)
                .contains("id=\"timeline-svg\"", "carry no phase boundaries")
                .doesNotContain("class=\"phase-");
    }

    @Test
    void badInputIsOneLineNamingTheFileAndExit3(@TempDir Path tmp) throws Exception {
        Path junk = tmp.resolve("junk.json");
        Files.writeString(junk, "{\"schema\":\"something/1\"}");
        assertThatThrownBy(() -> Report.load(List.of(junk)))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("junk.json");
        Path broken = tmp.resolve("broken.json");
        Files.writeString(broken, "{ not json");
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int code = Main.run(
                new String[] {
                    "report", broken.toString(), "--out", tmp.resolve("r").toString()
                },
                new PrintWriter(o, true),
                new PrintWriter(e, true));
        assertThat(code).isEqualTo(ExitCode.BAD_INPUT);
        assertThat(e.toString().strip())
                .doesNotContain("\n")
                .contains("broken.json")
                .doesNotContain("Exception");
        assertThat(Main.run(
                        new String[] {"report", tmp.toString()}, new PrintWriter(o, true), new PrintWriter(e, true)))
                .isEqualTo(ExitCode.BAD_INPUT);
    }

    /** A/B/A/B: a prove that re-ran the baseline and then the fixed configuration shows all five runs, the deciding pair last. */
    @Test
    void aProveThatRanTheFixedConfigurationAgainShowsEveryRun(@TempDir Path tmp) throws Exception {
        Path dir = tmp.resolve("proof");
        List<String> labels = List.of("baseline", "variant", "fixed", "baselineAgain", "fixedAgain");
        var files = io.pathproof.core.Json.mapper().createObjectNode();
        for (String label : labels) {
            copyTree(GLOO_PHASES, dir.resolve(label));
            files.put(label, label);
        }
        var proof = io.pathproof.core.Json.mapper().createObjectNode();
        proof.put("schema", io.pathproof.proofdir.Proof.SCHEMA);
        proof.set("files", files);
        Files.writeString(dir.resolve("proof.json"), proof.toString());
        Report.Source s = Report.load(List.of(dir));
        assertThat(s.runs().keySet()).containsExactlyElementsOf(labels);
        String page = Files.readString(Report.write(s, tmp.resolve("out")));
        assertThat(page)
                .contains(
                        "<tr id=\"steps-fixedAgain\"><td>fixed again</td>",
                        "<tr id=\"steps-baselineAgain\"><td>baseline again</td>",
                        "(A/B/A/B); the last look decided",
                        "\"fixedAgain\":{\"role\":\"fixed\"");
    }

    /** {@code report samples/x}: a prove directory named by a relative path has its files cited relative to it too. */
    @Test
    void aProveDirectoryGivenRelativeIsCitedRelativeToItself() throws Exception {
        Path dir = Path.of("target", "report-relative", "proven");
        copyTree(Path.of("samples/emulated-h200-x4-proven"), dir);
        String page = Files.readString(Report.write(Report.load(List.of(dir)), dir));
        assertThat(page).contains("(baseline/trace-rank0.json#").doesNotContain("target/report-relative/");
    }

    /**
     * report.json carries each stage document as its file holds it: a file of an older writer of the same schema (this
     * prove recorded no backend choice, and its verify-fix no verdict) gains no null keys there.
     */
    @Test
    void reportJsonCarriesEachDocumentAsItsFileHoldsIt(@TempDir Path tmp) throws Exception {
        Path dir = Path.of("samples/emulated-h200-x4-prove");
        Report.write(Report.load(List.of(dir)), tmp);
        var json = io.pathproof.core.Json.mapper();
        var report = json.readTree(tmp.resolve("report.json").toFile());
        assertThat(report.get("proof"))
                .isEqualTo(json.readTree(dir.resolve("proof.json").toFile()));
        assertThat(report.get("proof").has("backendChoice")).isFalse();
        assertThat(report.get("verifyFix"))
                .isEqualTo(json.readTree(dir.resolve("verify-fix-again.json").toFile()));
        assertThat(report.get("verifyFix").has("verdict")).isFalse();
        assertThat(report.get("diagnosis"))
                .isEqualTo(json.readTree(dir.resolve("diagnosis.json").toFile()));
    }

    /** Copies a directory tree (a run or a prove directory) into {@code dst}, replacing what is there. */
    static void copyTree(Path src, Path dst) throws java.io.IOException {
        try (var w = Files.walk(src)) {
            for (Path p : w.toList()) {
                Path t = dst.resolve(src.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }
}

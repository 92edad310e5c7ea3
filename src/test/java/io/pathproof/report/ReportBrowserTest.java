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
    try (Stream<Path> w = Files.walk(src)) {
      for (Path p : w.toList()) {
        Path t = dst.resolve(src.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(t);
        } else {
          Files.copy(p, t);
        }
      }
    }
    Files.writeString(dst.resolve("nccl-rank0.log"), "vm:520:520 [0] enqueue.cc:1 NCCL WARN " + PAYLOAD + "\n", StandardCharsets.UTF_8,
        StandardOpenOption.APPEND);
    return dst;
  }

  static int attr(String dom, String name) {
    Matcher m = Pattern.compile(name + "=\"(\\d+)\"").matcher(dom);
    assertThat(m.find()).as("attribute %s in the DOM after scripts ran", name).isTrue();
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
    // Self-contained: nothing is loaded from anywhere (the only URLs are uPlot's SVG namespace strings, never fetched).
    assertThat(page).doesNotContainPattern("(?i)(src|href)\\s*=\\s*[\"']?(https?:|//)");
    assertThat(page).contains("Content-Security-Policy");

    Browser.Rendered r = Browser.dumpDom(chromium, html, tmp);
    String dom = r.dom();
    assertThat(dom).as(r.log()).contains("id=\"verdict\"");
    assertThat(attr(dom, "data-charts-drawn")).isEqualTo(2);
    assertThat(attr(dom, "data-canvas-painted")).as("painted canvas pixels").isGreaterThan(1000);
    assertThat(attr(dom, "data-svg-shapes")).as("timeline SVG shapes").isGreaterThan(3);
    Matcher errors = Pattern.compile("id=\"page-errors\" data-count=\"(\\d+)\">([^<]*)<").matcher(dom);
    assertThat(errors.find()).isTrue();
    assertThat(errors.group(1)).as("errors and blocked requests recorded by the page: %s", errors.group(2)).isEqualTo("0");
    assertThat(r.log()).doesNotContainPattern("CONSOLE.*(Uncaught|Error|Refused)");
    // The payload: present as text, never executed, no element of its own.
    assertThat(dom).as("an attribute set by the payload").doesNotContain("data-pwned=\"");
    assertThat(dom).contains("&lt;script&gt;document.body.setAttribute");
    assertThat(Files.readString(out.resolve("report.md"))).doesNotContain("<script>document");
    assertThat(Files.readString(out.resolve("report.junit.xml"))).doesNotContain("<script>");
  }
}

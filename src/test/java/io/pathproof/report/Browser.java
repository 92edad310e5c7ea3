package io.pathproof.report;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * Debian's chromium, headless, as the report's reader. Skips where no chromium is installed, except under
 * {@code PATHPROOF_REQUIRE_LIVE=1} (CI), where a missing browser fails the test.
 */
final class Browser {
    private Browser() {}

    /** What the browser made of a page: the DOM after its scripts ran, and the browser's own log. */
    record Rendered(String dom, String log) {}

    static Path require() {
        for (String dir : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            for (String name : List.of("chromium", "chromium-browser")) {
                Path p = Path.of(dir, name);
                if (Files.isExecutable(p)) {
                    return p;
                }
            }
        }
        if ("1".equals(System.getenv("PATHPROOF_REQUIRE_LIVE"))) {
            fail("PATHPROOF_REQUIRE_LIVE=1 but no chromium on PATH (.ci/run installs Debian's chromium)");
        }
        Assumptions.abort("no chromium on PATH: browser test skipped");
        return null;
    }

    private static List<String> base(Path exe, Path profile) {
        // No network of any kind: background services, component updates and sync are off, and the page's own CSP
        // forbids fetches (a blocked one is written into the page by its securitypolicyviolation listener).
        return new ArrayList<>(List.of(
                exe.toString(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-extensions",
                "--user-data-dir=" + profile,
                "--enable-logging=stderr",
                "--v=0",
                "--virtual-time-budget=10000"));
    }

    static Rendered dumpDom(Path exe, Path html, Path tmp) throws IOException, InterruptedException {
        List<String> cmd = base(exe, Files.createTempDirectory(tmp, "profile"));
        cmd.add("--dump-dom");
        cmd.add(html.toUri().toString());
        return run(cmd, tmp);
    }

    static Rendered screenshot(Path exe, Path html, Path png, Path tmp) throws IOException, InterruptedException {
        return screenshot(exe, html, png, tmp, 1280, 1600);
    }

    /** A screenshot of the page's first {@code height} px at {@code width} px wide, as a reader's window shows it. */
    static Rendered screenshot(Path exe, Path html, Path png, Path tmp, int width, int height)
            throws IOException, InterruptedException {
        List<String> cmd = base(exe, Files.createTempDirectory(tmp, "profile"));
        cmd.add("--hide-scrollbars");
        cmd.add("--window-size=" + width + "," + height);
        cmd.add("--screenshot=" + png);
        cmd.add(html.toUri().toString());
        return run(cmd, tmp);
    }

    private static Rendered run(List<String> cmd, Path tmp) throws IOException, InterruptedException {
        Path out = Files.createTempFile(tmp, "dom", ".html");
        Path err = Files.createTempFile(tmp, "chromium", ".log");
        Process p = new ProcessBuilder(cmd)
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail("chromium did not finish in 120 s: " + String.join(" ", cmd));
        }
        return new Rendered(
                Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
    }
}

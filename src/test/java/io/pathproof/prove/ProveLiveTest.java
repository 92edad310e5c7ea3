package io.pathproof.prove;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.cli.Main;
import io.pathproof.core.Json;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code pathproof prove} end to end on this CPU machine: real gloo ranks, a fault drawn from a seed, the blind
 * diagnosis naming its layer, the fix verified, and the report written and rendered in headless chromium. prove runs
 * once per class (three real runs); both tests read the same proof directory.
 */
@Tag("live")
class ProveLiveTest {
    /** A python with torch, as run finds it; skip without one unless PATHPROOF_REQUIRE_LIVE=1. */
    static void requireTorch() throws Exception {
        List<String> candidates = new ArrayList<>();
        if (System.getenv("PATHPROOF_PYTHON") != null) {
            candidates.add(System.getenv("PATHPROOF_PYTHON"));
        }
        candidates.add("python3");
        candidates.add("/usr/bin/python3");
        for (String py : candidates) {
            try {
                Process p = new ProcessBuilder(
                                py, "-c", "import torch, torch.distributed as d; assert d.is_gloo_available()")
                        .redirectErrorStream(true)
                        .start();
                if (p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    return;
                }
            } catch (java.io.IOException e) {
                // not this one
            }
        }
        if ("1".equals(System.getenv("PATHPROOF_REQUIRE_LIVE"))) {
            fail("PATHPROOF_REQUIRE_LIVE=1 but no Python with torch and gloo was found");
        }
        Assumptions.abort("no Python with torch: live prove skipped");
    }

    @TempDir
    static Path shared;

    /** Runs prove once per JVM (it takes three real runs); the browser test below reads the same directory. */
    static String printed;

    static int exit = -1;

    static synchronized Path proveOnce() throws Exception {
        requireTorch();
        Path out = shared.resolve("proof");
        if (exit < 0) {
            StringWriter o = new StringWriter();
            StringWriter e = new StringWriter();
            // Seed 3 draws the bucket-cap change from the gloo catalogue (cpu-x4-small); 16 measured steps keep CI
            // short.
            exit = Main.run(
                    new String[] {"prove", "--seed", "3", "--iters", "16", "--out", out.toString()},
                    new PrintWriter(o, true),
                    new PrintWriter(e, true));
            printed = o + "\n" + e;
        }
        assertThat(exit).as(printed).isZero();
        assertThat(printed).contains("prove: PROVEN", "injected:", "diagnosed:", "recorded on ");
        return out;
    }

    @Test
    void provesOnGlooWithAHiddenFaultAndRevealsIt() throws Exception {
        Path out = proveOnce();
        JsonNode proof = Json.mapper().readTree(out.resolve("proof.json").toFile());
        assertThat(proof.path("verdict").asText()).isEqualTo("PROVEN");
        assertThat(proof.at("/reveal/match").asBoolean()).isTrue();
        assertThat(proof.at("/reveal/fixed").asBoolean()).isTrue();
        assertThat(proof.at("/reveal/faultSealVerified").asBoolean()).isTrue();
        String injected = proof.at("/reveal/injected/layer").asText();
        assertThat(proof.at("/reveal/diagnosed/layer").asText()).isEqualTo(injected);
        // The fault is in prove's own record, outside the run directories diagnose read.
        assertThat(out.resolve("fault.sealed.json")).exists();
        assertThat(SealedFault.sha256(Files.readString(out.resolve("fault.sealed.json"))))
                .isEqualTo(proof.at("/fault/sealSha256").asText());
        for (String run : List.of("baseline", "variant", "fixed")) {
            assertThat(out.resolve(run).resolve("manifest.json")).exists();
        }
        JsonNode acc = Json.mapper().readTree(out.resolve("acceptance.json").toFile());
        assertThat(acc.at("/counts/fail").asInt()).isZero();
        // The recorded GPU sample is shown as a recording, never as live.
        assertThat(proof.at("/recorded/0/label").asText())
                .startsWith("recorded on ")
                .contains("on GPU");
        for (String f : List.of(
                "report.html",
                "report.md",
                "report.json",
                "report.junit.xml",
                "explain.json",
                "diagnosis.json",
                "verify-fix.json")) {
            assertThat(out.resolve(f)).exists();
        }
        JsonNode explain = Json.mapper().readTree(out.resolve("explain.json").toFile());
        assertThat(explain.at("/answers/13/answer").asText()).contains("layer " + injected);
        // auto's branch and why, recorded before anything ran; on a machine whose torch sees no GPU it must be gloo.
        assertThat(proof.at("/phases/0/name").asText()).isEqualTo("backend");
        assertThat(proof.at("/backendChoice/requested").asText()).isEqualTo("auto");
        if (io.pathproof.run.Runner.probe(null).gpus() == 0) {
            assertThat(proof.at("/backendChoice/branch").asText()).isEqualTo("gloo");
            assertThat(proof.at("/backendChoice/reason").asText())
                    .startsWith("no GPU (torch ")
                    .endsWith(": gloo on the CPU");
            assertThat(proof.at("/backend").asText()).isEqualTo("gloo");
        }
    }

    /** As the page escapes text (the reason may hold "<" in a torch version string one day). */
    static String escaped(String s) {
        return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }

    @Test
    void theProofsReportRendersInChromiumWithTheRevealAndTheDiagnosedLayer(@TempDir Path tmp) throws Exception {
        Path out = proveOnce();
        String dom = io.pathproof.report.BrowserAccess.dumpDom(out.resolve("report.html"), tmp);
        JsonNode proof = Json.mapper().readTree(out.resolve("proof.json").toFile());
        assertThat(dom).contains("id=\"reveal\"", "id=\"injected\"", "id=\"diagnosed\"", "PROVEN");
        assertThat(dom)
                .contains("layer <b>" + proof.at("/reveal/diagnosed/layer").asText() + "</b>");
        assertThat(dom)
                .contains("id=\"backend-choice\"")
                .contains(escaped(proof.at("/backendChoice/reason").asText()));
        assertThat(dom).contains("data-charts-drawn=\"2\"").contains("data-count=\"0\"");
        assertThat(dom).containsPattern("data-canvas-painted=\"[1-9]\\d{3,}\"");
        // The timeline's run is the baseline: one backward and one optimizer bar per rank of it.
        long ranks;
        try (var l = java.nio.file.Files.list(out.resolve("baseline"))) {
            ranks = l.filter(f -> f.getFileName().toString().matches("steps-rank\\d+\\.jsonl"))
                    .count();
        }
        assertThat(ranks).isGreaterThanOrEqualTo(2);
        assertThat(dom)
                .contains(
                        "data-backward-ranks=\"" + ranks + "\"",
                        "data-optimizer-ranks=\"" + ranks + "\"",
                        "data-phase-labels-outside=\"0\"",
                        "data-phase-labels-overlapping=\"0\"");
    }
}

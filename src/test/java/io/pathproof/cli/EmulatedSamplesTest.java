package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The committed emulated samples (real DDP over NCCL 2.28.9's own decisions for 4 and 8 H200s over NVSwitch, run on
 * one real H200): every decision row PASSes, the rows whose truth is physical are N/A "emulated", and each injected
 * variant is diagnosed, blind, to its own layer.
 */
class EmulatedSamplesTest {
    @ParameterizedTest
    @ValueSource(ints = {4, 8})
    void decisionRowsPassAndTimingRowsAreNotJudged(int n) throws Exception {
        String dir = "samples/emulated-h200-x" + n;
        MainTest.Result r = MainTest.run(
                "accept", "--prediction", dir + "/prediction.json", "--run", dir + "/run", "--format", "json");
        assertThat(r.code).as(r.err).isZero();
        JsonNode t = Json.mapper().readTree(r.out);
        int launchShapes = 0;
        int profiled = 0;
        for (JsonNode row : t.path("rows")) {
            String id = row.path("id").asText();
            String verdict = row.path("verdict").asText();
            assertThat(verdict).as(row.toString()).isNotEqualTo("FAIL");
            if (id.startsWith("algorithm/")
                    || id.startsWith("protocol/")
                    || id.equals("coll-channels")
                    || id.startsWith("launch-shape/")
                    || id.startsWith("transport/")
                    || id.startsWith("kernels/")
                    || id.equals("replicas")
                    || id.startsWith("bus-bytes/")
                    || id.startsWith("profiler/")) {
                assertThat(verdict).as(row.toString()).isEqualTo("PASS");
            }
            if (id.startsWith("launch-shape/")) {
                launchShapes++;
            }
            if (id.startsWith("profiler/")) {
                profiled++;
                assertThat(row.path("evidence").toString()).contains("nccl-profiler");
            }
            if (id.startsWith("busbw/")) {
                assertThat(verdict).as(row.toString()).isEqualTo("N/A");
                assertThat(row.path("observed").asText()).contains("emulated");
            }
        }
        assertThat(launchShapes).isEqualTo(n);
        assertThat(profiled).as("NCCL's profiler plugin: one row per rank").isEqualTo(n);
    }

    @ParameterizedTest
    @CsvSource({
        "4, run, variant-channels, channels",
        "8, run, variant-channels, channels",
        "4, run, variant-proto, protocol",
        "4, run, variant-algo, algorithm",
        "4, run, variant-p2p, transport",
        "4, run, variant-threads, threads",
        "4, small-baseline, variant-bucket-cap, ddp-buckets"
    })
    void eachVariantIsDiagnosedToItsLayer(int n, String baseline, String variant, String layer) throws Exception {
        String dir = "samples/emulated-h200-x" + n + "/";
        MainTest.Result r =
                MainTest.run("diagnose", "--baseline", dir + baseline, "--variant", dir + variant, "--format", "json");
        JsonNode d = Json.mapper().readTree(r.out);
        assertThat(d.path("rootCause").path("layer").asText()).as(r.out).isEqualTo(layer);
        assertThat(d.path("correctness").toString()).contains("PASS");
        assertThat(r.out).contains("cannot be judged under emulation");
    }

    /**
     * prove --emulate on the H200 (samples/emulated-h200-x4-prove): the fixed run's decisions and replicas match the
     * baseline, so the fix is verified although its (non-physical) step median lies outside the baseline's band.
     */
    @org.junit.jupiter.api.Test
    void anEmulatedFixIsVerifiedOnDecisionsNotOnTimings() throws Exception {
        String dir = "samples/emulated-h200-x4-prove/";
        MainTest.Result r = MainTest.run(
                "verify-fix", "--baseline", dir + "baseline", "--fixed", dir + "fixed", "--format", "json");
        JsonNode v = Json.mapper().readTree(r.out);
        assertThat(v.path("fixed").asBoolean()).as(r.out).isTrue();
        assertThat(v.path("medianMs").asDouble())
                .isGreaterThan(v.path("bandHighMs").asDouble());
        MainTest.Result d = MainTest.run(
                "diagnose", "--baseline", dir + "baseline", "--variant", dir + "variant", "--format", "json");
        assertThat(Json.mapper().readTree(d.out).path("rootCause").path("layer").asText())
                .isEqualTo("transport");
    }
}

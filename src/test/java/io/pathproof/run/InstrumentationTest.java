package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The instrumentation-cost knobs of a run (issue 13): the profiler plugin's choice and environment, hook sampling. */
class InstrumentationTest {
    @Test
    void autoTakesTheBuiltLibraryOnlyWhenItExists(@TempDir Path repo) throws IOException {
        assertThat(ProfilerPlugin.resolve("auto", Map.of(), repo).library()).isNull();
        Path lib = repo.resolve(ProfilerPlugin.BUILT);
        Files.createDirectories(lib.getParent());
        Files.write(lib, new byte[] {0x7f, 'E', 'L', 'F'});
        ProfilerPlugin.Choice c = ProfilerPlugin.resolve("auto", Map.of(), repo);
        assertThat(c.library()).isEqualTo(lib.toAbsolutePath().normalize());
        assertThat(ProfilerPlugin.resolve("none", Map.of(), repo).library()).isNull();
        assertThat(ProfilerPlugin.resolve("auto", Map.of(ProfilerPlugin.ENV, lib.toString()), repo.resolve("elsewhere"))
                        .library())
                .isEqualTo(lib.toAbsolutePath().normalize());
    }

    @Test
    void aNamedLibraryThatIsMissingIsAUsageError(@TempDir Path repo) {
        assertThatThrownBy(() -> ProfilerPlugin.resolve("no/such.so", Map.of(), repo))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("no such file")
                .hasMessageContaining("native/nccl-profiler/build.sh");
    }

    @Test
    void theRankEnvironmentNamesTheLibraryAbsolutelyUnlessTheUserChoseOne(@TempDir Path repo) throws IOException {
        Path lib = repo.resolve("libx.so");
        Files.write(lib, new byte[] {1});
        ProfilerPlugin.Choice c = ProfilerPlugin.resolve(lib.toString(), Map.of(), repo);
        Path run = repo.resolve("run");
        assertThat(ProfilerPlugin.env(c, run, Map.of(), Map.of()))
                .containsExactly(
                        Map.entry(
                                "NCCL_PROFILER_PLUGIN",
                                lib.toAbsolutePath().normalize().toString()),
                        Map.entry("PATHPROOF_NCCL_PROFILER_DIR", run.toString()));
        assertThat(ProfilerPlugin.env(c, run, Map.of(), Map.of("NCCL_PROFILER_PLUGIN", "/theirs.so")))
                .containsOnlyKeys("PATHPROOF_NCCL_PROFILER_DIR");
        assertThat(ProfilerPlugin.env(new ProfilerPlugin.Choice(null, "none"), run, Map.of(), Map.of()))
                .isEmpty();
        JsonNode m = ProfilerPlugin.manifest(c, "nccl");
        assertThat(m.path("sha256").asText())
                .isEqualTo("4bf5122f344554c53bde2ebb8cd2b7e3d1600ad631c385a5d7cce23c7785459a");
        assertThat(m.path("apiVersion").asInt()).isEqualTo(5);
    }

    @Test
    void hookEveryMustBePositive() {
        assertThatThrownBy(() -> new Runner.Instrumentation(0, "auto")).hasMessageContaining("--hook-every");
        assertThat(new Runner.Instrumentation(4, null).profilerPlugin()).isEqualTo("auto");
    }

    @Test
    void anSrunDryRunPassesANonDefaultHookEveryToTheHarness(@TempDir Path tmp) {
        Runner.Result r = Runner.run(
                RunnerTest.request(tmp.resolve("r"), Runner.Launcher.SRUN, List.of(), null, "node0:29400", 4, 2, 0),
                new Runner.Instrumentation(4, "none"),
                null);
        assertThat(r.command()).endsWith("--profile-iters 1 --hook-every 4");
        Runner.Result d = Runner.run(
                RunnerTest.request(tmp.resolve("d"), Runner.Launcher.SRUN, List.of(), null, "node0:29400", 4, 2, 0),
                null);
        assertThat(d.command()).doesNotContain("--hook-every");
    }

    /** The harness's own module, run by the system's Python (no torch needed). */
    @Test
    void theHarnessSamplesConstructionRebuildProfilerWindowAndEveryKth(@TempDir Path tmp) throws Exception {
        Path py = Path.of("/usr/bin/python3");
        assumeTrue(Files.isExecutable(py), "no /usr/bin/python3");
        RunDirectory.copyHarness(tmp.resolve(RunDirectory.HARNESS));
        String script = String.join(
                "\n",
                "import json, sys",
                "sys.path.insert(0, sys.argv[1])",
                "import pathproof_instrumentation as pi",
                "h = sorted(pi.hooked_iterations(5, 48, 16, (7, 10)))",
                "a = sorted(pi.hooked_iterations(2, 3, 1, None))",
                "rows, out, steps = [], open(sys.argv[1] + '/s.jsonl', 'w'), []",
                "class E:",
                "    def __init__(s, t, done): s.t, s.done = t, done",
                "    def query(s): return s.done",
                "    def synchronize(s): s.done = True",
                "    def elapsed_time(s, o): return o.t - s.t",
                "pending = [({'iteration': 0}, E(0, True), E(2.5, True)), ({'iteration': 1}, E(3.0, True), E(4.0, False)),",
                "           ({'iteration': 2}, E(5.0, True), E(9.0, True))]",
                "pi.write_steps(pending, out, steps, wait=False)",
                "first = [r['iteration'] for r in steps]",
                "pi.write_steps(pending, out, steps, wait=True)",
                "print(json.dumps({'hooked': h, 'all': a, 'first': first, 'ms': [r['ms'] for r in steps]}))");
        Process p = new ProcessBuilder(py.toString(), "-c", script, tmp.toString())
                .redirectErrorStream(true)
                .start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.exitValue()).as(out).isZero();
        JsonNode j = Json.mapper().readTree(out.lines().reduce((a, b) -> b).orElse(""));
        // 0 and 1 (construction and rebuilt buckets), the profiler window 7..9, measured iterations 15, 31 and 47.
        assertThat(j.path("hooked").toString()).isEqualTo("[0,1,7,8,9,20,36,52]");
        assertThat(j.path("all").toString()).isEqualTo("[0,1,2,3,4]");
        // A step whose end event has not passed stays pending, and so do the ones after it: rows stay in order.
        assertThat(j.path("first").toString()).isEqualTo("[0]");
        assertThat(List.of(
                        j.path("ms").get(0).asDouble(),
                        j.path("ms").get(1).asDouble(),
                        j.path("ms").get(2).asDouble()))
                .containsExactly(2.5, 1.0, 4.0);
        assertThat(Files.readAllLines(tmp.resolve("s.jsonl"))).hasSize(3);
        assertThat(List.of(Files.list(tmp)
                        .map(f -> f.getFileName().toString())
                        .sorted()
                        .toArray()))
                .contains(RunDirectory.HARNESS, RunDirectory.HARNESS_MODULE);
    }
}

package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Parameter;
import io.pathproof.scenario.Workload;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher's decisions that need no torch: dry runs, refusals before any process starts. */
class RunnerTest {
    static Workload oneParameter() {
        return new Workload(
                "one-64mib-fp32",
                List.of(new Parameter("p", List.of(16_777_216L), DType.FLOAT32, true)),
                64.0,
                false,
                false,
                false);
    }

    static Runner.Request request(
            Path out,
            Runner.Launcher launcher,
            List<String> inject,
            Path prediction,
            String endpoint,
            int nproc,
            int nnodes,
            int nodeRank) {
        return Runner.Request.builder(oneParameter(), out)
                .labels("one-64mib-fp32", null)
                .backend(Runner.Backend.GLOO)
                .ranks(nproc, nnodes, nodeRank)
                .rdzvEndpoint(endpoint)
                .sizes(4, 1, 1)
                .inject(inject)
                .prediction(prediction)
                .launcher(launcher)
                .recorded(List.of("pathproof", "run"), "pathproof test")
                .build();
    }

    @Test
    void aRequestBuiltByNameIsTheOneListedInOrderAndDefaultsAsRunDoes(@TempDir Path tmp) {
        assertThat(request(tmp, Runner.Launcher.SRUN, List.of("NCCL_ALGO=Ring"), tmp.resolve("p.json"), "h:1", 4, 2, 1))
                .isEqualTo(new Runner.Request(
                        new StandInJob(oneParameter(), "one-64mib-fp32", null),
                        new RankLayout(4, 2, 1, "h:1"),
                        new Iterations(4, 1, 1),
                        new RankStart(Runner.Backend.GLOO, Runner.Launcher.SRUN, null, 0),
                        new SealedInputs(tmp.resolve("p.json"), List.of("NCCL_ALGO=Ring")),
                        false,
                        new Provenance(List.of("pathproof", "run"), "pathproof test"),
                        tmp));
        assertThat(Runner.Request.builder(oneParameter(), tmp).build())
                .isEqualTo(new Runner.Request(
                        new StandInJob(oneParameter(), null, null),
                        new RankLayout(1, 1, 0, null),
                        new Iterations(48, 5, 3),
                        new RankStart(Runner.Backend.AUTO, Runner.Launcher.AUTO, null, 0),
                        new SealedInputs(null, List.of()),
                        false,
                        new Provenance(List.of(), null),
                        tmp));
    }

    @Test
    void srunDryRunPrintsTheExactCommandAndPreparesTheRunDir(@TempDir Path tmp) throws Exception {
        Path out = tmp.resolve("r");
        Runner.Result r = Runner.run(
                request(
                        out,
                        Runner.Launcher.SRUN,
                        List.of("NCCL_MAX_NCHANNELS=1", "NCCL_ALGO=Ring,Tree", "exit_rank=3@2"),
                        null,
                        "node0:29400",
                        4,
                        2,
                        0),
                null);
        assertThat(r.exitCode()).isZero();
        assertThat(r.complete()).isFalse();
        String d = out.toAbsolutePath().normalize().toString();
        String defaults = HarnessInvocation.NCCL_DEFAULTS.entrySet().stream()
                .map(e -> e.getKey() + "=" + e.getValue())
                .collect(java.util.stream.Collectors.joining(" "));
        assertThat(defaults)
                .contains(
                        "NCCL_DEBUG=INFO",
                        "NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING,COLL,GRAPH,P2P",
                        "TORCH_NCCL_TRACE_BUFFER_SIZE=");
        assertThat(r.command())
                .isEqualTo("env " + defaults
                        + " OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1 WORLD_SIZE=8 LOCAL_WORLD_SIZE=4 MASTER_ADDR=node0 MASTER_PORT=29400"
                        + " NCCL_ALGO=Ring,Tree NCCL_MAX_NCHANNELS=1"
                        + " srun --nodes=2 --ntasks=8 --ntasks-per-node=4 --kill-on-bad-exit=1"
                        + " --output=" + d + "/rank%t.stdout --error=" + d + "/rank%t.stderr --export=ALL"
                        + " python3 " + d + "/harness.py --run-dir " + d + " --workload " + d
                        + "/workload.json --backend gloo"
                        + " --iters 4 --warmup 1 --profile-iters 1 --knob exit_rank=3@2");
        assertThat(out.resolve("harness.py")).exists();
        JsonNode w = Json.mapper().readTree(out.resolve("workload.json").toFile());
        assertThat(w.path("parameters").get(0).path("dtype").asText()).isEqualTo("float32");
        assertThat(w.path("parameters").get(0).path("shape").get(0).asLong()).isEqualTo(16_777_216L);
        JsonNode m = Json.mapper().readTree(out.resolve("manifest.json").toFile());
        assertThat(m.path("srunCommand").asText()).isEqualTo(r.command());
        assertThat(m.has("inject")).isFalse(); // blind by construction: the fault is in fault.sealed.json only
        JsonNode fault = Json.mapper().readTree(out.resolve("fault.sealed.json").toFile());
        assertThat(fault.path("schema").asText()).isEqualTo("pathproof.fault/1");
        assertThat(fault.path("knobs").path("exit_rank").asText()).isEqualTo("3@2");
        assertThat(m.path("complete").asBoolean(true)).isFalse();
    }

    @Test
    void theCommandLineListsEveryFlagOfTheIssue() {
        java.io.StringWriter o = new java.io.StringWriter();
        int code = io.pathproof.cli.Main.run(
                new String[] {"run", "--help"},
                new java.io.PrintWriter(o, true),
                new java.io.PrintWriter(new java.io.StringWriter(), true));
        assertThat(code).isZero();
        assertThat(o.toString())
                .contains(
                        "--scenario",
                        "--workload",
                        "--topology",
                        "--backend",
                        "--nproc",
                        "--nnodes",
                        "--node-rank",
                        "--rdzv-endpoint",
                        "--iters",
                        "--warmup",
                        "--inject",
                        "--prediction",
                        "--timeout",
                        "--launcher",
                        "--python",
                        "--overhead",
                        "--out");
    }

    @Test
    void noPythonWithTorchIsTorchMissingWithOneLine(@TempDir Path tmp) throws Exception {
        Path fake = tmp.resolve("python3");
        Files.writeString(fake, "#!/bin/sh\necho 'No module named torch' >&2\nexit 1\n");
        assertThat(fake.toFile().setExecutable(true)).isTrue();
        Path out = tmp.resolve("r");
        Runner.Request req = Runner.Request.builder(oneParameter(), out)
                .labels("one-64mib-fp32", null)
                .backend(Runner.Backend.GLOO)
                .ranks(2, 1, 0)
                .sizes(4, 1, 1)
                .launcher(Runner.Launcher.SPAWN)
                .python(fake.toString())
                .recorded(List.of(), "pathproof test")
                .build();
        Runner.Result r = Runner.run(req, null);
        assertThat(r.exitCode()).isEqualTo(ExitCode.TORCH_MISSING);
        assertThat(r.message())
                .isEqualTo("run: no Python with torch found (tried " + fake
                        + ": no torch); pass --python or set PATHPROOF_PYTHON");
        assertThat(r.message()).doesNotContain("\n");
        JsonNode m = Json.mapper().readTree(out.resolve("manifest.json").toFile());
        assertThat(m.path("exitCode").asInt()).isEqualTo(ExitCode.TORCH_MISSING);
        assertThat(m.path("complete").asBoolean(true)).isFalse();
    }

    @Test
    void theCliGivesOneLineAndTheExitCodeForABadInjectionAndPrintsTheSrunCommand(@TempDir Path tmp) {
        java.io.StringWriter o = new java.io.StringWriter();
        java.io.StringWriter e = new java.io.StringWriter();
        int code = io.pathproof.cli.Main.run(
                new String[] {
                    "run",
                    "--workload",
                    "one-64mib-fp32",
                    "--backend",
                    "gloo",
                    "--nproc",
                    "2",
                    "--inject",
                    "NCCL_bogus=1",
                    "--out",
                    tmp.resolve("x").toString()
                },
                new java.io.PrintWriter(o, true),
                new java.io.PrintWriter(e, true));
        assertThat(code).isEqualTo(ExitCode.USAGE);
        assertThat(e.toString())
                .isEqualTo("pathproof: --inject 'NCCL_bogus': not a valid NCCL_*/TORCH_*/DDP_* variable name"
                        + System.lineSeparator());
        assertThat(tmp.resolve("x")).doesNotExist();

        java.io.StringWriter o2 = new java.io.StringWriter();
        int code2 = io.pathproof.cli.Main.run(
                new String[] {
                    "run",
                    "--workload",
                    "one-64mib-fp32",
                    "--backend",
                    "nccl",
                    "--nproc",
                    "8",
                    "--nnodes",
                    "2",
                    "--node-rank",
                    "0",
                    "--rdzv-endpoint",
                    "head:29400",
                    "--launcher",
                    "srun",
                    "--out",
                    tmp.resolve("s").toString()
                },
                new java.io.PrintWriter(o2, true),
                new java.io.PrintWriter(e, true));
        assertThat(code2).isZero();
        assertThat(o2.toString())
                .startsWith("env ")
                .contains(" srun --nodes=2 --ntasks=16 --ntasks-per-node=8 --kill-on-bad-exit=1")
                .contains(" --backend nccl --iters ");
    }

    @Test
    void quotingSurvivesAPosixShell() {
        assertThat(SrunCommand.quote("plain-arg_1.x")).isEqualTo("plain-arg_1.x");
        assertThat(SrunCommand.quote("has space")).isEqualTo("'has space'");
        assertThat(SrunCommand.quote("it's")).isEqualTo("'it'\\''s'");
        assertThat(SrunCommand.quote("")).isEqualTo("''");
    }

    @Test
    void aSealedPredictionIsRecordedAndABrokenOneRefused(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("p.json");
        Prediction sealed = PredictionIo.writeSealed(
                new Prediction(Prediction.SCHEMA, null, "nccl", null, null, List.of(), List.of("test"), null),
                file,
                "pathproof test");
        Runner.Result ok =
                Runner.run(request(tmp.resolve("a"), Runner.Launcher.SRUN, List.of(), file, null, 1, 1, 0), null);
        JsonNode m = Json.mapper().readTree(ok.runDir().resolve("manifest.json").toFile());
        assertThat(m.path("prediction").path("sealSha256").asText())
                .isEqualTo(sealed.seal().sha256());

        Files.writeString(file, Files.readString(file).replace("\"nccl\"", "\"gloo\""));
        assertThatThrownBy(() -> Runner.run(
                        request(tmp.resolve("b"), Runner.Launcher.SRUN, List.of(), file, null, 1, 1, 0), null))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("seal broken")
                .satisfies(e -> assertThat(((PathproofException) e).exitCode()).isEqualTo(ExitCode.SEAL_BROKEN));
        assertThat(tmp.resolve("b")).doesNotExist();
    }

    @Test
    void aTakenPortIsRefusedBeforeAnyRankStarts(@TempDir Path tmp) throws Exception {
        try (ServerSocket held = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            Path out = tmp.resolve("r");
            Runner.Result r = Runner.run(
                    request(out, Runner.Launcher.SPAWN, List.of(), null, "127.0.0.1:" + held.getLocalPort(), 2, 1, 0),
                    null);
            assertThat(r.exitCode()).isEqualTo(ExitCode.PORT_IN_USE);
            assertThat(r.message())
                    .isEqualTo("run: rendezvous port " + held.getLocalPort()
                            + " on 127.0.0.1 is in use; choose another with --rdzv-endpoint 127.0.0.1:PORT");
            JsonNode m = Json.mapper().readTree(out.resolve("manifest.json").toFile());
            assertThat(m.path("complete").asBoolean(true)).isFalse();
            assertThat(m.path("exitCode").asInt()).isEqualTo(ExitCode.PORT_IN_USE);
            assertThat(m.path("incompleteReason").asText()).isEqualTo(r.message());
        }
    }

    @Test
    void refusalsThatNeedNoProcess(@TempDir Path tmp) throws Exception {
        assertThatThrownBy(() -> Runner.run(
                        request(tmp.resolve("x"), Runner.Launcher.SPAWN, List.of("NCCL_bogus=1"), null, null, 2, 1, 0),
                        null))
                .hasMessageContaining("--inject 'NCCL_bogus'");
        assertThatThrownBy(() -> Runner.run(
                        request(tmp.resolve("ep"), Runner.Launcher.SPAWN, List.of(), null, "head:http", 2, 1, 0), null))
                .hasMessage("--rdzv-endpoint 'head:http': port is not a number");
        assertThat(tmp.resolve("ep")).doesNotExist(); // refused before the run directory is made
        Path used = tmp.resolve("used");
        Files.createDirectories(used);
        Files.writeString(used.resolve("manifest.json"), "{}");
        assertThatThrownBy(() -> Runner.run(request(used, Runner.Launcher.SRUN, List.of(), null, null, 1, 1, 0), null))
                .hasMessageContaining("not empty");
        assertThatThrownBy(() -> request(tmp.resolve("y"), Runner.Launcher.SPAWN, List.of(), null, null, 1, 2, 0))
                .hasMessageContaining("--rdzv-endpoint H:P is required");
        assertThatThrownBy(() -> request(tmp.resolve("y"), Runner.Launcher.SPAWN, List.of(), null, null, 0, 1, 0))
                .hasMessageContaining("--nproc: must be >= 1");
    }
}

package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The predict verb end to end, on the seed scenario of the method (issue 2's "done when"). */
class PredictCommandTest {
    @TempDir
    Path dir;

    static JsonNode json(MainTest.Result r) throws Exception {
        assertThat(r.code).as(r.err).isZero();
        return Json.mapper().readTree(r.out);
    }

    @Test
    void seedIsRingSimpleTwelveChannelsOneBucket() throws Exception {
        JsonNode p = json(MainTest.run("predict", "--scenario", "seed", "--format", "json"));
        assertThat(p.at("/buckets/rebuilt")).hasSize(1);
        assertThat(p.at("/buckets/rebuilt/0/bytes").asLong()).isEqualTo(67108864L);
        assertThat(p.at("/buckets/construction/0/bytes").asLong()).isEqualTo(67108864L);
        JsonNode c = p.at("/collectives/0");
        assertThat(p.at("/collectives")).hasSize(1);
        assertThat(c.path("algorithmId").asInt()).isEqualTo(1);
        assertThat(c.path("protocolId").asInt()).isEqualTo(2);
        assertThat(c.path("tunerTimeUs").decimalValue()).isEqualByComparingTo("867.660767");
        assertThat(c.path("channels").asInt()).isEqualTo(12);
        assertThat(c.path("gridX").asInt()).isEqualTo(12);
        assertThat(c.path("blockX").asInt()).isEqualTo(544);
        assertThat(c.path("reduceScatterSteps").asInt()).isEqualTo(3);
        assertThat(c.path("allGatherSteps").asInt()).isEqualTo(3);
        assertThat(c.path("busFactor").asDouble()).isEqualTo(1.5);
        assertThat(c.path("busBytes").asLong()).isEqualTo(100663296L);
        assertThat(p.at("/communicator/collChannels").asInt()).isEqualTo(12);
        assertThat(p.at("/communicator/ringGraph/nChannels").asInt()).isEqualTo(6);
    }

    /** The NCCL versions torch wheels ship, on every preset scenario. */
    @ParameterizedTest
    @CsvSource({
        "seed, 2.21.5",
        "seed, 2.26.2",
        "seed, 2.27.3",
        "seed, 2.27.5",
        "h200-x4, 2.21.5",
        "h200-x4, 2.26.2",
        "h200-x4, 2.27.5",
        "h200-x8, 2.21.5",
        "h200-x8, 2.26.2",
        "h200-x8, 2.27.3",
        "h200-x8, 2.27.5",
        "h800-x8, 2.21.5",
        "h800-x8, 2.26.2",
        "h800-x8, 2.27.5",
        "h200-1rank, 2.21.5",
        "h200-1rank, 2.26.2",
        "h200-1rank, 2.27.5",
        "cpu-x4-gloo, 2.21.5",
        "cpu-x4-small, 2.27.5"
    })
    void everyPresetPredictsOnTheWheelVersions(String preset, String nccl) throws Exception {
        JsonNode p = json(MainTest.run("predict", "--scenario", preset, "--nccl", nccl, "--format", "json"));
        assertThat(p.at("/inputs/versions/nccl/text").asText()).isEqualTo(nccl);
        assertThat(p.at("/buckets/rebuilt").size()).isPositive();
    }

    /** A cluster from NCCL's own dump of one emulated 4 x H200 node (one 10 GbE NIC, no GPUDirect), twice. */
    @Test
    void aClusterFromOneNodesDumpAndNodes() throws Exception {
        JsonNode p = json(MainTest.run(
                "predict",
                "--topology",
                "samples/emulated-h200-x4/run/nccl-topo.xml",
                "--nodes",
                "2",
                "--workload",
                "one-64mib-fp32",
                "--torch",
                "2.11.0",
                "--nccl",
                "2.28.9",
                "--env",
                "NCCL_NVLS_ENABLE=0",
                "--format",
                "json"));
        assertThat(p.at("/inputs/ranks").asInt()).isEqualTo(8);
        assertThat(p.at("/inputs/topology/nodes")).hasSize(2);
        assertThat(p.at("/communicator/nNodes").asInt()).isEqualTo(2);
        assertThat(p.at("/communicator/cannotPredict").isNull()
                        || p.at("/communicator/cannotPredict").isMissingNode())
                .isTrue();
        // The dump names the port, not the net plugin (NET/IB, NET/Socket or a plugin's name): predicted by family.
        assertThat(p.at("/communicator/transport").asText()).contains(" + NET").doesNotContain("NET/Socket");
        assertThat(p.at("/collectives/0/algorithm").asText()).isIn("Ring", "Tree");
        // The same machine as a JSON with nodes[] gives the same prediction.
        Path json = dir.resolve("cluster.json");
        Files.writeString(json, Json.mapper().writeValueAsString(p.at("/inputs/topology")));
        JsonNode q = json(MainTest.run(
                "predict",
                "--topology",
                json.toString(),
                "--workload",
                "one-64mib-fp32",
                "--torch",
                "2.11.0",
                "--nccl",
                "2.28.9",
                "--env",
                "NCCL_NVLS_ENABLE=0",
                "--format",
                "json"));
        assertThat(q.at("/communicator")).isEqualTo(p.at("/communicator"));
        assertThat(q.at("/collectives")).isEqualTo(p.at("/collectives"));
    }

    @Test
    void nvidiaSmiTextOfOneNodeWithNicSpeedAndNodes() throws Exception {
        JsonNode p = json(MainTest.run(
                "predict",
                "--topology",
                "src/test/resources/io/pathproof/scenario/testdata/topology-smi-h200-x8-nvswitch.input",
                "--nodes",
                "2",
                "--nic-speed",
                "400000",
                "--gpu-model",
                "NVIDIA H200",
                "--gpu-cc",
                "90",
                "--workload",
                "one-64mib-fp32",
                "--torch",
                "2.11.0",
                "--nccl",
                "2.27.5",
                "--env",
                "NCCL_NVLS_ENABLE=0",
                "--format",
                "json"));
        assertThat(p.at("/inputs/ranks").asInt()).isEqualTo(16);
        assertThat(p.at("/communicator/nNodes").asInt()).isEqualTo(2);
        assertThat(p.at("/inputs/topology/nodes/1/nics")).hasSize(2);
    }

    @Test
    void nodesOnATopologyOfSeveralNodesIsAUsageError() {
        MainTest.Result r = MainTest.run(
                "predict",
                "--topology",
                "samples/emulated-h200-x4/run/nccl-topo.xml",
                "--nodes",
                "0",
                "--workload",
                "one-64mib-fp32",
                "--torch",
                "2.11.0",
                "--nccl",
                "2.28.9");
        assertThat(r.code).isEqualTo(2);
        assertThat(r.err).contains("--nodes 0");
    }

    @Test
    void channelCapKeepsTunerTimeAndShrinksGrid() throws Exception {
        JsonNode p = json(MainTest.run(
                "predict",
                "--scenario",
                "seed",
                "--format",
                "json",
                "--env",
                "NCCL_MAX_NCHANNELS=1",
                "--env",
                "NCCL_MIN_NCHANNELS=1"));
        JsonNode c = p.at("/collectives/0");
        assertThat(c.path("tunerTimeUs").decimalValue()).isEqualByComparingTo("867.660767");
        assertThat(c.path("gridX").asInt()).isEqualTo(1);
        assertThat(p.at("/communicator/collChannels").asInt()).isEqualTo(1);
    }

    @Test
    void sealedOutputVerifiesAndTamperingIsCaught() throws Exception {
        Path f = dir.resolve("pred.json");
        MainTest.Result r = MainTest.run("predict", "--scenario", "seed", "-o", f.toString());
        assertThat(r.code).as(r.err).isZero();
        assertThat(r.out).contains("sealed:");
        assertThat(MainTest.run("predict", "--verify", f.toString()).code).isZero();
        Files.writeString(f, Files.readString(f).replace("\"gridX\" : 12", "\"gridX\" : 11"));
        MainTest.Result bad = MainTest.run("predict", "--verify", f.toString());
        assertThat(bad.code).isEqualTo(9);
        assertThat(bad.err).contains("seal broken").doesNotContain("Exception");
    }

    @Test
    void tableNamesTheEstimateAsAnEstimate() {
        MainTest.Result r = MainTest.run("predict", "--scenario", "seed");
        assertThat(r.code).as(r.err).isZero();
        assertThat(r.out).contains("Ring(1)", "Simple(2)", "not the protocol", "Neither is a measurement");
    }

    @Test
    void unknownPresetIsUsageErrorInOneLine() {
        MainTest.Result r = MainTest.run("predict", "--scenario", "no-such-preset");
        assertThat(r.code).isIn(2, 3);
        assertThat(r.err).contains("no-such-preset").doesNotContain("at io.pathproof");
        assertThat(r.err.strip().lines().count()).isLessThanOrEqualTo(2);
    }

    @Test
    void malformedWorkloadIsBadInput() throws Exception {
        Path w = dir.resolve("w.json");
        Files.writeString(w, "{\"parameters\": [ {\"name\": \"p\", \"shape\": [4], ");
        MainTest.Result r = MainTest.run(
                "predict",
                "--workload",
                w.toString(),
                "--topology",
                "v100-sxm2-x4-nv2",
                "--nccl",
                "2.22.3",
                "--torch",
                "2.5.0");
        assertThat(r.code).isEqualTo(3);
        assertThat(r.err).contains("w.json").doesNotContain("at io.pathproof");
    }

    @Test
    void unsupportedNcclVersionIsBadInput() {
        MainTest.Result r = MainTest.run("predict", "--scenario", "seed", "--nccl", "2.5.6");
        assertThat(r.code).isEqualTo(3);
        assertThat(r.err).contains("2.5.6");
    }

    @Test
    void proveRefusesAMistypedFaultBeforeRunningAnything() {
        // prove itself runs live in io.pathproof.prove.ProveLiveTest; here only what it checks before any run.
        MainTest.Result r = MainTest.run("prove", "--fault", "compute_dleay_ms=3", "--out", "target/prove-never-made");
        assertThat(r.code).isEqualTo(2);
        assertThat(r.err).contains("compute_dleay_ms");
        assertThat(java.nio.file.Path.of("target/prove-never-made")).doesNotExist();
    }

    @Test
    void proveEmulateWithoutTheEmulatorLibrarySaysHowToBuildIt() {
        MainTest.Result r =
                MainTest.run("prove", "--scenario", "h200-x4", "--emulate", "--out", "target/prove-never-made-2");
        assertThat(r.code).isEqualTo(2);
        assertThat(r.err).contains("--nccl-lib").contains("build-nccl-emulator.sh");
        assertThat(java.nio.file.Path.of("target/prove-never-made-2")).doesNotExist();
    }
}

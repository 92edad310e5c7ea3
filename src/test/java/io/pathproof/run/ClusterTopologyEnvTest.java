package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.cli.Main;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code run|prove --topology NODE --nodes N}: what reaches the job, and what is refused before anything runs. */
class ClusterTopologyEnvTest {
    @TempDir
    Path tmp;

    @Test
    void theInRunPredictionIsToldTheNodes() {
        Runner.CommandRequest req = Runner.CommandRequest.of(List.of("true"), tmp.resolve("r"))
                .topology("h200-sxm-x4-nvswitch")
                .topologyNodes(2)
                .build();
        Map<String, String> env = CommandRun.environment(req, tmp, tmp, Injection.none(), Map.of());
        assertThat(env)
                .containsEntry("PATHPROOF_TOPOLOGY", "h200-sxm-x4-nvswitch")
                .containsEntry("PATHPROOF_TOPOLOGY_NODES", "2");
        Runner.CommandRequest plain = Runner.CommandRequest.of(List.of("true"), tmp.resolve("r"))
                .topology("h200-sxm-x4-nvswitch")
                .build();
        assertThat(CommandRun.environment(plain, tmp, tmp, Injection.none(), Map.of()))
                .doesNotContainKey("PATHPROOF_TOPOLOGY_NODES");
    }

    private static int run(StringWriter err, String... args) {
        return Main.run(args, new PrintWriter(new StringWriter(), true), new PrintWriter(err, true));
    }

    @Test
    void nodesWithoutATopologyOrWithEmulateIsAUsageError() {
        StringWriter e1 = new StringWriter();
        assertThat(run(e1, "run", "--out", tmp.resolve("a").toString(), "--nodes", "2", "--", "true"))
                .isEqualTo(2);
        assertThat(e1.toString()).contains("--nodes N").contains("--topology NODE");
        // An emulated cluster's prediction is made for the cluster emulated: another --topology is refused.
        StringWriter e2 = new StringWriter();
        assertThat(run(
                        e2,
                        "run",
                        "--workload",
                        "one-64mib-fp32",
                        "--topology",
                        "h200-sxm-x4-nvswitch",
                        "--nodes",
                        "2",
                        "--emulate",
                        "h200-sxm-x4-nvswitch",
                        "--nic-speed",
                        "400000",
                        "--out",
                        tmp.resolve("b").toString()))
                .isEqualTo(2);
        assertThat(e2.toString()).contains("--nproc and --topology go without it");
        // The emulated nodes need a NIC speed: the preset lists no NIC.
        StringWriter e3 = new StringWriter();
        assertThat(run(
                        e3,
                        "prove",
                        "--emulate",
                        "--nccl-lib",
                        tmp.toString(),
                        "--topology",
                        "h200-sxm-x4-nvswitch",
                        "--nodes",
                        "2",
                        "--out",
                        tmp.resolve("c").toString(),
                        "--",
                        "true"))
                .isEqualTo(2);
        assertThat(e3.toString()).contains("has no NIC: give --nic-speed MBPS");
        assertThat(tmp.resolve("b")).doesNotExist();
        assertThat(tmp.resolve("c")).doesNotExist();
    }
}

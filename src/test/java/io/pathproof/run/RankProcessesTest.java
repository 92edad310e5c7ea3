package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How ranks are laid out before anything starts: global ranks per node, torchrun's argv. */
class RankProcessesTest {
    private static Runner.Request node(Path out, int nproc, int nnodes, int nodeRank) {
        return Runner.Request.builder(RunnerTest.oneParameter(), out)
                .labels("w", null)
                .backend(Runner.Backend.GLOO)
                .ranks(nproc, nnodes, nodeRank)
                .rdzvEndpoint("head:29400")
                .sizes(2, 1, 1)
                .launcher(Runner.Launcher.SPAWN)
                .recorded(List.of(), "t")
                .build();
    }

    @Test
    void spawnGivesEachLocalRankTorchrunsWorkerEnvironment(@TempDir Path tmp) {
        Runner.Request req = node(tmp, 4, 3, 2);
        Injection inj = Injection.parse(
                List.of("NCCL_MAX_NCHANNELS=1", "corrupt_grad_rank=9"),
                req.ranks().worldSize());
        Map<String, String> env =
                HarnessInvocation.rankEnv(req, tmp, Runner.Backend.GLOO, inj, new Rendezvous("head", 29400));
        List<String> args = HarnessInvocation.args(req, tmp, "gloo", inj);
        RankProcesses p = RankProcesses.spawn("/py", req.ranks(), tmp, args, env);
        assertThat(p.slots()).extracting(RankProcesses.Slot::rank).containsExactly(8, 9, 10, 11);
        RankProcesses.Slot third = p.slots().get(2);
        assertThat(third.env())
                .containsEntry("RANK", "10")
                .containsEntry("LOCAL_RANK", "2")
                .containsEntry("WORLD_SIZE", "12")
                .containsEntry("LOCAL_WORLD_SIZE", "4")
                .containsEntry("GROUP_RANK", "2")
                .containsEntry("MASTER_ADDR", "head")
                .containsEntry("MASTER_PORT", "29400")
                .containsEntry("NCCL_MAX_NCHANNELS", "1");
        assertThat(third.argv())
                .startsWith("/py", tmp.resolve(RunDirectory.HARNESS).toString())
                .endsWith("--knob", "corrupt_grad_rank=9");
        assertThat(third.stdout()).isEqualTo("rank10.stdout");
        assertThat(third.stderr()).isEqualTo("rank10.stderr");
    }

    @Test
    void torchrunIsOneProcessPerNodeWithTheFlagsTorch113Survives(@TempDir Path tmp) {
        Runner.Request req = node(tmp, 2, 2, 1);
        Map<String, String> env = HarnessInvocation.rankEnv(
                req, tmp, Runner.Backend.GLOO, Injection.none(), new Rendezvous("head", 29400));
        RankProcesses p = RankProcesses.torchrun("/py", req.ranks(), tmp, List.of("h.py", "--x"), env, "head", 29400);
        assertThat(p.slots()).singleElement().satisfies(s -> {
            assertThat(s.argv())
                    .containsExactly(
                            "/py",
                            "-m",
                            "torch.distributed.run",
                            "--nnodes",
                            "2",
                            "--node_rank",
                            "1",
                            "--nproc_per_node",
                            "2",
                            "--master_addr",
                            "head",
                            "--master_port",
                            "29400",
                            "--tee",
                            "1",
                            "--redirects",
                            "2",
                            "--log_dir",
                            tmp.resolve("torchrun-logs").toString(),
                            "h.py",
                            "--x");
            assertThat(s.env()).doesNotContainKeys("MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK");
            assertThat(s.stderr()).isEqualTo("launcher.stderr");
        });
    }
}

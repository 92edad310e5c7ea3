package io.pathproof.run;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.accept.Acceptance;
import io.pathproof.accept.AcceptanceRow;
import io.pathproof.accept.AcceptanceTable;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import io.pathproof.rundir.JobFacts;
import io.pathproof.rundir.LaunchRequest;
import io.pathproof.rundir.LaunchStart;
import io.pathproof.rundir.RunManifest;
import io.pathproof.rundir.RunOutcome;
import io.pathproof.rundir.Vocabulary;
import java.lang.reflect.RecordComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A user's own script under torch's own launcher, wrapped as a user would: {@code pathproof run --out R -- python -m
 * torch.distributed.run … examples/lm/train.py}. Its prediction is made and sealed in the run, from the model the
 * script built and the gradient-ready order its first forward implies, and accepted against the run's evidence.
 */
@Tag("live")
class LiveCommandTest {
    private static List<String> torchrun(String python, int ranks, String... script) {
        List<String> c = new ArrayList<>(List.of(
                python,
                "-m",
                "torch.distributed.run",
                "--nproc_per_node",
                Integer.toString(ranks),
                "--master_addr",
                "127.0.0.1",
                "--master_port",
                Integer.toString(Rendezvous.freePort())));
        c.addAll(List.of(script));
        return c;
    }

    private static Runner.CommandRequest request(List<String> command, Path out, List<String> inject) {
        return Runner.CommandRequest.of(command, out)
                .inject(inject)
                .timeoutSec(300)
                .sizes(2, 0)
                .recorded(List.of("pathproof", "run", "--out", out.toString(), "--"), "pathproof test")
                .build();
    }

    @Test
    void aUserScriptIsPredictedInTheRunAndAccepted(@TempDir Path tmp) throws Exception {
        PythonProbe.Python py = Live.requireTorch();
        Path out = tmp.resolve("lm");
        Runner.Result r = Runner.wrap(
                request(torchrun(py.executable(), 2, "examples/lm/train.py", "--steps", "6"), out, List.of()));
        assertThat(r.exitCode()).as(r.message()).isZero();
        assertThat(r.ranks()).extracting(RunOutcome.RankExit::ended).containsExactly("exited", "finished", "finished");
        assertThat(Files.readString(out.resolve(CommandRun.STDOUT))).contains("step     6");

        // the prediction was sealed in the run, twice: at DDP's construction and with the gradient-ready order
        Path own = Vocabulary.ownPrediction(out);
        assertThat(own.getFileName().toString()).isEqualTo(Vocabulary.file("predictionAddendum"));
        Prediction addendum = PredictionIo.readVerified(own);
        Prediction stage1 = PredictionIo.readVerified(out.resolve(Vocabulary.file("prediction")));
        assertThat(addendum.inputs().path("addendumOf").path("sha256").asText())
                .isEqualTo(stage1.seal().sha256());
        assertThat(addendum.inputs().path("workload").path("readyOrder").size())
                .isEqualTo(addendum.buckets().parameterCount());

        Evidence e = Ingest.read(List.of(out));
        AcceptanceTable t = Acceptance.accept(addendum, e);
        Map<String, String> verdicts = t.rows().stream()
                .collect(Collectors.toMap(AcceptanceRow::id, x -> x.verdict().name()));
        assertThat(t.counts().fail()).as(Acceptance.render(t, "table")).isZero();
        assertThat(verdicts)
                .containsEntry("buckets-construction", "PASS")
                .containsEntry("buckets-rebuilt", "PASS")
                .containsEntry("predicted-before-run", "PASS")
                .containsEntry("seal", "PASS");

        // every key the ranks wrote into the manifest belongs to one of its typed turns
        RunManifest m = RunManifest.read(out);
        Set<String> known = Stream.of(LaunchRequest.class, LaunchStart.class, JobFacts.class, RunOutcome.class)
                .flatMap(c -> Stream.of(c.getRecordComponents()))
                .map(RecordComponent::getName)
                .collect(Collectors.toSet());
        Set<String> written = new HashSet<>();
        m.raw().fieldNames().forEachRemaining(written::add);
        written.remove("schema");
        assertThat(known).containsAll(written);
        assertThat(m.job().worldSize()).isEqualTo(2);
        assertThat(m.request().command()).contains("examples/lm/train.py");
        JsonNode instr = m.job().instrumentation();
        assertThat(instr.path("predictions").size()).isEqualTo(2);
    }

    /**
     * A launch-bound job may run without the recording comm hook (--hook-every 0: in a user's job the hook would run on
     * every iteration): the buckets are then proven from DDP's logging data, and the seal still precedes the first
     * backward (the backward's start is taken after the ready-order addendum is sealed).
     */
    @Test
    void withoutTheCommHookTheBucketsAreProvenFromDdpLogging(@TempDir Path tmp) throws Exception {
        PythonProbe.Python py = Live.requireTorch();
        Path out = tmp.resolve("no-hook");
        Runner.CommandRequest req = Runner.CommandRequest.of(
                        torchrun(py.executable(), 2, "examples/convnet/train.py", "--steps", "8"), out)
                .timeoutSec(300)
                .sizes(2, 0)
                .hookEvery(0)
                .recorded(
                        List.of("pathproof", "run", "--hook-every", "0", "--out", out.toString(), "--"),
                        "pathproof test")
                .build();
        Runner.Result r = Runner.wrap(req);
        assertThat(r.exitCode()).as(r.message()).isZero();
        assertThat(out.resolve("hook-rank0.jsonl")).doesNotExist();
        AcceptanceTable t =
                Acceptance.accept(PredictionIo.readVerified(Vocabulary.ownPrediction(out)), Ingest.read(List.of(out)));
        Map<String, String> verdicts = t.rows().stream()
                .collect(Collectors.toMap(AcceptanceRow::id, x -> x.verdict().name()));
        assertThat(t.counts().fail()).as(Acceptance.render(t, "table")).isZero();
        assertThat(verdicts)
                .containsEntry("buckets-construction", "PASS")
                .containsEntry("buckets-rebuilt", "PASS")
                .containsEntry("predicted-before-run", "PASS")
                .containsEntry("completion-order", "UNPROVEN");
    }

    @Test
    void aRankThatDiesIsNamedAndItsFilesKept(@TempDir Path tmp) throws Exception {
        PythonProbe.Python py = Live.requireTorch();
        Path out = tmp.resolve("dies");
        Runner.Result r = Runner.wrap(request(
                torchrun(py.executable(), 2, "examples/recsys/train.py", "--steps", "12"),
                out,
                List.of("exit_rank=1@4")));
        assertThat(r.exitCode()).isEqualTo(ExitCode.RANK_FAILED);
        assertThat(r.message())
                .startsWith("run: the command exited with status ")
                .contains("rank 1: exited");
        assertThat(out.resolve("steps-rank1.jsonl")).exists();
        assertThat(Json.mapper()
                        .readTree(out.resolve("rank1.json").toFile())
                        .path("exitCode")
                        .asInt())
                .isEqualTo(3);
        // blind: neither the manifest nor the command line the manifest records names the fault
        assertThat(Files.readString(out.resolve("manifest.json"))).doesNotContain("exit_rank");
    }

    /**
     * torchrun restarts a failed worker group (--max_restarts): the same ranks build DDP again. The restarted session
     * writes a run directory of its own (session-2/), so the failed attempt's evidence is kept as it was and the
     * attempt that finished is accepted on its own.
     */
    @Test
    void aRestartedWorkerGroupIsASessionOfItsOwn(@TempDir Path tmp) throws Exception {
        PythonProbe.Python py = Live.requireTorch();
        Path job = tmp.resolve("job.py");
        Files.writeString(
                job,
                String.join(
                        "\n",
                        "import os, torch, torch.distributed as dist",
                        "from torch.nn.parallel import DistributedDataParallel as DDP",
                        "dist.init_process_group('gloo')",
                        "attempt = int(os.environ['TORCHELASTIC_RESTART_COUNT'])",
                        "torch.manual_seed(0)",
                        "ddp = DDP(torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)))",
                        "opt = torch.optim.SGD(ddp.parameters(), lr=0.01)",
                        "for step in range(6):",
                        "    if attempt == 0 and dist.get_rank() == 1 and step == 3:",
                        "        raise RuntimeError('the first attempt fails')",
                        "    opt.zero_grad()",
                        "    ddp(torch.randn(8, 16)).sum().backward()",
                        "    opt.step()",
                        "dist.barrier()",
                        "dist.destroy_process_group()",
                        ""));
        Path out = tmp.resolve("restarted");
        Runner.Result r = Runner.wrap(
                request(torchrun(py.executable(), 2, "--max_restarts", "1", job.toString()), out, List.of()));
        assertThat(r.exitCode()).as(r.message()).isZero();
        Path second = out.resolve("session-2");
        // the first attempt's files stay: rank 1 said how it ended
        assertThat(Json.mapper()
                        .readTree(out.resolve("rank1.json").toFile())
                        .path("exception")
                        .asText())
                .contains("the first attempt fails");
        assertThat(Json.mapper()
                        .readTree(second.resolve("rank1.json").toFile())
                        .path("status")
                        .asText())
                .isEqualTo("finished");

        Evidence first = Ingest.read(List.of(out));
        assertThat(first.integrity().laterSessions()).containsExactly(second.toString());
        assertThat(first.integrity().complete()).isFalse();

        RunManifest m = RunManifest.read(second);
        assertThat(m.request().command()).contains(job.toString());
        assertThat(m.outcome().complete()).isTrue();
        assertThat(m.job().instrumentation().path("ddpSession").asInt()).isEqualTo(2);
        AcceptanceTable t = Acceptance.accept(
                PredictionIo.readVerified(Vocabulary.ownPrediction(second)), Ingest.read(List.of(second)));
        assertThat(t.counts().fail()).as(Acceptance.render(t, "table")).isZero();
        assertThat(t.integrity().complete()).as(Acceptance.render(t, "table")).isTrue();
        assertThat(t.row("predicted-before-run").verdict().name()).isEqualTo("PASS");
    }

    /**
     * A GAN: two DDP models in one process, the discriminator's backward and optimizer step between the generator's
     * forward and its own backward, and a sample from fixed noise with autograd on (DDP counts it as an iteration; no
     * backward follows it). The generator, built first, is the one watched: its buckets are recorded and its ready
     * order is read from its own backward, not the discriminator's.
     */
    @Test
    void aGanIsProvenOnTheModelWatchedNotTheOther(@TempDir Path tmp) throws Exception {
        PythonProbe.Python py = Live.requireTorch();
        Path job = tmp.resolve("gan.py");
        Files.writeString(
                job,
                String.join(
                        "\n",
                        "import copy, torch, torch.distributed as dist, torch.nn as nn",
                        "from torch.nn.parallel import DistributedDataParallel as DDP",
                        "dist.init_process_group('gloo')",
                        "torch.manual_seed(0)",
                        "G = DDP(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Tanh()))",
                        "D = DDP(nn.Sequential(nn.Linear(16, 24), nn.LeakyReLU(0.2), nn.Linear(24, 1)))",
                        "shadow = copy.deepcopy(D)  # an EMA copy: a DDP object made without __init__",
                        "optG = torch.optim.Adam(G.parameters(), lr=1e-3)",
                        "optD = torch.optim.Adam(D.parameters(), lr=1e-3)",
                        "bce = nn.BCEWithLogitsLoss()",
                        "fixed = torch.randn(4, 8)",
                        "for i in range(8):",
                        "    real = torch.randn(4, 16)",
                        "    fake = G(torch.randn(4, 8))",
                        "    D.zero_grad()",
                        "    bce(D(real), torch.ones(4, 1)).backward()",
                        "    bce(D(fake.detach()), torch.zeros(4, 1)).backward()",
                        "    optD.step()",
                        "    G.zero_grad()",
                        "    bce(D(fake), torch.ones(4, 1)).backward()",
                        "    optG.step()",
                        "    if i % 4 == 0:",
                        "        sample = G(fixed)  # autograd on, no backward",
                        "dist.barrier()",
                        "dist.destroy_process_group()",
                        ""));
        Path out = tmp.resolve("gan");
        Runner.Result r = Runner.wrap(request(torchrun(py.executable(), 2, job.toString()), out, List.of()));
        assertThat(r.exitCode()).as(r.message()).isZero();
        JsonNode order = Json.mapper()
                .readTree(out.resolve(Vocabulary.file("readyOrder")).toFile());
        assertThat(order.path("complete").asBoolean()).as(order.toString()).isTrue();
        assertThat(order.path("order").size()).isEqualTo(4); // the generator's 4 parameters, none unreached
        JsonNode others = RunManifest.read(out).job().instrumentation().path("otherDdpObjects");
        assertThat(others.size()).as(others.toString()).isEqualTo(2);
        assertThat(others.get(1).path("made").asText()).contains("__setstate__");
        AcceptanceTable t =
                Acceptance.accept(PredictionIo.readVerified(Vocabulary.ownPrediction(out)), Ingest.read(List.of(out)));
        assertThat(t.verdict().name()).as(Acceptance.render(t, "table")).isEqualTo("PASS");
        assertThat(t.row("buckets-rebuilt").verdict().name()).isEqualTo("PASS");
        assertThat(t.row("replicas").observed()).contains("gradients DDP averaged in iteration");
    }

    @Test
    void twoTorchrunNodesWriteOneRunDirectory(@TempDir Path tmp) throws Exception {
        PythonProbe.Python py = Live.requireTorch();
        Path out = tmp.resolve("two-nodes");
        int port = Rendezvous.freePort();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(2);
        try {
            List<java.util.concurrent.Future<Runner.Result>> nodes = new ArrayList<>();
            for (int node : new int[] {1, 0}) { // the second node's launcher may well start first
                List<String> c = List.of(
                        py.executable(),
                        "-m",
                        "torch.distributed.run",
                        "--nnodes",
                        "2",
                        "--node_rank",
                        Integer.toString(node),
                        "--nproc_per_node",
                        "2",
                        "--master_addr",
                        "127.0.0.1",
                        "--master_port",
                        Integer.toString(port),
                        "examples/recsys/train.py",
                        "--steps",
                        "8");
                nodes.add(pool.submit(() -> Runner.wrap(request(c, out, List.of()))));
            }
            for (java.util.concurrent.Future<Runner.Result> f : nodes) {
                Runner.Result r = f.get(600, java.util.concurrent.TimeUnit.SECONDS);
                assertThat(r.exitCode()).as(r.message()).isZero();
                assertThat(r.ranks()).hasSize(3); // its launcher and its node's two ranks
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(out.resolve("node-1/command.stdout")).exists();
        assertThat(out.resolve("node-1/manifest.json")).exists();
        assertThat(RunManifest.read(out).job().worldSize()).isEqualTo(4);
        Evidence e = Ingest.read(List.of(out));
        assertThat(e.replicas().digests()).hasSize(4);
        AcceptanceTable t = Acceptance.accept(PredictionIo.readVerified(Vocabulary.ownPrediction(out)), e);
        assertThat(t.counts().fail()).as(Acceptance.render(t, "table")).isZero();
        Map<String, String> verdicts = t.rows().stream()
                .collect(Collectors.toMap(AcceptanceRow::id, x -> x.verdict().name()));
        assertThat(verdicts)
                .containsEntry("world-size", "PASS")
                .containsEntry("replicas", "PASS")
                .containsEntry("buckets-rebuilt", "PASS");
    }
}

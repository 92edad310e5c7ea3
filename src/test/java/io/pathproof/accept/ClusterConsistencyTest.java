package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.PredictionIo;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The logs of a whole cluster: 64 ranks on 8 nodes, made by bench/cluster_corpus.py from the committed real NCCL
 * 2.28.9 logs of an emulated 2 x 8 H200 run (rank ids, sizes and node names remapped, every line a real one). The
 * evidence-consistency row passes on it, nodes differing in NCCL_HOSTID and their topology files as they must; one
 * rank that says other coll channels, or launches one collective on other channels, fails it, naming that rank and
 * its file and line.
 */
class ClusterConsistencyTest {
    static final Path SOURCE = Path.of("samples/emulated-clusters-net-emu/hgx-2x8-8nic-gdr");
    static final int RANKS = 64;
    static final int ODD = 37; // on node 4, a copy of the source's rank 5: neither rank 0 nor a node's first rank

    @TempDir
    static Path tmp;

    static Prediction prediction;

    @BeforeAll
    static void predict() {
        Path file = tmp.resolve("prediction.json");
        AcceptCliTest.Result r = AcceptCliTest.run(
                "predict",
                "--topology",
                SOURCE.resolve("nccl-topo-node0.xml").toString(),
                "--nodes",
                Integer.toString(RANKS / 8),
                "--nccl",
                "2.28.9",
                "--torch",
                "2.11.0",
                "--workload",
                "one-64mib-fp32",
                "--env",
                "NCCL_NVLS_ENABLE=0",
                "-o",
                file.toString());
        assertThat(r.code()).as(r.err()).isZero();
        prediction = PredictionIo.readVerified(file);
    }

    static Path corpus(String name, String... extra) throws IOException, InterruptedException {
        Path out = tmp.resolve(name);
        List<String> cmd = new ArrayList<>(List.of(
                "python3",
                "bench/cluster_corpus.py",
                SOURCE.toString(),
                out.toString(),
                "--ranks",
                Integer.toString(RANKS)));
        cmd.addAll(List.of(extra));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes());
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(log).isZero();
        return out;
    }

    static AcceptanceRow consistency(Path dir) {
        Evidence e = Ingest.readRun(dir);
        return Acceptance.accept(prediction, e).row("evidence-consistency");
    }

    @Test
    void everyRankOfTheClusterAgreesAndTheRowPasses() throws Exception {
        Path dir = corpus("consistent");
        Evidence e = Ingest.readRun(dir);
        assertThat(e.nccl().communicators()).hasSize(1);
        assertThat(e.nccl().communicators().get(0).ranks()).hasSize(RANKS);
        assertThat(e.nccl().communicators().get(0).nNodes()).isEqualTo(RANKS / 8);
        assertThat(e.findings())
                .noneMatch(f -> f.kind().endsWith("mismatch") || f.kind().equals("cross-rank-disagreement"));
        AcceptanceRow row = Acceptance.accept(prediction, e).row("evidence-consistency");
        assertThat(row.verdict()).as(row.toString()).isEqualTo(Verdict.PASS);
        assertThat(row.observed()).contains(RANKS + " ranks 0-" + (RANKS - 1));
    }

    @Test
    void oneRankWithOtherCollChannelsFailsTheRowNamingItsLine() throws Exception {
        Path dir = corpus("channels", "--channels", ODD + ":8");
        AcceptanceRow row = consistency(dir);
        assertThat(row.verdict()).as(row.toString()).isEqualTo(Verdict.FAIL);
        assertThat(row.observed()).contains("rank 0 has coll channels 16 but rank " + ODD + " has 8");
        int line = lineOf(dir.resolve("nccl-rank" + ODD + ".log"), "8 coll channels,");
        assertThat(row.provenance()).anyMatch(s -> s.contains("nccl-rank" + ODD + ".log:" + line));
    }

    @Test
    void oneRankLaunchingOneCollectiveOnOtherChannelsFailsTheRowNamingItsLine() throws Exception {
        Path dir = corpus("grid", "--grid", ODD + ":1:8");
        AcceptanceRow row = consistency(dir);
        assertThat(row.verdict()).as(row.toString()).isEqualTo(Verdict.FAIL);
        assertThat(row.observed()).contains("rank " + ODD + " grid [8, 1, 1]").contains("rank 0 grid [16, 1, 1]");
        int line = lineOf(dir.resolve("nccl-rank" + ODD + ".log"), "grid 8 ");
        assertThat(row.provenance()).anyMatch(s -> s.contains("nccl-rank" + ODD + ".log:" + line));
    }

    static int lineOf(Path f, String text) throws IOException {
        List<String> lines = Files.readAllLines(f);
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).contains(text)) {
                return i + 1;
            }
        }
        throw new AssertionError(text + " not in " + f);
    }
}

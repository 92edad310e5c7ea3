package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Ranks of one job on different nodes: the emulated 2 × 8 H200 cluster's NCCL logs (real NCCL 2.28.9; each node's ranks
 * with their own NCCL_HOSTID and NCCL_TOPO_FILE). Those differ by design; a setting that differs is still found.
 */
class PerNodeEnvTest {
    private static final Path RUN = Path.of("samples/emulated-h200-2x8/run");

    @TempDir
    Path tmp;

    private static List<Evidence.Finding> envFindings(Path dir) {
        return Ingest.read(List.of(dir)).findings().stream()
                .filter(f -> f.kind().equals("env-mismatch"))
                .toList();
    }

    @Test
    void theNodesOwnHostIdAndTopologyFileAreNoDisagreement() throws IOException {
        Path dir = twoNodes();
        assertThat(Files.readString(dir.resolve("nccl-rank0.log")))
                .contains("NCCL_HOSTID set by environment to h200-sxm-x8-node-0");
        assertThat(Files.readString(dir.resolve("nccl-rank9.log")))
                .contains("NCCL_HOSTID set by environment to h200-sxm-x8-node-1");
        assertThat(envFindings(dir)).isEmpty();
    }

    @Test
    void aSettingThatDiffersBetweenNodesIsStillFound() throws IOException {
        Path dir = twoNodes();
        Path log = dir.resolve("nccl-rank9.log");
        Files.writeString(
                log,
                Files.readString(log)
                        .replace(
                                "NCCL_SOCKET_IFNAME set by environment to lo",
                                "NCCL_SOCKET_IFNAME set by environment to eth0"));
        assertThat(envFindings(dir))
                .extracting(Evidence.Finding::message)
                .anyMatch(m -> m.startsWith("NCCL_SOCKET_IFNAME is lo in ") && m.contains("eth0"));
    }

    /** Rank 0 (node 0) and rank 9 (node 1), as their nodes wrote them. */
    private Path twoNodes() throws IOException {
        Path dir = tmp.resolve("two-nodes");
        Files.createDirectories(dir);
        for (String f : List.of("nccl-rank0.log", "nccl-rank9.log")) {
            Files.copy(RUN.resolve(f), dir.resolve(f));
        }
        return dir;
    }
}

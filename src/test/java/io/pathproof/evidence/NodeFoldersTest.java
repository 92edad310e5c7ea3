package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A run of two nodes that did not share a file system: node 1's run directory copied into node 0's as node-1/. Its
 * ranks' files are the run's, as if they had been written beside node 0's; hidden folders are never evidence.
 */
class NodeFoldersTest {
    private static String digest(int rank, char c) {
        return "{\"rank\": " + rank + ", \"sha256\": \"" + String.valueOf(c).repeat(64)
                + "\", \"samples\": [1.0, 2.0, 1.5]}\n";
    }

    @Test
    void theRanksOfANodeFolderJoinTheRun(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("replica-rank0.json"), digest(0, 'a'));
        Files.writeString(
                dir.resolve("steps-rank0.jsonl"),
                "{\"rank\": 0, \"iteration\": 0, \"phase\": \"warmup\", \"ms\": 5.0}\n");
        Files.createDirectories(dir.resolve("node-1"));
        Files.writeString(dir.resolve("node-1/replica-rank1.json"), digest(1, 'b'));
        Files.writeString(
                dir.resolve("node-1/steps-rank1.jsonl"),
                "{\"rank\": 1, \"iteration\": 0, \"phase\": \"warmup\", \"ms\": 6.0}\n");
        Files.createDirectories(dir.resolve(".pathproof/python"));
        Files.writeString(
                dir.resolve(".pathproof/python/steps-rank7.jsonl"),
                "{\"rank\": 7, \"iteration\": 0, \"phase\": \"warmup\", \"ms\": 6.0}\n");

        Evidence e = Ingest.read(List.of(dir));
        assertThat(e.replicas().digests()).extracting(Evidence.Digest::rank).containsExactly(0, 1);
        assertThat(e.replicas().equal()).isFalse();
        assertThat(e.steps()).extracting(Evidence.Step::rank).containsExactly(0, 1);
        assertThat(e.files()).noneMatch(f -> f.path().contains(".pathproof"));
    }
}

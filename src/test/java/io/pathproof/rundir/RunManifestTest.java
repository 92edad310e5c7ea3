package io.pathproof.rundir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.PathproofException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RunManifestTest {
    @TempDir
    Path dir;

    @Test
    void theLaunchRequestBuiltByNameIsTheOneListedInOrder() {
        assertThat(LaunchRequest.builder("pathproof 0.1.0", "2026-12-03T10:00:00Z")
                        .commandLine(List.of("pathproof", "run"))
                        .workload("w", "one-64mib-fp32")
                        .backendRequested("gloo")
                        .ranks(4, 1, 0)
                        .sizes(48, 5)
                        .timeoutSec(0)
                        .prediction("p.json", "abc")
                        .build())
                .isEqualTo(new LaunchRequest(
                        RunManifest.SCHEMA,
                        "pathproof 0.1.0",
                        List.of("pathproof", "run"),
                        List.of(),
                        "2026-12-03T10:00:00Z",
                        "w",
                        "one-64mib-fp32",
                        null,
                        "gloo",
                        4,
                        1,
                        0,
                        48,
                        5,
                        0L,
                        new LaunchRequest.PredictionRef("p.json", "abc")));
        // A user's command: the job decides workload, backend and sizes, so they stay null; no prediction was given.
        assertThat(LaunchRequest.builder("t", "now")
                        .command(List.of("python", "train.py"))
                        .topology("h200-x4")
                        .timeoutSec(60)
                        .build())
                .isEqualTo(new LaunchRequest(
                        RunManifest.SCHEMA,
                        "t",
                        List.of(),
                        List.of("python", "train.py"),
                        "now",
                        null,
                        null,
                        "h200-x4",
                        null,
                        null,
                        null,
                        null,
                        null,
                        null,
                        60L,
                        new LaunchRequest.PredictionRef(null, null)));
    }

    @Test
    void eachTurnKeepsTheKeysOfTheOthers() throws Exception {
        RunManifest.write(
                dir,
                new LaunchRequest(
                        RunManifest.SCHEMA,
                        "pathproof 0.1.0",
                        List.of("pathproof", "run"),
                        List.of(),
                        "2026-12-03T10:00:00Z",
                        "w",
                        "one-64mib-fp32",
                        null,
                        "gloo",
                        4,
                        1,
                        0,
                        48,
                        5,
                        0L,
                        new LaunchRequest.PredictionRef(null, null)));
        RunManifest.write(dir, RunOutcome.pending(null));
        // rank 0 (Python) merges its facts, including a key this Java does not know
        String text = Files.readString(dir.resolve(RunManifest.FILE));
        Files.writeString(
                dir.resolve(RunManifest.FILE),
                text.replaceFirst(
                        "\\{", "{\"worldSize\": 4, \"harnessFinished\": true, \"fromANewerWriter\": [1, 2],"));
        RunManifest.write(
                dir,
                LaunchStart.builder()
                        .master("127.0.0.1", 29500)
                        .launcherEnv(Map.of("B", "2", "A", "1"))
                        .build());
        RunManifest.write(
                dir,
                new RunOutcome(
                        "2026-12-03T10:01:00Z",
                        true,
                        0,
                        null,
                        List.of(new RunOutcome.RankExit(0, 0, "exited", "rank0.stdout", "rank0.stderr"))));

        RunManifest m = RunManifest.read(dir);
        assertThat(m.request().nproc()).isEqualTo(4);
        assertThat(m.request().topology()).isNull();
        assertThat(m.start().masterPort()).isEqualTo(29500);
        assertThat(m.start().launcherEnv()).containsExactly(Map.entry("A", "1"), Map.entry("B", "2"));
        assertThat(m.job().worldSize()).isEqualTo(4);
        assertThat(m.job().harnessFinished()).isTrue();
        assertThat(m.outcome().complete()).isTrue();
        assertThat(m.outcome().ranks()).extracting(RunOutcome.RankExit::ended).containsExactly("exited");
        assertThat(m.raw().has("fromANewerWriter")).isTrue();
        assertThat(m.raw().path("schema").asText()).isEqualTo(RunManifest.SCHEMA);
        // a key a turn leaves null is not written: "topology" was never known
        assertThat(m.raw().has("topology")).isFalse();
    }

    @Test
    void aMissingOrTornManifestGivesEmptyTurns() throws Exception {
        assertThat(RunManifest.read(dir).job().worldSize()).isNull();
        Files.writeString(dir.resolve(RunManifest.FILE), "{\"worldSize\": 4, \"back");
        assertThat(RunManifest.read(dir).request().tool()).isNull();
    }

    @Test
    void anotherSchemaIsRefusedByName() throws Exception {
        Files.writeString(dir.resolve(RunManifest.FILE), "{\"schema\": \"pathproof.run.manifest/2\"}");
        assertThatThrownBy(() -> RunManifest.read(dir))
                .isInstanceOf(PathproofException.class)
                .hasMessage("manifest.json: schema pathproof.run.manifest/2, expected pathproof.run.manifest/1");
    }

    @Test
    void aKeyOfTheWrongTypeIsNamedWithoutLibraryInternals() throws Exception {
        Files.writeString(dir.resolve(RunManifest.FILE), "{\"worldSize\": \"four\"}");
        assertThatThrownBy(() -> RunManifest.read(dir))
                .isInstanceOf(PathproofException.class)
                .hasMessageStartingWith("manifest.json: a key has the wrong type")
                .hasMessageNotContaining("com.fasterxml");
    }
}

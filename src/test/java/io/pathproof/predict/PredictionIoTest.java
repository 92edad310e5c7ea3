package io.pathproof.predict;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import io.pathproof.ddp.Bucket;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.scenario.DType;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PredictionIoTest {
    @TempDir
    Path dir;

    static Prediction sample() {
        Bucket b = new Bucket(0, 1024, List.of("w"), true, DType.FLOAT32, 2048);
        CollectivePrediction c = new CollectivePrediction(
                0,
                1024,
                "Ring",
                1,
                "LL",
                0,
                new BigDecimal("12.345678"),
                1,
                1,
                128,
                3,
                3,
                1.5,
                1536,
                "P2P/CUMEM",
                new BigDecimal("1.25"),
                "k",
                null,
                false,
                List.of(),
                null);
        return new Prediction(
                Prediction.SCHEMA,
                Json.mapper().createObjectNode().put("name", "t"),
                "nccl",
                new Prediction.Buckets(List.of(b), List.of(b), 1, 1024, 1),
                null,
                List.of(c),
                List.of("a"),
                null);
    }

    @Test
    void sealedFileRoundTripsAndVerifies() {
        Path f = dir.resolve("p.json");
        Prediction sealed =
                PredictionIo.writeSealed(sample(), f, "pathproof test", Instant.parse("2026-01-02T03:04:05Z"));
        assertThat(sealed.seal().sha256()).hasSize(64);
        Prediction back = PredictionIo.readVerified(f);
        assertThat(back.seal()).isEqualTo(sealed.seal());
        assertThat(back.collectives().get(0).tunerTimeUs()).isEqualByComparingTo("12.345678");
    }

    @Test
    void aChangedNumberBreaksTheSeal() throws Exception {
        Path f = dir.resolve("p.json");
        PredictionIo.writeSealed(sample(), f, "pathproof test", Instant.parse("2026-01-02T03:04:05Z"));
        String s = Files.readString(f).replace("12.345678", "12.345679");
        Files.writeString(f, s, StandardCharsets.UTF_8);
        assertThatThrownBy(() -> PredictionIo.readVerified(f))
                .isInstanceOf(PathproofException.class)
                .hasMessageContaining("seal broken")
                .extracting(e -> ((PathproofException) e).exitCode())
                .isEqualTo(ExitCode.SEAL_BROKEN);
    }

    @Test
    void aChangedCreationTimeBreaksTheSeal() throws Exception {
        Path f = dir.resolve("p.json");
        PredictionIo.writeSealed(sample(), f, "pathproof test", Instant.parse("2026-01-02T03:04:05Z"));
        Files.writeString(f, Files.readString(f).replace("2026-01-02T03:04:05Z", "2025-01-02T03:04:05Z"));
        assertThatThrownBy(() -> PredictionIo.readVerified(f)).hasMessageContaining("seal broken");
    }

    @Test
    void anUnsealedPredictionIsRefused() throws Exception {
        Path f = dir.resolve("p.json");
        Files.writeString(f, PredictionIo.toJson(sample()));
        assertThatThrownBy(() -> PredictionIo.readVerified(f))
                .hasMessageContaining("not sealed")
                .extracting(e -> ((PathproofException) e).exitCode())
                .isEqualTo(ExitCode.SEAL_BROKEN);
    }

    @Test
    void garbageIsBadInputNamingTheFile() throws Exception {
        Path f = dir.resolve("junk.json");
        Files.writeString(f, "{\"schema\": \"pathproof.prediction/1\", \"buckets\": [1,");
        assertThatThrownBy(() -> PredictionIo.read(f))
                .hasMessageContaining("junk.json")
                .extracting(e -> ((PathproofException) e).exitCode())
                .isEqualTo(ExitCode.BAD_INPUT);
    }
}

package io.pathproof.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.accept.AcceptanceRow;
import io.pathproof.accept.Verdict;
import io.pathproof.core.Json;
import io.pathproof.predict.Predictor;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tuning table NCCL's rank 0 printed in every committed DDP run on an emulated machine (samples/emulated-h200-*,
 * samples/emulated-hgx-2x8-*: the runs accept and diagnose judge) against the table predict computes for that run:
 * accept's tuning-table row must PASS. Each run is predicted with what it ran with: the prediction the run was
 * accepted with (its own, else its experiment's) made again from its inputs, with the variables the run injected
 * (manifest {@code inject}, {@code fault.sealed.json}: a variant's NCCL_PROTO, NCCL_NTHREADS, NCCL_ALGO …); a cluster
 * run whose in-run prediction is not kept from the cluster it asked NCCL about, as {@link ClusterAgreementTest} does.
 * The sweeps and cluster sweeps are judged by {@link EmulationAgreementTest} and {@link ClusterAgreementTest}.
 */
class TuningTableAgreementTest {
    @TempDir
    Path dir;

    static Stream<String> runs() throws Exception {
        List<String> out = new ArrayList<>();
        try (Stream<Path> samples = Files.list(Path.of("samples"))) {
            for (Path sample : samples.filter(s -> s.getFileName().toString().matches("emulated-(h200|hgx)-.*"))
                    .sorted()
                    .toList()) {
                try (Stream<Path> s = Files.list(sample)) {
                    s.filter(d -> tableIn(d.resolve("nccl-rank0.log")))
                            .sorted()
                            .forEach(d -> out.add(sample.getFileName() + "/" + d.getFileName()));
                }
            }
        }
        assertThat(out)
                .as("emulated DDP runs whose rank 0 printed a tuning table")
                .hasSizeGreaterThanOrEqualTo(26);
        return out.stream();
    }

    private static boolean tableIn(Path log) {
        try {
            return Files.isRegularFile(log) && Files.readString(log).contains("NCCL INFO  Max NThreads |");
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("runs")
    void theTablePredictedForTheRunIsTheTableNcclPrinted(String name) throws Exception {
        Path run = Path.of("samples").resolve(name);
        Map<String, String> injected = injected(run);
        JsonNode prediction;
        Path own = Files.isRegularFile(run.resolve("prediction.json"))
                ? run.resolve("prediction.json")
                : run.getParent().resolve("prediction.json");
        if (Files.isRegularFile(own)) {
            JsonNode inputs = Json.mapper().readTree(own.toFile()).path("inputs");
            Scenario s = Scenarios.fromPredictionInputs(inputs, own.toString()).withEnv(injected);
            prediction = Json.mapper().valueToTree(Predictor.predict(s));
        } else {
            assertThat(run.resolve("emulated-cluster.json")).isRegularFile();
            int ranks;
            try (Stream<Path> s = Files.list(run)) {
                ranks = (int) s.filter(p -> p.getFileName().toString().matches("nccl-rank\\d+\\.log"))
                        .count();
            }
            String version =
                    EmulationAgreementTest.read(run.resolve("nccl-rank0.log")).version();
            ClusterAgreementTest cluster = new ClusterAgreementTest();
            cluster.dir = dir;
            prediction = cluster.predict(run.resolve("emulated-cluster.json"), null, injected, 1 << 20, ranks, version);
        }
        AcceptanceRow row = TuningTableRow.judge(prediction, run.resolve("nccl-rank0.log"));
        System.out.println(name + " " + injected + ": tuning-table " + row.verdict() + ": " + row.observed());
        assertThat(row.verdict()).as(name + ": " + row.observed()).isEqualTo(Verdict.PASS);
        assertThat(TuningTableRow.counts(row)[1])
                .as(name + ": AllReduce cells judged")
                .isPositive();
    }

    /** What the run injected: the manifest's {@code inject.env} and the sealed fault's {@code env}. */
    static Map<String, String> injected(Path run) throws Exception {
        Map<String, String> env = new TreeMap<>(ClusterAgreementTest.injected(run));
        Path manifest = run.resolve("manifest.json");
        if (Files.isRegularFile(manifest)) {
            Json.mapper()
                    .readTree(manifest.toFile())
                    .path("inject")
                    .path("env")
                    .fields()
                    .forEachRemaining(e -> env.put(e.getKey(), e.getValue().asText()));
        }
        return env;
    }
}

package io.pathproof.accept;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.evidence.Ingest;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.Predictor;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Scenarios;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The tuning-table row on a real log: rank 0 of the emulated 4 × H200 run (NCCL 2.28.9, NVLS off) printed the table its
 * prediction computes, so the row PASSes; a printed value changed, a Max NThreads predicted otherwise, an algorithm
 * NCCL could run that the model says it cannot, FAIL naming the cell and its line; a log without the table, a table
 * cut short and a prediction without one are UNPROVEN.
 */
class TuningTableChecksTest {
    static final Path RUN = Path.of("samples/emulated-h200-x4-prove");
    static final Path LOG = RUN.resolve("baseline/nccl-rank0.log");
    static Scenario scenario;
    static Prediction prediction;
    static List<String> lines;

    @TempDir
    Path dir;

    @BeforeAll
    static void predict() throws Exception {
        JsonNode inputs =
                Json.mapper().readTree(RUN.resolve("prediction.json").toFile()).path("inputs");
        scenario = Scenarios.fromPredictionInputs(inputs, "prediction.json");
        prediction = Predictor.predict(scenario);
        lines = Files.readAllLines(LOG);
    }

    private AcceptanceRow row(Prediction p, List<String> log) throws Exception {
        Path f = dir.resolve("nccl-rank0.log");
        Files.write(f, log);
        return Acceptance.accept(p, Ingest.read(List.of(f))).row(TuningTableChecks.ID);
    }

    /** The log with line {@code n} (1-based) rewritten. */
    private static List<String> edited(int n, UnaryOperator<String> f) {
        List<String> out = new java.util.ArrayList<>(lines);
        out.set(n - 1, f.apply(out.get(n - 1)));
        return out;
    }

    private static Prediction withTable(UnaryOperator<ObjectNode> f) throws Exception {
        ObjectNode p = Json.mapper().valueToTree(prediction);
        for (JsonNode cell : p.path("communicator").path("tuningTable")) {
            f.apply((ObjectNode) cell);
        }
        return Json.mapper().treeToValue(p, Prediction.class);
    }

    @Test
    void theTableNcclPrintedIsThePredictedOne() throws Exception {
        AcceptanceRow r = row(prediction, lines);
        assertThat(r.verdict()).as(r.observed()).isEqualTo(Verdict.PASS);
        assertThat(r.observed()).startsWith("21 of 21 AllReduce cells and 21 of 21 Max NThreads agree");
        assertThat(r.expected()).contains("Ring/Simple 28.8/240.0 (512 threads)");
        assertThat(r.provenance()).contains(dir.resolve("nccl-rank0.log") + ":179");
        assertThat(r.evidence()).containsExactly(io.pathproof.evidence.EvidenceKind.NCCL_LOG);
    }

    @Test
    void aPrintedValueOtherThanPredictedFailsNamingTheCellAndItsLine() throws Exception {
        assertThat(lines.get(178)).contains("    28.8/ 240.0 |");
        AcceptanceRow r = row(prediction, edited(179, l -> l.replace("    28.8/ 240.0 |", "    28.8/ 230.0 |")));
        assertThat(r.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(r.observed())
                .startsWith("AllReduce Ring/Simple predicted 28.8/240.0, printed 28.8/230.0 ("
                        + dir.resolve("nccl-rank0.log") + ":179)")
                .contains("20 of 21 AllReduce cells");
        // One tenth off is outside the print's rounding (the model's 28.800001 is what NCCL prints as 28.8).
        AcceptanceRow tenth = row(prediction, edited(179, l -> l.replace("    28.8/ 240.0 |", "    28.9/ 240.0 |")));
        assertThat(tenth.verdict()).isEqualTo(Verdict.FAIL);
    }

    @Test
    void anotherMaxNThreadsFails() throws Exception {
        Prediction p = withTable(c -> c.path("algorithm").asText().equals("Ring")
                        && c.path("protocol").asText().equals("Simple")
                ? c.put("maxThreads", 256)
                : c);
        AcceptanceRow r = row(p, lines);
        assertThat(r.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(r.observed()).startsWith("Max NThreads Ring/Simple predicted 256, printed 512 (");
    }

    /** NVLS off: bandwidth 0 in both is agreement; NCCL printing a bandwidth where the model has none is not. */
    @Test
    void anAlgorithmTheModelSaysIsUnavailableMustBeUnavailableInNccl() throws Exception {
        assertThat(lines.get(186))
                .contains("AllReduce |")
                .endsWith("     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |");
        List<String> nvls =
                edited(187, l -> l.substring(0, l.length() - "     0.0/   0.0 |".length()) + "    25.0/ 480.0 |");
        AcceptanceRow r = row(prediction, nvls);
        assertThat(r.verdict()).isEqualTo(Verdict.FAIL);
        assertThat(r.observed()).startsWith("AllReduce NVLSTree/Simple predicted 0.0/0.0, printed 25.0/480.0");
    }

    @Test
    void aLogWithoutTheTableIsUnproven() throws Exception {
        List<String> without = lines.stream()
                .filter(l -> !l.contains(" |") || l.contains("threadThresholds"))
                .toList();
        AcceptanceRow r = row(prediction, without);
        assertThat(r.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(r.observed()).contains("no tuning table in the NCCL log").contains("TUNING in NCCL_DEBUG_SUBSYS");
    }

    @Test
    void aTableCutShortIsUnprovenForWhatWasNotPrinted() throws Exception {
        // The log ends before the PAT block's rows: 3 AllReduce cells and 3 Max NThreads never printed.
        AcceptanceRow r = row(prediction, lines.subList(0, 189));
        assertThat(r.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(r.observed())
                .startsWith("18 of 18 AllReduce cells and 18 of 18 Max NThreads agree")
                .contains("; 6 predicted cell(s) not printed");
        // A difference among the cells printed still FAILs.
        AcceptanceRow cut = row(
                prediction,
                edited(179, l -> l.replace("    28.8/ 240.0 |", "    28.8/ 230.0 |"))
                        .subList(0, 189));
        assertThat(cut.verdict()).isEqualTo(Verdict.FAIL);
    }

    @Test
    void aPredictionWithoutATableOrThatDisclaimsItIsUnproven() throws Exception {
        Prediction none = Json.mapper().treeToValue(stripped(), Prediction.class);
        AcceptanceRow r = row(none, lines);
        assertThat(r.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(r.observed()).contains("the prediction holds no tuning table");

        // Without NCCL_NVLS_ENABLE=0 the model cannot say whether NVLS enters the table: the row is not judged.
        Map<String, String> env = new java.util.TreeMap<>(scenario.env());
        env.remove("NCCL_NVLS_ENABLE");
        Scenario nvls = new Scenario(
                scenario.name(),
                scenario.workload(),
                scenario.topology(),
                scenario.versions(),
                scenario.ranks(),
                env,
                scenario.backend());
        AcceptanceRow disclaimed = row(Predictor.predict(nvls), lines);
        assertThat(disclaimed.verdict()).isEqualTo(Verdict.UNPROVEN);
        assertThat(disclaimed.observed()).contains("NVLS may be enabled");
    }

    private static ObjectNode stripped() {
        ObjectNode p = Json.mapper().valueToTree(prediction);
        ((ObjectNode) p.get("communicator")).remove("tuningTable");
        return p;
    }
}

package io.pathproof.scenario;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import java.util.List;
import org.junit.jupiter.api.Test;

class ScenarioRoundTripTest {
    @Test
    void everyPresetScenarioComesBackFromItsPredictionInputs() {
        for (String name : Scenarios.scenarioPresets()) {
            Scenario s = Scenarios.load(name);
            JsonNode inputs = Json.mapper().valueToTree(s);
            Scenario back = Scenarios.fromPredictionInputs(inputs, name);
            JsonNode again = Json.mapper().valueToTree(back);
            assertThat(again).as(name).isEqualTo(inputs);
        }
    }

    @Test
    void theReadyOrderAndCommHookTravelWithTheWorkload() {
        Scenario s = Scenarios.load("cpu-x4-small");
        Workload w = s.workload();
        List<Integer> order = new java.util.ArrayList<>();
        for (int i = w.parameters().size() - 1; i >= 0; i--) {
            order.add(i);
        }
        Scenario with = s.withWorkload(
                new Workload(w.name(), w.parameters(), 1.0, false, false, false, order, "fp16_compress_hook"));
        Scenario back = Scenarios.fromPredictionInputs(Json.mapper().valueToTree(with), "x");
        assertThat(back.workload().readyOrder()).isEqualTo(order);
        assertThat(back.workload().commHook()).isEqualTo("fp16_compress_hook");
    }
}

package io.pathproof.ddp;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.Json;
import io.pathproof.scenario.DType;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A bucket survives the project's canonical JSON both ways (predictions are written and read back). */
class BucketJsonTest {
    @Test
    void roundTrip() throws Exception {
        Bucket b = new Bucket(1, 1049600, List.of("fc1.bias", "fc1.weight"), true, DType.FLOAT32, Long.MAX_VALUE);
        String json = Json.mapper().writeValueAsString(b);
        JsonNode tree = Json.mapper().readTree(json);
        assertThat(tree.fieldNames())
                .toIterable()
                .containsExactly("index", "bytes", "params", "isLast", "dtype", "limitBytes");
        assertThat(Json.mapper().readValue(json, Bucket.class)).isEqualTo(b);
    }
}

package io.pathproof.predict;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.ddp.Bucket;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.CommunicatorPrediction;
import java.util.List;

/**
 * A prediction made before the run: the buckets DDP will form, and per bucket what NCCL will do. {@code inputs} is
 * the full scenario it was derived from; {@code seal} is null until the prediction is written with {@code -o}.
 * JSON names are a published contract: a renamed one would break every prediction sealed before it.
 */
public record Prediction(
        String schema,
        JsonNode inputs,
        String backend,
        Buckets buckets,
        CommunicatorPrediction communicator,
        List<CollectivePrediction> collectives,
        List<String> assumptions,
        Seal seal) {
    public static final String SCHEMA = "pathproof.prediction/1";

    public Prediction {
        collectives = collectives == null ? List.of() : List.copyOf(collectives);
        assumptions = assumptions == null ? List.of() : List.copyOf(assumptions);
    }

    public Prediction withSeal(Seal s) {
        return new Prediction(schema, inputs, backend, buckets, communicator, collectives, assumptions, s);
    }

    /** Construction and rebuilt buckets; {@code firstRebuiltIteration} -1 when DDP never rebuilds. */
    public record Buckets(
            List<Bucket> construction,
            List<Bucket> rebuilt,
            int firstRebuiltIteration,
            long parameterBytes,
            int parameterCount) {
        public Buckets {
            construction = List.copyOf(construction);
            rebuilt = List.copyOf(rebuilt);
        }
    }

    /** SHA-256 over the canonical JSON of the prediction without its seal, plus creation time and tool version. */
    public record Seal(String sha256, String createdAt, String tool) {}
}

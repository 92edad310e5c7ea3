package io.pathproof.rundir;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the Java side and the Python instrumentation agree on, read from the one file both read:
 * {@code python/pathproof_torch/vocabulary.json} (in the jar under {@value #RESOURCE}): the fault knobs, the hook
 * period, the variables every rank gets, the run directory's shared file names.
 */
public final class Vocabulary {
    public static final String RESOURCE = "/io/pathproof/python/pathproof_torch/vocabulary.json";

    private static JsonNode root;

    private Vocabulary() {}

    private static synchronized JsonNode root() {
        if (root == null) {
            try (InputStream in = Vocabulary.class.getResourceAsStream(RESOURCE)) {
                if (in == null) {
                    throw new PathproofException(ExitCode.INTERNAL, "vocabulary.json is missing from the jar");
                }
                root = Json.mapper().readTree(in);
            } catch (IOException e) {
                throw new PathproofException(ExitCode.INTERNAL, "vocabulary.json cannot be read: " + e.getMessage());
            }
        }
        return root;
    }

    /** The fault knobs a run takes besides NCCL_*, TORCH_* and DDP_* variables, in the file's order. */
    public static List<String> knobs() {
        List<String> names = new ArrayList<>();
        root().path("knobs").fieldNames().forEachRemaining(names::add);
        return List.copyOf(names);
    }

    /** Iterations between two that record their buckets (iterations 0 and 1 always do). */
    public static int hookEvery() {
        return root().path("hookEvery").asInt();
    }

    /** The variables every rank gets unless the user's environment sets them (NCCL's log, the flight recorder). */
    public static Map<String, String> rankEnv() {
        Map<String, String> m = new LinkedHashMap<>();
        root().path("rankEnv")
                .fields()
                .forEachRemaining(e -> m.put(e.getKey(), e.getValue().asText()));
        return m;
    }

    /** A file name of the run directory by its key in the file (prediction, predictionAddendum, workload, …). */
    public static String file(String key) {
        JsonNode n = root().path("files").path(key);
        if (!n.isTextual()) {
            throw new PathproofException(ExitCode.INTERNAL, "vocabulary.json names no file '" + key + "'");
        }
        return n.asText();
    }

    /**
     * The prediction a run made itself (sealed in the run, before its first gradient AllReduce): the addendum with the
     * gradient-ready order when there is one, else the prediction of DDP's construction; null when the run made none.
     */
    public static Path ownPrediction(Path runDir) {
        for (String key : List.of("predictionAddendum", "prediction")) {
            Path f = runDir.resolve(file(key));
            if (Files.isRegularFile(f)) {
                return f;
            }
        }
        return null;
    }
}

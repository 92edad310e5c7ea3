package io.pathproof.scenario;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The presets shipped as JSON resources under {@code io/pathproof/scenario/presets/}: {@code index.json} names them,
 * {@code workloads/NAME.json}, {@code topologies/NAME.json} and {@code scenarios/NAME.json} hold them.
 */
final class Presets {
    private Presets() {}

    enum Kind {
        WORKLOAD("workloads", "workload"),
        TOPOLOGY("topologies", "topology"),
        SCENARIO("scenarios", "scenario");

        final String folder;
        final String word;

        Kind(String folder, String word) {
            this.folder = folder;
            this.word = word;
        }
    }

    private static final String ROOT = "/io/pathproof/scenario/presets/";

    static List<String> names(Kind kind) {
        JsonNode index = JsonInput.parse(resource("index.json"), "presets/index.json");
        List<String> out = new ArrayList<>();
        JsonNode list = index.get(kind.folder);
        if (list != null) {
            list.forEach(n -> out.add(n.asText()));
        }
        return List.copyOf(out);
    }

    static boolean exists(Kind kind, String name) {
        return names(kind).contains(name);
    }

    /** The text of a preset; null when there is none of that name. */
    static String text(Kind kind, String name) {
        if (!exists(kind, name)) {
            return null;
        }
        return resource(kind.folder + "/" + name + ".json");
    }

    static PathproofException unknown(Kind kind, String name) {
        return PathproofException.usage("unknown " + kind.word + " '" + name + "': not a preset ("
                + String.join(", ", names(kind)) + ") and " + io.pathproof.core.Messages.noSuchFile(name));
    }

    private static String resource(String rel) {
        try (InputStream in = Presets.class.getResourceAsStream(ROOT + rel)) {
            if (in == null) {
                throw new PathproofException(io.pathproof.core.ExitCode.INTERNAL, "preset resource missing: " + rel);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new PathproofException(io.pathproof.core.ExitCode.INTERNAL, "preset resource unreadable: " + rel, e);
        }
    }
}

package io.pathproof.rundir;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * The public entry of the rundir room: {@code manifest.json} read into its four turns, and each turn written into the
 * file by the one codec. Writing a turn keeps every key already in the file (the other writer's, and keys of a newer
 * writer this one does not know), so no writer loses another's facts; a key a turn leaves null is not written.
 * Reading is lenient: a missing or unreadable file gives empty turns (a rank may have died writing it), and a file of
 * another schema is refused with "schema N, expected M".
 */
public record RunManifest(LaunchRequest request, LaunchStart start, JobFacts job, RunOutcome outcome, ObjectNode raw) {
    public static final String SCHEMA = "pathproof.run.manifest/1";

    public static final String FILE = "manifest.json";

    /** Turns written without nulls: an absent key means "not known", as in the files Python writes. */
    private static final ObjectMapper WRITER =
            Json.mapper().copy().setDefaultPropertyInclusion(JsonInclude.Include.NON_NULL);

    /** The turns of a manifest object (any schema-1 file, also one of another tool that uses some of its keys). */
    public static RunManifest of(JsonNode n) {
        ObjectNode o = n instanceof ObjectNode x ? x : Json.mapper().createObjectNode();
        JsonNode schema = o.get("schema");
        if (schema != null
                && schema.isTextual()
                && schema.asText().startsWith("pathproof.run.manifest/")
                && !schema.asText().equals(SCHEMA)) {
            throw PathproofException.badInput(FILE + ": schema " + schema.asText() + ", expected " + SCHEMA);
        }
        ObjectMapper m = Json.mapper();
        try {
            return new RunManifest(
                    m.treeToValue(o, LaunchRequest.class),
                    m.treeToValue(o, LaunchStart.class),
                    m.treeToValue(o, JobFacts.class),
                    m.treeToValue(o, RunOutcome.class),
                    o);
        } catch (IOException e) {
            throw PathproofException.badInput(FILE + ": a key has the wrong type: "
                    + e.getMessage().lines().findFirst().orElse(""));
        }
    }

    /** The manifest in {@code dir}, or empty turns when it is missing or not a JSON object. */
    public static RunManifest read(Path dir) {
        return of(readRaw(dir));
    }

    /** Writes a turn (one of the four records) into {@code dir}'s manifest, over the keys already there. */
    public static void write(Path dir, Object turn) {
        ObjectNode file = readRaw(dir);
        if (!file.has("schema")) {
            file.put("schema", SCHEMA);
        }
        JsonNode t = WRITER.valueToTree(turn);
        t.fields().forEachRemaining(e -> file.set(e.getKey(), e.getValue()));
        writeJson(dir.resolve(FILE), file);
    }

    /** Removes keys a later turn found untrue (e.g. the reason a complete run was incomplete while it ran). */
    public static void remove(Path dir, String... keys) {
        ObjectNode file = readRaw(dir);
        for (String k : keys) {
            file.remove(k);
        }
        writeJson(dir.resolve(FILE), file);
    }

    private static ObjectNode readRaw(Path dir) {
        Path f = dir.resolve(FILE);
        if (Files.isRegularFile(f)) {
            try {
                if (Json.mapper().readTree(f.toFile()) instanceof ObjectNode o) {
                    return o;
                }
            } catch (IOException e) {
                // fall through: an incomplete manifest is rebuilt from what the writer knows
            }
        }
        return Json.mapper().createObjectNode();
    }

    /** Writes through a temporary file and a rename, so that a reader never sees half a file. */
    public static void writeJson(Path file, JsonNode node) {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try {
            Files.writeString(
                    tmp, Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n");
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw PathproofException.badInput("cannot write " + file + ": " + e.getMessage());
        }
    }
}

package io.pathproof.core;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The one codec of a stage file (a proof, an acceptance table, a diagnosis, a fix verification): a record that names
 * its schema, written by the project's mapper and bound back to the same record, so that a key is spelled once, in
 * the record. A file of another schema is refused before its keys are read, in one line naming it; a file of the same
 * schema written by an older writer loads, the keys it lacks null.
 */
public final class StageFile {
    private StageFile() {}

    /** The JSON tree of {@code file}; exit 3 in one line naming it when it cannot be read or is not JSON. */
    public static JsonNode tree(Path file) {
        try {
            return Json.mapper().readTree(Files.readAllBytes(file));
        } catch (JsonProcessingException e) {
            throw PathproofException.badInput(file + ": not JSON (" + Messages.json(e) + ")");
        } catch (IOException e) {
            throw PathproofException.badInput(Messages.io(e, file));
        }
    }

    /** The schema a stage file's tree names ("" when it names none). */
    public static String schemaOf(JsonNode tree) {
        JsonNode s = tree == null ? null : tree.get("schema");
        return s != null && s.isTextual() ? s.asText() : "";
    }

    /**
     * {@code tree}, read from {@code file}, as the record {@code type}: its schema must be {@code schema} ("FILE: schema
     * N, expected M"; null for a file that names none), and a key of the wrong type is one line naming the file.
     */
    public static <T> T bind(Path file, JsonNode tree, Class<T> type, String schema) {
        String found = schemaOf(tree);
        if (schema != null && !found.equals(schema)) {
            String named = found.isEmpty() ? "(none)" : found;
            throw PathproofException.badInput(file + ": schema " + named + ", expected " + schema);
        }
        try {
            return Json.mapper().treeToValue(tree, type);
        } catch (JsonProcessingException | IllegalArgumentException e) {
            String why = e instanceof JsonProcessingException j ? Messages.json(j) : e.getMessage();
            throw PathproofException.badInput(file + ": " + why);
        }
    }

    /** The record of type {@code type} in {@code file}, whose schema must be {@code schema}. */
    public static <T> T read(Path file, Class<T> type, String schema) {
        return bind(file, tree(file), type, schema);
    }

    /** A record as its file holds it: indented by the project's mapper, one newline at the end. */
    public static String text(Object record) {
        try {
            return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(record) + "\n";
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }
}

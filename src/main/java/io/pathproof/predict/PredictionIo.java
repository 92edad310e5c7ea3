package io.pathproof.predict;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.ExitCode;
import io.pathproof.core.Json;
import io.pathproof.core.Messages;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;

/**
 * Writes and reads sealed predictions. The seal is SHA-256 over the canonical JSON of the prediction without its seal
 * (inputs included), a newline, the creation time (ISO-8601 UTC), a newline and the tool version: a prediction cannot
 * be changed, or re-dated, after it was written without breaking the seal.
 */
public final class PredictionIo {
    private PredictionIo() {}

    /** Seals {@code p} now and writes it to {@code file}; returns the sealed prediction. */
    public static Prediction writeSealed(Prediction p, Path file, String tool) {
        return writeSealed(p, file, tool, Instant.now());
    }

    static Prediction writeSealed(Prediction p, Path file, String tool, Instant now) {
        String createdAt = now.truncatedTo(ChronoUnit.MILLIS).toString();
        Prediction sealed = p.withSeal(new Prediction.Seal(digest(p.withSeal(null), createdAt, tool), createdAt, tool));
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.writeString(file, toJson(sealed) + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw PathproofException.badInput("cannot write prediction " + file + ": " + e.getMessage());
        }
        return sealed;
    }

    /** Canonical, indented JSON of a prediction. */
    public static String toJson(Prediction p) {
        try {
            return Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(p);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Reads a prediction file and checks its seal; a missing or broken seal is an error with exit code 9. */
    public static Prediction readVerified(Path file) {
        Prediction p = read(file);
        verify(p, file.toString());
        return p;
    }

    /** Checks a prediction's seal; throws with exit code 9 naming the file when it is missing or does not match. */
    public static void verify(Prediction p, String name) {
        Prediction.Seal s = p.seal();
        if (s == null || s.sha256() == null || s.createdAt() == null || s.tool() == null) {
            throw new PathproofException(
                    ExitCode.SEAL_BROKEN, name + ": prediction is not sealed (write it with predict -o FILE)");
        }
        String expect = digest(p.withSeal(null), s.createdAt(), s.tool());
        if (!expect.equals(s.sha256())) {
            throw new PathproofException(
                    ExitCode.SEAL_BROKEN,
                    name + ": seal broken: content or creation time changed after sealing (sha256 " + s.sha256()
                            + ", content gives " + expect + ")");
        }
    }

    /** Reads a prediction without checking the seal. */
    public static Prediction read(Path file) {
        JsonNode tree;
        try {
            tree = Json.mapper().readTree(Files.readAllBytes(file));
        } catch (JsonProcessingException e) {
            throw PathproofException.badInput(file + ": not a readable prediction: " + Messages.json(e));
        } catch (IOException e) {
            // A missing file is said as such: "not a readable prediction" sends a user looking inside a file that is
            // not there.
            throw PathproofException.badInput(
                    e instanceof java.nio.file.NoSuchFileException
                            ? Messages.noSuchFile(file)
                            : file + ": not a readable prediction: " + Messages.io(e, file));
        }
        if (!(tree instanceof ObjectNode)
                || !Prediction.SCHEMA.equals(tree.path("schema").asText())) {
            throw PathproofException.badInput(
                    file + ": not a pathproof prediction (schema must be " + Prediction.SCHEMA + ")");
        }
        try {
            return Json.mapper().treeToValue(tree, Prediction.class);
        } catch (JsonProcessingException e) {
            throw PathproofException.badInput(file + ": malformed prediction: " + Messages.json(e));
        }
    }

    static String digest(Prediction unsealed, String createdAt, String tool) {
        try {
            // Re-read through the tree model so that numbers are canonical whatever their Java type was.
            JsonNode tree = Json.mapper().valueToTree(unsealed);
            byte[] body = Json.mapper().writeValueAsBytes(canonical(tree));
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            md.update(body);
            md.update(("\n" + createdAt + "\n" + tool).getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(md.digest());
        } catch (JsonProcessingException | NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Sorts object keys recursively, so that the digest does not depend on field order. */
    private static JsonNode canonical(JsonNode n) {
        if (n.isObject()) {
            ObjectNode out = Json.mapper().createObjectNode();
            java.util.List<String> names = new java.util.ArrayList<>();
            n.fieldNames().forEachRemaining(names::add);
            java.util.Collections.sort(names);
            for (String k : names) {
                out.set(k, canonical(n.get(k)));
            }
            return out;
        }
        if (n.isArray()) {
            com.fasterxml.jackson.databind.node.ArrayNode out = Json.mapper().createArrayNode();
            n.forEach(e -> out.add(canonical(e)));
            return out;
        }
        if (n.isNumber()) {
            return Json.mapper().getNodeFactory().numberNode(n.decimalValue().stripTrailingZeros());
        }
        return n;
    }
}

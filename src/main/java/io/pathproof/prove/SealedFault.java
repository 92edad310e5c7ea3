package io.pathproof.prove;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.core.StageFile;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

/**
 * The fault's sealed record, {@value #FILE}: written before the variant runs, outside every run directory diagnose
 * reads, and its SHA-256 shown then and checked again at the reveal. Its env and knobs keep the order of the fault's
 * settings (an object, not a sorted map), so the record's bytes, and its seal, are the ones prove has always written.
 */
final class SealedFault {
    static final String FILE = "fault.sealed.json";

    private SealedFault() {}

    /**
     * The fault as the schema {@code pathproof.fault/1} writes it ({"env":{…},"knobs":{…}}), with what prove adds
     * (kind, layer, seed, the kinds it was drawn from).
     */
    static String record(Fault f, long seed, List<Fault> catalogue) {
        ObjectNode n = Json.mapper().createObjectNode();
        n.put("schema", "pathproof.fault/1");
        ObjectNode env = n.putObject("env");
        ObjectNode knobs = n.putObject("knobs");
        for (String s : f.settings()) {
            String k = s.substring(0, s.indexOf('='));
            String v = s.substring(s.indexOf('=') + 1);
            if (k.startsWith("NCCL_") || k.startsWith("TORCH_") || k.startsWith("DDP_")) {
                env.put(k, v);
            } else {
                knobs.put(k, v);
            }
        }
        n.put("kind", f.kind());
        n.put("layer", f.layer().id());
        n.put("description", f.description());
        n.put("seed", seed);
        ArrayNode kinds = n.putArray("drawnFrom");
        catalogue.forEach(c -> kinds.add(c.kind()));
        return StageFile.text(n);
    }

    static String sha256(String s) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

package io.pathproof.run;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * {@code manifest.json} of a run directory. Written in three steps by two writers that never overlap in time: the
 * launcher before the ranks start, the harness's rank 0 (it merges its facts into the file it finds), and the
 * launcher again after every rank has ended (exit status per rank, end time, complete or not, and why).
 */
final class RunManifest {
  static final String FILE = "manifest.json";

  private RunManifest() {}

  /** The manifest as it stands, or an empty object when it is missing or unreadable (a rank may have died writing). */
  static ObjectNode read(Path dir) {
    Path f = dir.resolve(FILE);
    try {
      JsonNode n = Json.mapper().readTree(f.toFile());
      if (n instanceof ObjectNode o) {
        return o;
      }
    } catch (IOException e) {
      // fall through: an incomplete manifest is rebuilt from what the launcher knows
    }
    ObjectNode o = Json.mapper().createObjectNode();
    o.put("schema", "pathproof.run.manifest/1");
    return o;
  }

  static void write(Path dir, ObjectNode manifest) {
    writeJson(dir.resolve(FILE), manifest);
  }

  /** Writes through a temporary file and a rename, so that a reader never sees half a file. */
  static void writeJson(Path file, JsonNode node) {
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    try {
      Files.writeString(tmp, Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(node) + "\n");
      Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw PathproofException.badInput("run: cannot write " + file + ": " + e.getMessage());
    }
  }
}

package io.pathproof.run;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.pathproof.core.Json;
import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * pathproof's NCCL profiler plugin for a run: which library (native/nccl-profiler, built on the GPU node), and the
 * environment that makes NCCL load it (NCCL_PROFILER_PLUGIN, an absolute path: NCCL dlopens the name as given,
 * src/plugin/plugin_open.cc:67-77@v2.28.9-1) and tells it where to write (PATHPROOF_NCCL_PROFILER_DIR).
 */
final class ProfilerPlugin {
    /** Where native/nccl-profiler/build.sh puts the library by default, relative to the repository root. */
    static final Path BUILT = Path.of("target", "nccl-profiler", "libnccl-profiler-pathproof.so");

    /** Overrides the default location for {@code --profiler-plugin auto}. */
    static final String ENV = "PATHPROOF_NCCL_PROFILER_PLUGIN";

    private ProfilerPlugin() {}

    /** How the library was chosen and which one, or why none. */
    record Choice(Path library, String how) {}

    /**
     * {@code none}: no plugin. {@code auto}: $PATHPROOF_NCCL_PROFILER_PLUGIN, else the built library under the working
     * directory when it exists, else none. Anything else is a path that must exist.
     */
    static Choice resolve(String spec, Map<String, String> env, Path cwd) {
        String s = spec == null ? "auto" : spec.trim();
        if (s.equalsIgnoreCase("none")) {
            return new Choice(null, "none (--profiler-plugin none)");
        }
        if (s.equalsIgnoreCase("auto")) {
            String fromEnv = env.get(ENV);
            if (fromEnv != null && !fromEnv.isBlank()) {
                return new Choice(existing(Path.of(fromEnv), "$" + ENV), "auto: $" + ENV);
            }
            Path built = cwd.resolve(BUILT);
            return Files.isRegularFile(built)
                    ? new Choice(built.toAbsolutePath().normalize(), "auto: " + BUILT)
                    : new Choice(
                            null, "auto: none built (" + BUILT + " absent; native/nccl-profiler/build.sh makes it)");
        }
        return new Choice(existing(cwd.resolve(s), "--profiler-plugin"), "--profiler-plugin");
    }

    private static Path existing(Path p, String what) {
        if (!Files.isRegularFile(p)) {
            throw PathproofException.usage(
                    what + " " + p + ": no such file (build it with native/nccl-profiler/build.sh"
                            + " HEADERS, or pass --profiler-plugin none)");
        }
        return p.toAbsolutePath().normalize();
    }

    /**
     * The rank environment for the plugin; NCCL_PROFILER_PLUGIN set by the caller's environment or an injection wins
     * (then it is theirs, and only the output directory is added).
     */
    static Map<String, String> env(Choice c, Path runDir, Map<String, String> parent, Map<String, String> injected) {
        Map<String, String> e = new LinkedHashMap<>();
        boolean theirs = parent.containsKey("NCCL_PROFILER_PLUGIN") || injected.containsKey("NCCL_PROFILER_PLUGIN");
        if (c.library() != null && !theirs) {
            e.put("NCCL_PROFILER_PLUGIN", c.library().toString());
        }
        if (c.library() != null || theirs) {
            e.put("PATHPROOF_NCCL_PROFILER_DIR", runDir.toString());
        }
        return e;
    }

    /** The manifest's record of the choice: path, SHA-256 of the library, how it was chosen. */
    static ObjectNode manifest(Choice c, String backend) {
        ObjectNode n = Json.mapper().createObjectNode();
        n.put("how", c.how());
        n.put("library", c.library() == null ? null : c.library().toString());
        n.put("sha256", c.library() == null ? null : sha256(c.library()));
        n.put("apiVersion", c.library() == null ? null : 5);
        if (!backend.equals("nccl")) {
            n.put("note", "backend " + backend + ": NCCL is not used, the plugin is not loaded");
        }
        return n;
    }

    static String sha256(Path p) {
        try (InputStream in = Files.newInputStream(p)) {
            MessageDigest md = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            int n;
            while ((n = in.read(buf)) > 0) {
                md.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(md.digest());
        } catch (IOException | NoSuchAlgorithmException e) {
            return null;
        }
    }
}

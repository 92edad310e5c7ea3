package io.pathproof.rundir;

import io.pathproof.core.PathproofException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** An output directory ({@code --out}) that holds one run or one proof: new, or empty, so that two never mix. */
public final class NewDirectory {
    private NewDirectory() {}

    /**
     * Creates {@code dir}, or takes it as it is where it exists empty; refuses a file (exit 2), a directory with
     * anything in it (exit 2, saying {@code why} it must be new) and one that cannot be created (exit 3).
     */
    public static void prepare(Path dir, String why) {
        try {
            if (Files.exists(dir)) {
                if (!Files.isDirectory(dir)) {
                    throw PathproofException.usage("--out " + dir + ": exists and is not a directory");
                }
                try (var s = Files.list(dir)) {
                    if (s.findAny().isPresent()) {
                        throw PathproofException.usage("--out " + dir + ": not empty; " + why);
                    }
                }
            }
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw PathproofException.badInput("--out " + dir + ": cannot create: " + e.getMessage());
        }
    }
}

package io.pathproof.prove;

import io.pathproof.core.PathproofException;
import io.pathproof.rundir.NewDirectory;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** prove's output directory: new or emptied before a proof, and its files written and read with one-line errors. */
final class OutDir {
    private OutDir() {}

    /** The output directory is new or empty: the files of two proofs must never mix. */
    static void prepare(Path out) {
        NewDirectory.prepare(out, "prove writes a new directory");
    }

    static void write(Path f, String text) {
        try {
            Files.writeString(f, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw PathproofException.badInput("prove: cannot write " + f + ": " + e.getMessage());
        }
    }

    static String read(Path f) {
        try {
            return Files.readString(f, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw PathproofException.badInput("prove: cannot read " + f + ": " + e.getMessage());
        }
    }

    static void copy(Path from, Path to) {
        try {
            Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw PathproofException.badInput("prove: cannot copy " + from + " to " + to + ": " + e.getMessage());
        }
    }
}

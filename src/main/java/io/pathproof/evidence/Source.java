package io.pathproof.evidence;

/**
 * Where a fact was read: a file and a 1-based line, or a file and a 0-based event index (JSON traces, SQLite rows).
 * {@code line} and {@code event} are -1 when not applicable. Printed as {@code file:line} or {@code file#event}.
 */
public record Source(String file, long line, long event) {
    public static Source line(String file, long line) {
        return new Source(file, line, -1);
    }

    public static Source event(String file, long event) {
        return new Source(file, -1, event);
    }

    public static Source file(String file) {
        return new Source(file, -1, -1);
    }

    @Override
    public String toString() {
        if (line >= 0) {
            return file + ":" + line;
        }
        if (event >= 0) {
            return file + "#" + event;
        }
        return file;
    }
}

package io.pathproof.core;

/**
 * An error that ends a command with a distinct exit code and one clear line. Domain code throws it; only the CLI
 * prints it. The message names the file, line or field at fault.
 */
public class PathproofException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int exitCode;

    public PathproofException(int exitCode, String message) {
        super(message);
        this.exitCode = exitCode;
    }

    public PathproofException(int exitCode, String message, Throwable cause) {
        super(message, cause);
        this.exitCode = exitCode;
    }

    public int exitCode() {
        return exitCode;
    }

    /** Bad input data: a malformed file, an impossible topology, an unsupported version (exit 3). */
    public static PathproofException badInput(String message) {
        return new PathproofException(ExitCode.BAD_INPUT, message);
    }

    /** Wrong use of the command line: an unknown preset, a missing flag (exit 2). */
    public static PathproofException usage(String message) {
        return new PathproofException(ExitCode.USAGE, message);
    }
}

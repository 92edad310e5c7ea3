package io.pathproof.cli;

import io.pathproof.core.ExitCode;
import io.pathproof.core.PathproofException;
import java.io.PrintWriter;
import picocli.CommandLine;

/** Entry point. A thin {@code main} that returns the exit code of {@link #run}. */
public final class Main {
    private Main() {}

    public static void main(String[] args) {
        System.setProperty("java.awt.headless", "true");
        PrintWriter out = new PrintWriter(System.out, true);
        PrintWriter err = new PrintWriter(System.err, true);
        int code = run(args, out, err);
        out.flush();
        err.flush();
        System.exit(code);
    }

    /** Runs one command line with the given streams; never calls System.exit, so tests can call it in-process. */
    public static int run(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new PathproofCommand());
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            Throwable t = ex;
            while (!(t instanceof PathproofException) && t.getCause() != null && t.getCause() != t) {
                t = t.getCause();
            }
            if (t instanceof PathproofException pe) {
                err.println("pathproof: " + pe.getMessage());
                return pe.exitCode();
            }
            err.println("pathproof: internal error: " + ex);
            if (System.getenv("PATHPROOF_DEBUG") != null) {
                ex.printStackTrace(err);
            }
            return ExitCode.INTERNAL;
        });
        cl.setParameterExceptionHandler((ex, a) -> {
            // One line, not the whole usage: scripts and CI logs want the reason.
            err.println("pathproof: " + ex.getMessage());
            err.println("try: " + ex.getCommandLine().getCommandSpec().qualifiedName() + " --help");
            return ExitCode.USAGE;
        });
        return cl.execute(args);
    }
}

package io.pathproof.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * What every verb reads from picocli besides its options: its streams (the ones {@link Main#run} was given, so tests
 * read them in-process) and its command line as given. Picocli fills {@link #spec} through the subclass, whose own
 * {@code @Command} names and words the verb (this bare one only lets picocli see the field).
 */
@Command
abstract class Verb {
    @Spec
    CommandSpec spec;

    PrintWriter out() {
        return spec.commandLine().getOut();
    }

    PrintWriter err() {
        return spec.commandLine().getErr();
    }

    /** The command line as the manifest and the proof record it: {@code pathproof VERB ARGS…}. */
    List<String> commandLine() {
        List<String> cl = new ArrayList<>();
        cl.add("pathproof");
        List<String> given = spec.commandLine().getParseResult().originalArgs();
        if (given.isEmpty() || !given.get(0).equals(spec.name())) {
            cl.add(spec.name()); // picocli may hand the subcommand only its own arguments
        }
        cl.addAll(given);
        return cl;
    }
}

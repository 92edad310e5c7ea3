package io.pathproof.run;

import java.util.List;

/** How the run was asked for, as the manifest records it: the command line as given, and the tool's version. */
public record Provenance(List<String> commandLine, String tool) {
    public Provenance {
        commandLine = commandLine == null ? List.of() : List.copyOf(commandLine);
        tool = tool == null ? "pathproof" : tool;
    }
}

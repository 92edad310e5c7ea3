package io.pathproof.run;

import java.nio.file.Path;
import java.util.List;

/**
 * What both of {@link Runner}'s requests are given by name besides their job: the run directory, the faults it
 * gets, the sealed prediction it is for, the timeout, and how it was asked for. {@code B} is the request's own
 * builder, so that the setters chain on it.
 */
public abstract class LaunchBuilder<B extends LaunchBuilder<B>> {
    final Path out;
    private List<String> inject = List.of();
    private Path prediction;
    long timeoutSec;
    private List<String> commandLine = List.of();
    private String tool;

    LaunchBuilder(Path out) {
        this.out = out;
    }

    abstract B self();

    public B inject(List<String> v) {
        inject = v;
        return self();
    }

    public B prediction(Path v) {
        prediction = v;
        return self();
    }

    public B timeoutSec(long v) {
        timeoutSec = v;
        return self();
    }

    /** The command line the manifest records (as given) and the tool's version. */
    public B recorded(List<String> givenCommandLine, String toolVersion) {
        commandLine = givenCommandLine;
        tool = toolVersion;
        return self();
    }

    SealedInputs sealed() {
        return new SealedInputs(prediction, inject);
    }

    Provenance provenance() {
        return new Provenance(commandLine, tool);
    }
}

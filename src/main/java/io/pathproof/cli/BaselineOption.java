package io.pathproof.cli;

import java.nio.file.Path;
import java.util.List;
import picocli.CommandLine.Option;

/** {@code --baseline}: the baseline runs diagnose and verify-fix compare against, one option for both (a mixin). */
public final class BaselineOption {
    @Option(
            names = "--baseline",
            required = true,
            paramLabel = "RUNDIR",
            description = "the baseline run (repeat to pool runs of it)")
    List<Path> baseline;
}

package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Scenarios;
import java.nio.file.Path;

/**
 * The machine a user's own job is proven for, as {@code run -- COMMAND} and {@code prove -- COMMAND} hand it to the
 * ranks: they read it from their environment in their own working directory, so a file travels by its absolute path.
 */
final class OwnJobTopology {
    private OwnJobTopology() {}

    /** {@code given} (a preset or file, loaded once to check it) as the ranks read it: a preset's name, else a path. */
    static String forRanks(String given) {
        if (given == null) {
            return null;
        }
        return Scenarios.topology(given).name().equals(given)
                ? given
                : Path.of(given).toAbsolutePath().toString();
    }

    /**
     * {@code --nodes N} with {@code --topology NODE}: refused without the topology ({@code message}), and where the
     * topology already holds several nodes.
     */
    static void checkNodes(String topology, Integer nodes, String message) {
        if (nodes == null) {
            return;
        }
        if (topology == null) {
            throw PathproofException.usage(message);
        }
        Scenarios.cluster(Scenarios.topology(topology), nodes); // a topology of several nodes is refused here
    }
}

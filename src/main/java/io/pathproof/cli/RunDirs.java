package io.pathproof.cli;

import io.pathproof.core.PathproofException;
import io.pathproof.rundir.RunManifest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The run directories a verb compares: each must exist and hold evidence, and no run may be given twice. A run set
 * beside itself differs in nothing, so diagnose would answer "no change" and verify-fix "FIXED" about no comparison at
 * all; that is a mistake on the command line (exit 2), not a finding.
 */
final class RunDirs {
    private RunDirs() {}

    /** A run directory as one option gave it; {@code dir} is null where the option was not given. */
    record Given(String option, Path dir) {}

    /** Each directory of each repeatable option as one {@link Given}: {@code option, dirs, option, dirs, …}. */
    static Given[] given(Object... optionsAndDirs) {
        List<Given> out = new ArrayList<>();
        for (int i = 0; i + 1 < optionsAndDirs.length; i += 2) {
            String option = (String) optionsAndDirs[i];
            @SuppressWarnings("unchecked")
            List<Path> dirs = (List<Path>) optionsAndDirs[i + 1];
            if (dirs != null) {
                dirs.forEach(d -> out.add(new Given(option, d)));
            }
        }
        return out.toArray(new Given[0]);
    }

    /**
     * Refuses two options that name one run: the same directory (after links and {@code ..}), or a copy of it — a
     * manifest byte for byte the same, which two runs never have (each records its own start time and processes).
     */
    static void distinct(String verb, Given... runs) {
        List<Given> given = new ArrayList<>();
        for (Given g : runs) {
            if (g.dir() != null) {
                given.add(g);
            }
        }
        for (int i = 0; i < given.size(); i++) {
            for (int j = i + 1; j < given.size(); j++) {
                Given a = given.get(i);
                Given b = given.get(j);
                String how = same(a.dir(), b.dir());
                if (how != null) {
                    throw PathproofException.usage(
                            verb + ": " + a.option() + " " + a.dir() + " and " + b.option() + " " + b.dir() + " are "
                                    + how + ": a run compared with itself shows nothing; give two different runs");
                }
            }
        }
    }

    /** How {@code a} and {@code b} are one run ("the same run", "copies of one run"), or null when they are two. */
    private static String same(Path a, Path b) {
        if (a.toAbsolutePath().normalize().equals(b.toAbsolutePath().normalize())) {
            return "the same run";
        }
        try {
            if (Files.exists(a) && Files.exists(b) && Files.isSameFile(a, b)) {
                return "the same run";
            }
            Path ma = a.resolve(RunManifest.FILE);
            Path mb = b.resolve(RunManifest.FILE);
            if (Files.isRegularFile(ma)
                    && Files.isRegularFile(mb)
                    && Arrays.equals(Files.readAllBytes(ma), Files.readAllBytes(mb))) {
                return "copies of one run (their manifest.json files are identical)";
            }
        } catch (IOException e) {
            return null; // unreadable here is read again, and reported, by Ingest.readRun
        }
        return null;
    }
}

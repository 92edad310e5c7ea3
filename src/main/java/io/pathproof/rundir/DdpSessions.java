package io.pathproof.rundir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The later DDP sessions of a command's run: a command that builds its DDP job again after the first one ended (a
 * second {@code mp.spawn}, a restarted torchrun worker group) writes each later session as a run directory of its
 * own, {@code session-N/} inside the first one (python/pathproof_torch/_sessions.py). The first session is the run
 * directory's top level; every reader of the top level leaves these folders alone, as it would another run.
 */
public final class DdpSessions {
    private static final Pattern NAME = Pattern.compile("session-(\\d+)");

    private DdpSessions() {}

    /** True for the name of a later session's folder. */
    public static boolean isSessionFolder(String name) {
        return NAME.matcher(name).matches();
    }

    /** The later sessions' folders of {@code runDir}, in session order; none where there are none. */
    public static List<Path> later(Path runDir) {
        if (!Files.isDirectory(runDir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(runDir)) {
            return s.filter(Files::isDirectory)
                    .filter(p -> isSessionFolder(p.getFileName().toString()))
                    .sorted(Comparator.comparingLong(DdpSessions::number))
                    .toList();
        } catch (IOException e) {
            return List.of();
        }
    }

    /** The session a folder holds (2 for session-2/). */
    public static long number(Path folder) {
        Matcher m = NAME.matcher(folder.getFileName().toString());
        return m.matches() ? Long.parseLong(m.group(1)) : 1;
    }

    /**
     * Completes each later session's manifest with the launcher's turns of the run (its request, start and outcome:
     * one command ran them all), so that each is a run directory {@code accept --run} reads on its own.
     */
    public static void completeManifests(Path runDir) {
        List<Path> later = later(runDir);
        if (later.isEmpty()) {
            return;
        }
        RunManifest top = RunManifest.read(runDir);
        for (Path s : later) {
            // The session's own job turn goes last: backend and hookEvery are launcher keys too, and the session's
            // job says which ran in it.
            JobFacts own = RunManifest.read(s).job();
            for (Object turn : new Object[] {top.request(), top.start(), top.outcome(), own}) {
                if (turn != null) {
                    RunManifest.write(s, turn);
                }
            }
        }
    }
}

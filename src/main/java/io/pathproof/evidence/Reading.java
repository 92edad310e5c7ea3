package io.pathproof.evidence;

import java.util.ArrayList;
import java.util.List;

/**
 * One file as it is being read: what every reader keeps whatever its format (the rank, which the data's own may
 * correct; the bytes read; how many facts; the problems met). The facts themselves are the reader's own
 * ({@link Facts}); {@link #done} joins both into the file's {@link FileFacts}.
 */
final class Reading {
    /** Most problems listed per file; the rest are counted in one last problem, so nothing is silently lost. */
    static final int MAX_PROBLEMS = 200;

    final String file;
    final FileKind kind;
    Integer rank;
    long bytes;
    long facts;
    private final List<Problem> problems = new ArrayList<>();
    private long problemsDropped;

    Reading(String file, FileKind kind, Integer rank) {
        this.file = file;
        this.kind = kind;
        this.rank = rank;
    }

    void problem(long line, String message) {
        if (problems.size() < MAX_PROBLEMS) {
            problems.add(new Problem(file, line, message));
        } else {
            problemsDropped++;
        }
    }

    FileFacts done(Facts read) {
        List<Problem> all = new ArrayList<>(problems);
        if (problemsDropped > 0) {
            all.add(new Problem(file, 0, problemsDropped + " more problems in this file not listed"));
        }
        return new FileFacts(file, kind, rank, bytes, facts, List.copyOf(all), read);
    }
}

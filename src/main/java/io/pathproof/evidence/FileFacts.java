package io.pathproof.evidence;

/**
 * What one reader got from one file: the file, the format it was read as, its rank, the bytes and facts read, the
 * problems met (at most {@link Reading#MAX_PROBLEMS}, then one that counts the rest) and the format's own
 * {@link Facts}. Joined by {@link Assembly} in input order, so the result is deterministic.
 */
record FileFacts(
        String file,
        FileKind kind,
        Integer rank,
        long bytes,
        long factCount,
        java.util.List<Problem> problems,
        Facts facts) {}

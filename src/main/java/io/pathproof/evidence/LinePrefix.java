package io.pathproof.evidence;

import java.util.ArrayList;
import java.util.List;

/**
 * What precedes "NCCL INFO" on a line of an NCCL log (one family of {@link NcclLogReader}): NCCL's own
 * {@code host:pid:tid [cudaDev] } prefix, a launcher's tag before it, and the search for a second prefix inside one
 * line (lines torn by several writers). The keys it sets (process, thread, device) are what the other families
 * attribute lines by.
 */
final class LinePrefix {
    static final byte[] NCCL_ = Bytes.ascii("NCCL ");
    static final byte[] INFO_ = Bytes.ascii("INFO ");
    static final byte[] WARN_ = Bytes.ascii("WARN ");
    static final byte[] VERSION_ = Bytes.ascii("version ");
    private static final byte[] RANK = Bytes.ascii("rank");

    /** Hash of (host, pid) of the line, 0 when it has neither host nor launcher tag. */
    long processKey;

    long threadKey;
    long devKey;
    int cudaDev;
    int hostFrom;
    int hostTo;
    long pid;
    /** The launcher's tag of this line ("[rank3]:", "[1,3]<stdout>:", "[155]", "3:"), or null; never an NCCL rank. */
    String launcherLabel;

    private long launcherKey;
    private long lastHostKey;
    private final LongMap<String> hosts = new LongMap<>();
    /** Host names seen in this file, longest first, with their bytes (compared on every torn-line candidate). */
    private final List<String> knownHosts = new ArrayList<>();

    private final List<byte[]> knownHostBytes = new ArrayList<>();

    /** The host name of the current line's process, or null. */
    String host() {
        return hosts.get(processKey);
    }

    /** The first "NCCL " followed by INFO, WARN or version in {@code b[s, e)}, or -1. */
    static int marker(byte[] b, int s, int e) {
        int from = s;
        while (true) {
            int m = Bytes.indexOf(b, from, e, NCCL_);
            if (m < 0) {
                return -1;
            }
            int after = m + NCCL_.length;
            if (Bytes.startsWith(b, after, e, INFO_)
                    || Bytes.startsWith(b, after, e, WARN_)
                    || Bytes.startsWith(b, after, e, VERSION_)) {
                return m;
            }
            from = after;
        }
    }

    /**
     * Where a second line's NCCL prefix ({@code host:pid:tid [dev] NCCL INFO|WARN}, debug.cc:196@v2.22.3-1) starts
     * inside {@code b[from, e)}, or -1. The host may be glued to the end of the piece before it ("0 1vm:472:472"): a
     * host name already seen in this file is preferred as the longest match.
     */
    int nextFragment(byte[] b, int from, int e) {
        int m = from;
        while ((m = Bytes.indexOf(b, m, e, NCCL_)) >= 0) {
            int after = m + NCCL_.length;
            boolean info = Bytes.startsWith(b, after, e, INFO_);
            if (info || Bytes.startsWith(b, after, e, WARN_)) {
                int start = prefixStart(b, from, m, info);
                if (start >= 0) {
                    return start;
                }
            }
            m = after;
        }
        return -1;
    }

    /** The start of {@code host:pid:tid [dev] } (+ "file.cc:123 (func) " for WARN) that ends at {@code m}, or -1. */
    private int prefixStart(byte[] b, int lo, int m, boolean info) {
        int q = m - 1;
        if (q < lo || b[q] != ' ') {
            return -1;
        }
        if (!info) {
            // WARN: "[dev] file.cc:123 " or "[dev] file.cc:123 (func) ": back to the last ']' within 256 bytes.
            int limit = Math.max(lo, m - 256);
            while (q >= limit && b[q] != ']') {
                q--;
            }
            if (q < limit) {
                return -1;
            }
        } else {
            q--;
        }
        if (q < lo || b[q] != ']') {
            return -1;
        }
        int o = q - 1;
        while (o >= lo && Bytes.isDigit(b[o])) {
            o--;
        }
        if (o < lo || b[o] != '[' || o == q - 1) {
            return -1;
        }
        int te = o;
        while (te > lo && b[te - 1] == ' ') {
            te--;
        }
        // tid, pid: digits after the last two ':'.
        int c2 = te - 1;
        while (c2 >= lo && Bytes.isDigit(b[c2])) {
            c2--;
        }
        if (c2 < lo || b[c2] != ':' || c2 == te - 1) {
            return -1;
        }
        int c1 = c2 - 1;
        while (c1 >= lo && Bytes.isDigit(b[c1])) {
            c1--;
        }
        if (c1 < lo || b[c1] != ':' || c1 == c2 - 1) {
            return -1;
        }
        int hs = c1;
        while (hs > lo && b[hs - 1] != ' ' && b[hs - 1] != '\t') {
            hs--;
        }
        if (hs == c1) {
            return -1;
        }
        // The longest known host name that ends the token; else the whole token.
        for (byte[] h : knownHostBytes) {
            int start = c1 - h.length;
            if (start > hs && start >= lo && Bytes.startsWith(b, start, c1, h)) {
                return start;
            }
        }
        return hs;
    }

    /**
     * Reads what precedes "NCCL INFO": an optional launcher tag ({@code [rank3]:}, {@code [1,3]<stdout>:}, {@code [3] }),
     * timestamps, then NCCL's own {@code host:pid:tid [cudaDev] } (debug.cc:196@v2.22.3-1, debug.cc:330@v2.30.7-1).
     */
    void parse(byte[] b, int s, int m) {
        // Consecutive lines mostly share their prefix (same host:pid:tid [dev]): reuse what the last one gave.
        int n = m - s;
        if (n == lastPrefixLen && n <= lastPrefix.length && java.util.Arrays.equals(b, s, m, lastPrefix, 0, n)) {
            if (hostFrom >= 0) {
                hostFrom = s + lastHostOffset;
                hostTo = s + lastHostOffset + lastHostLen;
            }
            return;
        }
        parsePrefixFully(b, s, m);
        if (n <= lastPrefix.length) {
            System.arraycopy(b, s, lastPrefix, 0, n);
            lastPrefixLen = n;
            lastHostOffset = hostFrom - s;
            lastHostLen = hostTo - hostFrom;
        } else {
            lastPrefixLen = -1;
        }
    }

    private final byte[] lastPrefix = new byte[256];
    private int lastPrefixLen = -1;
    private int lastHostOffset;
    private int lastHostLen;

    /** NCCL's prefix of {@code b[s, m)} read whole: launcher tag, {@code [cudaDev]}, {@code host:pid:tid}, then the keys. */
    private void parsePrefixFully(byte[] b, int s, int m) {
        launcherLabel = null;
        launcherKey = -1;
        cudaDev = -1;
        pid = -1;
        hostFrom = hostTo = -1;
        int p = launcher(b, Bytes.skipSpaces(b, s, m), m);
        int devOpen = device(b, p, m);
        long tid = devOpen > p ? hostPidTid(b, p, devOpen) : -1;
        processKey = processKey(b);
        threadKey = processKey * 1000003L + tid;
        devKey = processKey * 1031L + cudaDev;
    }

    /**
     * A launcher's tag at {@code p} ({@code [rank3]:}, {@code [1,3]<stdout>:}, srun's {@code 3: }), kept as
     * {@link #launcherLabel}; returns where NCCL's own prefix starts.
     */
    private int launcher(byte[] b, int p, int m) {
        int tagFrom = p;
        if (p < m && b[p] == '[') {
            int close = p + 1;
            while (close < m && b[close] != ']') {
                close++;
            }
            if (close < m) {
                Integer r = launcherTag(b, p + 1, close, m);
                if (r != null) {
                    launcherKey = r;
                    p = close + 1;
                    if (p < m && b[p] == '<') {
                        while (p < m && b[p] != '>') {
                            p++;
                        }
                        p++;
                    }
                    if (p < m && b[p] == ':') {
                        p++;
                    }
                    launcherLabel = Bytes.string(b, tagFrom, Math.min(p, m)).strip();
                }
            }
        } else if (p < m && Bytes.isDigit(b[p])) {
            // srun --label: "%d: " (the task id, not the communicator's rank), before NCCL's own prefix.
            int d = Bytes.digitsEnd(b, p, m);
            if (d + 1 < m && b[d] == ':' && b[d + 1] == ' ' && d - p < 8) {
                launcherKey = Bytes.parseLong(b, p, d);
                launcherLabel = Bytes.string(b, p, d + 1);
                p = d + 2;
            }
        }
        return p;
    }

    /**
     * {@code [cudaDev]}: the last bracket before the marker (for WARN, "file.cc:123 " sits in between), kept as
     * {@link #cudaDev}; returns where its '[' is, or -1.
     */
    private int device(byte[] b, int p, int m) {
        int q = m - 1;
        while (q >= p && b[q] != ']') {
            q--;
        }
        if (q > p) {
            int o = q - 1;
            while (o >= p && Bytes.isDigit(b[o])) {
                o--;
            }
            if (o >= p && b[o] == '[' && o + 1 < q) {
                long d = Bytes.parseLong(b, o + 1, q);
                if (d != Bytes.NONE && d < 4096) {
                    cudaDev = (int) d;
                    return o;
                }
            }
        }
        return -1;
    }

    /** {@code host:pid:tid}, the token before {@code [cudaDev]}: sets the host's bounds and the pid; returns the tid. */
    private long hostPidTid(byte[] b, int p, int devOpen) {
        int te = devOpen;
        while (te > p && b[te - 1] == ' ') {
            te--;
        }
        int ts = te;
        while (ts > p && b[ts - 1] != ' ') {
            ts--;
        }
        int c2 = te - 1;
        while (c2 > ts && Bytes.isDigit(b[c2])) {
            c2--;
        }
        if (c2 > ts && b[c2] == ':' && c2 + 1 < te) {
            int c1 = c2 - 1;
            while (c1 > ts && Bytes.isDigit(b[c1])) {
                c1--;
            }
            if (c1 >= ts && b[c1] == ':' && c1 + 1 < c2) {
                pid = Bytes.parseLong(b, c1 + 1, c2);
                hostFrom = ts;
                hostTo = c1;
                return Bytes.parseLong(b, c2 + 1, te);
            }
        }
        return -1;
    }

    /** The line's process: a hash of host and pid (the host remembered), else of the launcher's tag, else 0. */
    private long processKey(byte[] b) {
        if (hostFrom >= 0) {
            long h = 0xcbf29ce484222325L;
            for (int i = hostFrom; i < hostTo; i++) {
                h = (h ^ b[i]) * 0x100000001b3L;
            }
            h = h * 31 + pid;
            if (h != lastHostKey) {
                if (!hosts.containsKey(h)) {
                    rememberHost(h, Bytes.string(b, hostFrom, hostTo));
                }
                lastHostKey = h;
            }
            return h;
        }
        return launcherKey >= 0 ? 0x9E3779B97F4A7C15L * (launcherKey + 1L) : 0;
    }

    /** A new host: named by its key, and (the first 64) among the names a torn line is searched for, longest first. */
    private void rememberHost(long key, String host) {
        hosts.put(key, host);
        if (knownHosts.size() < 64 && !knownHosts.contains(host)) {
            knownHosts.add(host);
            knownHosts.sort((x, y) -> y.length() - x.length());
            knownHostBytes.clear();
            for (String k : knownHosts) {
                knownHostBytes.add(Bytes.ascii(k));
            }
        }
    }

    /** A launcher tag's rank: {@code rank3}, {@code 1,3} (mpirun: job, rank) or {@code 3} when more text follows. */
    private static Integer launcherTag(byte[] b, int from, int to, int m) {
        if (Bytes.startsWith(b, from, to, RANK)) {
            long r = Bytes.parseLong(b, from + 4, to);
            return r == Bytes.NONE || r > Integer.MAX_VALUE ? null : (int) r;
        }
        int comma = -1;
        for (int i = from; i < to; i++) {
            if (b[i] == ',') {
                comma = i;
            }
        }
        if (comma > from) {
            long job = Bytes.parseLong(b, from, comma);
            long r = Bytes.parseLong(b, comma + 1, to);
            return job == Bytes.NONE || r == Bytes.NONE || r > Integer.MAX_VALUE ? null : (int) r;
        }
        // "[155] host:pid:tid [3] NCCL INFO": a bare number is a launcher rank only when NCCL's own prefix follows.
        long r = Bytes.parseLong(b, from, to);
        if (r == Bytes.NONE || r > Integer.MAX_VALUE) {
            return null;
        }
        int next = Bytes.skipSpaces(b, to + 1, m);
        return next < m && b[next] != '[' && hasDevBracket(b, next, m) ? (int) r : null;
    }

    private static boolean hasDevBracket(byte[] b, int from, int m) {
        for (int i = from; i < m; i++) {
            if (b[i] == '[') {
                return true;
            }
        }
        return false;
    }
}

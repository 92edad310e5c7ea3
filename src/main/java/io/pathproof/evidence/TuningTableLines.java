package io.pathproof.evidence;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The table of latencies and bandwidths per function, algorithm and protocol that rank 0 of a communicator prints at
 * init (one family of {@link NcclLogReader}), kept as {@link Evidence.TuningTable}. Its shapes:
 *
 * <ul>
 *   <li>2.18 on, in blocks of three algorithms: {@code "  Algorithm   |"} then {@code " %14s   %14s   %14s |"} of the
 *       algorithm's name per algorithm, {@code "  Protocol    |"} then {@code " %14s |"} per protocol (three
 *       algorithms' worth even in a last block of one), {@code " Max NThreads |"} then {@code " %14d |"}
 *       (comm->maxThreads), and per function {@code "%13s |"} then {@code "%8.1f/%6.1f |"} (comm->latencies,
 *       comm->bandwidths): graph/tuning.cc:504-533@v2.28.9-1, :548-580@v2.30.7-1, :323-349@v2.19.3-1 (two blocks of
 *       NCCL_NUM_ALGORITHMS/2), :294-330@v2.18.1-1.
 *   <li>Before: one header {@code "Latency/AlgBw |"} then {@code " %7s/%6s |"} of algorithm/protocol per column, the
 *       same Max NThreads and function rows (tuning.cc:264-285@v2.17.1-1); 2.5 without Max NThreads and with
 *       {@code "%7.1f/%5.1f|"} cells (tuning.cc:159-175@v2.5.7-1).
 * </ul>
 *
 * A row is placed by the last headers its rank printed: a row whose headers were lost is not placed (never guessed),
 * a cell is kept only when it is whole (its closing {@code |} read, or, the last one of a line cut short, both numbers
 * with the one decimal {@code %.1f} prints), and a table cut short keeps what was read. Bounded per communicator rank.
 */
final class TuningTableLines {
    /** At most this many cells (and Max NThreads cells) per communicator rank: 5 functions × 7 × 3 today. */
    static final int MAX_CELLS = 1024;
    /**
     * At most this many cells per file, whatever the communicators: only rank 0 of each prints its table, but a log of
     * thousands of communicators (or of ranks that all print) stays bounded; later cells are not kept, and said so.
     */
    static final int MAX_FILE_CELLS = 1 << 16;

    private static final byte[] MATRIX = Bytes.ascii("Enabled NCCL Func/Proto/Algo Matrix:");
    private static final byte[] LATENCY_ALGBW = Bytes.ascii("Latency/AlgBw |");
    private static final String ALGORITHM = "Algorithm";
    private static final String PROTOCOL = "Protocol";
    private static final String MAX_NTHREADS = "Max NThreads";
    /** ncclFuncStr (init.cc:49@v2.28.9-1, :52@v2.30.7-1, :39@v2.19.3-1): the labels of the rows of numbers. */
    static final Set<String> FUNCTIONS = Set.of("Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce");

    private static final Set<String> LABELS =
            Set.of(ALGORITHM, PROTOCOL, MAX_NTHREADS, "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce");
    /** A whole {@code %.1f/%.1f} cell (what a line cut inside its last cell cannot end with). */
    private static final Pattern WHOLE_CELL = Pattern.compile("^\\s*(-?\\d+\\.\\d)/\\s*(-?\\d+\\.\\d)\\s*$");

    private final NcclLogReader r;
    /** Cells kept from this file, and whether the file's bound was reported. */
    private int fileCells;

    private boolean fileFull;

    TuningTableLines(NcclLogReader r) {
        this.r = r;
    }

    /** What one communicator rank printed of its table, while the log is read. */
    static final class Table {
        /** The current block's algorithms (2.18 on), protocols, and the (algorithm, protocol) of each column. */
        private List<String> algorithms;

        private List<String[]> columns;
        final Map<String, Evidence.TuningCell> cells = new LinkedHashMap<>();
        final Map<String, Evidence.TuningThreads> threads = new LinkedHashMap<>();
        /** The first cell printed again with another value (the same rank's table twice, not the same), or null. */
        Source changedAt;

        Source changedFirst;

        /** Adds what {@code other} (read before this rank's comm line) holds; this one's cells win. */
        void absorb(Table other) {
            other.cells.forEach((k, v) -> {
                if (cells.size() < MAX_CELLS) {
                    cells.putIfAbsent(k, v);
                }
            });
            other.threads.forEach((k, v) -> {
                if (threads.size() < MAX_CELLS) {
                    threads.putIfAbsent(k, v);
                }
            });
            if (changedAt == null) {
                changedAt = other.changedAt;
                changedFirst = other.changedFirst;
            }
        }

        Evidence.TuningTable evidence(Integer rank) {
            return new Evidence.TuningTable(rank, List.copyOf(cells.values()), List.copyOf(threads.values()));
        }
    }

    /**
     * The communicator's table: that of its lowest rank that printed one (rank 0; any rank's is read). Another rank's
     * table that differs in a cell both hold is a cross-rank disagreement (every rank computes the same table from the
     * graphs all ranks agreed on, init.cc:1175-1192@v2.28.9-1); a rank's own table printed twice with another value
     * is a finding too.
     */
    static Evidence.TuningTable join(
            List<CommRank> g,
            java.util.function.Function<CommRank, Integer> rankOf,
            String label,
            List<Evidence.Finding> findings) {
        CommRank holder = null;
        for (CommRank cr : g) {
            Table t = cr.tuningTable;
            if (t == null || (t.cells.isEmpty() && t.threads.isEmpty())) {
                continue;
            }
            if (t.changedAt != null) {
                findings.add(Evidence.Finding.once(
                        "tuning-table-changed",
                        label + ": one rank printed its tuning table twice, with different values",
                        List.of(t.changedFirst, t.changedAt)));
            }
            Integer rank = rankOf.apply(cr);
            Integer best = holder == null ? null : rankOf.apply(holder);
            if (holder == null || (rank != null && (best == null || rank < best))) {
                holder = cr;
            }
        }
        if (holder == null) {
            return null;
        }
        for (CommRank cr : g) {
            Table t = cr.tuningTable;
            if (cr == holder || t == null) {
                continue;
            }
            for (Map.Entry<String, Evidence.TuningCell> en : t.cells.entrySet()) {
                Evidence.TuningCell mine = holder.tuningTable.cells.get(en.getKey());
                Evidence.TuningCell theirs = en.getValue();
                if (mine != null
                        && (mine.latencyUs().compareTo(theirs.latencyUs()) != 0
                                || mine.bandwidthGBs().compareTo(theirs.bandwidthGBs()) != 0)) {
                    findings.add(Evidence.Finding.once(
                            "cross-rank-disagreement",
                            label + ": rank " + rankOf.apply(holder) + " printed " + mine.function() + " "
                                    + mine.algorithm() + "/" + mine.protocol() + " " + mine.latencyUs() + "/"
                                    + mine.bandwidthGBs() + " in its tuning table but rank " + rankOf.apply(cr)
                                    + " printed " + theirs.latencyUs() + "/" + theirs.bandwidthGBs()
                                    + " (ranks of one communicator compute one table)",
                            List.of(mine.source(), theirs.source())));
                    break;
                }
            }
        }
        return holder.tuningTable.evidence(rankOf.apply(holder));
    }

    /**
     * Reads a line of the table (or the header of the "Enabled NCCL Func/Proto/Algo Matrix:", tuning.cc:456@v2.28.9-1,
     * whose rows follow without NCCL's prefix and are not read); false when the line is none of these. Runs on every
     * line that starts with ' ', 'R', 'E' or 'L': a row's name ends within its first 17 bytes, so the search for its
     * '|' stops there.
     */
    boolean read(byte[] b, int s, int e) {
        if (Bytes.startsWith(b, s, e, MATRIX)) {
            r.counted();
            return true;
        }
        if (Bytes.startsWith(b, s, e, LATENCY_ALGBW)) {
            oldHeader(Bytes.string(b, s + LATENCY_ALGBW.length, e));
            r.counted();
            return true;
        }
        int bar = Bytes.indexOfByte(b, s, Math.min(e, s + 17), (byte) '|');
        if (bar < 0 || bar - s > 16) {
            return false;
        }
        String label = label(Bytes.string(b, s, bar).strip());
        if (label == null) {
            return false;
        }
        switch (label) {
            case ALGORITHM -> algorithms(Bytes.string(b, bar + 1, e));
            case PROTOCOL -> protocols(Bytes.string(b, bar + 1, e));
            case MAX_NTHREADS -> maxThreads(Bytes.string(b, bar + 1, e));
            default -> function(label, b, bar + 1, e);
        }
        r.counted();
        return true;
    }

    /** The label's own constant (keys of cells share it), or null when it is no row of the table. */
    private static String label(String read) {
        for (String l : LABELS) {
            if (l.equals(read)) {
                return l;
            }
        }
        return null;
    }

    private Table table() {
        CommRank cr = r.context();
        if (cr.tuningTable == null) {
            cr.tuningTable = new Table();
        }
        return cr.tuningTable;
    }

    /** "  Algorithm   |" of a block: its algorithms; the block's protocols follow. */
    private void algorithms(String rest) {
        Table t = table();
        t.algorithms = names(rest);
        t.columns = null;
    }

    /**
     * "  Protocol    |": NCCL_NUM_PROTOCOLS names per algorithm, repeated three times whatever the block holds
     * (tuning.cc:511-516@v2.28.9-1): column i is of protocol i and of the block's algorithm i / (protocols per
     * algorithm), the count until the first name comes again.
     */
    private void protocols(String rest) {
        Table t = table();
        List<String> protos = names(rest);
        if (t.algorithms == null || t.algorithms.isEmpty() || protos.isEmpty()) {
            t.columns = null;
            r.out.problem(r.lineNo, "tuning-table Protocol header without its Algorithm header; the block is not read");
            return;
        }
        int perAlgo = protos.indexOf(protos.get(0)) == protos.lastIndexOf(protos.get(0))
                ? protos.size()
                : protos.subList(1, protos.size()).indexOf(protos.get(0)) + 1;
        List<String[]> cols = new ArrayList<>();
        for (int i = 0; i < protos.size() && i / perAlgo < t.algorithms.size(); i++) {
            cols.add(new String[] {t.algorithms.get(i / perAlgo), protos.get(i)});
        }
        t.columns = cols;
    }

    /** "Latency/AlgBw |" then " %7s/%6s |" per column (before 2.18): the columns themselves. */
    private void oldHeader(String rest) {
        Table t = table();
        t.algorithms = null;
        List<String[]> cols = new ArrayList<>();
        for (String n : names(rest)) {
            int slash = n.indexOf('/');
            String algo = slash < 0 ? "" : n.substring(0, slash).strip();
            String proto = slash < 0 ? "" : n.substring(slash + 1).strip();
            if (algo.isEmpty() || proto.isEmpty()) {
                r.out.problem(r.lineNo, "tuning-table header column '" + n + "' not understood; the table is not read");
                t.columns = null;
                return;
            }
            cols.add(new String[] {algo, proto});
        }
        t.columns = cols;
    }

    private void maxThreads(String rest) {
        Table t = placed(MAX_NTHREADS);
        if (t == null) {
            return;
        }
        List<String[]> cols = t.columns;
        List<String> values = segments(rest);
        Source src = Source.line(r.file, r.lineNo);
        for (int i = 0; i < values.size() && i < cols.size(); i++) {
            String v = values.get(i).strip();
            int n;
            try {
                n = Integer.parseInt(v);
            } catch (NumberFormatException ex) {
                r.out.problem(r.lineNo, "tuning-table Max NThreads cell '" + v + "' is not a number");
                continue;
            }
            String key = cols.get(i)[0] + '\0' + cols.get(i)[1];
            Evidence.TuningThreads old = t.threads.get(key);
            if (old == null && t.threads.size() < MAX_CELLS && room()) {
                t.threads.put(key, new Evidence.TuningThreads(cols.get(i)[0], cols.get(i)[1], n, src));
            } else if (old != null && old.maxThreads() != n) {
                changed(t, old.source(), src);
            }
        }
    }

    /**
     * A function's row: "%8.1f/%6.1f |" per column. Read from the bytes: a table's rows are most of what a log of many
     * communicators holds of it, and a cell already kept with the same value allocates nothing. A cell other than
     * {@code %.1f/%.1f} (another version's format) goes through {@link BigDecimal}.
     */
    private void function(String function, byte[] b, int from, int e) {
        Table t = placed(function);
        if (t == null) {
            return;
        }
        List<String[]> cols = t.columns;
        Source src = null;
        int i = 0;
        for (int cs = from; cs < e && i < cols.size(); i++) {
            int bar = Bytes.indexOfByte(b, cs, e, (byte) '|');
            int ce = bar < 0 ? e : bar;
            int slash = Bytes.indexOfByte(b, cs, ce, (byte) '/');
            long lat = slash < 0 ? Long.MIN_VALUE : tenths(b, cs, slash);
            long bw = slash < 0 ? Long.MIN_VALUE : tenths(b, slash + 1, ce);
            BigDecimal latD = null;
            BigDecimal bwD = null;
            if (lat == Long.MIN_VALUE || bw == Long.MIN_VALUE) {
                String v = Bytes.string(b, cs, ce);
                if (bar < 0 && !WHOLE_CELL.matcher(v).find()) {
                    break; // a cell cut short at the line's end: dropped
                }
                try {
                    latD = new BigDecimal(
                            v.substring(0, Math.max(v.indexOf('/'), 0)).strip());
                    bwD = new BigDecimal(v.substring(v.indexOf('/') + 1).strip());
                } catch (NumberFormatException | StringIndexOutOfBoundsException ex) {
                    r.out.problem(r.lineNo, "tuning-table cell '" + v.strip() + "' is not latency/bandwidth");
                    cs = ce + 1;
                    continue;
                }
            } else if (bar < 0 && !wholeAtEnd(b, cs, ce)) {
                break;
            }
            String key = function + '\0' + cols.get(i)[0] + '\0' + cols.get(i)[1];
            Evidence.TuningCell old = t.cells.get(key);
            if (old == null && t.cells.size() < MAX_CELLS && room()) {
                src = src == null ? Source.line(r.file, r.lineNo) : src;
                t.cells.put(
                        key,
                        new Evidence.TuningCell(
                                function,
                                cols.get(i)[0],
                                cols.get(i)[1],
                                latD != null ? latD : BigDecimal.valueOf(lat, 1),
                                bwD != null ? bwD : BigDecimal.valueOf(bw, 1),
                                src));
            } else if (old != null && !same(old, lat, bw, latD, bwD)) {
                changed(t, old.source(), Source.line(r.file, r.lineNo));
            }
            cs = ce + 1;
        }
    }

    private static boolean same(Evidence.TuningCell old, long lat, long bw, BigDecimal latD, BigDecimal bwD) {
        BigDecimal l = latD != null ? latD : BigDecimal.valueOf(lat, 1);
        BigDecimal w = bwD != null ? bwD : BigDecimal.valueOf(bw, 1);
        return old.latencyUs().compareTo(l) == 0 && old.bandwidthGBs().compareTo(w) == 0;
    }

    /**
     * {@code %.1f} between spaces as tenths ("  15.9" → 159, "-0.0" → 0), or Long.MIN_VALUE when the bytes are not
     * exactly one such number (more decimals, an exponent, a cut): those go through BigDecimal.
     */
    static long tenths(byte[] b, int from, int to) {
        int i = from;
        while (i < to && b[i] == ' ') {
            i++;
        }
        int j = to;
        while (j > i && b[j - 1] == ' ') {
            j--;
        }
        boolean neg = i < j && b[i] == '-';
        if (neg) {
            i++;
        }
        if (j - i < 3 || b[j - 2] != '.' || b[j - 1] < '0' || b[j - 1] > '9' || j - i > 17) {
            return Long.MIN_VALUE;
        }
        long v = 0;
        for (int k = i; k < j - 2; k++) {
            if (b[k] < '0' || b[k] > '9') {
                return Long.MIN_VALUE;
            }
            v = v * 10 + (b[k] - '0');
        }
        v = v * 10 + (b[j - 1] - '0');
        return neg ? -v : v;
    }

    /** A last cell without its bar is kept only whole: both numbers with their one decimal, as {@link #WHOLE_CELL}. */
    private static boolean wholeAtEnd(byte[] b, int from, int to) {
        return WHOLE_CELL.matcher(Bytes.string(b, from, to)).find();
    }

    /**
     * The table a row of numbers is placed in: its communicator's, whose headers this rank printed before; else null
     * and a problem (a table cut before the row, or another thread's lines between), and no communicator is opened for
     * it.
     */
    private Table placed(String row) {
        CommRank cr = r.currentOrNull();
        Table t = cr == null ? null : cr.tuningTable;
        if (t == null || t.columns == null) {
            r.out.problem(r.lineNo, "tuning-table " + row + " row without its Algorithm/Protocol header; not read");
            return null;
        }
        cr.facts++;
        return t;
    }

    /** Whether the file may keep one more cell; the first time it may not, a problem says so. */
    private boolean room() {
        if (fileCells < MAX_FILE_CELLS) {
            fileCells++;
            return true;
        }
        if (!fileFull) {
            fileFull = true;
            r.out.problem(
                    r.lineNo, "more than " + MAX_FILE_CELLS + " tuning-table cells in this file; later ones not kept");
        }
        return false;
    }

    private static void changed(Table t, Source first, Source again) {
        if (t.changedAt == null) {
            t.changedFirst = first;
            t.changedAt = again;
        }
    }

    /** The trimmed names between the bars of a header; a last one cut short (no closing bar) is dropped. */
    private static List<String> names(String rest) {
        List<String> out = new ArrayList<>();
        int from = 0;
        int bar;
        while ((bar = rest.indexOf('|', from)) >= 0) {
            String n = rest.substring(from, bar).strip();
            if (!n.isEmpty()) {
                out.add(n);
            }
            from = bar + 1;
        }
        return out;
    }

    /**
     * The cells between the bars of a row, each closed by its bar; after the last bar, a cell cut short is dropped
     * unless it is a whole {@code %.1f/%.1f} (a line cut at its end, or pasted without its bar).
     */
    private static List<String> segments(String rest) {
        List<String> out = new ArrayList<>();
        int from = 0;
        int bar;
        while ((bar = rest.indexOf('|', from)) >= 0) {
            out.add(rest.substring(from, bar));
            from = bar + 1;
        }
        String tail = rest.substring(from);
        Matcher m = WHOLE_CELL.matcher(tail);
        if (m.find()) {
            out.add(tail);
        }
        return out;
    }
}

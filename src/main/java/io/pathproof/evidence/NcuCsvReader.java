package io.pathproof.evidence;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Reader;
import java.math.BigDecimal;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads Nsight Compute CSV (checked against Nsight Compute 2025.3): {@code ncu --csv --page raw} (one wide row per
 * kernel, a units row after the header) and {@code --page details} (long: one row per metric, grouped by ID).
 * {@code ==PROF==}/{@code ==WARNING==} lines and the profiled program's own output are skipped; numbers may carry
 * thousands separators ({@code 1,024}). A tiny RFC 4180 reader keeps exact line numbers.
 */
final class NcuCsvReader implements FormatReader {
    private static final int MAX_RECORD = 1 << 23;

    private final Reading in;
    private final List<Evidence.Kernel> kernels = new ArrayList<>();

    NcuCsvReader(Reading in) {
        this.in = in;
    }

    @Override
    public Facts.Ncu facts() {
        return new Facts.Ncu(kernels);
    }

    @Override
    public void read(InputStream stream) throws IOException {
        Reader r = new BufferedReader(
                new InputStreamReader(
                        stream,
                        StandardCharsets.UTF_8
                                .newDecoder()
                                .onMalformedInput(CodingErrorAction.REPLACE)
                                .onUnmappableCharacter(CodingErrorAction.REPLACE)),
                1 << 16);
        Csv csv = new Csv(r);
        Map<String, Integer> col = null;
        String[] units = null;
        boolean details = false;
        Detail pending = null;
        List<String> rec;
        while ((rec = csv.next()) != null) {
            long line = csv.recordLine;
            if (csv.tooLong) {
                in.problem(line, "CSV record longer than " + MAX_RECORD + " characters skipped");
                continue;
            }
            if (col == null) {
                if (!rec.isEmpty() && rec.get(0).equals("ID") && rec.contains("Kernel Name")) {
                    col = new HashMap<>();
                    for (int i = 0; i < rec.size(); i++) {
                        col.putIfAbsent(rec.get(i), i);
                    }
                    details = col.containsKey("Metric Name") && col.containsKey("Metric Value");
                }
                continue;
            }
            if (rec.size() == 1 && !csv.quoted) {
                continue; // the profiled program's own output
            }
            // ncu leaves out trailing empty fields, so a row may be shorter than the header, but not shorter than the
            // columns read from it.
            int needed = needed(col, details);
            if (rec.size() <= needed) {
                in.problem(line, "expected at least " + (needed + 1) + " fields, got " + rec.size());
                continue;
            }
            String id = rec.get(col.get("ID"));
            if (!details && units == null && id.isEmpty()) {
                units = rec.toArray(new String[0]);
                continue;
            }
            if (details) {
                if (pending != null && !pending.id.equals(id)) {
                    pending.emit();
                    pending = null;
                }
                if (pending == null) {
                    pending = new Detail(id, line, rec, col);
                }
                pending.metric(rec, col, line);
            } else {
                raw(rec, col, units, line);
            }
        }
        if (pending != null) {
            pending.emit();
        }
        if (col == null) {
            in.problem(0, "no ncu CSV header (a row starting \"ID\",… with \"Kernel Name\")");
        }
    }

    private static int needed(Map<String, Integer> col, boolean details) {
        int n = Math.max(col.get("ID"), col.get("Kernel Name"));
        if (details) {
            n = Math.max(n, col.get("Metric Value"));
        }
        return n;
    }

    private static String get(List<String> rec, Map<String, Integer> col, String name) {
        Integer i = col.get(name);
        return i == null || i >= rec.size() ? null : rec.get(i);
    }

    private void raw(List<String> rec, Map<String, Integer> col, String[] units, long line) {
        String name = get(rec, col, "Kernel Name");
        int[] grid = dims(rec, col, "launch__grid_dim_", "Grid Size");
        int[] block = dims(rec, col, "launch__block_dim_", "Block Size");
        BigDecimal durUs = null;
        Integer di = col.get("gpu__time_duration.sum");
        if (di != null && di < rec.size()) {
            durUs = toUs(number(rec.get(di)), units != null && di < units.length ? units[di] : null);
        }
        if (name == null || name.isEmpty()) {
            in.problem(line, "kernel row without a Kernel Name");
            return;
        }
        kernel(name, grid, block, durUs, rec, col, line);
    }

    private void kernel(
            String name,
            int[] grid,
            int[] block,
            BigDecimal durUs,
            List<String> rec,
            Map<String, Integer> col,
            long line) {
        Long durNs = null;
        if (durUs != null) {
            BigDecimal ns = durUs.movePointRight(3);
            if (ns.scale() <= 0 || ns.stripTrailingZeros().scale() <= 0) {
                durNs = ns.longValue();
            }
        }
        kernels.add(new Evidence.Kernel(
                in.rank,
                name,
                grid,
                block,
                durUs,
                null,
                durNs,
                intOrNull(get(rec, col, "Device")),
                intOrNull(get(rec, col, "Stream")),
                KernelNames.isNccl(name),
                null,
                Source.line(in.file, line),
                null,
                null));
        in.facts++;
    }

    private static int[] dims(List<String> rec, Map<String, Integer> col, String metric, String tupleColumn) {
        String x = get(rec, col, metric + "x");
        String y = get(rec, col, metric + "y");
        String z = get(rec, col, metric + "z");
        if (x != null && y != null && z != null) {
            Integer a = intOrNull(x);
            Integer b = intOrNull(y);
            Integer c = intOrNull(z);
            if (a != null && b != null && c != null) {
                return new int[] {a, b, c};
            }
        }
        return tuple(get(rec, col, tupleColumn));
    }

    /** "(256, 1, 1)" → {256, 1, 1}. */
    static int[] tuple(String s) {
        if (s == null) {
            return null;
        }
        String t = s.strip();
        if (!t.startsWith("(") || !t.endsWith(")")) {
            return null;
        }
        String[] parts = t.substring(1, t.length() - 1).split(",");
        if (parts.length != 3) {
            return null;
        }
        int[] d = new int[3];
        for (int i = 0; i < 3; i++) {
            Integer v = intOrNull(parts[i]);
            if (v == null) {
                return null;
            }
            d[i] = v;
        }
        return d;
    }

    static BigDecimal number(String s) {
        if (s == null) {
            return null;
        }
        String t = s.strip().replace(",", "");
        if (t.isEmpty() || t.length() > 40) {
            return null;
        }
        try {
            return new BigDecimal(t);
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private static Integer intOrNull(String s) {
        BigDecimal d = number(s);
        if (d == null) {
            return null;
        }
        try {
            return d.intValueExact();
        } catch (ArithmeticException e) {
            return null;
        }
    }

    /** A duration in the unit ncu printed (nsecond, usecond, msecond, second; or ns, us, ms, s) → µs, exactly. */
    static BigDecimal toUs(BigDecimal v, String unit) {
        if (v == null || unit == null) {
            return null;
        }
        return switch (unit.strip().toLowerCase(Locale.ROOT)) {
            case "nsecond", "ns" -> v.movePointLeft(3);
            case "usecond", "us" -> v;
            case "msecond", "ms" -> v.movePointRight(3);
            case "second", "s" -> v.movePointRight(6);
            default -> null;
        };
    }

    /** The rows of one kernel in the details page. */
    private final class Detail {
        final String id;
        final long line;
        final String name;
        int[] grid;
        int[] block;
        BigDecimal durUs;
        final List<String> first;
        final Map<String, Integer> col;

        Detail(String id, long line, List<String> rec, Map<String, Integer> col) {
            this.id = id;
            this.line = line;
            this.name = get(rec, col, "Kernel Name");
            this.grid = tuple(get(rec, col, "Grid Size"));
            this.block = tuple(get(rec, col, "Block Size"));
            this.first = new ArrayList<>(rec);
            this.col = col;
        }

        void metric(List<String> rec, Map<String, Integer> col, long line) {
            String metric = get(rec, col, "Metric Name");
            if ("Duration".equals(metric)) {
                durUs = toUs(number(get(rec, col, "Metric Value")), get(rec, col, "Metric Unit"));
            } else if ("Grid Size".equals(metric) && grid == null) {
                grid = launchDims(get(rec, col, "Metric Value"));
            } else if ("Block Size".equals(metric) && block == null) {
                block = launchDims(get(rec, col, "Metric Value"));
            }
        }

        /**
         * The older layout (no Grid/Block Size columns; section "Launch Statistics" rows "Grid Size", "Block Size") gives
         * a tuple or one number, the product of the three dimensions. One number is a shape only for an NCCL kernel,
         * whose grid and block are one-dimensional ({@code dim3 grid = {nChannels, 1, 1}}, enqueue.cc:1570@v2.28.9-1).
         */
        private int[] launchDims(String value) {
            int[] t = tuple(value);
            if (t != null) {
                return t;
            }
            Integer n = intOrNull(value);
            return n != null && name != null && KernelNames.isNccl(name) ? new int[] {n, 1, 1} : null;
        }

        void emit() {
            if (name == null || name.isEmpty()) {
                in.problem(line, "kernel " + id + " without a Kernel Name");
                return;
            }
            kernel(name, grid, block, durUs, first, col, line);
        }
    }

    /** RFC 4180 records with the line each starts on; lines starting "==" outside quotes are ncu's own noise. */
    static final class Csv {
        private final Reader r;
        long line = 1;
        long recordLine;
        boolean quoted;
        boolean tooLong;
        private int peek = -2;

        Csv(Reader r) {
            this.r = r;
        }

        private int read() throws IOException {
            if (peek != -2) {
                int c = peek;
                peek = -2;
                return c;
            }
            return r.read();
        }

        List<String> next() throws IOException {
            while (true) {
                recordLine = line;
                quoted = false;
                tooLong = false;
                int c = read();
                if (c < 0) {
                    return null;
                }
                if (c == '=') {
                    int d = read();
                    if (d == '=') {
                        skipLine();
                        continue;
                    }
                    peek = d;
                }
                if (c == '\n') {
                    line++;
                    continue;
                }
                return record(c);
            }
        }

        private void skipLine() throws IOException {
            int c;
            while ((c = read()) >= 0 && c != '\n') {
                // skip
            }
            if (c == '\n') {
                line++;
            }
        }

        private List<String> record(int c) throws IOException {
            List<String> fields = new ArrayList<>();
            StringBuilder sb = new StringBuilder();
            boolean inQuotes = false;
            long size = 0;
            while (true) {
                if (c < 0) {
                    fields.add(sb.toString());
                    return fields;
                }
                if (++size > MAX_RECORD) {
                    tooLong = true;
                    sb.setLength(0);
                }
                if (inQuotes) {
                    if (c == '"') {
                        int d = read();
                        if (d == '"') {
                            append(sb, '"');
                        } else {
                            inQuotes = false;
                            c = d;
                            continue;
                        }
                    } else {
                        if (c == '\n') {
                            line++;
                        }
                        append(sb, (char) c);
                    }
                } else if (c == '"') {
                    inQuotes = true;
                    quoted = true;
                } else if (c == ',') {
                    fields.add(sb.toString());
                    sb.setLength(0);
                } else if (c == '\n') {
                    line++;
                    if (sb.length() > 0 && sb.charAt(sb.length() - 1) == '\r') {
                        sb.setLength(sb.length() - 1);
                    }
                    fields.add(sb.toString());
                    return fields;
                } else {
                    append(sb, (char) c);
                }
                c = read();
            }
        }

        private void append(StringBuilder sb, char c) {
            if (!tooLong) {
                sb.append(c);
            }
        }
    }
}

package io.pathproof.evidence;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteOpenMode;

/**
 * Reads an Nsight Systems SQLite export ({@code nsys export --type sqlite}), opened read-only. Tables and columns
 * are discovered first (sqlite_master, PRAGMA table_info) because they change between nsys releases: kernels from
 * {@code CUPTI_ACTIVITY_KIND_KERNEL} (start/end ns, deviceId, streamId, gridX..Z, blockX..Z, names as ids into
 * {@code StringIds}: demangledName, shortName, or a text {@code name} in old exports), NVTX ranges from
 * {@code NVTX_EVENTS} (text, or textId into StringIds). Only identifiers read from the schema are ever put in SQL.
 */
final class NsysReader {
    static final String KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL";
    static final String NVTX = "NVTX_EVENTS";
    static final String STRINGS = "StringIds";
    static final String MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY";
    static final String MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET";
    /** CUpti_ActivityMemcpyKind (cupti_activity.h): the copyKind column's values. */
    private static final String[] COPY_KINDS = {
        "unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA", "AtoD", "DtoA", "DtoD", "HtoH", "PtoP"
    };

    private NsysReader() {}

    static void read(Path f, Reading in, Facts.Trace.Builder t) {
        SQLiteConfig config = new SQLiteConfig();
        config.setReadOnly(true);
        config.setOpenMode(SQLiteOpenMode.READONLY);
        // The driver directly, not DriverManager: no dependence on service files surviving the fat jar.
        try (Connection c =
                org.sqlite.JDBC.createConnection("jdbc:sqlite:" + f.toAbsolutePath(), config.toProperties())) {
            Map<String, Set<String>> tables = schema(c);
            boolean strings = tables.containsKey(STRINGS)
                    && tables.get(STRINGS).contains("id")
                    && tables.get(STRINGS).contains("value");
            if (!tables.containsKey(KERNELS)) {
                in.problem(
                        0,
                        "no " + KERNELS + " table: this export holds no CUDA kernel activity (was --trace=cuda set?)");
            } else {
                kernels(c, tables.get(KERNELS), strings, in, t);
            }
            if (tables.containsKey(NVTX)) {
                nvtx(c, tables.get(NVTX), strings, in, t);
            }
            if (tables.containsKey(MEMCPY)) {
                copies(c, MEMCPY, tables.get(MEMCPY), in, t);
            }
            if (tables.containsKey(MEMSET)) {
                copies(c, MEMSET, tables.get(MEMSET), in, t);
            }
        } catch (SQLException e) {
            in.problem(0, "not a readable SQLite export: " + firstLine(e.getMessage()));
        }
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "unknown error";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    private static Map<String, Set<String>> schema(Connection c) throws SQLException {
        Map<String, Set<String>> tables = new HashMap<>();
        List<String> names = new ArrayList<>();
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT name FROM sqlite_master WHERE type IN ('table','view')")) {
            while (rs.next()) {
                names.add(rs.getString(1));
            }
        }
        for (String t : names) {
            if (!t.equals(KERNELS) && !t.equals(NVTX) && !t.equals(STRINGS) && !t.equals(MEMCPY) && !t.equals(MEMSET)) {
                continue;
            }
            Set<String> cols = new LinkedHashSet<>();
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("PRAGMA table_info(" + q(t) + ")")) {
                while (rs.next()) {
                    cols.add(rs.getString("name"));
                }
            }
            tables.put(t, cols);
        }
        return tables;
    }

    private static String q(String identifier) {
        return "\"" + identifier.replace("\"", "\"\"") + "\"";
    }

    private static String col(Set<String> cols, String name) {
        return cols.contains(name) ? "k." + q(name) : "NULL";
    }

    private static void kernels(Connection c, Set<String> cols, boolean strings, Reading in, Facts.Trace.Builder t)
            throws SQLException {
        if (!cols.contains("start") || !cols.contains("end")) {
            in.problem(0, KERNELS + " has no start/end columns");
            return;
        }
        String nameExpr;
        String join = "";
        String nameCol =
                cols.contains("demangledName") ? "demangledName" : cols.contains("shortName") ? "shortName" : null;
        if (nameCol != null && strings) {
            nameExpr = "s.value";
            join = " LEFT JOIN " + q(STRINGS) + " s ON s.id = k." + q(nameCol);
        } else if (cols.contains("name")) {
            nameExpr = "k.\"name\"";
        } else {
            in.problem(0, KERNELS + " has no kernel name (no demangledName/shortName with StringIds, no name column)");
            return;
        }
        String sql = "SELECT k.\"start\", k.\"end\", " + col(cols, "deviceId") + ", " + col(cols, "streamId") + ", "
                + col(cols, "gridX") + ", " + col(cols, "gridY") + ", " + col(cols, "gridZ") + ", "
                + col(cols, "blockX")
                + ", " + col(cols, "blockY") + ", " + col(cols, "blockZ") + ", " + nameExpr + " FROM " + q(KERNELS)
                + " k" + join + " ORDER BY k.\"start\"";
        eachRow(c, sql, (rs, row, start, end) -> {
            String name = rs.getString(11);
            if (start == null || end == null || name == null || end < start) {
                in.problem(row + 1, KERNELS + " row " + (row + 1) + ": start, end and name are required (end ≥ start)");
                return;
            }
            long dur = end - start;
            t.kernels.add(new Evidence.Kernel(
                    in.rank,
                    name,
                    dims(rs, 5),
                    dims(rs, 8),
                    BigDecimal.valueOf(dur, 3),
                    start,
                    dur,
                    intOrNull(rs, 3),
                    intOrNull(rs, 4),
                    KernelNames.isNccl(name),
                    null,
                    Source.event(in.file, row),
                    null,
                    null));
            in.facts++;
        });
    }

    private static void nvtx(Connection c, Set<String> cols, boolean strings, Reading in, Facts.Trace.Builder t)
            throws SQLException {
        if (!cols.contains("start") || !cols.contains("end")) {
            in.problem(0, NVTX + " has no start/end columns");
            return;
        }
        String text = cols.contains("text") ? "k.\"text\"" : "NULL";
        String join = "";
        if (cols.contains("textId") && strings) {
            text = "COALESCE(" + text + ", s.value)";
            join = " LEFT JOIN " + q(STRINGS) + " s ON s.id = k.\"textId\"";
        }
        String sql =
                "SELECT k.\"start\", k.\"end\", " + text + " FROM " + q(NVTX) + " k" + join + " ORDER BY k.\"start\"";
        eachRow(c, sql, (rs, row, start, end) -> {
            String name = rs.getString(3);
            if (start == null || end == null || name == null || end < start) {
                return;
            }
            Source src = Source.event(in.file, row);
            if (t.ranges.size() < KinetoReader.MAX_RANGES) {
                t.ranges.add(new Evidence.Range(in.rank, name, "nvtx", start, end - start, src));
            }
            in.facts++;
            // NCCL's own NVTX ranges are named after the API call (ncclAllReduce); torch's are nccl:all_reduce.
            if (name.startsWith("nccl:")
                    || name.startsWith("ncclAllReduce")
                    || name.startsWith("ncclReduceScatter")
                    || name.startsWith("ncclAllGather")
                    || name.startsWith("ncclBroadcast")) {
                if (t.collectiveMarkers++ == 0) {
                    t.firstCollectiveMarker = src;
                }
            }
        });
    }

    /** Memcpy (copyKind from CUpti_ActivityMemcpyKind) and memset rows → copies[], in start order. */
    private static void copies(Connection c, String table, Set<String> cols, Reading in, Facts.Trace.Builder t)
            throws SQLException {
        if (!cols.contains("start") || !cols.contains("end")) {
            in.problem(0, table + " has no start/end columns");
            return;
        }
        boolean memset = table.equals(MEMSET);
        String sql = "SELECT k.\"start\", k.\"end\", " + col(cols, "bytes") + ", " + col(cols, "deviceId") + ", "
                + col(cols, "streamId") + ", " + (memset ? "NULL" : col(cols, "copyKind")) + " FROM " + q(table)
                + " k ORDER BY k.\"start\"";
        eachRow(c, sql, (rs, row, start, end) -> {
            if (start == null || end == null || end < start) {
                in.problem(row + 1, table + " row " + (row + 1) + ": start and end are required (end ≥ start)");
            } else if (t.copies.size() < KinetoReader.MAX_RANGES) {
                Integer kind = intOrNull(rs, 6);
                String k = memset
                        ? "memset"
                        : kind != null && kind >= 0 && kind < COPY_KINDS.length ? COPY_KINDS[kind] : "unknown";
                t.copies.add(new Evidence.Copy(
                        in.rank,
                        k,
                        longOrNull(rs, 3),
                        start,
                        end - start,
                        intOrNull(rs, 4),
                        intOrNull(rs, 5),
                        Source.event(in.file + ":" + table, row)));
                in.facts++;
            }
        });
    }

    /** One row of a query whose first two columns are its start and end (null where not a whole number). */
    private interface TimedRow {
        void read(ResultSet rs, long row, Long start, Long end) throws SQLException;
    }

    /** Runs {@code sql}, whose first two columns are start and end, numbering its rows from 0. */
    private static void eachRow(Connection c, String sql, TimedRow each) throws SQLException {
        long row = 0;
        try (Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            while (rs.next()) {
                each.read(rs, row++, longOrNull(rs, 1), longOrNull(rs, 2));
            }
        }
    }

    private static int[] dims(ResultSet rs, int first) throws SQLException {
        Integer x = intOrNull(rs, first);
        Integer y = intOrNull(rs, first + 1);
        Integer z = intOrNull(rs, first + 2);
        return x == null || y == null || z == null ? null : new int[] {x, y, z};
    }

    private static Long longOrNull(ResultSet rs, int i) throws SQLException {
        Object o = rs.getObject(i);
        return o instanceof Number n && !(o instanceof Double) && !(o instanceof Float) ? n.longValue() : null;
    }

    private static Integer intOrNull(ResultSet rs, int i) throws SQLException {
        Long l = longOrNull(rs, i);
        return l == null || l > Integer.MAX_VALUE || l < Integer.MIN_VALUE ? null : l.intValue();
    }
}

package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 12: memcpy and memset activities of an nsys SQLite export as copies[]. */
class NsysCopiesTest {
    @Test
    void memcpyAndMemsetRowsBecomeCopiesWithTheirKind(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("report_rank3.sqlite");
        OtherReadersTest.nsysDb(f, true);
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + f);
                Statement s = c.createStatement()) {
            // Column names as nsys exports them (CUPTI_ACTIVITY_KIND_MEMCPY: copyKind is CUpti_ActivityMemcpyKind).
            s.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                    + " deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,"
                    + " globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, deprecatedSrcId INTEGER,"
                    + " srcKind INTEGER, dstKind INTEGER, srcDeviceId INTEGER, srcContextId INTEGER, dstDeviceId INTEGER,"
                    + " dstContextId INTEGER, migrationCause INTEGER, graphNodeId INTEGER, virtualAddress INTEGER)");
            s.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, streamId, bytes, copyKind) VALUES"
                    + " (2000, 2500, 0, 7, 67108864, 8), (100, 150, 0, 7, 4, 1), (3000, 2000, 0, 7, 1, 2)");
            s.execute("CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL,"
                    + " deviceId INTEGER NOT NULL, contextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER,"
                    + " globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL, graphNodeId INTEGER,"
                    + " memKind INTEGER)");
            s.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, streamId, value, bytes) VALUES"
                    + " (400, 410, 0, 20, 0, 4096)");
        }
        Evidence ev = Ingest.read(List.of(f));
        assertThat(ev.copies()).extracting(Evidence.Copy::kind).containsExactly("HtoD", "DtoD", "memset");
        Evidence.Copy dtod = ev.copies().get(1);
        assertThat(dtod.bytes()).isEqualTo(67_108_864L);
        assertThat(dtod.startNs()).isEqualTo(2000L);
        assertThat(dtod.durNs()).isEqualTo(500L);
        assertThat(dtod.stream()).isEqualTo(7);
        assertThat(dtod.rank()).isEqualTo(3);
        assertThat(dtod.source().toString()).endsWith("report_rank3.sqlite:CUPTI_ACTIVITY_KIND_MEMCPY#1");
        assertThat(ev.copies().get(2).stream()).isEqualTo(20);
        // The row with end < start is a problem, not a copy; NVTX ranges are still read.
        assertThat(ev.problems()).singleElement().satisfies(p -> assertThat(p.message())
                .contains("MEMCPY row 3"));
        assertThat(ev.ranges()).extracting(Evidence.Range::name).contains("nccl:all_reduce");
    }
}

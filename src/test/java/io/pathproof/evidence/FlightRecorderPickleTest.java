package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Flight-recorder dumps: process groups, version, pg_status, and torch's default pickle read without running it. */
class FlightRecorderPickleTest {
    private static final String DIR = "flight-recorder-pickle/";

    @Test
    void theJsonDumpGivesEachEntrysProcessGroupAndTheDumpsHeader() {
        Evidence ev = Ingest.read(List.of(Read.res("h200-1rank/flight-recorder.json")));
        Evidence.FlightDump d = ev.flightRecorderDumps().get(0);
        assertThat(d.format()).isEqualTo("json");
        assertThat(d.version()).isEqualTo("2.10");
        assertThat(d.ncclVersion()).isEqualTo("2.28.9");
        assertThat(d.processGroups()).containsExactly(new Evidence.ProcessGroup("0", "default_pg", 1, List.of(0)));
        assertThat(d.pgStatus().get("0")).isEqualTo(new Evidence.PgStatus(9L, 4L, 4L));
        assertThat(ev.flightRecorder()).isNotEmpty();
        assertThat(ev.flightRecorder())
                .allMatch(r -> r.processGroup() != null
                        && r.processGroup().desc().equals("default_pg")
                        && r.processGroup().ranks().equals(List.of(0)));
    }

    @Test
    void torchsDefaultPickleGivesTheSameFactsAsTheJsonDump() {
        Evidence json = Ingest.read(List.of(Read.res("h200-1rank/flight-recorder.json")));
        for (String name : List.of("nccl_trace_rank_0", "nccl_trace_rank_0.p5")) {
            Evidence ev = Ingest.read(List.of(Read.res(DIR + name)));
            assertThat(ev.problems()).as(name).isEmpty();
            assertThat(ev.files().get(0).kind()).isEqualTo(FileKind.FLIGHT_RECORDER);
            assertThat(ev.files().get(0).rank()).isZero();
            Evidence.FlightDump d = ev.flightRecorderDumps().get(0);
            assertThat(d.format()).isEqualTo("pickle");
            assertThat(d.version()).isEqualTo("2.10");
            assertThat(d.pgStatus().get("0")).isEqualTo(new Evidence.PgStatus(9L, 4L, 4L));
            assertThat(ev.nccl().version()).isEqualTo("2.28.9");
            assertThat(ev.flightRecorder()).hasSameSizeAs(json.flightRecorder());
            for (int i = 0; i < ev.flightRecorder().size(); i++) {
                Evidence.FlightRecord p = ev.flightRecorder().get(i);
                Evidence.FlightRecord j = json.flightRecorder().get(i);
                assertThat(p.profilingName()).isEqualTo(j.profilingName());
                assertThat(p.inputSizes()).isEqualTo(j.inputSizes());
                assertThat(p.durationMs()).isEqualTo(j.durationMs());
                assertThat(p.timeCreatedNs()).isEqualTo(j.timeCreatedNs());
                assertThat(p.processGroup()).isEqualTo(j.processGroup());
            }
        }
    }

    @Test
    void aPickleThatNamesAFunctionIsRefusedBeforeAnythingRuns() {
        // pickle.dumps of a __reduce__ to os.system, protocol 2: PROTO, GLOBAL 'posix system', ..., REDUCE.
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.write(0x80);
        b.write(2);
        b.writeBytes("cposix\nsystem\nq\u0000X\u0004\u0000\u0000\u0000trueq\u0001\u0085q\u0002Rq\u0003."
                .getBytes(StandardCharsets.ISO_8859_1));
        FileFacts ff = Read.facts(FileKind.FLIGHT_RECORDER, "nccl_trace_rank_3", b.toByteArray());
        assertThat(((Facts.Flight) ff.facts()).records()).isEmpty();
        assertThat(ff.problems()).hasSize(1);
        assertThat(ff.problems().get(0).message())
                .contains("byte 2")
                .contains("GLOBAL")
                .contains("refused");
    }

    @Test
    void aReduceHiddenInsideADumpIsRefusedToo() {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        b.writeBytes(new byte[] {(byte) 0x80, 2, '}', '('});
        b.writeBytes("X\u0007\u0000\u0000\u0000version".getBytes(StandardCharsets.ISO_8859_1));
        b.writeBytes(new byte[] {')', 'R', 'u', '.'});
        FileFacts ff = Read.facts(FileKind.FLIGHT_RECORDER, "nccl_trace_rank_0", b.toByteArray());
        assertThat(ff.problems().get(0).message()).contains("REDUCE");
    }

    @Test
    void truncatedAndPlainPicklesAreProblemsNamingTheFile() {
        FileFacts cut = Read.facts(
                FileKind.FLIGHT_RECORDER, "nccl_trace_rank_0", new byte[] {(byte) 0x80, 2, '}', '(', 'X', 9});
        assertThat(cut.problems().get(0).message()).contains("pickle");
        FileFacts plain =
                Read.facts(FileKind.FLIGHT_RECORDER, "nccl_trace_rank_0", new byte[] {(byte) 0x80, 2, ']', '.'});
        assertThat(plain.problems().get(0).message()).contains("not a flight-recorder dump");
        List<Problem> named = new java.util.ArrayList<>();
        byte[] notADump = {(byte) 0x80, 2, ']', 'q', 0, '.'};
        assertThat(Ingest.sniff("weights.pkl", notADump)).isNull();
        assertThat(Ingest.sniff(
                        "nccl_trace_rank_0",
                        new byte[] {(byte) 0x80, 2, '}', 'X', 9, 0, 0, 0, 'p', 'g', '_', 'c', 'o', 'n', 'f', 'i', 'g'}))
                .isEqualTo(FileKind.FLIGHT_RECORDER);
        assertThat(named).isEmpty();
    }
}

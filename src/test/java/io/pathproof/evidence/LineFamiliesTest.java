package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.core.Json;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The byte-level readers of the init-line families against the regexes they replaced: on every real log of the test
 * resources, on all of them concatenated, and on lines of unusual shape, both paths must give the same evidence
 * (facts, sources, problems), JSON for JSON.
 */
class LineFamiliesTest {
    private static final String P = "gpu01:1234:1240 [0] NCCL INFO ";

    /** Lines whose shape the byte paths do not take (numbers past int, odd decimals, …): the regex decides. */
    private static final String ODD = P
            + "ncclCommInitRankConfig comm 0x7f00aa rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0xABCDEF - Init START\n"
            + P + "4 coll channels, 4 collnet channels, 0 nvls channels, 4 p2p channels, 1 p2p channels per peer\n"
            + P + "12345678901 coll channels, 4 p2p channels, 1 p2p channels per peer\n"
            + P + "threadThresholds 8/8/64 | 32/8/64 | 512 | 512   \n"
            + P + "Pattern 4, crossNic 0, nChannels 2, speed 0.100000/12.5, type NVL/B/PIX, sameChannels 0\n"
            + P + "Pattern 4, crossNic 0, nChannels 2, bw 0.1/1.2.3, type NVL/PIX, sameChannels 1\n"
            + P + "comm 0x7f00aa rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0\n"
            + P
            + "ncclCommInitRankConfig comm 0x7f00aa rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0xABCDEF - Init COMPLETE\n"
            + P + "Init timings - ncclCommInitRankConfig: rank 0 nranks 4 total .5 (kernels 0.15, alloc .08, rest 1)\n"
            + P + "Init timings - x: rank 0 nranks 4 total 1.5 (no phases here)\n"
            + P + "Init timings: rank 0 nranks 4 total 0.82 (bootstrap 0.00, topo2 0.17, connections 0.320)\n"
            + P + "comm 0x7f00bb rank 99999999999 nranks 2 cudaDev 1 busId 19000 - Init COMPLETE\n"
            + P + "comm (nil) rank 1 nranks 2 cudaDev 1 busId 19000 - Init COMPLETE\n"
            + P
            + "comm 0x0000000000000000000000000abc rank 1 nranks 2 cudaDev 1 busId 19000 commId 0x - Init COMPLETE\n"
            + P + "comm 0x7f00cc rank 1 nranks 2 cudaDev 1 busId 19000 - Init DONE\n"
            + P + "ncclCommSplit comm 0x7f00dd rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 parent 0x7f00aa color"
            + " 2000000001 key 0 commId 0x7e57 - Init START\n"
            + P + "ncclCommSplit comm 0x7f00ee rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 parent 0x7f00aa"
            + " childCount 2 color 3 key 0- Init START\n"
            + P + "ncclCommSplit comm 0x7f00ef rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 parent 0x7f00aa"
            + " splitCount 2 color 99999999999 key 0 - Init COMPLETE\n"
            + P + "2 coll channels, 2 nvls channels, 2 collnet channels, 2 p2p channels, 2 p2p channels per peer\n";

    @Test
    void bytePathsAndRegexesAgreeOnEveryTestLog() throws IOException {
        List<Path> logs;
        try (Stream<Path> s = Files.walk(Read.RES)) {
            logs = s.filter(p -> p.toString().endsWith(".log")).sorted().toList();
        }
        assertThat(logs).hasSizeGreaterThanOrEqualTo(10);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (Path log : logs) {
            byte[] content = Files.readAllBytes(log);
            assertSameEvidence(log.getFileName().toString(), content);
            all.write(content);
        }
        // Concatenated, communicators are re-initialised and lines repeat: the attribution must agree as well.
        assertSameEvidence("all.log", all.toByteArray());
    }

    @Test
    void bytePathsAndRegexesAgreeOnOddShapes() throws IOException {
        assertSameEvidence("odd.log", ODD.getBytes(StandardCharsets.UTF_8));
        Evidence ev = read("odd.log", ODD.getBytes(StandardCharsets.UTF_8), true);
        Evidence.Communicator c = ev.nccl().communicators().stream()
                .filter(x -> "0xabcdef".equals(x.commId()))
                .findFirst()
                .orElseThrow();
        assertThat(c.threadThresholds()).isEqualTo("8/8/64 | 32/8/64 | 512 | 512");
        assertThat(c.rankInits().get(0).initTotalS()).isEqualByComparingTo("0.82");
        assertThat(c.rankInits().get(0).initPhasesS())
                .containsEntry("bootstrap", new BigDecimal("0.00"))
                .containsEntry("connections", new BigDecimal("0.320"))
                .doesNotContainKey("topo2")
                .doesNotContainKey("topo");
        assertThat(c.graphs()).hasSize(1);
        assertThat(c.graphs().get(0).bwIntra()).isEqualTo(0.1);
        assertThat(c.graphs().get(0).typeIntra()).isEqualTo("NVL/B");
        assertThat(c.graphs().get(0).typeInter()).isEqualTo("PIX");
        assertThat(ev.problems())
                .extracting(Problem::message)
                .contains("Pattern (graph) line has a number out of range");
        assertThat(ev.problems())
                .extracting(Problem::message)
                .contains(
                        "channel-count line has a number out of range",
                        "number out of range: 99999999999",
                        "comm init line not understood",
                        "channel-count line not understood");
    }

    private static void assertSameEvidence(String name, byte[] content) throws IOException {
        String fast = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(read(name, content, true));
        String slow = Json.mapper().writerWithDefaultPrettyPrinter().writeValueAsString(read(name, content, false));
        assertThat(fast).as(name).isEqualTo(slow);
    }

    private static Evidence read(String name, byte[] content, boolean bytePaths) {
        Reading in = new Reading(name, FileKind.NCCL_LOG, Ingest.rankFromName(Path.of(name)));
        NcclLogReader reader = new NcclLogReader(in, in.rank, bytePaths);
        reader.read(new ByteArrayInputStream(content));
        return Read.files(in.done(reader.facts()));
    }
}

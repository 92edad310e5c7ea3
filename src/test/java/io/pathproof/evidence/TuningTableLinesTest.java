package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The tuning table rank 0 prints at init, read into the communicator's evidence: real logs of NCCL 2.28.9 (three
 * blocks, PAT in the last) and 2.21.5 (two blocks of three algorithms), the layouts before 2.18 and of 2.5 written from
 * their format strings (no log of them is kept), and tables cut short or printed by two ranks.
 */
class TuningTableLinesTest {
    private static final String A = "nodeA:285:285 [0] NCCL INFO ";
    private static final String B = "nodeA:286:286 [1] NCCL INFO ";
    private static final String START0 = A
            + "ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xabc - Init START\n";
    private static final String START1 = B
            + "ncclCommInitRank comm 0x20 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 1c000 commId 0xabc - Init START\n";

    private static Evidence.TuningTable table(Evidence ev) {
        assertThat(ev.nccl().communicators()).hasSize(1);
        return ev.nccl().communicators().get(0).tuningTable();
    }

    private static Evidence ingest(String file) throws IOException {
        return Ingest.read(List.of(Path.of(file)));
    }

    @Test
    void nccl2289PrintsThreeBlocksAndEveryCellIsKeptWithItsLine() throws IOException {
        String log = "samples/emulated-h200-x4-prove/baseline/nccl-rank0.log";
        Evidence ev = ingest(log);
        Evidence.TuningTable t = table(ev);
        assertThat(t.rank()).isZero();
        // 5 functions x 7 algorithms (Tree … PAT) x 3 protocols; Max NThreads of each algorithm and protocol.
        assertThat(t.cells()).hasSize(105);
        assertThat(t.maxThreads()).hasSize(21);
        Evidence.TuningCell ringSimple = t.cell("AllReduce", "Ring", "Simple");
        assertThat(ringSimple.latencyUs()).isEqualByComparingTo("28.8");
        assertThat(ringSimple.bandwidthGBs()).isEqualByComparingTo("240.0");
        assertThat(ringSimple.source()).isEqualTo(Source.line(log, 179));
        assertThat(Files.readAllLines(Path.of(log)).get(178))
                .contains("AllReduce |")
                .contains("28.8/ 240.0");
        // The second block: CollNetChain, NVLS, NVLSTree; the third: PAT alone under a nine-protocol header.
        assertThat(t.cell("AllReduce", "CollNetChain", "Simple").latencyUs()).isEqualByComparingTo("46.8");
        assertThat(t.cell("AllReduce", "CollNetChain", "Simple").source().line())
                .isEqualTo(187);
        assertThat(t.cell("AllReduce", "PAT", "Simple").source().line()).isEqualTo(195);
        assertThat(t.cell("AllGather", "CollNetDirect", "LL").latencyUs()).isEqualByComparingTo("2.4");
        assertThat(t.threads("Tree", "LL128").maxThreads()).isEqualTo(640);
        assertThat(t.threads("Tree", "LL128").source().line()).isEqualTo(174);
        assertThat(t.threads("NVLSTree", "Simple").maxThreads()).isEqualTo(640);
        assertThat(t.threads("PAT", "Simple").maxThreads()).isZero();
        assertThat(t.threads("PAT", "Simple").source().line()).isEqualTo(190);
        assertThat(ev.problems()).isEmpty();
    }

    @Test
    void nccl2215PrintsTwoBlocksOfThreeAndNoPat() throws IOException {
        String log = "samples/emulation-sweep/nccl-2.21.5/h200-nvswitch-x4/nccl-rank0.log";
        Evidence.TuningTable t = table(ingest(log));
        assertThat(t.cells()).hasSize(90);
        assertThat(t.maxThreads()).hasSize(18);
        assertThat(t.cells()).noneMatch(c -> c.algorithm().equals("PAT"));
        assertThat(t.cell("AllReduce", "Tree", "Simple").latencyUs()).isEqualByComparingTo("168.0");
        assertThat(t.cell("AllReduce", "Tree", "Simple").source()).isEqualTo(Source.line(log, 393));
        assertThat(t.cell("AllReduce", "NVLSTree", "Simple").source()).isEqualTo(Source.line(log, 401));
    }

    /** Before 2.18 one header names each column "algorithm/protocol" (tuning.cc:264-285@v2.17.1-1). */
    @Test
    void theLayoutBefore218NamesEachColumn() {
        Evidence ev = Read.log(START0
                + A + "Latency/AlgBw |    Tree/    LL |    Tree/ LL128 |    Tree/Simple |    Ring/    LL |"
                + "    Ring/ LL128 |    Ring/Simple | CollNet/    LL | CollNet/ LL128 | CollNet/Simple |\n"
                + A + " Max NThreads |            512 |            640 |            512 |            512 |"
                + "            640 |            512 |              0 |              0 |            512 |\n"
                + A + "    AllReduce |    11.2/  41.7 |    22.0/  96.0 |    54.6/ 110.5 |     8.6/  56.0 |"
                + "    20.0/ 132.0 |    25.4/ 150.0 |     0.0/   0.0 |     0.0/   0.0 |     0.0/   0.0 |\n");
        Evidence.TuningTable t = table(ev);
        assertThat(t.cells()).hasSize(9);
        assertThat(t.cell("AllReduce", "Ring", "LL128").bandwidthGBs()).isEqualByComparingTo("132.0");
        assertThat(t.cell("AllReduce", "CollNet", "Simple").latencyUs()).isEqualByComparingTo("0.0");
        assertThat(t.threads("Tree", "Simple").maxThreads()).isEqualTo(512);
        assertThat(t.threads("CollNet", "Simple").source().line()).isEqualTo(3);

        // 2.5: " %4s/%6s |" columns, "%7.1f/%5.1f|" cells without a space before the bar, no Max NThreads.
        Evidence v25 = Read.log(START0
                + A
                + "Latency/AlgBw | Tree/    LL | Tree/ LL128 | Tree/Simple |"
                + " Ring/    LL | Ring/ LL128 | Ring/Simple |\n"
                + A
                + "    AllReduce |    4.4/  4.4|    7.2/  0.0|   30.5/ 11.5|"
                + "    4.4/  7.8|    5.8/  0.0|   10.0/ 10.5|\n");
        Evidence.TuningTable t25 = table(v25);
        assertThat(t25.cells()).hasSize(6);
        assertThat(t25.maxThreads()).isEmpty();
        assertThat(t25.cell("AllReduce", "Tree", "Simple").latencyUs()).isEqualByComparingTo("30.5");
        assertThat(t25.cell("AllReduce", "Ring", "Simple").bandwidthGBs()).isEqualByComparingTo("10.5");
    }

    /** A line cut inside its last cell keeps the whole cells before it; a whole last cell without its bar is kept. */
    @Test
    void aTableCutShortKeepsWhatWasReadAndInventsNothing() {
        String header = A + "  Algorithm   |                            Tree                  |"
                + "                            Ring                  |\n"
                + A + "  Protocol    |             LL |          LL128 |         Simple |             LL |"
                + "          LL128 |         Simple |             LL |          LL128 |         Simple |\n";
        Evidence cut = Read.log(START0 + header
                + A + "  Max NThreads |            512 |            640 |            5\n"
                + A + "    AllReduce |    10.4/  43.6 |    21.5/ 128.8 |    32.4/ 16\n");
        Evidence.TuningTable t = table(cut);
        assertThat(t.cells()).extracting(Evidence.TuningCell::protocol).containsExactly("LL", "LL128");
        assertThat(t.maxThreads())
                .extracting(Evidence.TuningThreads::maxThreads)
                .containsExactly(512, 640);
        assertThat(t.cell("AllReduce", "Tree", "Simple")).isNull();
        assertThat(t.cell("AllReduce", "Ring", "LL")).isNull();

        Evidence whole =
                Read.log(START0 + header + A + "    AllReduce |    10.4/  43.6 |    21.5/ 128.8 |    32.4/ 165.6");
        assertThat(table(whole).cell("AllReduce", "Tree", "Simple").bandwidthGBs())
                .isEqualByComparingTo("165.6");

        // The headers lost (the log starts in the middle of the table): the rows are not placed, and say so.
        Evidence headless = Read.log(START0 + A + "    AllReduce |    10.4/  43.6 |    21.5/ 128.8 |\n");
        assertThat(table(headless)).isNull();
        assertThat(headless.problems()).anyMatch(p -> p.message().contains("without its Algorithm/Protocol header"));
        // A Protocol header whose Algorithm header was lost places nothing either.
        Evidence noAlgos = Read.log(START0 + header.substring(header.indexOf('\n') + 1) + A
                + "    AllReduce |    10.4/  43.6 |    21.5/ 128.8 |\n");
        assertThat(table(noAlgos)).isNull();
    }

    /** Only rank 0 prints it, but any rank's is read: the lowest rank's is kept, a different one is a finding. */
    @Test
    void twoRanksPrintingTablesKeepTheLowestAndFlagADifference() {
        String rows = "  Algorithm   |                            Tree                  |\n"
                + "  Protocol    |             LL |          LL128 |         Simple |\n";
        Evidence ev = Read.log(START1
                + B + rows.substring(0, rows.indexOf('\n') + 1)
                + B + rows.substring(rows.indexOf('\n') + 1)
                + B + "    AllReduce |    10.4/  43.6 |    21.5/ 128.8 |    32.4/ 165.7 |\n"
                + START0
                + A + rows.substring(0, rows.indexOf('\n') + 1)
                + A + rows.substring(rows.indexOf('\n') + 1)
                + A + "    AllReduce |    10.4/  43.6 |    21.5/ 128.8 |    32.4/ 165.6 |\n");
        Evidence.TuningTable t = table(ev);
        assertThat(t.rank()).isZero();
        assertThat(t.cell("AllReduce", "Tree", "Simple").bandwidthGBs()).isEqualTo(new BigDecimal("165.6"));
        assertThat(ev.findings())
                .anyMatch(f -> f.kind().equals("cross-rank-disagreement")
                        && f.message().contains("tuning table"));
    }

    /** A table printed over and over (a log of 1000s of ranks, a header of 400 algorithms) stays within its bound. */
    @Test
    void theTableOfOneRankIsBounded() {
        StringBuilder sb = new StringBuilder(START0).append(A).append("  Algorithm   |");
        for (int a = 0; a < 400; a++) {
            sb.append("  A").append(a).append(" |");
        }
        sb.append('\n').append(A).append("  Protocol    |");
        for (int a = 0; a < 400; a++) {
            sb.append(" LL | LL128 | Simple |");
        }
        sb.append('\n');
        String row = "    AllReduce |" + "    10.4/  43.6 |".repeat(1200) + "\n";
        for (int i = 0; i < 50; i++) {
            sb.append(A).append(row);
        }
        Evidence.TuningTable t = table(Read.log(sb.toString()));
        assertThat(t.cells()).hasSize(TuningTableLines.MAX_CELLS);
    }

    /** Every communicator's rank 0 prints one: a file of thousands of them keeps a bounded number of cells. */
    @Test
    void theTablesOfOneFileAreBounded() {
        String block = "  Algorithm   |                            Tree                  |\n"
                + "  Protocol    |             LL |          LL128 |         Simple |\n"
                + "    AllReduce |    10.4/  43.6 |    21.5/ 128.8 |    32.4/ 165.6 |\n";
        StringBuilder sb = new StringBuilder();
        int comms = TuningTableLines.MAX_FILE_CELLS / 3 + 10;
        for (int c = 0; c < comms; c++) {
            sb.append(A)
                    .append("ncclCommInitRank comm 0x")
                    .append(Integer.toHexString(c + 1))
                    .append(" rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0x")
                    .append(Integer.toHexString(c + 0x1000))
                    .append(" - Init START\n");
            for (String l : block.split("\n")) {
                sb.append(A).append(l).append('\n');
            }
        }
        Evidence ev = Read.log(sb.toString());
        long kept = ev.nccl().communicators().stream()
                .filter(c -> c.tuningTable() != null)
                .mapToLong(c -> c.tuningTable().cells().size())
                .sum();
        assertThat(kept).isEqualTo(TuningTableLines.MAX_FILE_CELLS);
        assertThat(ev.problems()).anyMatch(p -> p.message().contains("tuning-table cells in this file"));
    }

    @Test
    void aCellIsReadAsTenthsOnlyWhenItIsExactlyOnePercentPointOneF() {
        byte[] b = "    15.9|  -0.0|1234567.8|  4.25|  1e3|  43.|      |"
                .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertThat(TuningTableLines.tenths(b, 0, 8)).isEqualTo(159);
        assertThat(TuningTableLines.tenths(b, 9, 15)).isZero();
        assertThat(TuningTableLines.tenths(b, 16, 25)).isEqualTo(12345678);
        // Two decimals, an exponent, a number cut after its point, nothing: not this format, read another way.
        assertThat(TuningTableLines.tenths(b, 26, 32)).isEqualTo(Long.MIN_VALUE);
        assertThat(TuningTableLines.tenths(b, 33, 38)).isEqualTo(Long.MIN_VALUE);
        assertThat(TuningTableLines.tenths(b, 39, 44)).isEqualTo(Long.MIN_VALUE);
        assertThat(TuningTableLines.tenths(b, 45, 51)).isEqualTo(Long.MIN_VALUE);
    }
}

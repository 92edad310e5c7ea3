package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.util.List;
import org.junit.jupiter.api.Test;

class NcclLogReaderTest {
    private static final String P = "gpu01:1234:1240 [0] NCCL INFO ";

    @Test
    void tuningLineOf222HasNoOpAndAnExactTime() {
        Evidence ev = Read.log(P + "67108864 Bytes -> Algo 1 proto 2 time 867.660767\n");
        Evidence.Tuning t = ev.nccl().tuning().get(0);
        assertThat(t.op()).isNull();
        assertThat(t.bytes()).isEqualTo(67108864L);
        assertThat(t.algorithm()).isEqualTo("RING");
        assertThat(t.algorithmId()).isEqualTo(1);
        assertThat(t.protocol()).isEqualTo("SIMPLE");
        assertThat(t.protocolId()).isEqualTo(2);
        assertThat(t.timeUs()).isEqualTo(new BigDecimal("867.660767"));
        assertThat(t.channelLo()).isNull();
        assertThat(t.channelHi()).isNull();
        assertThat(t.source()).isEqualTo(Source.line("nccl.log", 1));
    }

    @Test
    void tuningLineOf223IsPrefixedWithTheOp() {
        Evidence ev = Read.log(P + "AllReduce: 1048576 Bytes -> Algo 0 proto 1 time 39.650002\n");
        Evidence.Tuning t = ev.nccl().tuning().get(0);
        assertThat(t.op()).isEqualTo("AllReduce");
        assertThat(t.algorithm()).isEqualTo("TREE");
        assertThat(t.protocol()).isEqualTo("LL128");
        assertThat(t.timeUs()).isEqualByComparingTo("39.650002");
    }

    @Test
    void tuningLineOf224AndLaterNamesAlgoProtoAndChannelsButNoTime() {
        String line = P + "AllReduce: 67108864 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..23}\n";
        Evidence ev = Read.log(line + line + line);
        assertThat(ev.nccl().tuning()).hasSize(1);
        Evidence.Tuning t = ev.nccl().tuning().get(0);
        assertThat(t.algorithmId()).isEqualTo(1);
        assertThat(t.protocolId()).isEqualTo(2);
        assertThat(t.timeUs()).isNull();
        assertThat(t.channelLo()).isZero();
        assertThat(t.channelHi()).isEqualTo(23);
        assertThat(t.lines()).isEqualTo(3);
    }

    @Test
    void collLinesAreAggregatedPerSignatureAndAttributedThroughTheCommPointer() {
        String init = P + "ncclCommInitRankConfig comm 0x435cd7a0 rank 3 nranks 4 cudaDev 0 nvmlDev 0 busId 60"
                + " commId 0x2dd5488a50c520c3 - Init START\n";
        String coll =
                "gpu01:1234:1299 [0] NCCL INFO AllReduce: opCount %x sendbuff 0x7fe020000000 recvbuff 0x7fe020000000"
                        + " count 16777216 datatype 7 op 0 root 0 comm 0x435cd7a0 [nranks=4] stream 0x4a335f00\n";
        Evidence ev = Read.log(init + String.format(coll, 0) + String.format(coll, 1)
                + "gpu01:1234:1299 [0] NCCL INFO Broadcast: opCount 2 sendbuff 0x1 recvbuff 0x1 count 2 datatype 4 op 0 root 0"
                + " comm 0x435cd7a0 [nranks=4] stream 0x4a335f00\n");
        List<Evidence.Coll> colls = ev.nccl().colls();
        assertThat(colls).hasSize(2);
        Evidence.Coll ar = colls.get(0);
        assertThat(ar.op()).isEqualTo("AllReduce");
        assertThat(ar.rank()).isEqualTo(3);
        assertThat(ar.count()).isEqualTo(16777216L);
        assertThat(ar.datatype()).isEqualTo(7);
        assertThat(ar.nRanks()).isEqualTo(4);
        assertThat(ar.calls()).isEqualTo(2);
        assertThat(ar.opCount()).isEqualTo("0");
        assertThat(ar.commId()).isEqualTo("0x2dd5488a50c520c3");
        assertThat(ar.source().line()).isEqualTo(2);
    }

    @Test
    void launcherPrefixesAreLabelsNeverTheNcclRank() {
        String body = "NCCL INFO comm 0x1 rank %d nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n";
        Evidence ev = Read.log("[rank5]:vm:442:442 [5] NCCL INFO Channel 00/0 : 5[5] -> 6[6] via P2P/CUMEM\n");
        assertThat(ev.nccl().communicators().get(0).ranks()).isEmpty();
        assertThat(ev.nccl().communicators().get(0).launcherLabels()).containsExactly("[rank5]:");
        Evidence mpi = Read.log("[1,6]<stdout>:node:12:12 [6] NCCL INFO Channel 00/0 : 6[6] -> 7[7] via P2P/IPC\n");
        assertThat(mpi.nccl().communicators().get(0).ranks()).isEmpty();
        assertThat(mpi.nccl().communicators().get(0).launcherLabels()).containsExactly("[1,6]<stdout>:");
        Evidence tag = Read.log("[155] crow:5330:5499 [3] NCCL INFO threadThresholds 8/8/64 | 2048/8/64\n");
        assertThat(tag.nccl().communicators().get(0).launcherLabels()).containsExactly("[155]");
        // srun --label prints the task id; the communicator's rank (here 3 of a split) is what NCCL prints.
        Evidence srun = Read.log(
                " 7: host:1:2 [0] " + String.format(body, 3) + " 7: host:1:2 [0] NCCL INFO Connected all rings\n");
        Evidence.Communicator c = srun.nccl().communicators().get(0);
        assertThat(c.ranks()).containsExactly(3);
        assertThat(c.launcherLabels()).containsExactly("7:");
        assertThat(c.rankInits().get(0).launcherLabel()).isEqualTo("7:");
        assertThat(c.rankInits().get(0).host()).isEqualTo("host");
        Evidence stamp = Read.log("2024-06-01T10:00:00.123456 host:1:2 [0] " + String.format(body, 7));
        assertThat(stamp.nccl().communicators().get(0).ranks()).containsExactly(7);
        Evidence bare = Read.log("  [0] " + String.format(body, 2));
        assertThat(bare.nccl().communicators().get(0).ranks()).containsExactly(2);
        Evidence byName = Read.evidence(
                FileKind.NCCL_LOG, "logs/nccl.rank12.log", "host:1:2 [0] NCCL INFO Connected all rings\n");
        assertThat(byName.nccl().communicators().get(0).ranks()).containsExactly(12);
    }

    @Test
    void ringOrdersInBothFormatsAndTrees() {
        Evidence ev = Read.log(P + "Channel 00/12 :    0   1   2   3\n"
                + P + "Channel 01/12 : 0 3 2 1\n"
                + P + "Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1\n");
        Evidence.Communicator c = ev.nccl().communicators().get(0);
        assertThat(c.rings()).containsExactly("0 1 2 3", "0 3 2 1");
        // No comm line, but the tree names its rank (down/down/down->rank->up).
        assertThat(c.trees()).containsExactly("rank 0 [0] 1/-1/-1->0->-1", "rank 0 [1] 1/-1/-1->0->-1");
    }

    /** "[%d] %s:%d NCCL WARN" (debug.cc:360@v2.28.9-1), "[%d] %s:%d (%s) NCCL WARN" (debug.cc:345@v2.30.7-1). */
    @Test
    void warnLinesKeepWhereNcclPrintedThemAndTheRankOfTheirDevice() {
        Evidence ev = Read.log(P
                + "comm 0x10 rank 3 nranks 4 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xabc - Init COMPLETE\n"
                + "[2026-01-01 10:00:00] gpu01:1234:1299 [0] proxy.cc:512 NCCL WARN Proxy queue full\n"
                + "gpu01:1234:1240 [0] init.cc:904 (ncclCommInitRankFunc) NCCL WARN Duplicate GPU detected\n"
                + "NCCL WARN no prefix\n");
        List<Evidence.Warning> w = ev.nccl().warnings();
        assertThat(w)
                .extracting(Evidence.Warning::where)
                .containsExactly("proxy.cc:512", "init.cc:904 (ncclCommInitRankFunc)", null);
        assertThat(w)
                .extracting(Evidence.Warning::message)
                .containsExactly("Proxy queue full", "Duplicate GPU detected", "no prefix");
        // The proxy thread has no communicator open, but its process has one rank on that device.
        assertThat(w).extracting(Evidence.Warning::rank).containsExactly(3, 3, null);
    }

    /** nccl-tests' header names the tests' version and the library's NCCL_VERSION_CODE: the latter is NCCL's. */
    @Test
    void ncclTestsHeaderGivesTheLibrarysVersionWhereNcclPrintsNone() {
        String header = "# nccl-tests version 2.13.10 nccl-headers=21903 nccl-library=22809\n";
        Evidence ev = Read.log(header + P + "Using network IB\n");
        assertThat(ev.nccl().version()).isEqualTo("2.28.9");
        assertThat(ev.nccl().versionSource().line()).isEqualTo(1);
        Evidence tagged = Read.log("[1,0]<stdout>:" + header);
        assertThat(tagged.nccl().version()).isEqualTo("2.28.9");
        assertThat(NcclLogReader.versionCode(2708)).isEqualTo("2.7.8");
        assertThat(NcclLogReader.versionCode(30001)).isEqualTo("3.0.1");
        // NCCL's own line is the stronger evidence, and the two are no disagreement.
        Evidence both = Read.log(header + P + "NCCL version 2.28.9+cuda12.9\n");
        assertThat(both.nccl().version()).isEqualTo("2.28.9");
        assertThat(both.nccl().versionSource().line()).isEqualTo(2);
        assertThat(both.findings()).noneMatch(f -> f.kind().equals("nccl-version-mismatch"));
    }

    /** "NET/%s/%d%s%s%s": GDRDMA, (PCI), then "/Shared" (net.cc:315@v2.28.9-1): the last is kept too. */
    @Test
    void sharedNetConnectionsAreKeptApart() {
        Evidence ev = Read.log(P + "Channel 00/0 : 0[0] -> 2[0] [send] via NET/IB/12/GDRDMA/Shared\n"
                + P + "Channel 00/0 : 0[0] -> 2[0] [send] via NET/IB/12/GDRDMA\n"
                + P + "Channel 01/0 : 2[0] -> 0[0] [receive] via NET/IB/3(1)/Shared\n");
        List<Evidence.Connection> k = ev.nccl().communicators().get(0).connections();
        assertThat(k).extracting(Evidence.Connection::shared).containsExactly(true, false, true);
        assertThat(k).extracting(Evidence.Connection::gdr).containsExactly(true, true, false);
        assertThat(ev.nccl().communicators().get(0).transports()).containsExactly("NET/IB");
    }

    @Test
    void connectorLinesGiveTransportsPerChannelPerPeer() {
        Evidence ev = Read.log(P + "Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
                + P + "Channel 01/0 : 0[0] -> 1[1] via P2P/IPC\n"
                + P + "Channel 02/0 : 0[0] -> 1[1] via P2P/direct pointer/read\n"
                + P + "Channel 03 : 0[0] -> 2[2] via SHM/direct/direct\n"
                + P + "Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
                + P + "Channel 01/0 : 8[0] -> 0[0] [receive] via NET/Socket/1\n"
                + P + "Channel 02/0 : 0[0] -> 8[0] [send] via NET/AWS Libfabric/0/GDRDMA\n"
                + "  [0] NCCL INFO Ring 00 : 155[3d000] -> 157[b2000] via P2P/IPC\n");
        Evidence.Communicator c = ev.nccl().communicators().get(0);
        assertThat(c.transports())
                .containsExactly(
                        "P2P/CUMEM",
                        "P2P/IPC",
                        "P2P/direct pointer",
                        "SHM",
                        "NET/IB",
                        "NET/Socket",
                        "NET/AWS Libfabric");
        List<Evidence.Connection> k = c.connections();
        assertThat(k.get(0).read()).isTrue();
        assertThat(k.get(0).gdr()).isFalse();
        assertThat(k.get(1).read()).isFalse();
        assertThat(k.get(3).channel()).isEqualTo(3);
        assertThat(k.get(3).toRank()).isEqualTo(2);
        assertThat(k.get(4).gdr()).isTrue();
        assertThat(k.get(5).gdr()).isFalse();
        assertThat(k.get(5).fromRank()).isEqualTo(8);
        assertThat(k.stream().filter(x -> x.transport().startsWith("P2P")).noneMatch(Evidence.Connection::gdr))
                .isTrue();
    }

    @Test
    void channelCountsInTheFormatsOfEachVersion() {
        String[] lines = {
            "64 coll channels, 64 collnet channels, 0 nvls channels, 64 p2p channels, 64 p2p channels per peer",
            "16 coll channels, 0 nvls channels, 16 p2p channels, 16 p2p channels per peer",
            "2 coll channels, 2 p2p channels, 1 p2p channels per peer"
        };
        int[][] expect = {{64, 0, 64, 64}, {16, 0, 16, 16}, {2, -1, 2, 1}};
        for (int i = 0; i < lines.length; i++) {
            Evidence.Communicator c =
                    Read.log(P + lines[i] + "\n").nccl().communicators().get(0);
            assertThat(c.collChannels()).isEqualTo(expect[i][0]);
            assertThat(c.nvlsChannels()).isEqualTo(expect[i][1] < 0 ? null : expect[i][1]);
            assertThat(c.p2pChannels()).isEqualTo(expect[i][2]);
            assertThat(c.p2pChannelsPerPeer()).isEqualTo(expect[i][3]);
        }
    }

    /** The "set to %s" echoes of variables a transport or bootstrap reads itself, as "set by environment" ones. */
    @Test
    void envEchoesWithoutByEnvironment() {
        Evidence ev = Read.log(P + "NCCL_IB_HCA set to mlx5_0,mlx5_3\n"
                + P + "NCCL_SOCKET_IFNAME set by environment to ^lo,docker\n"
                + P + "NCCL_SOCKET_IFNAME set to ^lo,docker\n"
                + P + "NCCL_OOB_NET_IFNAME set to ib0\n"
                + P + "NCCL_TUNER_PLUGIN set to libnccl-tuner-x.so\n"
                + P + "P2P Chunksize set to 131072\n");
        assertThat(ev.nccl().envOverrides())
                .containsExactlyInAnyOrderEntriesOf(java.util.Map.of(
                        "NCCL_IB_HCA", "mlx5_0,mlx5_3",
                        "NCCL_SOCKET_IFNAME", "^lo,docker",
                        "NCCL_OOB_NET_IFNAME", "ib0",
                        "NCCL_TUNER_PLUGIN", "libnccl-tuner-x.so"));
        assertThat(ev.nccl().envSources().get("NCCL_IB_HCA").line()).isEqualTo(1);
        assertThat(ev.findings()).noneMatch(f -> f.kind().equals("env-mismatch"));
    }

    @Test
    void envEchoesWithAndWithoutThePeriodWarningsGraphsAndVersion() {
        Evidence ev = Read.log("NCCL version 2.22.3+cuda12.4\n"
                + P + "NCCL_MAX_NCHANNELS set by environment to 1.\n"
                + P + "NCCL_ALGO set by environment to Ring\n"
                + P + "NCCL_SOCKET_IFNAME set by environment to eth0.\n"
                + "gpu01:1234:1240 [0] init.cc:904 NCCL WARN Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 60\n"
                + P + "Pattern 4, crossNic 0, nChannels 6, bw 20.000000/20.000000, type NVL/PIX, sameChannels 0\n"
                + P + "Pattern 4, crossNic 0, nChannels 2, speed 20.000000/20.000000, type NVL/PIX, sameChannels 1\n");
        assertThat(ev.nccl().version()).isEqualTo("2.22.3");
        assertThat(ev.nccl().envOverrides())
                .containsEntry("NCCL_MAX_NCHANNELS", "1")
                .containsEntry("NCCL_ALGO", "Ring")
                .containsEntry("NCCL_SOCKET_IFNAME", "eth0.");
        assertThat(ev.nccl().envSources().get("NCCL_ALGO").line()).isEqualTo(3);
        assertThat(ev.nccl().warnings().get(0).message()).startsWith("Duplicate GPU detected");
        List<Evidence.Graph> g = ev.nccl().communicators().get(0).graphs();
        assertThat(g).hasSize(2);
        assertThat(g.get(0).nChannels()).isEqualTo(6);
        assertThat(g.get(0).bwIntra()).isEqualTo(20.0);
        assertThat(g.get(0).typeIntra()).isEqualTo("NVL");
        assertThat(g.get(1).sameChannels()).isEqualTo(1);
    }

    @Test
    void severalCommunicatorsInOneProcessAreKeptApart() {
        String a = "0x1000";
        String b = "0x2000";
        String text = P + "ncclCommInitRank comm " + a
                + " rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0xaaa - Init START\n"
                + P + "2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer\n"
                + P + "ncclCommInitRank comm " + a
                + " rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 18000 commId 0xaaa - Init COMPLETE\n"
                + P + "Init timings - ncclCommInitRankConfig: rank 0 nranks 2 total 0.49 (kernels 0.45, alloc 0.00)\n"
                + P + "ncclCommSplit comm " + b
                + " rank 1 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0xbbb - Init START\n"
                + P + "8 coll channels, 8 collnet channels, 0 nvls channels, 8 p2p channels, 2 p2p channels per peer\n"
                + P + "ncclCommSplit comm " + b
                + " rank 1 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0xbbb - Init COMPLETE\n"
                + P + "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 10 datatype 7 op 0 root 0 comm " + a
                + " [nranks=2] stream 0x1\n"
                + P + "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 10 datatype 7 op 0 root 0 comm " + b
                + " [nranks=4] stream 0x1\n";
        Evidence ev = Read.log(text);
        List<Evidence.Communicator> cs = ev.nccl().communicators();
        assertThat(cs).extracting(Evidence.Communicator::commId).containsExactly("0xaaa", "0xbbb");
        assertThat(cs).extracting(Evidence.Communicator::collChannels).containsExactly(2, 8);
        assertThat(cs.get(1).ranks()).containsExactly(1);
        assertThat(cs.get(0).rankInits().get(0).initTotalS()).isEqualByComparingTo("0.49");
        assertThat(cs.get(0).rankInits().get(0).initPhasesS()).containsEntry("kernels", new BigDecimal("0.45"));
        assertThat(ev.nccl().colls()).extracting(Evidence.Coll::commId).containsExactly("0xaaa", "0xbbb");
        assertThat(ev.findings()).isEmpty();
    }

    @Test
    void ranksDisagreeingOnChannelsAreAFinding() {
        String r0 =
                "h:1:1 [0] NCCL INFO ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1 commId 0xc - Init START\n"
                        + "h:1:1 [0] NCCL INFO 24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer\n";
        String r1 =
                "h:2:2 [1] NCCL INFO ncclCommInitRank comm 0x20 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2 commId 0xc - Init START\n"
                        + "h:2:2 [1] NCCL INFO 12 coll channels, 12 collnet channels, 0 nvls channels, 16 p2p channels, 16 p2p channels per peer\n"
                        + "h:2:2 [1] NCCL INFO AllReduce: 1024 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}\n";
        String r0t = "h:1:1 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n";
        Evidence ev = Read.files(
                Read.facts(FileKind.NCCL_LOG, "run/rank0.log", (r0 + r0t).getBytes()),
                Read.facts(FileKind.NCCL_LOG, "run/rank1.log", r1.getBytes()));
        assertThat(ev.nccl().communicators()).hasSize(1);
        assertThat(ev.nccl().communicators().get(0).ranks()).containsExactly(0, 1);
        assertThat(ev.findings()).extracting(Evidence.Finding::kind).contains("cross-rank-disagreement");
        assertThat(ev.findings())
                .anyMatch(f ->
                        f.message().contains("coll channels 24") && f.message().contains("12"));
        assertThat(ev.findings())
                .anyMatch(f -> f.message().contains("RING/LL") && f.message().contains("TREE/LL"));
    }

    @Test
    void brokenHotLinesAreProblemsWithTheirLine() {
        Evidence ev =
                Read.log(P + "Connected all rings\n" + P + "AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count zz\n"
                        + P + "AllReduce: 12 Bytes -> Algo RING proto\n");
        assertThat(ev.problems()).extracting(Problem::line).containsExactly(2L, 3L);
        assertThat(ev.problems()).allMatch(p -> p.file().equals("nccl.log"));
    }

    @Test
    void aLineLongerThanTheLimitIsSkippedAndReported() {
        String longLine = "x".repeat(NcclLogReader.MAX_LINE + 10);
        Evidence ev = Read.log(longLine + "\n" + P + "Connected all trees\n" + "y".repeat(3 << 20) + "\n" + P
                + "Connected all rings\n");
        assertThat(ev.problems()).extracting(Problem::line).containsExactly(1L, 3L);
        assertThat(ev.nccl().communicators().get(0).connectedTrees()).isTrue();
        assertThat(ev.nccl().communicators().get(0).connectedRings()).isTrue();
    }

    @Test
    void warnLineOf230WithItsDefaultTimestampAndFunctionName() {
        // debug.cc:99 and :345@v2.30.7-1: "[%F %T] " then "%s:%d:%d " then "[%d] %s:%d (%s) NCCL WARN %s".
        Evidence ev = Read.log(
                P + "ncclCommInitRank comm 0x10 rank 3 nranks 4 cudaDev 0 nvmlDev 0 busId 1 commId 0xc - Init START\n"
                        + "[2026-12-02 13:00:00] gpu01:1234:1240 [0] init.cc:904 (ncclCommInitRankFunc) NCCL WARN Duplicate GPU"
                        + " detected : rank 3 and rank 1 both on CUDA device 60\n");
        Evidence.Warning w = ev.nccl().warnings().get(0);
        assertThat(w.message()).isEqualTo("Duplicate GPU detected : rank 3 and rank 1 both on CUDA device 60");
        assertThat(w.rank()).isEqualTo(3);
        assertThat(w.source().line()).isEqualTo(2);
    }
}

package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * Logs as people post them (issue threads, console copies): cut before any Init START, processes whose init lines
 * were lost, terminal padding, builds that append to NCCL's lines. Shapes found by reading 26 public logs kept out
 * of the repository; the lines here are written in those shapes, not copied.
 */
class ExcerptLogsTest {
    private static final String A = "nodeA:285:285 [0] NCCL INFO ";
    private static final String B = "nodeA:286:290 [1] NCCL INFO ";

    @Test
    void theSummaryLineAnchorsTheLinesAfterItWhenTheLogStartsAfterInitStart() {
        Evidence ev = Read.log(A + "comm 0x1095e9d0 rank 1 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0\n"
                + A + "Trees [0] -1/-1/-1->1->0 [1] 0/-1/-1->1->-1\n"
                + A + "Channel 00/0 : 0[0] -> 1[0] [receive] via NET/IB/0/GDRDMA\n");
        assertThat(ev.nccl().communicators()).hasSize(1);
        Evidence.Communicator c = ev.nccl().communicators().get(0);
        assertThat(c.nRanks()).isEqualTo(2);
        assertThat(c.nNodes()).isEqualTo(2);
        // Once the rank is known each tree says whose it is (before, they sat in a communicator of nobody).
        assertThat(c.trees()).containsExactly("rank 1 [0] -1/-1/-1->1->0", "rank 1 [1] 0/-1/-1->1->-1");
        assertThat(c.transports()).containsExactly("NET/IB");
    }

    @Test
    void aProcessWhoseInitLinesWereLostJoinsTheFilesOneCommunicator() {
        Evidence ev = Read.log(A
                + "ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xabc - Init START\n"
                + A + "Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
                + B + "Channel 00/0 : 1[1] -> 0[0] via P2P/IPC\n");
        assertThat(ev.nccl().communicators()).hasSize(1);
        assertThat(ev.nccl().communicators().get(0).commId()).isEqualTo("0xabc");
        assertThat(ev.nccl().communicators().get(0).connections()).hasSize(2);
        // Two communicators named: the nameless process's lines could be either's, and stay on their own.
        Evidence two = Read.log(A
                + "ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xabc - Init START\n"
                + A
                + "ncclCommInitRank comm 0x20 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xdef - Init START\n"
                + B + "Channel 00/0 : 1[1] -> 0[0] via P2P/IPC\n");
        assertThat(two.nccl().communicators()).hasSize(3);
    }

    @Test
    void thresholdsEndWhereNcclsTextEndsSoPaddingIsNoDisagreement() {
        String pad = " ".repeat(70);
        Evidence ev = Read.log(A + "comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
                + A + "threadThresholds 8/8/64 | 128/8/64 | 512 | 512" + pad + "nodeA:11\n"
                + B + "comm 0x2 rank 1 nRanks 2 nNodes 1 localRanks 2 localRank 1 MNNVL 0\n"
                + B + "threadThresholds 8/8/64 | 128/8/64 | 512 | 512\n");
        assertThat(ev.nccl().communicators()).hasSize(1);
        assertThat(ev.nccl().communicators().get(0).threadThresholds()).isEqualTo("8/8/64 | 128/8/64 | 512 | 512");
        assertThat(ev.findings()).noneMatch(f -> f.kind().equals("cross-rank-disagreement"));
    }

    @Test
    void aCommunicatorAppendedAfterTheTransportIsNotPartOfIt() {
        Evidence ev = Read.log(A + "Channel 00/0 : 16[17000] -> 18[21000] via P2P/IPC comm 0x5609976f9470 nRanks 32\n"
                + A + "Channel 01/0 : 16[17000] -> 24[17000] [send] via NET/AWS Libfabric/0/GDRDMA\n");
        assertThat(ev.nccl().communicators().get(0).transports()).containsExactly("P2P/IPC", "NET/AWS Libfabric");
    }

    @Test
    void ringsKeepTheirChannelWhenTheLogHoldsOnlySome() {
        Evidence ev = Read.log(A + "Channel 12/16 :    0   7   6   5\n" + A + "Channel 13/16 :    0   5   6   7\n");
        Evidence.Communicator c = ev.nccl().communicators().get(0);
        assertThat(c.rings()).containsExactly("0 7 6 5", "0 5 6 7");
        assertThat(c.ringChannels()).containsExactly(12, 13);
    }

    @Test
    void collnetChannelsAreKept() {
        Evidence ev = Read.log(A
                + "16 coll channels, 16 collnet channels, 0 nvls channels, 16 p2p channels, 2 p2p channels per peer\n");
        Evidence.Communicator c = ev.nccl().communicators().get(0);
        assertThat(c.collnetChannels()).isEqualTo(16);
        assertThat(c.nvlsChannels()).isZero();
    }

    /** The split child's line of each version: "parent %p [splitCount|childCount %d] color %d key %d" after the busId. */
    @Test
    void commSplitInitLinesOfEveryVersionAreRead() {
        String[] tails = {
            "parent 0x10 color 7 key 1 commId 0x77 - Init START", // 2.21, 2.22
            "parent 0x10 color 7 key 1- Init START", // 2.23: no commId, no space before "-"
            "parent 0x10 splitCount 1 color 7 key 1- Init START", // 2.24 to 2.28
            "parent 0x10 splitCount 1 color 7 key 1 - Init COMPLETE",
            "parent 0x10 childCount 1 color -3 key 1- Init START", // 2.29, 2.30
            "parent 0x10 childCount 1 color -3 key 1 - Init COMPLETE"
        };
        for (String tail : tails) {
            Evidence ev = Read.log(
                    B + "ncclCommSplit comm 0x20 rank 1 nranks 2 cudaDev 1 nvmlDev 3 busId 2a000 " + tail + "\n");
            assertThat(ev.problems()).as(tail).isEmpty();
            Evidence.Communicator c = ev.nccl().communicators().get(0);
            assertThat(c.ranks()).as(tail).containsExactly(1);
            assertThat(c.nRanks()).isEqualTo(2);
            assertThat(c.commId()).isEqualTo(tail.contains("commId") ? "0x77" : null);
            Evidence.RankInit ri = c.rankInits().get(0);
            assertThat(ri.busId()).isEqualTo("2a000");
            assertThat(ri.cudaDev()).isEqualTo(1);
            assertThat(ri.nvmlDev()).isEqualTo(3);
        }
    }

    @Test
    void aSplitChildWithoutCommIdIsNotItsParentNorAnotherOfItsSize() {
        String parentA = "ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0xaaa"
                + " - Init COMPLETE\n";
        String parentB = "ncclCommInitRank comm 0x11 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2a000 commId 0xaaa"
                + " - Init COMPLETE\n";
        Evidence ev = Read.log(A + parentA + B + parentB
                + A + "ncclCommSplit comm 0x30 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 parent 0x10"
                + " splitCount 1 color 5 key 0- Init START\n"
                + B + "ncclCommSplit comm 0x31 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2a000 parent 0x11"
                + " splitCount 1 color 5 key 1- Init START\n");
        assertThat(ev.nccl().communicators()).hasSize(2);
        Evidence.Communicator parent = ev.nccl().communicators().get(0);
        Evidence.Communicator child = ev.nccl().communicators().get(1);
        assertThat(parent.commId()).isEqualTo("0xaaa");
        assertThat(parent.rankInits()).hasSize(2);
        assertThat(child.commId()).isNull();
        assertThat(child.ranks()).containsExactly(0, 1);
        assertThat(ev.findings()).noneMatch(f -> f.kind().equals("cross-rank-disagreement"));
    }

    @Test
    void treesNameTheirOwnRankWhenNoCommLineOfTheirThreadCameFirst() {
        String c = "nodeA:287:291 [2] NCCL INFO ";
        String d = "nodeA:288:292 [3] NCCL INFO ";
        Evidence ev = Read.log(d + "comm 0x40 rank 3 nRanks 4 nNodes 1 localRanks 4 localRank 3 MNNVL 0\n"
                + d + "Trees [0] -1/-1/-1->3->2 [1] -1/-1/-1->3->2\n"
                + c + "Trees [0] 3/-1/-1->2->1 [1] 3/-1/-1->2->1\n");
        assertThat(ev.nccl().communicators()).hasSize(1);
        Evidence.Communicator comm = ev.nccl().communicators().get(0);
        assertThat(comm.trees())
                .containsExactly(
                        "rank 2 [0] 3/-1/-1->2->1",
                        "rank 2 [1] 3/-1/-1->2->1",
                        "rank 3 [0] -1/-1/-1->3->2",
                        "rank 3 [1] -1/-1/-1->3->2");
        assertThat(comm.ranks()).containsExactly(2, 3);
    }

    /** commAlloc prints "Using network %s" before the Init START of the communicator it is about. */
    @Test
    void usingNetworkIsTheNextCommunicatorsOnItsThread() {
        Evidence ev = Read.log(A + "Using network IB\n"
                + A
                + "ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0xaaa - Init START\n"
                + A + "ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0xaaa"
                + " - Init COMPLETE\n"
                + A + "Using network Socket\n"
                + A + "ncclCommInitRank comm 0x20 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1a000 commId 0xbbb"
                + " - Init START\n");
        assertThat(ev.nccl().communicators()).hasSize(2);
        assertThat(ev.nccl().communicators().get(0).networks()).containsExactly("IB");
        assertThat(ev.nccl().communicators().get(0).rankInits().get(0).network())
                .isEqualTo("IB");
        assertThat(ev.nccl().communicators().get(1).networks()).containsExactly("Socket");
    }

    /** A log of plugin and tuning-table lines only is still an NCCL log that was read: its network is kept. */
    @Test
    void aLogOfNetworkAndTuningTableLinesOnlyIsRead() {
        Evidence net =
                Read.log(A + "NET/OFI Selected Provider is tcp (found 2 nics)\n" + A + "Using network Libfabric\n");
        assertThat(net.anythingRead()).isTrue();
        assertThat(net.nccl().communicators().get(0).networks()).containsExactly("Libfabric");
        Evidence table = Read.log(A + "  Algorithm   |            Tree      |             Ring       |\n"
                + A + "  Protocol    |       LL |    LL128 |   Simple |       LL |    LL128 |   Simple |\n"
                + A + " Max NThreads |      512 |      640 |      512 |      512 |      640 |      512 |\n"
                + A + "    Broadcast |  0.0/ 0.0 |  0.0/ 0.0 |  0.0/ 0.0 |  6.3/ 40.0 | 12.1/ 90.5 |  9.9/100.0 |\n"
                + A + "ReduceScatter |  0.0/ 0.0 |  0.0/ 0.0 |  0.0/ 0.0 |  6.3/ 40.0 | 12.1/ 90.5 |  9.9/100.0 |\n");
        assertThat(table.anythingRead()).isTrue();
        assertThat(table.files().get(0).facts()).isEqualTo(5);
    }

    /** PXN: NCCL names the rank whose proxy sends for this one in "NET/%s/%d(%d)"; the transport stays the net's. */
    @Test
    void thePxnProxyRankOfANetConnectionIsKept() {
        Evidence ev = Read.log(A + "comm 0x1 rank 6 nRanks 16 nNodes 2 localRanks 8 localRank 6 MNNVL 0\n"
                + A + "Channel 02/0 : 6[6] -> 9[1] [send] via NET/IBext_v8/3(4)/GDRDMA\n"
                + A + "Channel 03/0 : 6[6] -> 9[1] [send] via NET/IBext_v8/3/GDRDMA(PCI)\n"
                + A + "Channel 04/0 : 6[6] -> 9[1] [send] via NET/AWS Libfabric/1(12)/Shared\n");
        java.util.List<Evidence.Connection> conns =
                ev.nccl().communicators().get(0).connections();
        assertThat(conns).extracting(Evidence.Connection::pxnProxyRank).containsExactly(4, null, 12);
        assertThat(conns)
                .extracting(Evidence.Connection::transport)
                .containsExactly("NET/IBext_v8", "NET/IBext_v8", "NET/AWS Libfabric");
        assertThat(conns).extracting(Evidence.Connection::gdr).containsExactly(true, true, false);
        assertThat(conns.get(2).shared()).isTrue();
    }

    /** "Init timings - %s: rank %d nranks %d …" names its rank, as Trees do: a rank seen only there is listed. */
    @Test
    void initTimingsNameTheirOwnRankWhenNoCommLineOfTheirThreadCameFirst() {
        String c = "nodeA:287:291 [2] NCCL INFO ";
        Evidence ev = Read.log(B + "comm 0x40 rank 1 nRanks 4 nNodes 1 localRanks 4 localRank 1 MNNVL 0\n"
                + c + "Init timings - ncclCommInitRankConfig: rank 2 nranks 4 total 1.25 (kernels 0.40, alloc 0.02,"
                + " bootstrap 0.10, allgathers 0.01, topo 0.50, graphs 0.02, connections 0.15, rest 0.05)\n"
                + A + "Init timings: rank 3 nranks 4 total 0.91 (kernels 0.30, bootstrap 0.20, allgathers 0.01,"
                + " topo 0.30, graphs 0.01, connections 0.08, rest 0.01)\n");
        assertThat(ev.nccl().communicators()).hasSize(1);
        Evidence.Communicator comm = ev.nccl().communicators().get(0);
        assertThat(comm.ranks()).containsExactly(1, 2, 3);
        assertThat(comm.rankInits())
                .filteredOn(ri -> ri.rank() == 2)
                .singleElement()
                .extracting(Evidence.RankInit::initTotalS)
                .isEqualTo(new java.math.BigDecimal("1.25"));
    }

    /** aws-ofi-nccl sets NCCL variables itself; NCCL then acts on them as on a user's, so they are env settings. */
    @Test
    void ncclVariablesTheOfiPluginPutsIntoTheEnvironmentAreSettings() {
        Evidence ev = Read.log(A + "NET/OFI Selected Provider is efa (found 8 nics)\n"
                + A + "NET/OFI Adding NCCL_PROTO=simple to environment\n"
                + A + "NET/OFI Adding FI_EFA_USE_DEVICE_RDMA=1 to environment\n"
                + A + "NET/OFI Skipping adding NCCL_BUFFSIZE to environment, already set\n"
                + A + "NET/OFI Setting NCCL_TOPO_FILE environment variable to /proc/self/fd/42\n"
                + A + "NET/OFI Setting OFI_NCCL_PROTOCOL environment variable to RDMA\n"
                + B + "NET/OFI Adding NCCL_PROTO=simple to environment\n");
        assertThat(ev.nccl().envOverrides())
                .containsOnly(
                        org.assertj.core.api.Assertions.entry("NCCL_PROTO", "simple"),
                        org.assertj.core.api.Assertions.entry("NCCL_TOPO_FILE", "/proc/self/fd/42"));
        assertThat(ev.nccl().envSources().get("NCCL_PROTO").line()).isEqualTo(2);
        assertThat(ev.findings()).noneMatch(f -> f.kind().equals("env-mismatch"));
    }

    /**
     * A console that shows each line twice, in two columns ("X | X", the first copy glued to the console's timestamp):
     * each line is read once, its text without the column's "|". NCCL's own repeats joined by spaces are both read.
     */
    @Test
    void aLineAConsoleShowsTwiceInColumnsIsReadOnce() {
        String ts = "  | 2025-01-02T03:04:05.678-07:00";
        String coll = "AllReduce: opCount %d sendbuff 0x1 recvbuff 0x1 count 64 datatype 7 op 0 root 0 comm 0x10"
                + " [nranks=2] stream 0x2";
        String c0 = A + String.format(coll, 0);
        String c1 = A + String.format(coll, 1);
        String env = A + "NCCL_SOCKET_IFNAME set by environment to eth0";
        String warn = "nodeA:285:285 [0] misc/socket.cc:50 NCCL WARN socket closed";
        Evidence ev = Read.log(A + "comm 0x10 rank 0 nRanks 2 nNodes 1 localRanks 2 localRank 0 MNNVL 0\n"
                + ts + env + " | " + env + "\n"
                + ts + c0 + " | " + c0 + "\n"
                + ts + warn + " | " + warn + "\n"
                + c1 + "      " + c1 + "\n");
        assertThat(ev.nccl().envOverrides()).containsEntry("NCCL_SOCKET_IFNAME", "eth0");
        assertThat(ev.nccl().colls())
                .singleElement()
                .extracting(Evidence.Coll::calls)
                .isEqualTo(3L);
        assertThat(ev.nccl().warnings())
                .singleElement()
                .extracting(Evidence.Warning::message)
                .isEqualTo("socket closed");
        assertThat(ev.findings()).noneMatch(f -> f.kind().equals("env-mismatch"));
        assertThat(ev.problems())
                .extracting(Problem::line, Problem::message)
                .contains(org.assertj.core.api.Assertions.tuple(
                        3L, "console echo: 1 NCCL line(s) shown twice on one line (\"X | X\"); read once"));
    }

    /** A connector line wrapped when posted, after "via": the next physical line completes it, even before a prefix. */
    @Test
    void aConnectorLineWrappedAfterViaIsJoinedToItsContinuation() {
        String pad = " ".repeat(40);
        Evidence ev = Read.log(A + "comm 0x10 rank 0 nRanks 4 nNodes 2 localRanks 2 localRank 0 MNNVL 0\n"
                + A + "Channel 00/0 : 0[0] -> 2[0] [send] via NET/IBext/0/GDRDMA" + pad + A
                + "Channel 01/0 : 2[0] -> 0[0] [receive] via\n"
                + " NET/IBext/1/GDRDMA" + pad + A + "Channel 02/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
                + A + "Channel 03/0 : 0[0] -> 1[1] via\n"
                + " what the user typed next\n");
        java.util.List<Evidence.Connection> conns =
                ev.nccl().communicators().get(0).connections();
        assertThat(conns)
                .extracting(Evidence.Connection::channel, Evidence.Connection::transport, c -> c.source()
                        .line())
                .containsExactly(
                        org.assertj.core.api.Assertions.tuple(0, "NET/IBext", 2L),
                        org.assertj.core.api.Assertions.tuple(1, "NET/IBext", 2L),
                        org.assertj.core.api.Assertions.tuple(2, "P2P/CUMEM", 3L));
        assertThat(ev.problems()).extracting(Problem::line).contains(3L).doesNotContain(5L);
        assertThat(conns.get(1).gdr()).isTrue();
    }
}

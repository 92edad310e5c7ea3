package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

/**
 * Rank 0's INIT, GRAPH, TUNING and COLL lines as NCCL 2.21.5, 2.26.2 and 2.27.5 (the versions torch wheels ship) print
 * them, each built from that version's format string (cited per line), read to the same evidence as 2.22 / 2.28.
 */
class WheelVersionLinesTest {
    private static final String P = "gpu01:1234:1240 [0] NCCL INFO ";

    private static String log(String... lines) {
        StringBuilder sb = new StringBuilder();
        for (String l : lines) {
            sb.append(l.startsWith("NCCL version") ? "" : P).append(l).append('\n');
        }
        return sb.toString();
    }

    @Test
    void nccl2215() {
        Evidence ev = Read.log(log(
                "NCCL version 2.21.5+cuda12.4", // init.cc@v2.21.5-1:472-479 VERSION_STRING
                "comm 0x55d0 rank 0 nRanks 4 nNodes 1 localRanks 4 localRank 0 MNNVL 0", // init.cc:1160
                "Channel 00/12 :    0   1   2   3", // graph/rings.cc:18,35 "Channel %02d/%02d : " + " %3d"
                "Ring 00 : 3 -> 0 -> 1", // init.cc:1221
                "Trees [0] 1/-1/-1->0->-1 [1] 1/-1/-1->0->-1", // init.cc:1224
                "Pattern 4, crossNic 0, nChannels 6, bw 20.000000/20.000000, type NVL/PIX, sameChannels 0", // search.cc:1047
                "threadThresholds 8/8/64 | 32/8/64 | 512 | 512", // graph/tuning.cc:398
                "12 coll channels, 12 collnet channels, 0 nvls channels, 16 p2p channels, 4 p2p channels per peer", // :1297
                "ncclCommInitRank comm 0x55d0 rank 0 nranks 4 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1d2b3c - Init COMPLETE",
                // init.cc:1573; COLL enqueue.cc:2022 (count %zi); TUNING enqueue.cc:1534
                "AllReduce: opCount 0 sendbuff 0x7f0000000000 recvbuff 0x7f0000000000 count 16777216 datatype 7 op 0 root 0"
                        + " comm 0x55d0 [nranks=4] stream 0x55e0",
                "67108864 Bytes -> Algo 1 proto 2 time 867.660767"));
        assertThat(ev.nccl().version()).startsWith("2.21.5");
        Evidence.Communicator c = ev.nccl().communicators().get(0);
        assertThat(c.nRanks()).isEqualTo(4);
        assertThat(c.nNodes()).isEqualTo(1);
        assertThat(c.collChannels()).isEqualTo(12);
        assertThat(c.p2pChannels()).isEqualTo(16);
        assertThat(c.p2pChannelsPerPeer()).isEqualTo(4);
        assertThat(c.threadThresholds()).isEqualTo("8/8/64 | 32/8/64 | 512 | 512");
        assertThat(c.rings()).containsExactly("0 1 2 3");
        assertThat(c.trees()).hasSize(2);
        assertThat(c.graphs().get(0).nChannels()).isEqualTo(6);
        assertThat(c.graphs().get(0).bwIntra()).isEqualTo(20.0);
        assertThat(c.rankInits().get(0).busId()).isNotNull();
        Evidence.Tuning t = ev.nccl().tuning().get(0);
        assertThat(t.op()).isNull();
        assertThat(t.algorithm()).isEqualTo("RING");
        assertThat(t.protocol()).isEqualTo("SIMPLE");
        assertThat(t.timeUs()).isEqualTo(new BigDecimal("867.660767"));
        Evidence.Coll coll = ev.nccl().colls().get(0);
        assertThat(coll.count()).isEqualTo(16777216L);
        assertThat(coll.nRanks()).isEqualTo(4);
    }

    @Test
    void nccl2262And2275() {
        for (String[] v : new String[][] {
            // {version, init.cc comm line, rings.cc, search.cc Pattern, tuning.cc thresholds, init.cc channels,
            //  init.cc COMPLETE, enqueue.cc COLL, enqueue.cc TUNING} @v2.26.2-1 and @v2.27.5-1
            {"2.26.2", "988", "41", "1138", "510", "1219", "1429", "2289", "702"},
            {"2.27.5", "998", "41", "1177", "541", "1232", "1469", "2422", "748"}
        }) {
            Evidence ev = Read.log(log(
                    "NCCL version " + v[0] + "+cuda12.8",
                    "comm 0x55d0 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0",
                    "Channel 00/24 : 0 1 2 3 4 5 6 7", // "Channel %02d/%02d :" + " %*d"
                    "Pattern 4, crossNic 0, nChannels 12, bw 30.000000/30.000000, type NVL/PIX, sameChannels 1",
                    "threadThresholds 8/8/64 | 64/8/64 | 512 | 512",
                    "24 coll channels, 24 collnet channels, 0 nvls channels, 32 p2p channels, 32 p2p channels per peer",
                    "ncclCommInitRankConfig comm 0x55d0 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 18000 commId 0x1d2b3c"
                            + " - Init COMPLETE", // "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx
                    // commId 0x%llx"
                    "AllReduce: opCount 0 sendbuff 0x7f0000000000 recvbuff 0x7f0000000000 count 16777216 datatype 7 op 0"
                            + " root 0 comm 0x55d0 [nranks=8] stream 0x55e0",
                    "AllReduce: 67108864 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..23}"));
            assertThat(ev.nccl().version()).as(v[0]).startsWith(v[0]);
            Evidence.Communicator c = ev.nccl().communicators().get(0);
            assertThat(c.nRanks()).isEqualTo(8);
            assertThat(c.collChannels()).isEqualTo(24);
            assertThat(c.nvlsChannels()).isZero();
            assertThat(c.rings()).containsExactly("0 1 2 3 4 5 6 7");
            assertThat(c.graphs().get(0).nChannels()).isEqualTo(12);
            Evidence.Tuning t = ev.nccl().tuning().get(0);
            assertThat(t.op()).isEqualTo("AllReduce");
            assertThat(t.algorithmId()).isEqualTo(1);
            assertThat(t.protocolId()).isEqualTo(2);
            assertThat(t.timeUs()).isNull();
            assertThat(t.channelLo()).isZero();
            assertThat(t.channelHi()).isEqualTo(23);
            assertThat(ev.nccl().colls().get(0).nRanks()).isEqualTo(8);
        }
    }
}

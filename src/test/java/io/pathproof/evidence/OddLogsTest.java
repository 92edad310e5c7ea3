package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** Issue 12: old, partial, torn and multi-GPU-per-process NCCL logs. */
class OddLogsTest {
    private static final String P = "gpu01:1234:1240 [0] NCCL INFO ";

    @Test
    void ringLinesGiveTheChannelCountWhenNoCollChannelsLineSaysIt() {
        Evidence ev = Read.log("NCCL version 2.5.7+cuda10.0\n" + P + "Channel 00/12 :    0   1   2   3\n" + P
                + "Channel 01/12 : 0 3 2 1\n");
        Evidence.Communicator c = ev.nccl().communicators().get(0);
        assertThat(c.collChannels()).isEqualTo(12);
        assertThat(c.rings()).containsExactly("0 1 2 3", "0 3 2 1");
        Evidence both = Read.log(P + "Channel 00/12 : 0 1\n" + P
                + "2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer\n");
        assertThat(both.nccl().communicators().get(0).collChannels()).isEqualTo(2);
        // A connector line's "/0" is its connection index, not a total.
        Evidence conn = Read.log(P + "Channel 09/0 : 0[0] -> 1[0] via P2P/CUMEM\n");
        assertThat(conn.nccl().communicators().get(0).collChannels()).isNull();
    }

    @Test
    void tuningOfOneProcessDrivingTwoGpusGoesToRankZeroOfItsCommunicator() {
        // nccl-tests -g 2: one thread initialises and drives both ranks; COLL lines of rank 0 then rank 1, then TUNING.
        String t = "node:77:77 ";
        String log = t
                + "[0] NCCL INFO ncclCommInitAll comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1b000 commId 0xfeed - Init COMPLETE\n"
                + t
                + "[1] NCCL INFO ncclCommInitAll comm 0x20 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 3d000 commId 0xfeed - Init COMPLETE\n"
                + t
                + "[0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count 256 datatype 7 op 0 root 0 comm 0x10 [nranks=2] stream 0x1\n"
                + t
                + "[1] NCCL INFO AllReduce: opCount 0 sendbuff 0x2 recvbuff 0x2 count 256 datatype 7 op 0 root 0 comm 0x20 [nranks=2] stream 0x2\n"
                + t + "[1] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n";
        Evidence ev = Read.log(log);
        assertThat(ev.nccl().tuning()).hasSize(1);
        Evidence.Tuning tu = ev.nccl().tuning().get(0);
        assertThat(tu.rank()).isZero();
        assertThat(tu.commId()).isEqualTo("0xfeed");
        assertThat(tu.source().line()).isEqualTo(5);
        assertThat(ev.nccl().communicators()).hasSize(1);
        assertThat(ev.findings()).isEmpty();
    }

    @Test
    void theTuningLineOf228HasNoTimeAndStillReadsItsChoice() {
        Evidence ev = Read.log("NCCL version 2.28.9+cuda13.0\n"
                + P
                + "ncclCommInitRank comm 0x30 rank 2 nranks 4 cudaDev 0 nvmlDev 0 busId 1 commId 0xa - Init COMPLETE\n"
                + P + "AllReduce: 262144 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..15}\n");
        Evidence.Tuning tu = ev.nccl().tuning().get(0);
        assertThat(tu.timeUs()).isNull();
        assertThat(tu.channelHi()).isEqualTo(15);
        // A rank-2 file cannot print TUNING in 2.28 (enqueue.cc:740@v2.28.9-1): the line is rank 0's.
        assertThat(tu.rank()).isZero();
    }

    @Test
    void aTornLineIsSplitAtEachNcclPrefixAndReportedOnce() {
        String log =
                "vm:1:1 [0] NCCL INFO ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1 commId 0xc - Init START\n"
                        + "vm:2:2 [1] NCCL INFO Init timings: rank 1 nranks 2 total 0.50 (kernels 0.25)\n"
                        + "vm:1:1 [0] NCCL INFO Channel 00/02 : 0 1vm:2:2 [1] NCCL INFO ncclCommInitRank comm 0x20 rank 1 nranks 2"
                        + " cudaDev 1 nvmlDev 1 busId 2 commId 0xc - Init STARTvm:1:1 [0] NCCL INFO Channel 01/02 : 0 1\n"
                        + "vm:1:1 [0] NCCL INFO ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1 commId 0xc - Init COMPLETE\n"
                        + "vm:2:2 [1] NCCL INFO ncclCommInitRank comm 0x20 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 2 commId 0xc - Init COMPLETE\n";
        Evidence ev = Read.log(log);
        assertThat(ev.nccl().communicators()).hasSize(1);
        Evidence.Communicator c = ev.nccl().communicators().get(0);
        assertThat(c.commId()).isEqualTo("0xc");
        assertThat(c.ranks()).containsExactly(0, 1);
        assertThat(c.rings()).containsExactly("0 1", "0 1");
        assertThat(c.collChannels()).isEqualTo(2);
        assertThat(c.rankInits()).extracting(Evidence.RankInit::host).containsExactly("vm", "vm");
        assertThat(ev.problems()).hasSize(1);
        assertThat(ev.problems().get(0).line()).isEqualTo(3);
        assertThat(ev.problems().get(0).message()).contains("torn line: 3 NCCL lines");
    }

    @Test
    void aLineQuotingNcclVersionIsNotTorn() {
        Evidence ev = Read.log(P + "NCCL version 2.19.3+cuda12.3\n" + P + "NCCL_ALGO set by environment to Ring\n");
        assertThat(ev.problems()).isEmpty();
        assertThat(ev.nccl().version()).isEqualTo("2.19.3");
    }

    @Test
    void connectedTreesIsUnknownUnlessTheLogCanSayIt() {
        String rings = P + "Connected all rings\n";
        assertThat(Read.log("NCCL version 2.19.3+cuda12.3\n" + rings)
                        .nccl()
                        .communicators()
                        .get(0)
                        .connectedTrees())
                .isFalse();
        assertThat(Read.log("NCCL version 2.28.9+cuda13.0\n" + rings)
                        .nccl()
                        .communicators()
                        .get(0)
                        .connectedTrees())
                .isNull();
        assertThat(Read.log(rings).nccl().communicators().get(0).connectedTrees())
                .isNull();
        assertThat(Read.log("NCCL version 2.28.9+cuda13.0\n" + rings + P + "Connected all trees\n")
                        .nccl()
                        .communicators()
                        .get(0)
                        .connectedTrees())
                .isTrue();
    }

    @Test
    void aFindingRepeatedAcrossFilesIsListedOnceWithItsCount() {
        FileFacts[] files = new FileFacts[4];
        files[0] = Read.facts(FileKind.NCCL_LOG, "run/rank0.log", (P + "NCCL version 2.19.3+cuda12.3\n").getBytes());
        for (int i = 1; i < 4; i++) {
            files[i] = Read.facts(
                    FileKind.NCCL_LOG, "run/rank" + i + ".log", (P + "NCCL version 2.18.1+cuda12.1\n").getBytes());
        }
        Evidence ev = Read.files(files);
        List<Evidence.Finding> f = ev.findings();
        assertThat(f).hasSize(1);
        assertThat(f.get(0).kind()).isEqualTo("nccl-version-mismatch");
        assertThat(f.get(0).count()).isEqualTo(3);
        assertThat(f.get(0).sources()).hasSize(4);
        assertThat(f.get(0).message()).contains("2.18.1").contains("2.19.3");
    }
}

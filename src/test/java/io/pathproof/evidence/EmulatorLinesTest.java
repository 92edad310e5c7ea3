package io.pathproof.evidence;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The lines of pathproof's NCCL emulator patch: fake busIds per rank and the kernel launch shape. */
class EmulatorLinesTest {
    private static final String P = "vm:470:470 [0] NCCL INFO ";

    @Test
    void theFirstPatchsOracleLinesOnRealOutputGiveBusIdsPerRankAndRankZerosLaunches() {
        Evidence ev = Ingest.read(List.of(Read.res("emulated-h200-x4/nccl-debug.log")));
        assertThat(ev.problems()).isEmpty();
        Evidence.Communicator c = ev.nccl().communicators().get(0);
        assertThat(ev.nccl().communicators()).hasSize(1);
        assertThat(c.ranks()).containsExactly(0, 1, 2, 3);
        // Rank 0 is the real GPU: the first patch printed no ORACLE line for it.
        assertThat(c.rankInits().get(0).emulated()).isNull();
        Evidence.EmulatedDevice r1 = c.rankInits().get(1).emulated();
        assertThat(r1.realBusId()).isEqualTo("60");
        assertThat(r1.reportedBusId()).isEqualTo("41000");
        assertThat(r1.reportedBusId()).isEqualTo(c.rankInits().get(1).busId());
        assertThat(r1.source().line()).isEqualTo(230);
        assertThat(c.rankInits().get(3).emulated().reportedBusId()).isEqualTo("43000");

        List<Evidence.Kernel> launches = ev.kernels();
        assertThat(launches).extracting(k -> k.grid()[0]).containsExactly(24, 24, 16);
        assertThat(launches).extracting(k -> k.block()[0]).containsExactly(544, 512, 512);
        assertThat(launches).allMatch(k -> k.rank() == 0 && k.nccl() && k.durUs() == null && k.startNs() == null);
        assertThat(launches).allMatch(k -> k.smemBytes() == 82240 && k.clusterSize() == 4);
        assertThat(launches.get(0).name()).isEqualTo("NCCL kernel launch AllReduce");
        assertThat(launches.get(0).source())
                .isEqualTo(
                        Source.line(Read.res("emulated-h200-x4/nccl-debug.log").toString(), 207));

        assertThat(ev.emulation()).isNotNull();
        assertThat(ev.emulation().logLines()).isEqualTo(6);
        assertThat(ev.emulation().firstLogLine().line()).isEqualTo(207);
        assertThat(ev.emulation().manifest()).isNull();
    }

    @Test
    void torchRankZeroLogGivesItsTwoLaunchesInOrder() {
        Evidence ev = Ingest.read(List.of(Read.res("emulated-h200-x4/torch-rank0.log")));
        assertThat(ev.kernels())
                .extracting(k -> k.grid()[0] + "x" + k.block()[0])
                .containsExactly("24x512", "24x544");
        assertThat(ev.kernels()).extracting(Evidence.Kernel::rank).containsOnly(0);
    }

    @Test
    void todaysEmulatorLinesGiveBothBusIdsTheFakeComputeCapabilityAndEachRanksLaunches() {
        String r1 = "vm:472:472 [0] NCCL INFO ";
        Evidence ev = Read.log(P
                + "ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId 0xabc - Init START\n"
                + P + "EMULATOR: cudaDev 0 real busId 60 reported as 41000\n"
                + P + "EMULATOR: compute capability 90 reported as 70\n"
                + r1
                + "ncclCommInitRank comm 0x20 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId 0xabc - Init START\n"
                + r1 + "EMULATOR: cudaDev 0 real busId 60 reported as 42000\n"
                + P
                + "ncclCommInitRank comm 0x10 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 41000 commId 0xabc - Init COMPLETE\n"
                + r1
                + "ncclCommInitRank comm 0x20 rank 1 nranks 2 cudaDev 0 nvmlDev 0 busId 42000 commId 0xabc - Init COMPLETE\n"
                + P + "EMULATOR launch: rank 0 grid 2 block 640 smem 9000 cluster 0\n"
                + r1 + "EMULATOR launch: rank 1 grid 2 block 640 smem 9000 cluster 0\n"
                + P + "EMULATOR launch: rank 0 grid 1 block 256 smem 9000 cluster 0\n");
        assertThat(ev.problems()).isEmpty();
        Evidence.Communicator c = ev.nccl().communicators().get(0);
        Evidence.EmulatedDevice d0 = c.rankInits().get(0).emulated();
        assertThat(d0.realBusId()).isEqualTo("60");
        assertThat(d0.reportedBusId()).isEqualTo("41000");
        assertThat(d0.realComputeCapability()).isEqualTo(90);
        assertThat(d0.reportedComputeCapability()).isEqualTo(70);
        assertThat(c.rankInits().get(1).emulated().reportedBusId()).isEqualTo("42000");
        assertThat(c.rankInits().get(1).emulated().realComputeCapability()).isNull();
        assertThat(ev.kernels())
                .extracting(k -> k.rank() + ":" + k.grid()[0] + "x" + k.block()[0])
                .containsExactly("0:2x640", "1:2x640", "0:1x256");
        assertThat(ev.kernels().get(2).source().line()).isEqualTo(10);
        assertThat(ev.kernels().get(0).name()).isEqualTo("NCCL kernel launch");
        assertThat(ev.emulation().logLines()).isEqualTo(6);
    }

    @Test
    void aBrokenEmulatorLineIsAProblemNotAFact() {
        Evidence ev = Read.log(P + "EMULATOR launch: rank 0 grid x block 1 smem 0 cluster 0\n" + P
                + "EMULATOR launch: rank 0 grid 99999999999 block 1 smem 0 cluster 0\n");
        assertThat(ev.kernels()).isEmpty();
        assertThat(ev.problems()).extracting(Problem::line).containsExactly(1L, 2L);
    }

    @Test
    void pciBusIdsBecomeNcclsHexForm() {
        assertThat(EmulatorLines.busIdHex("0000:41:00.0")).isEqualTo("41000");
        assertThat(EmulatorLines.busIdHex("0000:00:06.0")).isEqualTo("60");
        assertThat(EmulatorLines.busIdHex("0000:zz:00.0")).isNull();
    }
}

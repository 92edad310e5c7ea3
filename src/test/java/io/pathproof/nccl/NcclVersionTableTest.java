package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;
import static org.assertj.core.api.Assertions.assertThat;

import io.pathproof.nccl.NcclVersionTable.Ll128Rule;
import io.pathproof.nccl.NcclVersionTable.NetSearch;
import io.pathproof.nccl.NcclVersionTable.P2pPerPeer;
import io.pathproof.nccl.NcclVersionTable.Planner;
import io.pathproof.nccl.NcclVersionTable.RingExchange;
import io.pathproof.nccl.NcclVersionTable.TuningLineFormat;
import io.pathproof.scenario.Version;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tables of the versions torch wheels ship (2.21.5, 2.26.2, 2.27.3, 2.27.5) and of 2.27.6-2.27.7, constant by
 * constant, and the corrections their reading brought to the older tables. Each value sits in a table next to a
 * comment citing its line; {@link #PINS} holds those lines' text, which {@link #eachPinIsOnItsSourceLine} checks
 * against NCCL's own source wherever a git clone or mirror of NVIDIA/nccl is at hand ($PATHPROOF_NCCL_MIRROR, else
 * .emu/nccl-mirror, a link in the ignored .emu/); without one only the values are checked.
 */
class NcclVersionTableTest {
    /** Line {@code line} of src/{@code file} at {@code tag} contains {@code text}. */
    record Pin(String tag, String file, int line, String text) {
        @Override
        public String toString() {
            return file + ":" + line + "@" + tag;
        }
    }

    static final List<Pin> PINS = List.of(
            new Pin("v2.21.5-1", "include/device.h", 54, "#define MAXCHANNELS 32"),
            new Pin("v2.21.5-1", "include/nccl_common.h", 28, "#define NCCL_NUM_ALGORITHMS 6"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 57, "{  6.8, 14.0,    0 }, {  6.6, 14.0,  8.4 }"),
            new Pin(
                    "v2.21.5-1",
                    "graph/tuning.cc",
                    67,
                    "{ .6, 1.25, 28 }, /* Ring (LL/LL128/Simple)*/ { .6, 1.9, 3.4 }"),
            new Pin(
                    "v2.21.5-1",
                    "graph/tuning.cc",
                    71,
                    "{ 1.0, 1.9, 28 }, /* Ring (LL/LL128/Simple)*/ { 1.0, 2.5, 5.7 }"),
            new Pin(
                    "v2.21.5-1",
                    "graph/tuning.cc",
                    75,
                    "{ 5.0, 8.5, 28 }, /* Ring (LL/LL128/Simple)*/ { 2.7, 4.0, 14.0 }"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 86, "llMaxBws[3][3]"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 89, "{141.0, 45.0 /*avg of ring & tree*/, 35.0}"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 95, "{36.7, 36.7, 36.7}"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 100, "{36.7, 36.7, 29.0}"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 105, "{38.7, 41.4, 36.0}"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 139, "int compCapIndex = minCompCap >= 90 ? HOPPER_COMPCAP_IDX"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 161, "(nNodes > 1 ? 2*nNodes :0)"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 181, "ppn < 2 ? 0.7 : 0.92"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 216, "ratio *= 5.0/6.0"),
            new Pin(
                    "v2.21.5-1",
                    "graph/tuning.cc",
                    223,
                    "comm->ringbdw[coll][p] = comm->bandwidths[coll][NCCL_ALGO_RING][p];"),
            new Pin(
                    "v2.21.5-1",
                    "graph/tuning.cc",
                    227,
                    "float interLat = hwLat[NCCL_HW_NET][a][p] + graphs[a]->latencyInter;"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 314, "case 90:"),
            new Pin("v2.21.5-1", "graph/tuning.cc", 315, "default: pEnable &= 0;"),
            new Pin("v2.21.5-1", "graph/search.cc", 869, "graph->typeIntra = ngpus == 1 ? PATH_LOC : PATH_NVL;"),
            new Pin("v2.21.5-1", "graph/search.cc", 985, "tmpGraph.crossNic = 1;"),
            new Pin("v2.21.5-1", "graph/paths.cc", 614, "peerNode->paths[NET][n].type <= PATH_PXB"),
            new Pin("v2.21.5-1", "graph/paths.cc", 618, "gpu->paths[NET][n].type > PATH_PXB"),
            new Pin("v2.21.5-1", "graph/connect.cc", 457, "comm->minCompCap == 90 && comm->nNodes > 1"),
            new Pin("v2.21.5-1", "graph/topo.h", 228, "cudaCompCap >= 90 ? SM90_NVLINK_BW"),
            new Pin("v2.21.5-1", "graph/topo.cc", 74, "SKL_QPI_BW : QPI_BW"),
            new Pin("v2.21.5-1", "graph/topo.cc", 502, "(familyId == 6 && modelId >= 0x55) ? NCCL_TOPO_CPU_TYPE_SKL"),
            new Pin("v2.22.3-1", "graph/topo.cc", 507, "(familyId == 6 && modelId >= 0x55) ? NCCL_TOPO_CPU_TYPE_SKL"),
            new Pin("v2.25.1-1", "graph/topo.cc", 514, "(familyId == 6 && modelId >= 0x55) ? NCCL_TOPO_CPU_TYPE_SKL"),
            new Pin(
                    "v2.26.2-1",
                    "graph/topo.cc",
                    520,
                    "(familyId == 6 && modelId >= 0xCF) ? NCCL_TOPO_CPU_MODEL_INTEL_ERP"),
            new Pin("v2.21.5-1", "graph/topo.cc", 395, "{ \"64.0 GT/s PCIe\", 480 }"),
            new Pin("v2.21.5-1", "enqueue.cc", 1534, "\"%ld Bytes -> Algo %d proto %d time %f\""),
            new Pin(
                    "v2.21.5-1",
                    "enqueue.cc",
                    585,
                    "plan->threadPerBlock = std::max(plan->threadPerBlock, 3*WARP_SIZE);"),
            new Pin("v2.21.5-1", "enqueue.cc", 828, "tasks->usableChannels = std::min(usableChannels, accChannels);"),
            new Pin(
                    "v2.21.5-1",
                    "enqueue.cc",
                    834,
                    "DIVUP(DIVUP(totalCBDBytes, tasks->usableChannels), NCCL_BYTES_ALIGNMENT) * NCCL_BYTES_ALIGNMENT"),
            new Pin(
                    "v2.21.5-1",
                    "enqueue.cc",
                    457,
                    "workCount = std::min(DIVUP(DIVUP(enqBytes, typeSize), alignCount) * alignCount, workCountTotal);"),
            new Pin("v2.21.5-1", "enqueue.cc", 1568, "int nc = comm->collChannels;"),
            new Pin("v2.21.5-1", "include/enqueue.h", 15, "#define NCCL_LL_ALIGNMENT_PER_THREAD sizeof(uint64_t)"),
            new Pin("v2.21.5-1", "include/enqueue.h", 16, "#define NCCL_LL128_ALIGNMENT_PER_WARP 480"),
            new Pin("v2.21.5-1", "include/enqueue.h", 17, "#define NCCL_SIMPLE_ALIGNMENT (WARP_SIZE * 8LL * 16LL)"),
            new Pin("v2.21.5-1", "include/enqueue.h", 18, "#define NCCL_BYTES_ALIGNMENT 16"),
            new Pin("v2.25.1-1", "include/device.h", 62, "#define MAXCHANNELS 64"),
            new Pin("v2.25.1-1", "include/nccl_common.h", 54, "#define NCCL_NUM_ALGORITHMS 7"),
            new Pin("v2.25.1-1", "graph/tuning.cc", 121, "{  6.8, 14.0,  8.4 }, {  6.6, 14.0,  8.4 }"),
            new Pin(
                    "v2.25.1-1",
                    "graph/tuning.cc",
                    131,
                    "{ .6, 1.25, 4.0 }, /* Ring (LL/LL128/Simple)*/ { .6, 1.9, 3.4 }"),
            new Pin(
                    "v2.25.1-1",
                    "graph/tuning.cc",
                    135,
                    "{ 1.0, 1.9, 4.0 }, /* Ring (LL/LL128/Simple)*/ { 1.0, 2.5, 5.7 }"),
            new Pin(
                    "v2.25.1-1",
                    "graph/tuning.cc",
                    139,
                    "{ 5.0, 8.5, 14 }, /* Ring (LL/LL128/Simple)*/ { 2.7, 4.0, 14.0 }"),
            new Pin("v2.25.1-1", "graph/tuning.cc", 141, "/* NVLS */ { 0, 0, 18 }, /* NVLSTree */ { 0, 0, 14 }"),
            new Pin("v2.25.1-1", "graph/tuning.cc", 155, "{2*141.0, 2*45.0 /*avg of ring & tree*/, 2*35.0}"),
            new Pin("v2.25.1-1", "graph/tuning.cc", 174, "{2*38.7, 2*41.4, 2*36.0}"),
            new Pin("v2.25.1-1", "graph/tuning.cc", 215, "minCompCap >= 100 ? BLACKWELL_COMPCAP_IDX"),
            new Pin("v2.25.1-1", "graph/tuning.cc", 260, "graphs[a]->pattern == NCCL_TOPO_PATTERN_TREE) busBw *= .85"),
            new Pin("v2.25.1-1", "graph/tuning.cc", 435, "case 100: pEnable &= 1; break;"),
            new Pin("v2.25.1-1", "graph/tuning.cc", 436, "case 120: pEnable &= 1; break;"),
            new Pin("v2.25.1-1", "graph/search.cc", 957, "ncclTopoGetGpuMinPath(system, GPU, &minTypeIntra)"),
            new Pin(
                    "v2.25.1-1",
                    "graph/search.cc",
                    940,
                    "float sm100SpeedArrayIntra[] = { 90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0 };"),
            new Pin("v2.25.1-1", "graph/search.cc", 941, "float sm100SpeedArrayInter[] = { 48.0, 45.0, 42.0,"),
            new Pin(
                    "v2.25.1-1",
                    "graph/connect.cc",
                    393,
                    "if (graphs[NCCL_ALGO_RING]->crossNic && (nChannels % 2) == 0) {"),
            new Pin("v2.25.1-1", "graph/connect.cc", 466, "comm->minCompCap >= 90 && comm->nNodes > 1"),
            new Pin("v2.25.1-1", "graph/topo.h", 19, "#define SM100_NVLINK_BW 40.0"),
            new Pin("v2.25.1-1", "graph/topo.h", 71, "#define PATH_PXN 5"),
            new Pin("v2.25.1-1", "graph/topo.cc", 80, "SKL_QPI_BW : QPI_BW"),
            new Pin(
                    "v2.25.1-1",
                    "enqueue.cc",
                    557,
                    "int trafficPerByte = ncclFuncTrafficPerByte(task->func, comm->nRanks);"),
            new Pin(
                    "v2.25.1-1",
                    "enqueue.cc",
                    558,
                    "size_t cellSize = divUp(divUp(MinTrafficPerChannel, (size_t)trafficPerByte), 16) * 16;"),
            new Pin("v2.25.1-1", "enqueue.cc", 688, "\"%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}\""),
            new Pin("v2.26.2-1", "include/device.h", 62, "#define MAXCHANNELS 64"),
            new Pin("v2.26.2-1", "include/nccl_common.h", 54, "#define NCCL_NUM_ALGORITHMS 7"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 121, "{  6.8, 14.0,  8.4 }, {  6.6, 14.0,  8.4 }"),
            new Pin(
                    "v2.26.2-1",
                    "graph/tuning.cc",
                    131,
                    "{ .6, 1.25, 4.0 }, /* Ring (LL/LL128/Simple)*/ { .6, 1.9, 3.4 }"),
            new Pin(
                    "v2.26.2-1",
                    "graph/tuning.cc",
                    135,
                    "{ 1.0, 1.9, 4.0 }, /* Ring (LL/LL128/Simple)*/ { 1.0, 2.5, 5.7 }"),
            new Pin(
                    "v2.26.2-1",
                    "graph/tuning.cc",
                    139,
                    "{ 5.0, 8.5, 14 }, /* Ring (LL/LL128/Simple)*/ { 2.7, 4.0, 14.0 }"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 141, "/* NVLS */ { 0, 0, 18 }, /* NVLSTree */ { 0, 0, 14 }"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 155, "{2*141.0, 2*45.0 /*avg of ring & tree*/, 2*35.0}"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 162, "{2*36.7, 2*36.7, 2*36.7}"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 168, "{2*36.7, 2*36.7, 2*29.0}"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 174, "{2*38.7, 2*41.4, 2*36.0}"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 216, "minCompCap >= 100 ? BLACKWELL_COMPCAP_IDX"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 220, "comm->cpuVendor == NCCL_TOPO_CPU_VENDOR_MIXED) ? 1 : 0"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 257, "busBw * (0.92 /*120.0/128.0*/)"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 261, "comm->maxTreePattern == NCCL_TOPO_PATTERN_TREE"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 293, "ratio *= 5.0/6.0"),
            new Pin(
                    "v2.26.2-1",
                    "graph/tuning.cc",
                    301,
                    "float interLat = ppn == 1 ? hwLat[NCCL_HW_NET][NCCL_ALGO_TREE][p]"),
            new Pin(
                    "v2.26.2-1",
                    "graph/tuning.cc",
                    323,
                    "int nInterSteps = nNodes == 1 ? 0 : coll == ncclFuncAllReduce ? 2*(nNodes-1)"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 436, "case 100: pEnable &= 1; break;"),
            new Pin("v2.26.2-1", "graph/tuning.cc", 437, "case 120: pEnable &= 1; break;"),
            new Pin(
                    "v2.26.2-1",
                    "graph/tuning.cc",
                    53,
                    "ncclResult_t parseList(const char* str, const char* prefixElems[]"),
            new Pin("v2.26.2-1", "graph/search.cc", 940, "ncclTopoGetGpuMinPath(system, GPU, &minTypeIntra)"),
            new Pin("v2.26.2-1", "graph/search.cc", 986, "ncclTopoSplitNvLink(system, &splitNvLink)"),
            new Pin(
                    "v2.26.2-1",
                    "graph/search.cc",
                    612,
                    "graph->pattern == NCCL_TOPO_PATTERN_RING && graph->crossNic == 2"),
            new Pin("v2.26.2-1", "graph/search.cc", 661, "float maxBw = 0;"),
            new Pin(
                    "v2.26.2-1",
                    "graph/search.cc",
                    923,
                    "float sm100SpeedArrayIntra[] = { 90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0 };"),
            new Pin(
                    "v2.26.2-1",
                    "graph/search.cc",
                    924,
                    "float sm100SpeedArrayInter[] = { 48.0, 45.0, 42.0, 40.0, 30.0"),
            new Pin("v2.26.2-1", "graph/paths.cc", 677, "peerNode->paths[NET][n].type <= PATH_PXB"),
            new Pin("v2.26.2-1", "graph/paths.cc", 681, "gpu->paths[NET][n].type > PATH_PXB"),
            new Pin("v2.26.2-1", "graph/connect.cc", 466, "comm->minCompCap >= 90 && comm->nNodes > 1"),
            new Pin("v2.26.2-1", "graph/topo.h", 19, "#define SM100_NVLINK_BW 40.0"),
            new Pin("v2.26.2-1", "graph/topo.h", 77, "#define PATH_PXN 6"),
            new Pin("v2.26.2-1", "graph/topo.h", 68, "#define PATH_C2C 3"),
            new Pin("v2.26.2-1", "graph/topo.cc", 82, "NCCL_TOPO_CPU_MODEL_INTEL_ERP ? ERP_QPI_BW"),
            new Pin("v2.26.2-1", "enqueue.cc", 702, "\"%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}\""),
            new Pin("v2.26.2-1", "enqueue.cc", 162, "std::max(plan->threadPerBlock, NCCL_MIN_NTHREADS)"),
            new Pin(
                    "v2.26.2-1",
                    "enqueue.cc",
                    388,
                    "if (aggBeg->protocol == NCCL_PROTO_LL) aggBeg->trafficBytes *= 4;"),
            new Pin("v2.26.2-1", "enqueue.cc", 497, "constexpr size_t MinTrafficPerChannel = 16 << 10;"),
            new Pin(
                    "v2.26.2-1",
                    "enqueue.cc",
                    530,
                    "trafficPerChannel = std::max<size_t>(MinTrafficPerChannel, trafficBytes[kind]/nChannels[kind]);"),
            new Pin(
                    "v2.26.2-1",
                    "enqueue.cc",
                    569,
                    "size_t cellSize = divUp(divUp(MinTrafficPerChannel, (size_t)trafficPerByte), 16) * 16;"),
            new Pin(
                    "v2.26.2-1",
                    "enqueue.cc",
                    579,
                    "cellsLo = std::min(cells, divUp((trafficPerChannel-currentTraffic),trafficPerCell));"),
            new Pin("v2.26.2-1", "enqueue.cc", 1772, "if (info->algorithm == NCCL_ALGO_TREE) nt = NCCL_MAX_NTHREADS;"),
            new Pin("v2.27.3-1", "graph/tuning.cc", 135, "{  6.8, 14.0,  8.4 }, {  6.6, 14.0,  8.4 }"),
            new Pin("v2.27.3-1", "graph/tuning.cc", 176, "{2*36.7, 2*36.7, 2*36.7}"),
            new Pin(
                    "v2.27.3-1",
                    "graph/tuning.cc",
                    460,
                    "graphs[a]->typeInter <= (ncclParamLl128C2c() ? PATH_P2C : PATH_PXN)"),
            new Pin("v2.27.3-1", "graph/tuning.cc", 463, "pEnable &= !(minCompCap < 70"),
            new Pin("v2.27.3-1", "graph/tuning.cc", 211, "NCCL_PARAM(Ll128C2c, \"LL128_C2C\", 1);"),
            new Pin("v2.27.3-1", "graph/topo.h", 80, "#define PATH_PXN 6"),
            new Pin("v2.27.3-1", "graph/topo.h", 83, "#define PATH_P2C 7"),
            new Pin("v2.27.3-1", "graph/topo.h", 21, "#define SM100_NVLINK_BW 40.0"),
            new Pin(
                    "v2.27.3-1",
                    "graph/search.cc",
                    662,
                    "ncclTopoGetLocal(system, NET, n, GPU, localGpus, &localGpuCount, &pathType)"),
            new Pin(
                    "v2.27.3-1",
                    "graph/search.cc",
                    912,
                    "float sm100SpeedArrayIntra[] = { 90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0 };"),
            new Pin("v2.27.3-1", "graph/search.cc", 913, "float sm100SpeedArrayInter[] = { 47.9, 45.0,"),
            new Pin("v2.27.3-1", "graph/paths.cc", 609, "NCCL_PARAM(PxnC2c, \"PXN_C2C\", 0);"),
            new Pin("v2.27.3-1", "graph/paths.cc", 707, "gpu->paths[NET][n].type > PATH_PXB"),
            new Pin("v2.27.3-1", "enqueue.cc", 539, "constexpr size_t MinTrafficPerChannel = 16 << 10;"),
            new Pin("v2.27.3-1", "enqueue.cc", 748, "\"%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}\""),
            new Pin("v2.27.3-1", "include/device.h", 87, "#define MAXCHANNELS 64"),
            new Pin("v2.27.5-1", "graph/tuning.cc", 461, "pEnable &= (graphs[a]->typeInter <= PATH_PXN);"),
            new Pin("v2.27.5-1", "graph/topo.h", 80, "#define PATH_P2C 6"),
            new Pin("v2.27.5-1", "graph/topo.h", 83, "#define PATH_PXN 7"),
            new Pin("v2.27.5-1", "graph/topo.h", 21, "#define SM100_NVLINK_BW 40.1"),
            new Pin("v2.27.5-1", "graph/search.cc", 690, "if (graph->nChannels > 0 && graph->sameChannels == 1) {"),
            new Pin("v2.27.5-1", "graph/search.cc", 704, "int localGpu = net->net.localGpu;"),
            new Pin("v2.27.5-1", "graph/search.cc", 963, "float sm100SpeedArrayInter[] = { 48.0, 45.1,"),
            new Pin("v2.27.5-1", "graph/paths.cc", 616, "NCCL_PARAM(PxnC2c, \"PXN_C2C\", 0);"),
            new Pin("v2.27.5-1", "graph/paths.cc", 713, "gpu->paths[NET][n].type > pxnType"),
            new Pin("v2.27.5-1", "enqueue.cc", 539, "constexpr size_t MinTrafficPerChannel = 16 << 10;"),
            new Pin("v2.27.7-1", "graph/paths.cc", 713, "gpu->paths[NET][n].type > PATH_PXN"),
            new Pin("v2.27.7-1", "graph/search.cc", 963, "float sm100SpeedArrayInter[] = { 96.0, 48.0, 45.1,"),
            new Pin("v2.27.7-1", "enqueue.cc", 536, "constexpr size_t MinTrafficPerChannel = 16 << 10;"),
            new Pin("v2.24.3-1", "graph/tuning.cc", 214, "comm->cpuVendor == NCCL_TOPO_CPU_VENDOR_MIXED) ? 1 : 0"),
            new Pin("v2.24.3-1", "init.cc", 997, "comm->cpuVendor = NCCL_TOPO_CPU_VENDOR_MIXED;"),
            new Pin("v2.24.3-1", "graph/topo.cc", 80, "SKL_QPI_BW : QPI_BW"),
            new Pin(
                    "v2.22.3-1",
                    "graph/tuning.cc",
                    318,
                    "if (a == NCCL_ALGO_RING && pEnable == 0) comm->ringbdw[c][p] = 0;"),
            new Pin(
                    "v2.28.9-1",
                    "graph/search.cc",
                    986,
                    "float sm100SpeedArrayIntra[] = { 90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 19.0, 18.0 };"),
            new Pin("v2.28.9-1", "graph/search.cc", 987, "float sm100SpeedArrayInter[] = { 96.0, 48.0, 45.1,"),
            new Pin(
                    "v2.29.2-1",
                    "graph/search.cc",
                    986,
                    "float sm100SpeedArrayIntra[] = { 90.0, 80.0, 70.0, 60.0, 50.0, 45.0, 40.0,"),
            new Pin(
                    "v2.30.7-1",
                    "graph/search.cc",
                    1064,
                    "float sm100SpeedArrayInter[] = {96.0, 86.0, 80.0, 48.0, 45.1,"),
            new Pin(
                    "v2.21.5-1",
                    "graph/connect.cc",
                    384,
                    "if (graphs[NCCL_ALGO_RING]->crossNic && (nChannels % 2) == 0) {"),
            new Pin(
                    "v2.22.3-1",
                    "graph/connect.cc",
                    393,
                    "if (graphs[NCCL_ALGO_RING]->crossNic && (nChannels % 2) == 0) {"),
            new Pin(
                    "v2.23.4-1",
                    "graph/connect.cc",
                    396,
                    "if (graphs[NCCL_ALGO_RING]->crossNic && (nChannels % 2) == 0) {"),
            new Pin(
                    "v2.24.3-1",
                    "graph/connect.cc",
                    396,
                    "if (graphs[NCCL_ALGO_RING]->crossNic && (nChannels % 2) == 0) {"),
            new Pin(
                    "v2.26.2-1",
                    "graph/connect.cc",
                    393,
                    "if (graphs[NCCL_ALGO_RING]->crossNic == 2 && (nChannels % 2) == 0) {"),
            new Pin(
                    "v2.27.7-1",
                    "graph/connect.cc",
                    393,
                    "if (graphs[NCCL_ALGO_RING]->crossNic == 2 && (nChannels % 2) == 0) {"),
            new Pin("v2.28.9-1", "graph/connect.cc", 24, "topoRanks->crossNicRing = graphs[NCCL_ALGO_RING]->crossNic;"),
            new Pin(
                    "v2.28.9-1",
                    "graph/connect.cc",
                    396,
                    "if (allTopoRanks[r]->crossNicRing == 2 && (nChannels % 2) == 0"),
            new Pin(
                    "v2.21.5-1",
                    "graph/paths.cc",
                    723,
                    "while (nChannelsMax*comm->nRanks > comm->p2pnChannels*4 && nChannelsMax > 1)"),
            new Pin(
                    "v2.22.3-1",
                    "graph/paths.cc",
                    725,
                    "while (nChannelsMax*comm->nRanks > comm->p2pnChannels*4 && nChannelsMax > 1)"),
            new Pin(
                    "v2.23.4-1",
                    "graph/paths.cc",
                    719,
                    "while (nChannelsMax*comm->nRanks > comm->p2pnChannels*4 && nChannelsMax > 1)"),
            new Pin(
                    "v2.24.3-1",
                    "graph/paths.cc",
                    766,
                    "while (nChannelsMax*comm->nRanks > comm->p2pnChannels*4 && nChannelsMax > 1)"),
            new Pin(
                    "v2.28.9-1",
                    "graph/paths.cc",
                    846,
                    "while (nChannelsMax*comm->nRanks > comm->p2pnChannels*4 && nChannelsMax > 1)"),
            new Pin(
                    "v2.29.2-1",
                    "graph/paths.cc",
                    823,
                    "NCCL_PARAM(P2pPerChannelNetBw, \"P2P_PER_CHANNEL_NET_BW\", /*GB/s*/14);"),
            new Pin(
                    "v2.29.2-1",
                    "graph/paths.cc",
                    896,
                    "divUp(comm->nRanks, NCCL_MAX_DEV_WORK_P2P_PER_BATCH) > comm->p2pnChannels"),
            new Pin(
                    "v2.29.7-1",
                    "graph/paths.cc",
                    832,
                    "NCCL_PARAM(P2pPerChannelNetBw, \"P2P_PER_CHANNEL_NET_BW\", /*GB/s*/14);"),
            new Pin(
                    "v2.29.7-1",
                    "graph/paths.cc",
                    861,
                    "nNetChannels = std::max(netCount, divUp((int)netBw, (int)ncclParamP2pPerChannelNetBw()));"),
            new Pin(
                    "v2.29.7-1",
                    "graph/paths.cc",
                    905,
                    "divUp(comm->nRanks, NCCL_MAX_DEV_WORK_P2P_PER_BATCH) > comm->p2pnChannels"),
            new Pin("v2.29.7-1", "init.cc", 1145, "ncclTopoComputeP2pChannelsPerPeer(comm)"),
            new Pin(
                    "v2.29.7-1",
                    "init.cc",
                    1270,
                    "std::min(comm->p2pnChannelsPerPeer, allGather3Data[i].p2pnChannelsPerPeer);"),
            new Pin("v2.29.7-1", "include/device.h", 386, "#define NCCL_MAX_DEV_WORK_P2P_PER_BATCH 8"),
            new Pin("v2.29.7-1", "graph/topo.cc", 1647, "if(totalNetBw >= gpuBw) break;"),
            new Pin(
                    "v2.30.7-1",
                    "graph/paths.cc",
                    918,
                    "NCCL_PARAM(P2pPerChannelNetBw, \"P2P_PER_CHANNEL_NET_BW\", /*GB/s*/ 14);"),
            new Pin("v2.30.7-1", "graph/paths.cc", 933, "if (path->type == PATH_NVL || path->type == PATH_NVB) {"),
            new Pin(
                    "v2.30.7-1",
                    "graph/paths.cc",
                    973,
                    "(comm->config.maxP2pPeers == NCCL_CONFIG_UNDEF_INT) ? comm->nRanks"),
            new Pin(
                    "v2.30.7-1",
                    "graph/paths.cc",
                    998,
                    "divUp(comm->p2pMaxPeers, NCCL_MAX_DEV_WORK_P2P_PER_BATCH) > comm->p2pnChannels"),
            new Pin("v2.30.7-1", "init.cc", 66, "NCCL_PARAM(MaxP2pPeers, \"P2P_MAX_PEERS\", NCCL_CONFIG_UNDEF_INT);"),
            new Pin("v2.30.7-1", "include/device.h", 391, "#define NCCL_MAX_DEV_WORK_P2P_PER_BATCH 8"),
            new Pin("v2.30.7-1", "graph/topo.cc", 1995, "if (totalNetBw >= gpuBw) break;"));

    @Test
    void v221IsThe222TunerWithTheLaunchOf221() {
        NcclVersionTable t = NcclVersionTable.named("2.21.x");
        assertThat(t.family()).isEqualTo("2.21.x");
        assertThat(t.maxChannels()).isEqualTo(32);
        assertThat(t.numAlgorithms()).isEqualTo(6);
        assertThat(t.baseLat()[TREE]).containsExactly(6.8f, 14.0f, 0f);
        assertThat(t.baseLat()[RING]).containsExactly(6.6f, 14.0f, 8.4f);
        assertThat(t.hwLat()[TuningModel.HW_NVLINK][TREE]).containsExactly(.6f, 1.25f, 28f);
        assertThat(t.hwLat()[TuningModel.HW_PCI][TREE]).containsExactly(1.0f, 1.9f, 28f);
        assertThat(t.hwLat()[TuningModel.HW_NET][TREE]).containsExactly(5.0f, 8.5f, 28f);
        assertThat(t.hwLat()[TuningModel.HW_NET][RING]).containsExactly(2.7f, 4.0f, 14.0f);
        assertThat(t.llMaxBws()).hasNumberOfRows(3);
        assertThat(t.llMaxBws()[2]).containsExactly(141.0, 45.0, 35.0);
        assertThat(t.perChMaxRingLL128Bws()[2]).containsExactly(36.7, 36.7, 36.7);
        assertThat(t.perChMaxTreeLL128Bws()[2]).containsExactly(36.7, 36.7, 29.0);
        assertThat(t.perChMaxTreeBws()[2]).containsExactly(38.7, 41.4, 36.0);
        assertThat(t.compCapIndex(100)).isEqualTo(2);
        assertThat(t.ringLL128LowPpnDiscount()).isTrue();
        assertThat(t.interLatUsesTreeAtOnePpn()).isFalse();
        assertThat(t.interStepsTwoPerNode()).isTrue();
        assertThat(t.ll128Rule()).isEqualTo(Ll128Rule.CC_70_80_90);
        assertThat(t.searchBoundsFromSystem()).isFalse();
        assertThat(t.netSearch()).isEqualTo(NetSearch.MOST_LOCAL_BW);
        assertThat(t.mixedCpus()).isFalse();
        assertThat(t.maxTreePattern()).isFalse();
        assertThat(t.nvlsRatioRanksOverSteps()).isFalse();
        assertThat(t.crossNicTwo()).isFalse();
        assertThat(t.strictEnvLists()).isFalse();
        assertThat(t.ringBackupDropsDisabledProtocols()).isFalse();
        assertThat(t.pxnPeerMaxType()).isEqualTo(PATH_PXB);
        assertThat(t.pxnSelfMinType()).isEqualTo(PATH_PXB);
        assertThat(t.postsetDoubleOnlySm90()).isTrue();
        assertThat(t.pathLevels()).doesNotContain(PATH_C2C, PATH_P2C);
        assertThat(t.splitNvLinkForcesTwoChannels()).isFalse();
        assertThat(t.sm100SpeedIntra()).isNull();
        assertThat(t.nvlBw(100)).isEqualTo(SM90_NVLINK_BW);
        assertThat(t.intelSrpErp()).isFalse();
        assertThat(t.tuningLine()).isEqualTo(TuningLineFormat.BYTES_ALGO_PROTO_TIME);
        assertThat(t.planner()).isEqualTo(Planner.CBD);
        assertThat(t.minBlockThreads()).isEqualTo(96);
        assertThat(t.treeUsesAllThreads()).isFalse();
        assertThat(t.pciGenSpeeds()).containsExactly(15, 30, 60, 120, 240, 480);
    }

    @Test
    void v225TakesTheSearchAndTunerOf226ButTheRingExchangeAndTreePatternOf224() {
        NcclVersionTable t = NcclVersionTable.named("2.25.x");
        NcclVersionTable before = NcclVersionTable.named("2.24.x");
        NcclVersionTable after = NcclVersionTable.named("2.26.x");
        assertThat(t.verifiedAt()).isEqualTo("v2.25.1-1");
        // As 2.26: MAXCHANNELS 64, Blackwell rows, LL128 on cc 100/120, bounds from the system, SM100 NVLink and
        // speeds.
        assertThat(t.maxChannels()).isEqualTo(64).isNotEqualTo(before.maxChannels());
        assertThat(t.numAlgorithms()).isEqualTo(7);
        assertThat(t.baseLat()).isDeepEqualTo(after.baseLat());
        assertThat(t.hwLat()).isDeepEqualTo(after.hwLat());
        assertThat(t.llMaxBws()).isDeepEqualTo(after.llMaxBws());
        assertThat(t.perChMaxRingLL128Bws()).isDeepEqualTo(after.perChMaxRingLL128Bws());
        assertThat(t.perChMaxTreeLL128Bws()).isDeepEqualTo(after.perChMaxTreeLL128Bws());
        assertThat(t.perChMaxTreeBws()).isDeepEqualTo(after.perChMaxTreeBws());
        assertThat(t.compCapIndex(100)).isEqualTo(3);
        assertThat(t.ll128Rule()).isEqualTo(Ll128Rule.CC_70_80_90_100_120);
        assertThat(t.searchBoundsFromSystem()).isTrue();
        assertThat(t.postsetDoubleOnlySm90()).isFalse();
        assertThat(t.sm100SpeedIntra()).containsExactly(after.sm100SpeedIntra());
        assertThat(t.sm100SpeedInter()).containsExactly(after.sm100SpeedInter());
        assertThat(t.nvlBw(100)).isEqualTo(40.0f);
        assertThat(t.mixedCpus()).isTrue();
        assertThat(t.strictEnvLists()).isTrue();
        assertThat(t.crossNicTwo()).isTrue();
        assertThat(t.tuningLine()).isEqualTo(TuningLineFormat.FUNC_BYTES_ALGO_PROTO_CHANNELS);
        assertThat(t.minTrafficPerChannel()).isEqualTo(16 << 10);
        // As 2.24: the rank's own tree pattern, the exchange on any crossNic, no C2C, no split NVLink, Skylake the
        // newest Intel, LL traffic x1.
        assertThat(t.maxTreePattern()).isFalse();
        assertThat(t.ringExchange()).isEqualTo(RingExchange.ALIGNED_CROSS_NIC);
        assertThat(t.pathLevels()).containsExactly(before.pathLevels());
        assertThat(t.splitNvLinkForcesTwoChannels()).isFalse();
        assertThat(t.intelSrpErp()).isFalse();
        assertThat(t.llTrafficTimesFour()).isFalse();
        assertThat(NcclVersionTable.forVersion(Version.parse("2.25.1")).family())
                .isEqualTo("2.25.x");
    }

    @Test
    void v226() {
        NcclVersionTable t = NcclVersionTable.named("2.26.x");
        assertThat(t.family()).isEqualTo("2.26.x");
        assertThat(t.maxChannels()).isEqualTo(64);
        assertThat(t.numAlgorithms()).isEqualTo(7);
        assertThat(t.baseLat()[TREE]).containsExactly(6.8f, 14.0f, 8.4f);
        assertThat(t.baseLat()[PAT]).containsExactly(0f, 0f, 0f);
        assertThat(t.hwLat()[TuningModel.HW_NVLINK][TREE]).containsExactly(.6f, 1.25f, 4.0f);
        assertThat(t.hwLat()[TuningModel.HW_PCI][TREE]).containsExactly(1.0f, 1.9f, 4.0f);
        assertThat(t.hwLat()[TuningModel.HW_NET][TREE]).containsExactly(5.0f, 8.5f, 14f);
        assertThat(t.hwLat()[TuningModel.HW_NET][NVLS_TREE]).containsExactly(0f, 0f, 14f);
        assertThat(t.llMaxBws()[3]).containsExactly(282.0, 90.0, 70.0);
        assertThat(t.perChMaxRingLL128Bws()[3]).containsExactly(2 * 36.7, 2 * 36.7, 2 * 36.7);
        assertThat(t.perChMaxTreeLL128Bws()[3]).containsExactly(2 * 36.7, 2 * 36.7, 2 * 29.0);
        assertThat(t.perChMaxTreeBws()[3]).containsExactly(2 * 38.7, 2 * 41.4, 2 * 36.0);
        assertThat(t.compCapIndex(100)).isEqualTo(3);
        assertThat(t.ringLL128LowPpnDiscount()).isFalse();
        assertThat(t.interLatUsesTreeAtOnePpn()).isTrue();
        assertThat(t.interStepsTwoPerNode()).isFalse();
        assertThat(t.ll128Rule()).isEqualTo(Ll128Rule.CC_70_80_90_100_120);
        assertThat(t.searchBoundsFromSystem()).isTrue();
        assertThat(t.netSearch()).isEqualTo(NetSearch.MOST_LOCAL_BW);
        assertThat(t.mixedCpus()).isTrue();
        assertThat(t.maxTreePattern()).isTrue();
        assertThat(t.nvlsRatioRanksOverSteps()).isFalse();
        assertThat(t.crossNicTwo()).isTrue();
        assertThat(t.strictEnvLists()).isTrue();
        assertThat(t.pxnPeerMaxType()).isEqualTo(PATH_PXB);
        assertThat(t.pxnSelfMinType()).isEqualTo(PATH_PXB);
        assertThat(t.preHopperMaxTypeInterSys()).isFalse();
        assertThat(t.postsetDoubleOnlySm90()).isFalse();
        assertThat(t.pathLevels()).contains(PATH_C2C).doesNotContain(PATH_P2C);
        assertThat(t.splitNvLinkForcesTwoChannels()).isTrue();
        assertThat(t.sm100SpeedIntra()).containsExactly(90f, 80f, 70f, 60f, 50f, 40f, 30f, 24f, 20f, 19f);
        assertThat(t.sm100SpeedInter()).startsWith(48f, 45f, 42f).hasSize(17);
        assertThat(t.nvlBw(100)).isEqualTo(40.0f);
        assertThat(t.intelSrpErp()).isTrue();
        assertThat(t.tuningLine()).isEqualTo(TuningLineFormat.FUNC_BYTES_ALGO_PROTO_CHANNELS);
        assertThat(t.planner()).isEqualTo(Planner.CELLS);
        assertThat(t.minBlockThreads()).isEqualTo(128);
        assertThat(t.treeUsesAllThreads()).isTrue();
        assertThat(t.minTrafficPerChannel()).isEqualTo(16 << 10);
        assertThat(t.fixedCellSize16()).isFalse();
        assertThat(t.cellsLoRoundsUp()).isTrue();
        assertThat(t.llTrafficTimesFour()).isTrue();
        assertThat(t.trafficPerChannelRoundedTo16()).isFalse();
    }

    @Test
    void theThree227Families() {
        NcclVersionTable early = NcclVersionTable.named("2.27.0-2.27.4");
        NcclVersionTable five = NcclVersionTable.named("2.27.5");
        NcclVersionTable late = NcclVersionTable.named("2.27.6-2.27.7");
        for (NcclVersionTable t : List.of(early, five, late)) {
            assertThat(t.maxChannels()).isEqualTo(64);
            assertThat(t.ll128Rule()).isEqualTo(Ll128Rule.C2C_ONE_CC);
            assertThat(t.pxnPeerMaxType()).isEqualTo(PATH_PXB);
            assertThat(t.nvlsRatioRanksOverSteps()).isFalse();
            assertThat(t.perChMaxTreeBws()[3]).containsExactly(2 * 38.7, 2 * 41.4, 2 * 36.0);
            assertThat(t.sm100SpeedIntra()).containsExactly(90f, 80f, 70f, 60f, 50f, 40f, 30f, 24f, 20f, 19f, 18f);
            assertThat(t.minTrafficPerChannel()).isEqualTo(16 << 10);
            assertThat(t.tuningLine()).isEqualTo(TuningLineFormat.FUNC_BYTES_ALGO_PROTO_CHANNELS);
            assertThat(t.pathLevels()).contains(PATH_C2C, PATH_P2C);
        }
        assertThat(early.netSearch()).isEqualTo(NetSearch.LOCAL_GPUS);
        assertThat(five.netSearch()).isEqualTo(NetSearch.LOCAL_GPU_FIRST);
        assertThat(late.netSearch()).isEqualTo(NetSearch.LOCAL_GPU_FIRST);
        assertThat(early.nvlBw(100)).isEqualTo(40.0f);
        assertThat(five.nvlBw(100)).isEqualTo(40.1f);
        assertThat(early.sm100SpeedInter()[0]).isEqualTo(47.9f);
        assertThat(five.sm100SpeedInter()).startsWith(48.0f, 45.1f).hasSize(17);
        assertThat(late.sm100SpeedInter()).startsWith(96.0f, 48.0f, 45.1f).hasSize(18);
        assertThat(five.pxnSelfMinType()).isEqualTo(PATH_PXB);
        assertThat(late.pxnSelfMinType()).isEqualTo(PATH_PXN);
    }

    @Test
    void ringExchangeOfEachFamily() {
        // ≤ 2.25 swap rings c and c^1 on odd nodes for any crossNic, 2.26-2.27 for the aligned crossNic 2, 2.28 on
        // the rank's own crossNicRing 2.
        for (String f : List.of("2.21.x", "2.22.x", "2.23.x", "2.24.x", "2.25.x")) {
            assertThat(NcclVersionTable.named(f).ringExchange()).as(f).isEqualTo(RingExchange.ALIGNED_CROSS_NIC);
        }
        for (String f : List.of("2.26.x", "2.27.0-2.27.4", "2.27.5", "2.27.6-2.27.7")) {
            assertThat(NcclVersionTable.named(f).ringExchange()).as(f).isEqualTo(RingExchange.ALIGNED_CROSS_NIC_TWO);
        }
        for (String f : List.of("2.28.x", "2.29.x", "2.30.x")) {
            assertThat(NcclVersionTable.named(f).ringExchange()).as(f).isEqualTo(RingExchange.OWN_CROSS_NIC_TWO);
        }
    }

    @Test
    void p2pChannelsPerPeerOfEachFamily() {
        // p2p channels per peer: the NET rule of 2.21-2.28, the per-NIC bandwidth rule of 2.29, p2pMaxPeers in 2.30.
        assertThat(NcclVersionTable.named("2.21.x").p2pPerPeer()).isEqualTo(P2pPerPeer.HOST_GPUS_NET_BY_RANKS);
        assertThat(NcclVersionTable.named("2.28.x").p2pPerPeer()).isEqualTo(P2pPerPeer.HOST_GPUS_NET_BY_RANKS);
        assertThat(NcclVersionTable.named("2.29.x").p2pPerPeer()).isEqualTo(P2pPerPeer.RANK_GPU_NET_BW);
        assertThat(NcclVersionTable.named("2.30.x").p2pPerPeer()).isEqualTo(P2pPerPeer.RANK_GPU_NET_BW_MAX_PEERS);
    }

    @Test
    void eachPatchOf227FindsItsFamily() {
        assertThat(NcclVersionTable.forVersion(Version.parse("2.27.3")).family())
                .isEqualTo("2.27.0-2.27.4");
        assertThat(NcclVersionTable.forVersion(Version.parse("2.27.4")).family())
                .isEqualTo("2.27.0-2.27.4");
        assertThat(NcclVersionTable.forVersion(Version.parse("2.27.5")).family())
                .isEqualTo("2.27.5");
        assertThat(NcclVersionTable.forVersion(Version.parse("2.27.6")).family())
                .isEqualTo("2.27.6-2.27.7");
        assertThat(NcclVersionTable.forVersion(Version.parse("2.27.7")).family())
                .isEqualTo("2.27.6-2.27.7");
        assertThat(NcclVersionTable.forVersion(Version.parse("2.26.2+cuda12.8")).family())
                .isEqualTo("2.26.x");
        assertThat(NcclVersionTable.forVersion(Version.parse("2.21.5")).family())
                .isEqualTo("2.21.x");
    }

    @Test
    void correctionsToTheOlderTables() {
        // MIXED CPUs from 2.24 (init.cc@v2.24.3-1:991-998), not 2.28.
        assertThat(NcclVersionTable.named("2.23.x").mixedCpus()).isFalse();
        assertThat(NcclVersionTable.named("2.24.x").mixedCpus()).isTrue();
        // Sapphire/Emerald Rapids bandwidths from 2.26 only.
        assertThat(NcclVersionTable.named("2.24.x").intelSrpErp()).isFalse();
        assertThat(NcclVersionTable.named("2.28.x").intelSrpErp()).isTrue();
        // The sm100 speed arrays of each version, not 2.30's for all.
        assertThat(NcclVersionTable.named("2.28.x").sm100SpeedIntra())
                .doesNotContain(45.0f)
                .hasSize(11);
        assertThat(NcclVersionTable.named("2.28.x").sm100SpeedInter())
                .startsWith(96.0f, 48.0f)
                .hasSize(18);
        assertThat(NcclVersionTable.named("2.29.x").sm100SpeedIntra())
                .contains(45.0f)
                .hasSize(12);
        assertThat(NcclVersionTable.named("2.30.x").sm100SpeedInter())
                .startsWith(96.0f, 86.0f, 80.0f)
                .hasSize(20);
        assertThat(NcclVersionTable.named("2.22.x").ringBackupDropsDisabledProtocols())
                .isTrue();
    }

    private static final Map<String, List<String>> SOURCES = new HashMap<>();

    static List<Pin> pins() {
        return PINS;
    }

    @ParameterizedTest
    @MethodSource("pins")
    void eachPinIsOnItsSourceLine(Pin pin) throws Exception {
        Path mirror = Path.of(System.getenv().getOrDefault("PATHPROOF_NCCL_MIRROR", ".emu/nccl-mirror"));
        Assumptions.assumeTrue(Files.isDirectory(mirror), "no NCCL source mirror at " + mirror);
        List<String> lines = source(mirror, pin.tag(), "src/" + pin.file());
        assertThat(pin.line()).isLessThanOrEqualTo(lines.size());
        assertThat(lines.get(pin.line() - 1)).as(pin.toString()).contains(pin.text());
    }

    private static synchronized List<String> source(Path mirror, String tag, String path)
            throws IOException, InterruptedException {
        String key = tag + ":" + path;
        List<String> cached = SOURCES.get(key);
        if (cached != null) {
            return cached;
        }
        Process p = new ProcessBuilder("git", "-C", mirror.toString(), "show", key)
                .redirectErrorStream(false)
                .start();
        byte[] out = p.getInputStream().readAllBytes();
        Assumptions.assumeTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "git show " + key + " failed");
        List<String> lines = List.of(new String(out, StandardCharsets.UTF_8).split("\n", -1));
        SOURCES.put(key, lines);
        return lines;
    }
}

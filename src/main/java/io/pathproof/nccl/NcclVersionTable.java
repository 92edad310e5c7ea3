package io.pathproof.nccl;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Version;
import java.util.List;

/**
 * Everything that differs between the NCCL versions the model supports, as data: one record per version family.
 * Every value was read from the NVIDIA/nccl source at the tag named in {@code verifiedAt}; the comment next to each
 * builder call cites the file and line. Code elsewhere asks the table, never the version number.
 *
 * <p>Arrays are indexed like NCCL's: algorithm (Tree 0, Ring 1, CollNetDirect 2, CollNetChain 3, NVLS 4, NVLSTree 5,
 * PAT 6), protocol (LL 0, LL128 1, Simple 2), hardware (NVLink 0, PCI 1, NET 2), compute-capability index (Volta 0,
 * Ampere 1, Hopper 2, Blackwell 3) and tuning scale (1 node, 2 nodes, more).
 */
record NcclVersionTable(
        String family,
        String verifiedAt,
        int firstMinor,
        int lastMinor,
        int firstPatch,
        int lastPatch,
        int maxChannels,
        int numAlgorithms,
        float[][] baseLat,
        float[][][] hwLat,
        double[][] llMaxBws,
        double[][] perChMaxRingLL128Bws,
        double[][] perChMaxTreeLL128Bws,
        double[][] perChMaxTreeBws,
        int maxCompCapIndex,
        boolean ringLL128LowPpnDiscount,
        boolean interLatUsesTreeAtOnePpn,
        boolean interStepsTwoPerNode,
        Ll128Rule ll128Rule,
        boolean searchBoundsFromSystem,
        NetSearch netSearch,
        boolean mixedCpus,
        boolean maxTreePattern,
        boolean nvlsRatioRanksOverSteps,
        boolean crossNicTwo,
        boolean strictEnvLists,
        boolean ringBackupDropsDisabledProtocols,
        int pxnPeerMaxType,
        int pxnSelfMinType,
        boolean preHopperMaxTypeInterSys,
        boolean postsetDoubleOnlySm90,
        int[] pathLevels,
        boolean splitNvLinkForcesTwoChannels,
        float[] sm100SpeedIntra,
        float[] sm100SpeedInter,
        float sm100NvlinkBw,
        boolean intelSrpErp,
        TuningLineFormat tuningLine,
        Planner planner,
        int minBlockThreads,
        boolean treeUsesAllThreads,
        long minTrafficPerChannel,
        boolean fixedCellSize16,
        boolean cellsLoRoundsUp,
        boolean llTrafficTimesFour,
        boolean trafficPerChannelRoundedTo16,
        int[] pciGenSpeeds) {

    /** How the search lays a channel that starts at a NIC (ncclTopoSearchRecNet, when it is not replaying one). */
    enum NetSearch {
        /** ≤ 2.26: the GPUs with the best bandwidth, then fewest hops, to the NIC, from GPU (nChannels + i) % ngpus. */
        MOST_LOCAL_BW,
        /** 2.27.0–2.27.4: ncclTopoGetLocal(NET → GPU), in index order (search.cc@v2.27.3-1:660-667). */
        LOCAL_GPUS,
        /**
         * 2.27.5+: replay only when sameChannels; otherwise the NIC's own local GPU first, then the other local GPUs
         * (search.cc@v2.27.5-1:690-715, @v2.28.9-1:714-740).
         */
        LOCAL_GPU_FIRST
    }

    /** How one collective's work is spread over the channels (hence gridDim.x = the channels used). */
    enum Planner {
        /**
         * ≤ 2.21: "CBD", every channel gets up to maxBytesPerChannel = divUp(bytes / usable channels, 16) bytes, rounded
         * up to the protocol's alignment (addCBDCollToPlan, enqueue.cc@v2.21.5-1:431-505).
         */
        CBD,
        /** 2.22+: cells of a traffic budget per channel (scheduleCollTasksToPlan, enqueue.cc@v2.22.3-1:583-760). */
        CELLS
    }

    /** How LL128 is enabled by default (tuning.cc, the {@code pEnable == 2} block). */
    enum Ll128Rule {
        /**
         * 2.21–2.24: typeInter ≤ PXB (PXN on sm90), typeIntra ≤ NVB, one compute capability, cc ∈ {70, 80, 90}
         * (tuning.cc@v2.21.5-1:305-316, @v2.22.3-1:301-319).
         */
        CC_70_80_90,
        /** 2.26: as CC_70_80_90 with cc ∈ {70, 80, 90, 100, 120} (tuning.cc@v2.26.2-1:426-439). */
        CC_70_80_90_100_120,
        /**
         * 2.27–2.29: typeInter ≤ PXN on sm90+ (NCCL_LL128_C2C=1) else ≤ PXB, typeIntra ≤ NVB, one cc, cc ≥ 70
         * (tuning.cc@v2.27.5-1:457-471, @v2.28.9-1:480-494). 2.27.0–2.27.4 write it {@code ≤ PXB || (sm90 && ≤ P2C)}
         * with P2C numbered after PXN (tuning.cc@v2.27.3-1:460, graph/topo.h@v2.27.3-1:80-83): without C2C links, which
         * are not an input, that is the same set of paths.
         */
        C2C_ONE_CC,
        /** 2.30: as C2C_ONE_CC, but mixed compute capabilities are allowed from Hopper on. */
        C2C_MIXED_HOPPER
    }

    /** The INFO line NCCL_DEBUG_SUBSYS=TUNING prints per decision. */
    enum TuningLineFormat {
        /** 2.22 enqueue.cc:1613 {@code "%ld Bytes -> Algo %d proto %d time %f"}. */
        BYTES_ALGO_PROTO_TIME,
        /** 2.23 enqueue.cc@v2.23.4-1:1855 {@code "%s: %ld Bytes -> Algo %d proto %d time %f"}. */
        FUNC_BYTES_ALGO_PROTO_TIME,
        /** 2.24+ enqueue.cc (2.28.9:741, 2.30.7:822) {@code "%s: %ld Bytes -> Algo %s proto %s channel{Lo..Hi}={%d..%d}"}. */
        FUNC_BYTES_ALGO_PROTO_CHANNELS
    }

    // Path types in the numbering of 2.28+ (graph/topo.h@v2.28.9-1:47-96). 2.21–2.25 have no C2C/P2C and 2.26 no P2C;
    // their numbers differ but the order is the same, so one numbering serves all versions and pathLevels lists the
    // types
    // a version steps through. 2.27.0–2.27.4 number P2C after PXN (graph/topo.h@v2.27.3-1:80-83): no path has type P2C
    // without C2C links (not an input), so its search walks the same path sets; see v227early().
    static final int PATH_LOC = 0;
    static final int PATH_NVL = 1;
    static final int PATH_NVB = 2;
    static final int PATH_C2C = 3;
    static final int PATH_PIX = 4;
    static final int PATH_PXB = 5;
    static final int PATH_P2C = 6;
    static final int PATH_PXN = 7;
    static final int PATH_PHB = 8;
    static final int PATH_SYS = 9;
    static final int PATH_NET = 10;
    static final int PATH_DIS = 11;
    static final String[] PATH_NAMES = {
        "LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"
    };

    // The ported search and tuning index their tables by NCCL's ids, as NCCL does; the names are the enums'.
    static final int TREE = NcclAlgorithm.TREE.id();
    static final int RING = NcclAlgorithm.RING.id();
    static final int COLLNET_DIRECT = NcclAlgorithm.COLLNET_DIRECT.id();
    static final int COLLNET_CHAIN = NcclAlgorithm.COLLNET_CHAIN.id();
    static final int NVLS = NcclAlgorithm.NVLS.id();
    static final int NVLS_TREE = NcclAlgorithm.NVLS_TREE.id();
    static final int PAT = NcclAlgorithm.PAT.id();
    static final int LL = NcclProtocol.LL.id();
    static final int LL128 = NcclProtocol.LL128.id();
    static final int SIMPLE = NcclProtocol.SIMPLE.id();

    // include/device.h@v2.22.3-1:61-85, @v2.30.7-1:90-114 (the same in every supported version except MAXCHANNELS).
    static final int WARP_SIZE = 32;
    static final int NCCL_MAX_NTHREADS = 640;
    static final int NCCL_MIN_NTHREADS = 4 * WARP_SIZE;
    static final int NCCL_SIMPLE_MAX_NTHREADS = 512;
    static final int NCCL_LL_MAX_NTHREADS = 512;
    static final int NCCL_LL128_MAX_NTHREADS = 640;
    // include/comm.h@v2.28.9-1:41-43.
    static final int NCCL_LL_THREAD_THRESHOLD = 8;
    static final int NCCL_LL128_THREAD_THRESHOLD = 8;
    static final int NCCL_SIMPLE_THREAD_THRESHOLD = 64;
    // graph/topo.h@v2.28.9-1:15-35 (SM100_NVLINK_BW differs per version: the table's sm100NvlinkBw).
    static final float LOC_BW = 5000.0f;
    static final float SM60_NVLINK_BW = 18.0f;
    static final float SM70_NVLINK_BW = 20.0f;
    static final float SM80_NVLINK_BW = 20.0f;
    static final float SM90_NVLINK_BW = 20.6f;
    static final float SM86_NVLINK_BW = 12.0f;
    static final float PCI_BW = 12.0f;
    static final float AMD_BW = 16.0f;
    static final float BDW_QPI_BW = 6.0f;
    static final float SKL_QPI_BW = 10.0f;
    static final float SRP_QPI_BW = 22.0f;
    static final float ERP_QPI_BW = 40.0f;
    static final float ZPI_BW = 6.0f;
    static final float P9_BW = 32.0f;
    static final float ARM_BW = 6.0f;

    // graph/search.cc@v2.22.3-1:909-917 and @v2.30.7-1:1051-1067.
    static final float[] SPEED_INTRA = {
        40.0f, 30.0f, 20.0f, 18.0f, 15.0f, 12.0f, 10.0f, 9.0f, 7.0f, 6.0f, 5.0f, 4.0f, 3.0f
    };
    static final float[] SPEED_INTER = {
        48.0f, 30.0f, 28.0f, 24.0f, 20.0f, 18.0f, 15.0f, 12.0f, 10.0f, 9.0f, 7.0f, 6.0f, 5.0f, 4.0f, 3.0f, 2.4f, 1.2f,
        0.24f, 0.12f
    };
    static final float[] SM90_SPEED_INTRA = {60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f, 15.0f, 12.0f, 11.0f, 6.0f, 3.0f};
    static final float[] SM90_SPEED_INTER = {
        48.0f, 45.0f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f, 15.0f, 12.0f, 6.0f, 3.0f, 2.4f, 1.2f, 0.24f,
        0.12f
    };
    // graph/tuning.cc@v2.22.3-1:411-415 (23 entries; @v2.30.7-1:623-627 the same values).
    static final float[][] TREE_CORRECTION = {
        {
            1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f, .7f, .7f, .6f, .5f, .4f, .4f, .5f, .6f, .7f, .8f, .9f, 1.0f,
            1.0f, 1.0f, 1.0f
        },
        {
            1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f, .6f, .6f, .6f, .6f, .6f, .6f, .8f, .9f, .9f, .9f,
            .9f, 1.0f, 1.0f
        },
        {
            .9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f, .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f,
            .9f, .9f
        }
    };

    // graph/search.cc@v2.22.3-1:311-314.
    static final long SEARCH_GLOBAL_TIMEOUT = 1L << 19;
    static final int SEARCH_TIMEOUT = 1 << 14;
    static final int SEARCH_TIMEOUT_TREE = 1 << 14;
    static final int SEARCH_TIMEOUT_SAMECHANNELS = 1 << 8;

    /** The NVLink bandwidth per link for a compute capability (graph/topo.h ncclTopoNVLinkBw). */
    float nvlBw(int cc) {
        if (cc >= 100 && sm100NvlinkBw > 0) {
            return sm100NvlinkBw;
        }
        return cc >= 90
                ? SM90_NVLINK_BW
                : cc == 86
                        ? SM86_NVLINK_BW
                        : cc >= 80
                                ? SM80_NVLINK_BW
                                : cc >= 70 ? SM70_NVLINK_BW : cc >= 60 ? SM60_NVLINK_BW : SM80_NVLINK_BW;
    }

    int compCapIndex(int minCc) {
        int idx = minCc >= 100 ? 3 : minCc >= 90 ? 2 : minCc >= 80 ? 1 : 0;
        return Math.min(idx, maxCompCapIndex);
    }

    float[] speedArrayIntra(int ccMin) {
        return ccMin >= 100 && sm100SpeedIntra != null ? sm100SpeedIntra : ccMin >= 90 ? SM90_SPEED_INTRA : SPEED_INTRA;
    }

    float[] speedArrayInter(int ccMin) {
        return ccMin >= 100 && sm100SpeedInter != null ? sm100SpeedInter : ccMin >= 90 ? SM90_SPEED_INTER : SPEED_INTER;
    }

    /** Whether this table was read for {@code v}: 2.minor.patch within [firstMinor.firstPatch, lastMinor.lastPatch]. */
    boolean covers(Version v) {
        if (v.major() != 2) {
            return false;
        }
        long at = v.minor() * 1000L + v.patch();
        return at >= firstMinor * 1000L + firstPatch && at <= lastMinor * 1000L + lastPatch;
    }

    /** The table for a version; a bad-input error naming the supported families otherwise. */
    static NcclVersionTable forVersion(Version v) {
        for (NcclVersionTable t : SUPPORTED) {
            if (t.covers(v)) {
                return t;
            }
        }
        StringBuilder sb = new StringBuilder();
        for (NcclVersionTable t : SUPPORTED) {
            sb.append(sb.length() == 0 ? "" : ", ").append(t.family);
        }
        throw PathproofException.badInput("nccl version " + v + " is not modelled; supported: " + sb);
    }

    // ---------------------------------------------------------------------------------------------------------------

    /** Every patch of a minor line. */
    private static final int ANY_PATCH = 999;

    private static float[][][] hwLat(float[][] nvl, float[][] pci, float[][] net) {
        return new float[][][] {nvl, pci, net};
    }

    private static final int[] LEVELS_NO_C2C = {
        PATH_LOC, PATH_NVL, PATH_NVB, PATH_PIX, PATH_PXB, PATH_PXN, PATH_PHB, PATH_SYS, PATH_NET, PATH_DIS
    };
    private static final int[] LEVELS_C2C_NO_P2C = {
        PATH_LOC, PATH_NVL, PATH_NVB, PATH_C2C, PATH_PIX, PATH_PXB, PATH_PXN, PATH_PHB, PATH_SYS, PATH_NET, PATH_DIS
    };
    private static final int[] LEVELS_C2C_P2C = {
        PATH_LOC, PATH_NVL, PATH_NVB, PATH_C2C, PATH_PIX, PATH_PXB, PATH_P2C, PATH_PXN, PATH_PHB, PATH_SYS, PATH_NET,
        PATH_DIS
    };
    private static final int[] PCI_GEN_SPEEDS = {15, 30, 60, 120, 240, 480};

    /**
     * NCCL 2.21.x, read at v2.21.5-1 (torch 2.5 and 2.6 ship 2.21.5): 2.22's tuner, search and constants, but the
     * launch of 2.21: channels filled byte by byte ("CBD"), no 128-thread floor and no 640 threads for every Tree.
     */
    static NcclVersionTable v221() {
        return new NcclVersionTable(
                "2.21.x",
                "v2.21.5-1",
                21,
                21,
                0,
                ANY_PATCH,
                32, // include/device.h:54 MAXCHANNELS 32
                6, // include/nccl_common.h:28 NCCL_NUM_ALGORITHMS 6, no PAT
                // graph/tuning.cc:56-59 baseLat (Tree Simple 0)
                new float[][] {
                    {6.8f, 14.0f, 0f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}
                },
                // graph/tuning.cc:65-78 hwLat (Tree Simple 28 on every link type)
                hwLat(
                        new float[][] {
                            {.6f, 1.25f, 28f},
                            {.6f, 1.9f, 3.4f},
                            {0, 0, 3.7f},
                            {0, 0, 2.8f},
                            {0, 0, 25f},
                            {0, 0, 25f},
                            {0, 0, 0}
                        },
                        new float[][] {
                            {1.0f, 1.9f, 28f},
                            {1.0f, 2.5f, 5.7f},
                            {0, 0, 3.7f},
                            {0, 0, 2.8f},
                            {0, 0, 0},
                            {0, 0, 0},
                            {0, 0, 0}
                        },
                        new float[][] {
                            {5.0f, 8.5f, 28f},
                            {2.7f, 4.0f, 14.0f},
                            {0, 0, 31f},
                            {0, 0, 30f},
                            {0, 0, 18f},
                            {0, 0, 14f},
                            {0, 0, 0}
                        }),
                // graph/tuning.cc:86-90, 92-96, 97-101, 102-106 (Volta, Ampere, Hopper; no Blackwell row)
                new double[][] {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}},
                new double[][] {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}},
                new double[][] {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}},
                new double[][] {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}},
                2, // tuning.cc:139 compCapIndex stops at Hopper
                true, // tuning.cc:181 ppn < 2 ? 0.7 : 0.92
                false, // tuning.cc:227 interLat = hwLat[NET][a][p] + latencyInter
                true, // tuning.cc:161 nInterSteps = 2*nNodes
                Ll128Rule.CC_70_80_90, // tuning.cc:305-316
                false, // search.cc:869 typeIntra starts at NVL (up to SYS, or typeInter with NICs)
                NetSearch.MOST_LOCAL_BW, // search.cc@v2.21.5-1 ncclTopoSearchRecNet, as 2.22
                false, // no CPU_VENDOR_MIXED: comm->cpuVendor is the rank's own (tuning.cc:113-115)
                false, // tuning.cc (no maxTreePattern): the rank's own tree pattern
                false, // tuning.cc:216 NVLS ratio 5/6
                false, // search.cc:490, 562, 983-985 crossNic is 0/1
                false, // tuning.cc:34 parseList: plain lists, unknown names ignored; ring restored when none is left
                false, // tuning.cc:223 ringbdw is never cleared for a disabled protocol (2.22 added
                // tuning.cc@v2.22.3-1:318)
                PATH_PXB,
                PATH_PXB, // paths.cc:614-618 PXN: peer <= PXB to the NIC, and we are further than PXB
                false, // no "if (ccMin < 90) maxTypeInter = PATH_SYS"
                true, // connect.cc:457 minCompCap == 90 for the multi-node doubling
                LEVELS_NO_C2C, // graph/topo.h:55-82 LOC NVL NVB PIX PXB PXN PHB SYS NET DIS
                false, // no ncclTopoSplitNvLink
                null,
                null, // search.cc:850-856 no sm100 speed arrays
                0f, // topo.h:228 no SM100_NVLINK_BW: cc >= 90 uses SM90's
                false, // topo.cc:74 Intel: SKL 10 else QPI 6; SKL is every family-6 model >= 0x55 (topo.cc:502),
                // SRP/ERP too
                TuningLineFormat.BYTES_ALGO_PROTO_TIME, // enqueue.cc:1534
                Planner.CBD, // enqueue.cc:431-505 addCBDCollToPlan, :834 maxBytesPerChannel
                3 * WARP_SIZE, // enqueue.cc:585 threadPerBlock = max(.., 3*WARP_SIZE); no NCCL_MIN_NTHREADS in 2.21
                false, // enqueue.cc:1566-1618 getChannnelThreadInfo: Tree keeps its own thread count
                512,
                false,
                false,
                false,
                false, // the cell fields below are unused by CBD (2.22's values)
                PCI_GEN_SPEEDS); // topo.cc:393-395 kvDictPciGen
    }

    /** NCCL 2.22.x, read at v2.22.3-1. */
    static NcclVersionTable v222() {
        return new NcclVersionTable(
                "2.22.x",
                "v2.22.3-1",
                22,
                22,
                0,
                ANY_PATCH,
                32, // include/device.h:62 MAXCHANNELS 32
                6, // nccl_common.h:53-68, no PAT
                // graph/tuning.cc:56-59 baseLat (Tree Simple 0)
                new float[][] {
                    {6.8f, 14.0f, 0f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}
                },
                // graph/tuning.cc:65-78 hwLat
                hwLat(
                        new float[][] {
                            {.6f, 1.25f, 28f},
                            {.6f, 1.9f, 3.4f},
                            {0, 0, 3.7f},
                            {0, 0, 2.8f},
                            {0, 0, 25f},
                            {0, 0, 25f},
                            {0, 0, 0}
                        },
                        new float[][] {
                            {1.0f, 1.9f, 28f},
                            {1.0f, 2.5f, 5.7f},
                            {0, 0, 3.7f},
                            {0, 0, 2.8f},
                            {0, 0, 0},
                            {0, 0, 0},
                            {0, 0, 0}
                        },
                        new float[][] {
                            {5.0f, 8.5f, 28f},
                            {2.7f, 4.0f, 14.0f},
                            {0, 0, 31f},
                            {0, 0, 30f},
                            {0, 0, 18f},
                            {0, 0, 14f},
                            {0, 0, 0}
                        }),
                // graph/tuning.cc:86-106
                new double[][] {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {141.0, 45.0, 35.0}},
                new double[][] {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}},
                new double[][] {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}},
                new double[][] {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}},
                2, // tuning.cc:137 Hopper is the highest index
                true, // tuning.cc:179 ppn < 2 ? 0.7 : 0.92
                false, // tuning.cc:225 interLat = hwLat[NET][a][p]
                true, // tuning.cc:159 nInterSteps = 2*nNodes
                Ll128Rule.CC_70_80_90, // tuning.cc:301-319
                false, // search.cc:928-929 typeIntra starts at NVL, up to SYS
                NetSearch.MOST_LOCAL_BW, // search.cc:641-676 NET search order
                false, // no CPU_VENDOR_MIXED (tuning.cc:113-115)
                false, // no maxTreePattern
                false, // NVLS ratio 5/6
                false, // search.cc:535-536 crossNic is 0/1
                false, // tuning.cc:34-52 plain lists, unknown names ignored; ring backup (tuning.cc:321-335)
                true, // tuning.cc:318 ringbdw cleared for a disabled protocol
                PATH_PXB,
                PATH_PXB, // paths.cc:616-620 PXN: peer <= PXB to the NIC, and we are further than PXB
                false, // no "Ampere relies on BALANCED_TREE" rule
                true, // connect.cc:466 minCompCap == 90 (2.28: >= 90) for the multi-node doubling
                LEVELS_NO_C2C,
                false, // no ncclTopoSplitNvLink in 2.22
                null,
                null, // no sm100 speed arrays
                0f, // topo.h:226-234 no SM100 NVLink bandwidth
                false, // topo.cc:80 Intel: SKL 10 else QPI 6; SKL is every family-6 model >= 0x55 (topo.cc:507),
                // SRP/ERP too
                TuningLineFormat.BYTES_ALGO_PROTO_TIME, // enqueue.cc:1613
                Planner.CELLS, // enqueue.cc:583-760 scheduleCollTasksToPlan
                NCCL_MIN_NTHREADS, // enqueue.cc:158 threadPerBlock = max(.., NCCL_MIN_NTHREADS)
                true, // enqueue.cc:1652 Tree uses all threads
                512, // enqueue.cc:614 MinTrafficPerChannel = 512
                true, // enqueue.cc:657 cellSize = 16
                false, // enqueue.cc:668 cellsLo rounds down
                false, // no LL traffic x4
                false, // enqueue.cc:626 max(MinTraffic, traffic/nCh)
                PCI_GEN_SPEEDS); // topo.cc kvDictPciGen (x100 Mb/s per lane)
    }

    /** 2.23.x (read at v2.23.4-1) and 2.24.x (v2.24.3-1): 2.22's search with the tuner constants of 2.23. */
    private static NcclVersionTable between(
            String family, String at, int minor, boolean prefixedLists, boolean mixedCpus, TuningLineFormat line) {
        return new NcclVersionTable(
                family,
                at,
                minor,
                minor,
                0,
                ANY_PATCH,
                32, // include/device.h@v2.23.4-1:62, @v2.24.3-1:62 MAXCHANNELS 32
                7, // nccl_common.h@v2.23.4-1:53 PAT added (not used by AllReduce)
                // tuning.cc@v2.23.4-1:56-59 (the PAT row is left zero)
                new float[][] {
                    {6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}
                },
                // tuning.cc@v2.23.4-1:65-78
                hwLat(
                        new float[][] {
                            {.6f, 1.25f, 4.0f},
                            {.6f, 1.9f, 3.4f},
                            {0, 0, 3.7f},
                            {0, 0, 2.8f},
                            {0, 0, 25f},
                            {0, 0, 25f},
                            {0, 0, 0}
                        },
                        new float[][] {
                            {1.0f, 1.9f, 4.0f},
                            {1.0f, 2.5f, 5.7f},
                            {0, 0, 3.7f},
                            {0, 0, 2.8f},
                            {0, 0, 0},
                            {0, 0, 0},
                            {0, 0, 0}
                        },
                        new float[][] {
                            {5.0f, 8.5f, 14f},
                            {2.7f, 4.0f, 14.0f},
                            {0, 0, 31f},
                            {0, 0, 30f},
                            {0, 0, 18f},
                            {0, 0, 14f},
                            {0, 0, 0}
                        }),
                // tuning.cc@v2.23.4-1:86-106 (Volta, Ampere, Hopper; the fourth row is never indexed)
                new double[][] {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {141.0, 45.0, 35.0}},
                new double[][] {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {36.7, 36.7, 36.7}},
                new double[][] {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {36.7, 36.7, 29.0}},
                new double[][] {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {38.7, 41.4, 36.0}},
                2, // tuning.cc@v2.23.4-1:146 Hopper is the highest index
                false, // tuning.cc@v2.23.4-1:188 0.92 always
                true, // tuning.cc@v2.23.4-1:236 ppn == 1 uses the Tree NET latency
                false, // tuning.cc@v2.23.4-1:258 nInterSteps = 2*(nNodes-1)
                Ll128Rule.CC_70_80_90, // tuning.cc@v2.23.4-1:327-334
                false, // no ncclTopoGetGpuMinPath before 2.25: 2.22's search
                NetSearch.MOST_LOCAL_BW,
                mixedCpus, // 2.24: init.cc@v2.24.3-1:991-998 CPU_VENDOR/ARCH_MIXED, tuning.cc@v2.24.3-1:214; 2.23: none
                false, // no maxTreePattern before 2.26
                false, // tuning.cc@v2.24.3-1:287 NVLS ratio 5/6
                true, // search.cc@v2.23.4-1:542-545, :625 crossNic 2
                prefixedLists, // 2.23: tuning.cc@v2.23.4-1:34 plain lists + ring backup; 2.24: tuning.cc@v2.24.3-1:53
                // prefixes
                true, // ringbdw cleared for a disabled protocol, as 2.22
                PATH_PXB,
                PATH_PXB, // paths.cc@v2.23.4-1:607-611, @v2.24.3-1:654-658
                false,
                true, // connect.cc@v2.23.4-1:469 minCompCap == 90
                LEVELS_NO_C2C,
                false, // no ncclTopoSplitNvLink
                null,
                null, // no sm100 speed arrays
                0f, // no SM100 NVLink bandwidth
                false, // topo.cc@v2.24.3-1:80 Intel: SKL 10 else QPI 6; SKL is every family-6 model >= 0x55 (:514)
                line,
                Planner.CELLS,
                NCCL_MIN_NTHREADS,
                true,
                16 << 10, // enqueue.cc@v2.23.4-1:723 MinTrafficPerChannel = 16 << 10
                false, // enqueue.cc@v2.23.4-1:790 cellSize = divUp(divUp(MinTraffic, trafficPerByte), 16)*16
                true, // enqueue.cc@v2.23.4-1:800 cellsLo rounds up
                false, // LL traffic x4 only from 2.26
                false, // enqueue.cc@v2.23.4-1:756 max(MinTraffic, traffic/nCh)
                PCI_GEN_SPEEDS);
    }

    /** NCCL 2.23.x, read at v2.23.4-1. */
    static NcclVersionTable v223() {
        return between("2.23.x", "v2.23.4-1", 23, false, false, TuningLineFormat.FUNC_BYTES_ALGO_PROTO_TIME);
    }

    /** NCCL 2.24.x, read at v2.24.3-1. */
    static NcclVersionTable v224() {
        // enqueue.cc@v2.24.3-1:678 the channel{Lo..Hi} TUNING line
        return between("2.24.x", "v2.24.3-1", 24, true, true, TuningLineFormat.FUNC_BYTES_ALGO_PROTO_CHANNELS);
    }

    /**
     * The tables from 2.26 on: MAXCHANNELS 64, the search's type bounds from the system, the cell planner with LL
     * traffic ×4, 2.23's tuner constants. What differs per family is passed in.
     */
    private static NcclVersionTable from226(
            String family,
            String at,
            int firstMinor,
            int lastMinor,
            int firstPatch,
            int lastPatch,
            float[][] baseLat,
            float[][][] hwLat,
            double[] blackwellRingLL128,
            double[] blackwellTreeLL128,
            double[] blackwellTree,
            Ll128Rule rule,
            NetSearch netSearch,
            boolean nvlsRatio,
            int pxnPeer,
            int pxnSelf,
            boolean from229,
            int[] levels,
            float[] sm100Intra,
            float[] sm100Inter,
            float sm100Nvlink,
            long minTraffic) {
        return new NcclVersionTable(
                family,
                at,
                firstMinor,
                lastMinor,
                firstPatch,
                lastPatch,
                64, // include/device.h@v2.26.2-1:62, @v2.27.5-1:87, @v2.28.9-1:86 MAXCHANNELS 64
                7, // nccl_common.h@v2.26.2-1:54 NCCL_NUM_ALGORITHMS 7 (PAT)
                baseLat,
                hwLat,
                // Volta, Ampere, Hopper rows: tuning.cc@v2.26.2-1:151-175, @v2.28.9-1:169-198 (the same); Blackwell
                // passed in
                new double[][] {
                    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}
                },
                new double[][] {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, blackwellRingLL128},
                new double[][] {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, blackwellTreeLL128},
                new double[][] {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, blackwellTree},
                3, // tuning.cc@v2.26.2-1:216, @v2.28.9-1:249 minCompCap >= 100 is Blackwell
                false, // tuning.cc@v2.26.2-1:257, @v2.28.9-1:305 0.92 always
                true, // tuning.cc@v2.26.2-1:301, @v2.28.9-1:356 ppn == 1 uses the Tree NET latency
                false, // tuning.cc@v2.26.2-1:323, @v2.28.9-1:377 nInterSteps = 2*(nNodes-1)
                rule,
                true, // search.cc@v2.26.2-1:937-947, @v2.28.9-1:1000-1013 path type bounds from the system
                netSearch,
                true, // tuning.cc@v2.26.2-1:220 AMD or MIXED CPUs take the AMD row
                true, // tuning.cc@v2.26.2-1:261, @v2.28.9-1:309 comm->maxTreePattern
                nvlsRatio,
                true, // search.cc@v2.26.2-1:535, 612; @v2.28.9-1:559-573 crossNic 2 pairs the NICs of consecutive ring
                // channels
                true, // tuning.cc@v2.26.2-1:53-115 "func:" prefixes, unknown names are errors; no ring backup
                true, // (no ring backup to restore)
                pxnPeer,
                pxnSelf,
                from229, // search.cc@v2.29.2-1:1037 (absent in 2.28.9 and before) if (ccMin < 90) maxTypeInter =
                // PATH_SYS
                false, // connect.cc@v2.26.2-1:466, @v2.28.9-1:473 minCompCap >= 90
                levels,
                true, // search.cc@v2.26.2-1:985-992, @v2.28.9-1:1048-1055 ncclTopoSplitNvLink
                sm100Intra,
                sm100Inter,
                sm100Nvlink,
                true, // topo.cc@v2.26.2-1:80-86 Intel ERP 40, SRP 22, SKL 10, else BDW 6
                TuningLineFormat
                        .FUNC_BYTES_ALGO_PROTO_CHANNELS, // enqueue.cc@v2.26.2-1:702, @v2.27.5-1:748, @v2.28.9-1:741
                Planner.CELLS,
                NCCL_MIN_NTHREADS, // enqueue.cc@v2.26.2-1:162, @v2.28.9-1:188
                true, // enqueue.cc@v2.26.2-1:1772, @v2.28.9-1:1907 Tree uses all threads
                minTraffic,
                false, // cellSize = divUp(divUp(MinTraffic, trafficPerByte), 16)*16 (enqueue.cc@v2.26.2-1:569)
                true, // cellsLo = min(cells, divUp(trafficPerChannel - currentTraffic, trafficPerCell))
                // (enqueue.cc@v2.26.2-1:579)
                true, // enqueue.cc@v2.26.2-1:388, @v2.28.9-1:419 LL traffic x4
                from229, // enqueue.cc@v2.29.2-1:609 trafficPerChannel = divUp(traffic/nCh, 16)*16
                PCI_GEN_SPEEDS); // topo.cc@v2.26.2-1:408-410, @v2.28.9-1:423-425
    }

    /** baseLat and hwLat of 2.26 and 2.27: tuning.cc@v2.26.2-1:120-141, @v2.27.5-1:134-155 (no PAT row, NET NVLSTree 14). */
    private static final float[][] BASE_LAT_226 = {
        {6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}
    };

    private static final float[][][] HW_LAT_226 = hwLat(
            new float[][] {
                {.6f, 1.25f, 4.0f}, {.6f, 1.9f, 3.4f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 25f}, {0, 0, 25f}, {0, 0, 0}
            },
            new float[][] {
                {1.0f, 1.9f, 4.0f}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}
            },
            new float[][] {
                {5.0f, 8.5f, 14f}, {2.7f, 4.0f, 14.0f}, {0, 0, 31f}, {0, 0, 30f}, {0, 0, 18f}, {0, 0, 14f}, {0, 0, 0}
            });
    /** The Blackwell rows of 2.26 and 2.27, twice Hopper's (tuning.cc@v2.26.2-1:162, 168, 174; @v2.27.5-1:176, 182, 188). */
    private static final double[] BW_RING_LL128_226 = {2 * 36.7, 2 * 36.7, 2 * 36.7};

    private static final double[] BW_TREE_LL128_226 = {2 * 36.7, 2 * 36.7, 2 * 29.0};
    private static final double[] BW_TREE_226 = {2 * 38.7, 2 * 41.4, 2 * 36.0};

    /** NCCL 2.26.x, read at v2.26.2-1 (torch 2.7); 2.26.3, 2.26.5, 2.26.6 differ in none of the modelled rules. */
    static NcclVersionTable v226() {
        return from226(
                "2.26.x",
                "v2.26.2-1",
                26,
                26,
                0,
                ANY_PATCH,
                BASE_LAT_226,
                HW_LAT_226,
                BW_RING_LL128_226,
                BW_TREE_LL128_226,
                BW_TREE_226,
                Ll128Rule.CC_70_80_90_100_120, // tuning.cc:426-439 switch (minCompCap) 70 80 90 100 120
                NetSearch.MOST_LOCAL_BW, // search.cc:652-680 best bandwidth, then fewest hops
                false, // tuning.cc:293 NVLS ratio 5/6
                PATH_PXB,
                PATH_PXB, // paths.cc:677-681
                false,
                LEVELS_C2C_NO_P2C, // graph/topo.h:59-92 C2C but no P2C
                new float[] {90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f, 19.0f}, // search.cc:923
                new float[] {
                    48.0f, 45.0f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f, 15.0f, 12.0f, 6.0f, 3.0f, 2.4f, 1.2f,
                    0.24f, 0.12f
                }, // search.cc:924
                40.0f, // graph/topo.h:19 SM100_NVLINK_BW 40.0
                16 << 10); // enqueue.cc:497 MinTrafficPerChannel = 16 << 10
    }

    /**
     * NCCL 2.27.0–2.27.4, read at v2.27.3-1 (torch 2.8): 2.26's tuner with the 2.27 LL128 rule; the NET search takes
     * the NIC's local GPUs in index order. P2C is numbered after PXN here (graph/topo.h:80-83); the search is given
     * 2.28's level order, which without C2C links searches the same path sets and differs only in which equivalent level
     * is searched twice (the global search budget counts it).
     */
    static NcclVersionTable v227early() {
        return from226(
                "2.27.0-2.27.4",
                "v2.27.3-1",
                27,
                27,
                0,
                4,
                BASE_LAT_226,
                HW_LAT_226,
                BW_RING_LL128_226,
                BW_TREE_LL128_226,
                BW_TREE_226,
                Ll128Rule.C2C_ONE_CC, // tuning.cc:457-464 (NCCL_LL128_C2C=1, tuning.cc:211)
                NetSearch.LOCAL_GPUS, // search.cc:660-667
                false, // tuning.cc:324 NVLS ratio 5/6
                PATH_PXB,
                PATH_PXB, // paths.cc:698-707 (NCCL_PXN_C2C=0, paths.cc:609)
                false,
                LEVELS_C2C_P2C,
                new float[] {90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f, 19.0f, 18.0f
                }, // search.cc:912
                new float[] {
                    47.9f, 45.0f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f, 15.0f, 12.0f, 6.0f, 3.0f, 2.4f, 1.2f,
                    0.24f, 0.12f
                }, // search.cc:913
                40.0f, // graph/topo.h:21 SM100_NVLINK_BW 40.0
                16 << 10); // enqueue.cc:539
    }

    /** NCCL 2.27.5, read at v2.27.5-1 (torch 2.9): the NET search of 2.28 and SM100_NVLINK_BW 40.1. */
    static NcclVersionTable v2275() {
        return from226(
                "2.27.5",
                "v2.27.5-1",
                27,
                27,
                5,
                5,
                BASE_LAT_226,
                HW_LAT_226,
                BW_RING_LL128_226,
                BW_TREE_LL128_226,
                BW_TREE_226,
                Ll128Rule.C2C_ONE_CC, // tuning.cc:457-471
                NetSearch.LOCAL_GPU_FIRST, // search.cc:690-715 (net->net.localGpu, paths.cc:734-738)
                false, // tuning.cc:324 NVLS ratio 5/6
                PATH_PXB,
                PATH_PXB, // paths.cc:705-713 pxnType = PXB (NCCL_PXN_C2C=0, paths.cc:616)
                false,
                LEVELS_C2C_P2C, // graph/topo.h:80-83 P2C 6, PXN 7 (as 2.28)
                new float[] {90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f, 19.0f, 18.0f
                }, // search.cc:962
                new float[] {
                    48.0f, 45.1f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f, 15.0f, 12.0f, 6.0f, 3.0f, 2.4f, 1.2f,
                    0.24f, 0.12f
                }, // search.cc:963
                40.1f, // graph/topo.h:21 SM100_NVLINK_BW 40.1
                16 << 10); // enqueue.cc:539
    }

    /**
     * NCCL 2.27.6–2.27.7, read at v2.27.7-1 (2.27.6 identical in these files): as 2.27.5, but a GPU uses a PXN relay
     * when its own path is worse than PXN (paths.cc:713) and the sm100 inter-node speeds start at 96.
     */
    static NcclVersionTable v227late() {
        return from226(
                "2.27.6-2.27.7",
                "v2.27.7-1",
                27,
                27,
                6,
                7,
                BASE_LAT_226,
                HW_LAT_226,
                BW_RING_LL128_226,
                BW_TREE_LL128_226,
                BW_TREE_226,
                Ll128Rule.C2C_ONE_CC, // tuning.cc:457-471
                NetSearch.LOCAL_GPU_FIRST, // search.cc:690-715
                false, // tuning.cc:324 NVLS ratio 5/6
                PATH_PXB,
                PATH_PXN, // paths.cc:705-713 peer <= PXB (NCCL_PXN_C2C=0, paths.cc:616), self > PXN
                false,
                LEVELS_C2C_P2C,
                new float[] {90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f, 19.0f, 18.0f
                }, // search.cc:962
                new float[] {
                    96.0f, 48.0f, 45.1f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f, 15.0f, 12.0f, 6.0f, 3.0f,
                    2.4f, 1.2f, 0.24f, 0.12f
                }, // search.cc:963
                40.1f, // graph/topo.h:21
                16 << 10); // enqueue.cc:536
    }

    /** The tuner constants of 2.28+ (ncclTunerConstantsDefaults, tuning.cc@v2.28.9-1:143-168): a PAT row, NVLSTree 20.9. */
    private static final float[][] BASE_LAT_228 = {
        {6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0f, 8.0f, 8.0f}
    };

    private static final float[][][] HW_LAT_228 = hwLat(
            new float[][] {
                {.6f, 1.25f, 4.0f},
                {.6f, 1.9f, 3.4f},
                {0, 0, 3.7f},
                {0, 0, 2.8f},
                {0, 0, 25f},
                {0, 0, 25f},
                {0, 0, 4.0f}
            },
            new float[][] {
                {1.0f, 1.9f, 4.0f}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0f}
            },
            new float[][] {
                {5.0f, 8.5f, 14f},
                {2.7f, 4.0f, 14.0f},
                {0, 0, 31f},
                {0, 0, 30f},
                {0, 0, 18f},
                {0, 0, 20.9f},
                {0, 0, 14f}
            });

    /** NCCL 2.28.x, read at v2.28.9-1 (the project's H200 machines). */
    static NcclVersionTable v228() {
        return from226(
                "2.28.x",
                "v2.28.9-1",
                28,
                28,
                0,
                ANY_PATCH,
                BASE_LAT_228,
                HW_LAT_228,
                new double[] {2 * 36.7, 34.6, 2 * 36.7},
                new double[] {55.6, 31.67, 20.0},
                new double[] {70.0, 42.8, 24.0},
                Ll128Rule.C2C_ONE_CC, // tuning.cc:480-494
                NetSearch.LOCAL_GPU_FIRST, // search.cc:714-740
                true, // tuning.cc:348 NVLS ratio nRanks/nsteps
                PATH_P2C,
                PATH_PXN, // paths.cc:728-736 (NCCL_PXN_C2C=1, paths.cc:639)
                false,
                LEVELS_C2C_P2C,
                new float[] {90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f, 19.0f, 18.0f
                }, // search.cc:986
                new float[] {
                    96.0f, 48.0f, 45.1f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f, 15.0f, 12.0f, 6.0f, 3.0f,
                    2.4f, 1.2f, 0.24f, 0.12f
                }, // search.cc:987
                40.1f, // graph/topo.h:21
                16 << 10); // enqueue.cc:529 MinTrafficPerChannel = 16 << 10; :562 max(MinTraffic, traffic/nCh)
    }

    /** NCCL 2.29.x, spot-checked at v2.29.2-1 against the 2.30.7 reading. */
    static NcclVersionTable v229() {
        return from226(
                "2.29.x",
                "v2.29.2-1",
                29,
                29,
                0,
                ANY_PATCH,
                BASE_LAT_228,
                HW_LAT_228,
                new double[] {2 * 36.7, 34.6, 2 * 36.7},
                new double[] {55.6, 31.67, 20.0},
                new double[] {70.0, 42.8, 24.0},
                Ll128Rule.C2C_ONE_CC, // tuning.cc@v2.29.2-1:492 one cc
                NetSearch.LOCAL_GPU_FIRST,
                true,
                PATH_P2C,
                PATH_PXN,
                true, // search.cc@v2.29.2-1:1037; enqueue.cc@v2.29.2-1:609
                LEVELS_C2C_P2C,
                new float[] {90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 45.0f, 40.0f, 30.0f, 24.0f, 20.0f, 19.0f, 18.0f
                }, // search.cc:986
                new float[] {
                    96.0f, 48.0f, 45.1f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f, 15.0f, 12.0f, 6.0f, 3.0f,
                    2.4f, 1.2f, 0.24f, 0.12f
                }, // search.cc:987
                40.1f, // graph/topo.h:22
                32 << 10); // enqueue.cc@v2.29.2-1:576 MinTraffic 32K
    }

    /** NCCL 2.30.x, read at v2.30.7-1. */
    static NcclVersionTable v230() {
        return from226(
                "2.30.x",
                "v2.30.7-1",
                30,
                30,
                0,
                ANY_PATCH,
                BASE_LAT_228,
                HW_LAT_228,
                new double[] {40.0, 40.0, 40.0},
                new double[] {55.6, 31.67, 20.0},
                new double[] {70.0, 42.8, 24.0},
                Ll128Rule.C2C_MIXED_HOPPER, // tuning.cc@v2.30.7-1:533
                NetSearch.LOCAL_GPU_FIRST,
                true,
                PATH_P2C,
                PATH_PXN,
                true,
                LEVELS_C2C_P2C,
                new float[] {90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 45.0f, 40.0f, 30.0f, 24.0f, 20.0f, 19.0f, 18.0f
                }, // search.cc:1063
                new float[] {
                    96.0f, 86.0f, 80.0f, 48.0f, 45.1f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f, 15.0f, 12.0f,
                    6.0f, 3.0f, 2.4f, 1.2f, 0.24f, 0.12f
                }, // search.cc:1064-1065
                40.1f, // graph/topo.h:24
                32 << 10); // enqueue.cc@v2.30.7-1:585 MinTraffic 32K
    }

    // Last: the tables read the constants above, which Java initialises in textual order.
    static final List<NcclVersionTable> SUPPORTED =
            List.of(v221(), v222(), v223(), v224(), v226(), v227early(), v2275(), v227late(), v228(), v229(), v230());
}

package io.pathproof.nccl;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Version;
import java.util.List;

/**
 * Everything that differs between the NCCL versions the model supports, as data: one record per version family, read
 * from {@code versions.txt} beside this class ({@link VersionTableFile}), whose keys are the components' names. Every
 * value was read from the NVIDIA/nccl source at the tag named in {@code verifiedAt}; the comment next to each value in
 * the file cites the file and line. Code elsewhere asks the table, never the version number.
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
        RingExchange ringExchange,
        boolean relaxStopsBeforeDis,
        GraphPrint graphPrint,
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
        int[] pciGenSpeeds,
        P2pPerPeer p2pPerPeer,
        boolean nvlsNeedsTwoChannels) {

    /** How ncclTopoPrintGraph names a channel's NETs and GPUs (the lines under each {@code Pattern …} line). */
    enum GraphPrint {
        /** ≤ 2.22: {@code NET/<net id>}, {@code GPU/<rank>} (search.cc@v2.21.5-1:1055-1063). */
        NET_ID_GPU_RANK,
        /** 2.23–2.27.4: {@code NET/<system>-<local id>}, {@code GPU/<rank>} (search.cc@v2.26.2-1:1146-1154). */
        TOPO_NET_GPU_RANK,
        /** 2.27.5 on: both by topology id, a GPU's being its bus id (search.cc@v2.27.5-1:1185-1197). */
        TOPO_IDS
    }

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

    /**
     * Which ranks ncclTopoPostset gives the ring of channel c^1 in place of channel c's ("Alternate rings to avoid
     * crossing rails"): always ranks on odd nodes, and only with an even channel count.
     */
    enum RingExchange {
        /**
         * ≤ 2.25: whenever the aligned ring graph's crossNic is not 0, so NCCL_CROSS_NIC=1 too
         * (connect.cc@v2.21.5-1:384, @v2.22.3-1:393, @v2.24.3-1:396, @v2.25.1-1:393 {@code graphs[RING]->crossNic &&}).
         */
        ALIGNED_CROSS_NIC,
        /** 2.26–2.27: only when the aligned ring graph's crossNic is 2 (connect.cc@v2.26.2-1:393, @v2.27.7-1:393). */
        ALIGNED_CROSS_NIC_TWO,
        /**
         * 2.28+: a rank whose own ring search ended with crossNic 2 (its crossNicRing, connect.cc@v2.28.9-1:24,
         * 392-405).
         */
        OWN_CROSS_NIC_TWO
    }

    /** How ncclTopoComputeP2pChannels sets the p2p channels per peer (graph/paths.cc, ncclTopoGetNchannels). */
    enum P2pPerPeer {
        /**
         * ≤ 2.28: each rank the minimum over every GPU of its host and every peer; a peer over the network gets
         * max(the NICs ncclTopoGetLocal lists until their bandwidth reaches the GPU's link to the CPU, 2 halved while
         * 2·nRanks > 4·p2pChannels); then pow2Up and at most p2pChannels (paths.cc@v2.28.9-1:830-889,
         * topo.cc@v2.28.9-1:1576-1597).
         */
        HOST_GPUS_NET_BY_RANKS,
        /**
         * 2.29: each rank its own GPU, the minimum over every peer and then over every rank (AllGather3); a peer over
         * the network gets max(the NICs of the GPU's channel rotation until their bandwidth reaches the GPU's path to
         * its CPU, ⌈their bandwidth / NCCL_P2P_PER_CHANNEL_NET_BW⌉), 2 without a NIC; then pow2Up and, on more than
         * one node, halved while perPeer·⌈nRanks / 8⌉ > p2pChannels (paths.cc@v2.29.7-1:832-910,
         * topo.cc@v2.29.7-1:1626-1651, init.cc@v2.29.7-1:1145, 1270).
         */
        RANK_GPU_NET_BW,
        /**
         * 2.30: as RANK_GPU_NET_BW, with an NVB path counted as NVLink and ⌈NCCL_P2P_MAX_PEERS / 8⌉ (nRanks when unset)
         * in place of ⌈nRanks / 8⌉ (paths.cc@v2.30.7-1:918-1008, init.cc@v2.30.7-1:66, 1228-1232, 2090-2100).
         */
        RANK_GPU_NET_BW_MAX_PEERS
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

    /** The table of one family, by the name its section in the file has ("2.28.x", "2.27.0-2.27.4"). */
    static NcclVersionTable named(String family) {
        for (NcclVersionTable t : SUPPORTED) {
            if (t.family.equals(family)) {
                return t;
            }
        }
        throw new IllegalArgumentException("no NCCL version family " + family);
    }

    // Last: the file names the constants above, which Java initialises in textual order.
    static final List<NcclVersionTable> SUPPORTED = VersionTableFile.read();
}

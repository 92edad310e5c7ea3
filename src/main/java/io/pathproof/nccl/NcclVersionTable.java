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
    boolean modernSearch,
    boolean crossNicTwo,
    boolean strictEnvLists,
    int pxnPeerMaxType,
    int pxnSelfMinType,
    boolean preHopperMaxTypeInterSys,
    boolean postsetDoubleOnlySm90,
    int[] pathLevels,
    boolean splitNvLinkForcesTwoChannels,
    boolean hasSm100Speeds,
    boolean hasSm100NvlinkBw,
    TuningLineFormat tuningLine,
    long minTrafficPerChannel,
    boolean fixedCellSize16,
    boolean cellsLoRoundsUp,
    boolean llTrafficTimesFour,
    boolean trafficPerChannelRoundedTo16,
    int[] pciGenSpeeds) {

  /** How LL128 is enabled by default (tuning.cc, the {@code pEnable == 2} block). */
  enum Ll128Rule {
    /** 2.22: typeInter ≤ PXB (PXN on sm90), typeIntra ≤ NVB, one compute capability, cc ∈ {70, 80, 90}. */
    CC_70_80_90,
    /** 2.28, 2.29: typeInter ≤ PXN on sm90+ (NCCL_LL128_C2C=1) else ≤ PXB, typeIntra ≤ NVB, one cc, cc ≥ 70. */
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

  // Path types in the numbering of 2.28+ (graph/topo.h@v2.28.9-1:47-96). 2.22 has no C2C/P2C; its numbers differ but
  // the order is the same, so one numbering serves all versions and pathLevels lists the types a version steps through.
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
  static final String[] PATH_NAMES = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};

  static final String[] ALGO_NAMES = {"Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"};
  static final String[] ALGO_ENUM_NAMES = {"TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT"};
  static final String[] PROTO_NAMES = {"LL", "LL128", "Simple"};
  static final String[] PROTO_ENUM_NAMES = {"LL", "LL128", "SIMPLE"};

  static final int TREE = 0;
  static final int RING = 1;
  static final int COLLNET_DIRECT = 2;
  static final int COLLNET_CHAIN = 3;
  static final int NVLS = 4;
  static final int NVLS_TREE = 5;
  static final int PAT = 6;
  static final int LL = 0;
  static final int LL128 = 1;
  static final int SIMPLE = 2;

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
  // graph/topo.h@v2.28.9-1:15-35.
  static final float LOC_BW = 5000.0f;
  static final float SM60_NVLINK_BW = 18.0f;
  static final float SM70_NVLINK_BW = 20.0f;
  static final float SM80_NVLINK_BW = 20.0f;
  static final float SM90_NVLINK_BW = 20.6f;
  static final float SM86_NVLINK_BW = 12.0f;
  static final float SM100_NVLINK_BW = 40.1f;
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
  static final float[] SPEED_INTRA = {40.0f, 30.0f, 20.0f, 18.0f, 15.0f, 12.0f, 10.0f, 9.0f, 7.0f, 6.0f, 5.0f, 4.0f, 3.0f};
  static final float[] SPEED_INTER = {48.0f, 30.0f, 28.0f, 24.0f, 20.0f, 18.0f, 15.0f, 12.0f, 10.0f, 9.0f, 7.0f, 6.0f,
      5.0f, 4.0f, 3.0f, 2.4f, 1.2f, 0.24f, 0.12f};
  static final float[] SM90_SPEED_INTRA = {60.0f, 50.0f, 40.0f, 30.0f, 24.0f, 20.0f, 15.0f, 12.0f, 11.0f, 6.0f, 3.0f};
  static final float[] SM90_SPEED_INTER = {48.0f, 45.0f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f, 17.5f, 15.0f, 12.0f,
      6.0f, 3.0f, 2.4f, 1.2f, 0.24f, 0.12f};
  static final float[] SM100_SPEED_INTRA = {90.0f, 80.0f, 70.0f, 60.0f, 50.0f, 45.0f, 40.0f, 30.0f, 24.0f, 20.0f, 19.0f, 18.0f};
  static final float[] SM100_SPEED_INTER = {96.0f, 86.0f, 80.0f, 48.0f, 45.1f, 42.0f, 40.0f, 30.0f, 24.0f, 22.0f, 20.0f,
      17.5f, 15.0f, 12.0f, 6.0f, 3.0f, 2.4f, 1.2f, 0.24f, 0.12f};

  // graph/tuning.cc@v2.22.3-1:411-415 (23 entries; @v2.30.7-1:623-627 the same values).
  static final float[][] TREE_CORRECTION = {
      {1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .7f, .7f, .7f, .7f, .6f, .5f, .4f, .4f, .5f, .6f, .7f, .8f, .9f, 1.0f, 1.0f, 1.0f, 1.0f},
      {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, .9f, .8f, .8f, .8f, .7f, .6f, .6f, .6f, .6f, .6f, .6f, .8f, .9f, .9f, .9f, .9f, 1.0f, 1.0f},
      {.9f, .9f, .9f, .9f, .9f, .9f, .9f, .8f, .7f, .6f, .6f, .5f, .5f, .5f, .5f, .6f, .7f, .8f, .7f, .7f, .8f, .9f, .9f}};

  // graph/search.cc@v2.22.3-1:311-314.
  static final long SEARCH_GLOBAL_TIMEOUT = 1L << 19;
  static final int SEARCH_TIMEOUT = 1 << 14;
  static final int SEARCH_TIMEOUT_TREE = 1 << 14;
  static final int SEARCH_TIMEOUT_SAMECHANNELS = 1 << 8;

  /** The NVLink bandwidth per link for a compute capability (graph/topo.h ncclTopoNVLinkBw). */
  float nvlBw(int cc) {
    if (cc >= 100 && hasSm100NvlinkBw) {
      return SM100_NVLINK_BW;
    }
    return cc >= 90 ? SM90_NVLINK_BW
        : cc == 86 ? SM86_NVLINK_BW
        : cc >= 80 ? SM80_NVLINK_BW
        : cc >= 70 ? SM70_NVLINK_BW
        : cc >= 60 ? SM60_NVLINK_BW
        : SM80_NVLINK_BW;
  }

  int compCapIndex(int minCc) {
    int idx = minCc >= 100 ? 3 : minCc >= 90 ? 2 : minCc >= 80 ? 1 : 0;
    return Math.min(idx, maxCompCapIndex);
  }

  float[] speedArrayIntra(int ccMin) {
    return ccMin >= 100 && hasSm100Speeds ? SM100_SPEED_INTRA : ccMin >= 90 ? SM90_SPEED_INTRA : SPEED_INTRA;
  }

  float[] speedArrayInter(int ccMin) {
    return ccMin >= 100 && hasSm100Speeds ? SM100_SPEED_INTER : ccMin >= 90 ? SM90_SPEED_INTER : SPEED_INTER;
  }

  /** ncclAlgoStr of this version (init.cc), the names NCCL_ALGO accepts. */
  List<String> algoNames() {
    return List.of(ALGO_NAMES).subList(0, numAlgorithms);
  }

  boolean covers(Version v) {
    return v.major() == 2 && v.minor() >= firstMinor && v.minor() <= lastMinor;
  }

  static final List<NcclVersionTable> SUPPORTED = List.of(v222(), v223(), v224(), v228(), v229(), v230());

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

  private static float[][][] hwLat(float[][] nvl, float[][] pci, float[][] net) {
    return new float[][][] {nvl, pci, net};
  }

  /** NCCL 2.22.x, read at v2.22.3-1. */
  static NcclVersionTable v222() {
    return new NcclVersionTable(
        "2.22.x", "v2.22.3-1", 22, 22,
        32, // include/device.h:62 MAXCHANNELS 32
        6, // nccl_common.h:53-68, no PAT
        // graph/tuning.cc:56-59 baseLat (Tree Simple 0)
        new float[][] {{6.8f, 14.0f, 0f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
        // graph/tuning.cc:65-78 hwLat
        hwLat(
            new float[][] {{.6f, 1.25f, 28f}, {.6f, 1.9f, 3.4f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 25f}, {0, 0, 25f}, {0, 0, 0}},
            new float[][] {{1.0f, 1.9f, 28f}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
            new float[][] {{5.0f, 8.5f, 28f}, {2.7f, 4.0f, 14.0f}, {0, 0, 31f}, {0, 0, 30f}, {0, 0, 18f}, {0, 0, 14f}, {0, 0, 0}}),
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
        false, // search.cc:928-929 typeIntra starts at NVL, up to SYS; search.cc:641-676 NET search order
        false, // search.cc:535-536 crossNic is 0/1
        false, // tuning.cc:34-52 plain lists, unknown names ignored; ring backup (tuning.cc:321-335)
        PATH_PXB, PATH_PXB, // paths.cc:616-620 PXN: peer <= PXB to the NIC, and we are further than PXB
        false, // no "Ampere relies on BALANCED_TREE" rule
        true, // connect.cc:466 minCompCap == 90 (2.28: >= 90) for the multi-node doubling
        new int[] {PATH_LOC, PATH_NVL, PATH_NVB, PATH_PIX, PATH_PXB, PATH_PXN, PATH_PHB, PATH_SYS, PATH_NET, PATH_DIS},
        false, // no ncclTopoSplitNvLink in 2.22
        false, // no sm100 speed arrays
        false, // topo.h:226-234 no SM100 NVLink bandwidth
        TuningLineFormat.BYTES_ALGO_PROTO_TIME, // enqueue.cc:1613
        512, // enqueue.cc:614 MinTrafficPerChannel = 512
        true, // enqueue.cc:657 cellSize = 16
        false, // enqueue.cc:668 cellsLo rounds down
        false, // no LL traffic x4
        false, // enqueue.cc:626 max(MinTraffic, traffic/nCh)
        new int[] {15, 30, 60, 120, 240, 480}); // topo.cc kvDictPciGen (x100 Mb/s per lane)
  }

  /** 2.23.x (read at v2.23.4-1) and 2.24.x (v2.24.3-1): 2.22's search with the tuner constants of 2.23. */
  private static NcclVersionTable between(String family, String at, int minor, boolean prefixedLists,
      TuningLineFormat line) {
    return new NcclVersionTable(
        family, at, minor, minor,
        32, // include/device.h@v2.23.4-1:62, @v2.24.3-1:62 MAXCHANNELS 32
        7, // nccl_common.h@v2.23.4-1:53 PAT added (not used by AllReduce)
        // tuning.cc@v2.23.4-1:56-59 (the PAT row is left zero)
        new float[][] {{6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
        // tuning.cc@v2.23.4-1:65-78
        hwLat(
            new float[][] {{.6f, 1.25f, 4.0f}, {.6f, 1.9f, 3.4f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 25f}, {0, 0, 25f}, {0, 0, 0}},
            new float[][] {{1.0f, 1.9f, 4.0f}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
            new float[][] {{5.0f, 8.5f, 14f}, {2.7f, 4.0f, 14.0f}, {0, 0, 31f}, {0, 0, 30f}, {0, 0, 18f}, {0, 0, 14f}, {0, 0, 0}}),
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
        true, // search.cc@v2.23.4-1:542-545, :625 crossNic 2
        prefixedLists, // 2.23: tuning.cc@v2.23.4-1:34 plain lists + ring backup; 2.24: tuning.cc@v2.24.3-1:53 prefixes
        PATH_PXB, PATH_PXB, // paths.cc@v2.23.4-1:607-611, @v2.24.3-1:654-658
        false,
        true, // connect.cc@v2.23.4-1:469 minCompCap == 90
        new int[] {PATH_LOC, PATH_NVL, PATH_NVB, PATH_PIX, PATH_PXB, PATH_PXN, PATH_PHB, PATH_SYS, PATH_NET, PATH_DIS},
        false, // no ncclTopoSplitNvLink
        false, // no sm100 speed arrays
        false, // no SM100 NVLink bandwidth
        line,
        16 << 10, // enqueue.cc@v2.23.4-1:723 MinTrafficPerChannel = 16 << 10
        false, // enqueue.cc@v2.23.4-1:790 cellSize = divUp(divUp(MinTraffic, trafficPerByte), 16)*16
        true, // enqueue.cc@v2.23.4-1:800 cellsLo rounds up
        false, // LL traffic x4 only from 2.26
        false, // enqueue.cc@v2.23.4-1:756 max(MinTraffic, traffic/nCh)
        new int[] {15, 30, 60, 120, 240, 480});
  }

  /** NCCL 2.23.x, read at v2.23.4-1. */
  static NcclVersionTable v223() {
    return between("2.23.x", "v2.23.4-1", 23, false, TuningLineFormat.FUNC_BYTES_ALGO_PROTO_TIME);
  }

  /** NCCL 2.24.x, read at v2.24.3-1. */
  static NcclVersionTable v224() {
    // enqueue.cc@v2.24.3-1:678 the channel{Lo..Hi} TUNING line
    return between("2.24.x", "v2.24.3-1", 24, true, TuningLineFormat.FUNC_BYTES_ALGO_PROTO_CHANNELS);
  }

  private static NcclVersionTable modern(String family, String at, int first, int last, Ll128Rule rule, long minTraffic,
      boolean from229, double[] blackwellRingLL128) {
    return new NcclVersionTable(
        family, at, first, last,
        64, // include/device.h@v2.28.9-1:86 MAXCHANNELS 64
        7, // PAT added in 2.23
        // graph/tuning.cc@v2.28.9-1:143-148 (ncclTunerConstantsDefaults.baseLatencies; Tree Simple 8.4)
        new float[][] {{6.8f, 14.0f, 8.4f}, {6.6f, 14.0f, 8.4f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {8.0f, 8.0f, 8.0f}},
        // graph/tuning.cc@v2.28.9-1:149-168 (NVLink Tree Simple 4.0, NET Tree Simple 14, NET NVLSTree 20.9)
        hwLat(
            new float[][] {{.6f, 1.25f, 4.0f}, {.6f, 1.9f, 3.4f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 25f}, {0, 0, 25f}, {0, 0, 4.0f}},
            new float[][] {{1.0f, 1.9f, 4.0f}, {1.0f, 2.5f, 5.7f}, {0, 0, 3.7f}, {0, 0, 2.8f}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0f}},
            new float[][] {{5.0f, 8.5f, 14f}, {2.7f, 4.0f, 14.0f}, {0, 0, 31f}, {0, 0, 30f}, {0, 0, 18f}, {0, 0, 20.9f}, {0, 0, 14f}}),
        // graph/tuning.cc@v2.28.9-1:169-198
        new double[][] {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}},
        new double[][] {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, blackwellRingLL128},
        new double[][] {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}},
        new double[][] {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}},
        3,
        false, // tuning.cc@v2.28.9-1:305 0.92 always
        true, // tuning.cc@v2.28.9-1:356 ppn == 1 uses the Tree NET latency
        false, // tuning.cc@v2.28.9-1:377 nInterSteps = 2*(nNodes-1)
        rule,
        true, // search.cc@v2.28.9-1:1000-1013 path type bounds from the system; :714-740 NET search from local GPU
        true, // search.cc@v2.28.9-1:559-573 crossNic 2 pairs the NICs of consecutive ring channels
        true, // tuning.cc@v2.28.9-1:54-131 "func:" prefixes, unknown names are errors; no ring backup
        PATH_P2C, PATH_PXN, // paths.cc@v2.28.9-1:718-727 (NCCL_PXN_C2C=1)
        from229, // search.cc@v2.29.2-1:1037 (absent in 2.28.9) if (ccMin < 90) maxTypeInter = PATH_SYS
        false, // connect.cc@v2.28.9-1:471 minCompCap >= 90
        new int[] {PATH_LOC, PATH_NVL, PATH_NVB, PATH_C2C, PATH_PIX, PATH_PXB, PATH_P2C, PATH_PXN, PATH_PHB, PATH_SYS,
            PATH_NET, PATH_DIS},
        true, // search.cc@v2.28.9-1:1048-1055 ncclTopoSplitNvLink
        true, // search.cc@v2.28.9-1:986-989
        true, // topo.h@v2.28.9-1:20
        TuningLineFormat.FUNC_BYTES_ALGO_PROTO_CHANNELS,
        minTraffic,
        false, // cellSize = divUp(divUp(MinTraffic, trafficPerByte), 16)*16
        true, // cellsLo = min(cells, divUp(trafficPerChannel - currentTraffic, trafficPerCell))
        true, // enqueue.cc@v2.28.9-1:419 LL traffic x4
        from229, // enqueue.cc@v2.29.2-1:609 trafficPerChannel = divUp(traffic/nCh, 16)*16
        new int[] {15, 30, 60, 120, 240, 480});
  }

  /** NCCL 2.28.x, read at v2.28.9-1 (the project's H200 machines). */
  static NcclVersionTable v228() {
    // enqueue.cc@v2.28.9-1:529 MinTrafficPerChannel = 16 << 10; :562 max(MinTraffic, traffic/nCh)
    return modern("2.28.x", "v2.28.9-1", 28, 28, Ll128Rule.C2C_ONE_CC, 16 << 10, false,
        new double[] {2 * 36.7, 34.6, 2 * 36.7});
  }

  /** NCCL 2.29.x, spot-checked at v2.29.2-1 against the 2.30.7 reading. */
  static NcclVersionTable v229() {
    // enqueue.cc@v2.29.2-1:576 MinTraffic 32K, :609 divUp(traffic/nCh, 16)*16; tuning.cc@v2.29.2-1:492 one cc
    return modern("2.29.x", "v2.29.2-1", 29, 29, Ll128Rule.C2C_ONE_CC, 32 << 10, true,
        new double[] {2 * 36.7, 34.6, 2 * 36.7});
  }

  /** NCCL 2.30.x, read at v2.30.7-1. */
  static NcclVersionTable v230() {
    // enqueue.cc@v2.30.7-1:585 MinTraffic 32K; tuning.cc@v2.30.7-1:189,210,533
    return modern("2.30.x", "v2.30.7-1", 30, 30, Ll128Rule.C2C_MIXED_HOPPER, 32 << 10, true,
        new double[] {40.0, 40.0, 40.0});
  }
}

package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Topology;
import io.pathproof.scenario.Version;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The public entry of the NCCL model: for a scenario (topology, NCCL version, ranks, env), the communicator NCCL will
 * build and its decision for an AllReduce of a given size. The communicator comes from a port of NCCL's topology
 * system, graph search and Postset ({@link TopoSystem}, {@link GraphSearch}); the decision from its cost model
 * ({@link TuningModel}) and launch planner ({@link LaunchPlanner}). Constants per version live in
 * {@link NcclVersionTable}.
 */
public final class NcclModel {
  private final Scenario scenario;
  private final NcclVersionTable table;
  private final int nRanks;
  private final int nNodes;
  private final TuningModel tuning;
  private final CommunicatorPrediction comm;
  private final TopoGraph ring;
  private final TopoGraph tree;
  private final int collChannels;
  private final String transport;

  private NcclModel(Scenario scenario, NcclVersionTable table, int nRanks, int nNodes, TuningModel tuning,
      CommunicatorPrediction comm, TopoGraph ring, TopoGraph tree, int collChannels, String transport) {
    this.scenario = scenario;
    this.table = table;
    this.nRanks = nRanks;
    this.nNodes = nNodes;
    this.tuning = tuning;
    this.comm = comm;
    this.ring = ring;
    this.tree = tree;
    this.collChannels = collChannels;
    this.transport = transport;
  }

  /** One host with the GPUs that hold ranks of the communicator. */
  private record Host(Topology.Node node, List<Topology.Gpu> gpus, int[] ranks) {}

  /** The per-host result of the searches: what ncclTopoCompute returns and what the allgather aligns. */
  private record HostGraphs(TopoGraph ring, TopoGraph tree, TopoSystem sys) {}

  /**
   * Whether this NCCL reads NCCL_ALGO / NCCL_PROTO as per-function lists ({@code "allreduce:tree"}): from 2.24
   * (parseList, tuning.cc@v2.24.3-1:53, @v2.28.9-1:54-131); 2.22 and 2.23 read one plain list for every function and
   * fall back to Ring where it leaves none (tuning.cc@v2.23.4-1:34). A bad-input error for an unmodelled version.
   */
  public static boolean perFunctionEnvLists(Version v) {
    return NcclVersionTable.forVersion(v).strictEnvLists();
  }

  /** Builds the model; throws a bad-input error for an unsupported version or an impossible topology. */
  public static NcclModel of(Scenario scenario) {
    Version v = scenario.versions().nccl();
    NcclVersionTable table = NcclVersionTable.forVersion(v);
    Map<String, String> env = scenario.env();
    List<String> notes = new ArrayList<>();
    List<String> cannot = new ArrayList<>();
    // Which predicted fields each cannot-predict note voids (accept leaves those rows UNPROVEN with the note).
    Map<String, List<String>> voids = new java.util.LinkedHashMap<>();

    // Ranks node by node, GPU by GPU (Scenario's contract).
    List<Host> hosts = new ArrayList<>();
    int r = 0;
    for (Topology.Node node : scenario.topology().nodes()) {
      if (r >= scenario.ranks()) {
        break;
      }
      List<Topology.Gpu> gpus = new ArrayList<>();
      List<Integer> ranks = new ArrayList<>();
      for (Topology.Gpu g : node.gpus()) {
        if (r >= scenario.ranks()) {
          break;
        }
        gpus.add(g);
        ranks.add(r++);
      }
      if (!gpus.isEmpty()) {
        hosts.add(new Host(node, gpus, ranks.stream().mapToInt(Integer::intValue).toArray()));
      }
    }
    if (hosts.isEmpty()) {
      throw PathproofException.badInput("topology '" + scenario.topology().name() + "': no GPU to place a rank on");
    }
    int nRanks = r;
    int nNodes = hosts.size();
    for (Host h : hosts) {
      checkPciTree(h.node());
    }
    if (nNodes > 1) {
      for (Host h : hosts) {
        if (h.node().nics().isEmpty()) {
          cannot.add("cannot predict: host " + h.node().hostname() + " has no NIC in the topology (network paths unknown)");
          voids.put(cannot.get(cannot.size() - 1), CommunicatorPrediction.VOIDABLE);
        }
      }
    }

    boolean nvbDisable = NcclEnv.longOr(NcclEnv.get(env, "NCCL_NVB_DISABLE"), 0) == 1;
    Integer userP2p = NcclEnv.userP2pLevel(env);
    int crossNic = (int) NcclEnv.longOr(NcclEnv.get(env, "NCCL_CROSS_NIC"), 2);

    // Search once per distinct host structure (hosts of a homogeneous cluster share the outcome).
    Map<Object, HostGraphs> cache = new HashMap<>();
    List<HostGraphs> perHost = new ArrayList<>();
    for (Host h : hosts) {
      boolean inter = nNodes > 1 && cannot.isEmpty();
      Object key = structureKey(h, inter);
      HostGraphs hg = cache.get(key);
      if (hg == null) {
        TopoSystem sys = TopoSystem.build(table, h.node(), h.gpus(), h.ranks(), inter, nvbDisable, notes);
        String dis = sys.disconnected();
        if (dis != null) {
          throw TopoSystem.noPath(h.node().hostname(), dis);
        }
        sys.applyP2pLevel(userP2p, NcclEnv.longOr(NcclEnv.get(env, "NCCL_PXN_DISABLE"), 0) == 1);
        GraphSearch search = new GraphSearch(sys, crossNic);
        int ngpus = sys.count(TopoSystem.GPU);
        TopoGraph ringG = new TopoGraph(0, TopoGraph.PATTERN_RING, 1, table.maxChannels() / 2, ngpus, table.maxChannels());
        search.compute(ringG);
        TopoGraph treeG = new TopoGraph(1, TopoGraph.PATTERN_BALANCED_TREE, ringG.nChannels, ringG.nChannels, ngpus,
            table.maxChannels());
        search.compute(treeG);
        hg = new HostGraphs(ringG, treeG, sys);
        cache.put(key, hg);
      }
      perHost.add(hg);
    }

    // AllGather3 alignment (init.cc@v2.28.9-1:1175-1192): min channels and bandwidths, max path types.
    TopoGraph ring = perHost.get(0).ring().copy();
    TopoGraph tree = perHost.get(0).tree().copy();
    int maxTreePattern = 0;
    for (HostGraphs hg : perHost) {
      align(ring, hg.ring());
      align(tree, hg.tree());
      maxTreePattern = Math.max(maxTreePattern, hg.tree().pattern);
    }
    int nChannels = Math.min(tree.nChannels, ring.nChannels);
    tree.nChannels = ring.nChannels = nChannels;

    TopoSystem sys0 = perHost.get(0).sys();
    int minCc = Integer.MAX_VALUE;
    int maxCc = 0;
    Set<Integer> vendors = new HashSet<>();
    Set<Integer> archs = new HashSet<>();
    for (HostGraphs hg : perHost) {
      minCc = Math.min(minCc, hg.sys().minCc());
      maxCc = Math.max(maxCc, hg.sys().maxCc());
      vendors.add(hg.sys().node(TopoSystem.CPU, 0).vendor);
      archs.add(hg.sys().node(TopoSystem.CPU, 0).arch);
    }

    // ncclTopoPostset (graph/connect.cc@v2.28.9-1:460-506; @v2.22.3-1:452-487).
    nChannels = Math.min(table.maxChannels(), nChannels * 2);
    boolean sm90 = table.postsetDoubleOnlySm90() ? minCc == 90 : minCc >= 90;
    if (sm90 && nNodes > 1 && ring.bwIntra > 45.0 && nChannels < 16) {
      nChannels = 2 * nChannels;
    }
    int maxN = NcclEnv.maxNchannels(env, table.maxChannels());
    int minN = NcclEnv.minNchannels(env, table.maxChannels());
    // config.minCTAs / maxCTAs (default 1 / MAXCHANNELS, NCCL_MIN_CTAS / NCCL_MAX_CTAS when > 0, capped at
    // MAXCHANNELS, min lowered to max; init.cc@v2.28.9-1:1660-1773).
    long minCtasEnv = NcclEnv.longOr(NcclEnv.get(env, "NCCL_MIN_CTAS"), 0);
    long maxCtasEnv = NcclEnv.longOr(NcclEnv.get(env, "NCCL_MAX_CTAS"), 0);
    int minCtas = (int) Math.min(minCtasEnv > 0 ? minCtasEnv : 1, table.maxChannels());
    int maxCtas = (int) Math.min(maxCtasEnv > 0 ? maxCtasEnv : table.maxChannels(), table.maxChannels());
    minCtas = Math.min(minCtas, maxCtas);
    nChannels = Math.min(Math.min(maxN, nChannels), maxCtas);
    nChannels = Math.max(nChannels, Math.max(minN, minCtas));
    int collChannelsV = nChannels;

    // p2p channels (graph/paths.cc@v2.28.9-1:860-892) from rank 0's host.
    int p2pMax = (int) NcclEnv.longOr(NcclEnv.get(env, "NCCL_MAX_P2P_NCHANNELS"), table.maxChannels());
    int p2pMin = (int) NcclEnv.longOr(NcclEnv.get(env, "NCCL_MIN_P2P_NCHANNELS"), 1);
    int p2pn = Math.max(Math.min(nChannels, p2pMax), p2pMin);
    int minPeer = p2pn;
    for (int g = 0; g < sys0.count(TopoSystem.GPU); g++) {
      for (int p = 0; p < sys0.count(TopoSystem.GPU); p++) {
        if (p == g) {
          continue;
        }
        TopoSystem.Path path = sys0.node(TopoSystem.GPU, p).paths[TopoSystem.GPU][g];
        int ch;
        if (path.type == PATH_NVL) {
          float nvlBw = table.nvlBw(sys0.node(TopoSystem.GPU, g).cc);
          ch = 2 * Math.max(1, (int) (path.bw / nvlBw));
        } else {
          ch = 2;
        }
        minPeer = Math.min(minPeer, ch);
      }
      if (nNodes > 1) {
        long perNet = NcclEnv.longOr(NcclEnv.get(env, "NCCL_NCHANNELS_PER_NET_PEER"), -1);
        int netCh;
        if (perNet > 0) {
          netCh = (int) perNet;
        } else {
          int max = 2;
          while ((long) max * nRanks > (long) p2pn * 4 && max > 1) {
            max /= 2;
          }
          netCh = Math.max(netCountByBw(sys0, g), max);
        }
        minPeer = Math.min(minPeer, netCh);
      }
    }
    int p2pPerPeer = pow2Up(minPeer);
    p2pn = pow2Up(p2pn);
    p2pn = Math.min(p2pn, table.maxChannels());
    p2pPerPeer = Math.min(p2pPerPeer, p2pn);

    // NVLS: nvlsSupport needs an NVSwitch, sm90+, and multicast from the driver/fabric manager (not an input).
    boolean nvsPresent = false;
    for (HostGraphs hg : perHost) {
      nvsPresent |= hg.sys().count(TopoSystem.NVS) > 0;
    }
    String nvlsEnable = NcclEnv.get(env, "NCCL_NVLS_ENABLE");
    if (nvsPresent && minCc >= 90 && nRanks > 1 && (nvlsEnable == null || NcclEnv.longOr(nvlsEnable, 2) != 0)) {
      cannot.add("cannot predict: NVLS may be enabled on this NVSwitch sm" + minCc
          + " system (multicast support of the driver/fabric manager is not an input); set NCCL_NVLS_ENABLE=0");
      // NVLS enters the tuner's table and its own channels; the ring's peer connections are made as before.
      voids.put(cannot.get(cannot.size() - 1), List.of("algorithm", "protocol", "tuner-time", "coll-channels", "launch-shape", "busbw"));
    }
    if (NcclEnv.get(env, "NCCL_TUNER_PLUGIN") != null) {
      cannot.add("cannot predict: NCCL_TUNER_PLUGIN is set; a tuner plugin may override the cost table");
      // A tuner plugin picks algorithm, protocol, channels and threads per call; the communicator is set up as before.
      voids.put(cannot.get(cannot.size() - 1), List.of("algorithm", "protocol", "tuner-time", "launch-shape", "busbw"));
    }
    if (NcclEnv.longOr(NcclEnv.get(env, "NCCL_COLLNET_ENABLE"), 0) == 1) {
      notes.add("NCCL_COLLNET_ENABLE=1 but no CollNet plugin is described; CollNet is modelled as unsupported");
    }
    if (NcclEnv.get(env, "NCCL_GRAPH_FILE") != null) {
      cannot.add("cannot predict: NCCL_GRAPH_FILE replaces the graph search with a file that is not an input");
      voids.put(cannot.get(cannot.size() - 1), CommunicatorPrediction.VOIDABLE);
    }

    String nt = NcclEnv.get(env, "NCCL_NTHREADS");
    if (nt != null) {
      long v2 = NcclEnv.longOr(nt, -2);
      if (v2 > 0 && (v2 % WARP_SIZE != 0 || v2 < 64 || v2 > 512)) {
        notes.add("NCCL_NTHREADS=" + nt + " is not a multiple of 32 in 64..512; NCCL warns and replaces it");
      }
    }

    TuningModel.Inputs in = new TuningModel.Inputs();
    in.table = table;
    in.nRanks = nRanks;
    in.nNodes = nNodes;
    in.minCc = minCc;
    in.maxCc = maxCc;
    in.ring = ring;
    in.tree = tree;
    in.maxTreePattern = maxTreePattern;
    in.cpuArch = sys0.node(TopoSystem.CPU, 0).arch;
    in.cpuVendor = sys0.node(TopoSystem.CPU, 0).vendor;
    in.cpuMixedVendor = vendors.size() > 1;
    in.cpuMixedArch = archs.size() > 1;
    Version cuda = scenario.versions().cuda();
    in.cuda118 = cuda != null && cuda.major() == 11 && cuda.minor() == 8;
    in.commNChannels = nChannels;
    in.protoEnv = NcclEnv.get(env, "NCCL_PROTO");
    in.algoEnv = NcclEnv.get(env, "NCCL_ALGO");
    in.nthreadsEnv = nt;
    in.ll128NthreadsEnv = NcclEnv.get(env, "NCCL_LL128_NTHREADS");
    in.netOverheadEnv = NcclEnv.get(env, "NCCL_NET_OVERHEAD");
    in.threadThresholdsEnv = NcclEnv.get(env, "NCCL_THREAD_THRESHOLDS");
    TuningModel tm = new TuningModel(in);

    String transport = transport(sys0, env, cuda, nNodes, hosts.get(0).node(), notes);
    int nvlsChannels = 0;
    String initLine = String.format(Locale.ROOT,
        "%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p channels per peer",
        nChannels, nChannels, nvlsChannels, p2pn, p2pPerPeer);
    Postset joined = postset(perHost, hosts, ring.nChannels, table);
    List<String> ringOrders = nRanks > 64 ? List.of() : joined.ringOrders(nChannels);
    List<String> trees = nRanks > 64 ? List.of() : joined.trees(nChannels);
    if (nRanks > 64) {
      notes.add("ring orders and trees not listed for more than 64 ranks");
    }
    GraphSummary ringSum = ring.summary();
    GraphSummary treeSum = tree.summary();
    CommunicatorPrediction cp = new CommunicatorPrediction(nRanks, nNodes, collChannelsV, p2pn, p2pPerPeer, nvlsChannels,
        ringSum, treeSum, transport, ringOrders, initLine, tm.threadThresholdsLine(),
        cannot.isEmpty() ? null : String.join("; ", cannot), notes, voids, trees);
    return new NcclModel(scenario, table, nRanks, nNodes, tm, cp, ring, tree, collChannelsV, transport);
  }

  public CommunicatorPrediction communicator() {
    return comm;
  }

  /** NCCL's decision for one AllReduce of {@code nBytes} of {@code dtype}, for bucket {@code bucketIndex}. */
  public CollectivePrediction allReduce(int bucketIndex, long nBytes, DType dtype) {
    if (dtype == null) {
      throw PathproofException.badInput("allReduce: dtype missing");
    }
    if (nBytes < 0 || nBytes % dtype.elementSize() != 0) {
      throw PathproofException.badInput("allReduce: " + nBytes + " bytes is not a whole number of " + dtype.torchName()
          + " elements");
    }
    long count = nBytes / dtype.elementSize();
    if (nRanks == 1 || count == 0) {
      // One rank: ncclAllReduce copies sendbuff to recvbuff (no kernel, no TUNING line); count 0 returns at once.
      return new CollectivePrediction(bucketIndex, nBytes, "none", -1, "none", -1, null, 0, 0, 0, 0, 0, 0.0, 0L,
          nRanks == 1 ? "none (local copy)" : "none (empty)", null, null, null, true, List.of());
    }
    int na = table.numAlgorithms();
    float minTime = 3600000000.0f;
    int algo = -1;
    int proto = -1;
    List<CollectivePrediction.TuningEntry> entries = new ArrayList<>();
    for (int a = 0; a < na; a++) {
      if (tuning.algoSkipped[a]) {
        continue;
      }
      for (int p = 0; p < 3; p++) {
        float t = tuning.time(a, p, nBytes);
        entries.add(new CollectivePrediction.TuningEntry(ALGO_NAMES[a], PROTO_NAMES[p], fmt(tuning.latency[a][p]),
            fmt(tuning.bandwidth[a][p]), t < 0 ? null : fmt(t)));
        if (t >= 0.0 && t < minTime) {
          algo = a;
          proto = p;
          minTime = t;
        }
      }
    }
    if (algo < 0) {
      throw TuningModel.noAlgorithm(NcclEnv.get(scenario.env(), "NCCL_ALGO"), NcclEnv.get(scenario.env(), "NCCL_PROTO"));
    }
    LaunchPlanner.Shape shape = LaunchPlanner.plan(table, tuning, collChannels, algo, proto, nBytes, count,
        dtype.elementSize());
    String tuningLine;
    if (table.tuningLine() == TuningLineFormat.BYTES_ALGO_PROTO_TIME) {
      tuningLine = nBytes + " Bytes -> Algo " + algo + " proto " + proto + " time " + fmt(minTime).toPlainString();
    } else if (table.tuningLine() == TuningLineFormat.FUNC_BYTES_ALGO_PROTO_TIME) {
      tuningLine = "AllReduce: " + nBytes + " Bytes -> Algo " + algo + " proto " + proto + " time "
          + fmt(minTime).toPlainString();
    } else {
      tuningLine = "AllReduce: " + nBytes + " Bytes -> Algo " + ALGO_ENUM_NAMES[algo] + " proto "
          + PROTO_ENUM_NAMES[proto] + " channel{Lo..Hi}={" + shape.channelLo() + ".." + shape.channelHi() + "}";
    }
    int steps = algo == RING ? nRanks - 1 : 0;
    double busFactor = 2.0 * (nRanks - 1) / nRanks;
    long busBytes = java.math.BigInteger.valueOf(nBytes).multiply(java.math.BigInteger.valueOf(2L * (nRanks - 1)))
        .divide(java.math.BigInteger.valueOf(nRanks)).longValueExact();
    String kernel = "ncclDevKernel_AllReduce_Sum_" + unsignedSuffix(dtype) + "_" + (algo == TREE ? "TREE" : "RING")
        + "_LL";
    return new CollectivePrediction(bucketIndex, nBytes, ALGO_NAMES[algo], algo, PROTO_NAMES[proto], proto, fmt(minTime),
        shape.gridX(), shape.gridX(), shape.blockX(), steps, steps, busFactor, busBytes, transport,
        expectedTime(busBytes, shape.gridX(), algo, proto), kernel, tuningLine, false, entries);
  }

  /**
   * The expected kernel time from link bandwidths, kept apart from the tuner's estimate (seed common error 6):
   * {@code busBytes / usable bandwidth + hops × per-hop link latency}.
   * <ul>
   *   <li>Usable bandwidth (GB/s per rank): the link capacity the graph search reserved for the algorithm
   *       ({@code nChannels × bw} of the ring or tree graph, bwInter when the ring crosses hosts), shared evenly by
   *       the channels Postset creates ({@code 2 × graph channels}), times the channels this launch uses (gridX).
   *   <li>Hops: a ring makes 2(N−1) steps, 2(nNodes−1) of them over the network; a tree goes up and down
   *       (ppn−1) NVLink/PCI hops and log2(nNodes) network hops each way.
   *   <li>Per-hop latency: NCCL's hardware latency table for that algorithm and protocol (hwLat, without the base
   *       latency the tuner adds), NVLink or PCI inside a host, NET between hosts.
   * </ul>
   */
  private BigDecimal expectedTime(long busBytes, int gridX, int algo, int proto) {
    TopoGraph g = algo == TREE ? tree : ring;
    float bwPerChannel = nNodes > 2 ? Math.min(g.bwIntra, g.bwInter) : g.bwIntra;
    float perRank = g.nChannels * bwPerChannel;
    int fullChannels = Math.min(table.maxChannels(), 2 * g.nChannels);
    double usable = perRank * Math.min(1.0, (double) gridX / fullChannels);
    if (usable <= 0) {
      return null;
    }
    int intraHw = g.typeIntra == TopoSystem.LINK_NVL ? TuningModel.HW_NVLINK : TuningModel.HW_PCI;
    long intraHops;
    long interHops;
    if (algo == TREE) {
      intraHops = 2L * (nRanks / nNodes - 1);
      interHops = 2L * TuningModel.log2i(nNodes);
    } else {
      interHops = nNodes > 1 ? 2L * (nNodes - 1) : 0;
      intraHops = 2L * (nRanks - 1) - interHops;
    }
    double lat = intraHops * table.hwLat()[intraHw][algo][proto] + interHops * table.hwLat()[TuningModel.HW_NET][algo][proto];
    double us = busBytes / (1000.0 * usable) + lat;
    return new BigDecimal(us).setScale(3, java.math.RoundingMode.HALF_EVEN);
  }

  /**
   * C's {@code printf("%f", (double) f)}: glibc rounds the exact binary value to 6 decimals (ties to even), which is
   * what BigDecimal(double).setScale(6, HALF_EVEN) does. (Java's own %f rounds a shortest decimal string instead and
   * can differ in the last digit in rare double-rounding cases; it is also far slower.)
   */
  static BigDecimal fmt(float f) {
    return new BigDecimal((double) f).setScale(6, java.math.RoundingMode.HALF_EVEN);
  }

  /** device/generate.py best_kernel: one kernel per type, signed integers mapped to unsigned. */
  private static String unsignedSuffix(DType d) {
    switch (d) {
      case INT32: return "u32";
      case INT64: return "u64";
      case INT8: return "u8";
      default: return d.kernelSuffix();
    }
  }

  private static void align(TopoGraph into, TopoGraph other) {
    into.nChannels = Math.min(into.nChannels, other.nChannels);
    into.sameChannels = Math.min(into.sameChannels, other.sameChannels);
    into.bwIntra = Math.min(into.bwIntra, other.bwIntra);
    into.bwInter = Math.min(into.bwInter, other.bwInter);
    into.typeIntra = Math.max(into.typeIntra, other.typeIntra);
    into.typeInter = Math.max(into.typeInter, other.typeInter);
    into.crossNic = Math.max(into.crossNic, other.crossNic);
  }

  static int pow2Up(int x) {
    int y = 1;
    while (y < x) {
      y <<= 1;
    }
    return y;
  }

  /** getLocalNetCountByBw (graph/topo.cc@v2.28.9-1:1576-1597). */
  private static int netCountByBw(TopoSystem sys, int g) {
    TopoSystem.Node gpu = sys.node(TopoSystem.GPU, g);
    float gpuBw = 0;
    for (TopoSystem.Link l : gpu.links) {
      if (l.rem.type == TopoSystem.CPU) {
        gpuBw = l.bw;
      }
    }
    int[] nets = sys.local(TopoSystem.GPU, g, TopoSystem.NET);
    float total = 0;
    int count = 0;
    for (int l = 0; l < nets.length && total < gpuBw; l++, count++) {
      total += gpu.paths[TopoSystem.NET][nets[l]].bw;
    }
    return count;
  }

  /** The PCI parent chain of every switch must reach a CPU; a cycle is an impossible topology. */
  private static void checkPciTree(Topology.Node node) {
    Map<String, Topology.PciSwitch> sw = new LinkedHashMap<>();
    for (Topology.PciSwitch p : node.pciSwitches()) {
      sw.put(p.id(), p);
    }
    for (Topology.PciSwitch p : node.pciSwitches()) {
      Set<String> seen = new HashSet<>();
      Topology.PciSwitch cur = p;
      while (cur != null && cur.parent() != null && sw.containsKey(cur.parent())) {
        if (!seen.add(cur.id())) {
          throw PathproofException.badInput("topology." + node.hostname() + ".pciSwitches[" + p.id()
              + "].parent: the parent chain loops and never reaches a CPU, so its GPUs have no path to the others");
        }
        cur = sw.get(cur.parent());
      }
    }
  }

  /** What the search depends on, without hostnames, bus ids or model names (records compare structurally). */
  private static Object structureKey(Host h, boolean inter) {
    Topology.Node n = h.node();
    List<Topology.Gpu> gpus = new ArrayList<>(h.gpus().size());
    for (Topology.Gpu g : h.gpus()) {
      gpus.add(new Topology.Gpu(g.index(), "", g.computeCapability(), null, g.pciParent(), g.pciGen(), g.pciWidth(),
          g.nvswitchLinks()));
    }
    List<Object> nics = new ArrayList<>();
    if (inter) {
      for (Topology.Nic c : n.nics()) {
        nics.add(List.of(String.valueOf(c.pciParent()), c.speedMbps(), c.gdr()));
      }
    }
    return List.of(inter, n.cpus(), n.pciSwitches(), gpus, n.nvlinks(), nics);
  }

  /**
   * The transport NCCL will print per peer kind (transport/p2p.cc, shm.cc, net.cc): P2P between GPUs of a host when
   * their path is within the P2P level (CUMEM when cuMem is on, IPC otherwise: DDP runs one process per GPU;
   * {@code /read} only for cc 80 pairs over NVLink), else SHM, and NET between hosts.
   */
  private static String transport(TopoSystem sys, Map<String, String> env, Version cuda, int nNodes,
      Topology.Node host, List<String> notes) {
    List<String> kinds = new ArrayList<>();
    boolean[] unknownCumem = {false};
    if (sys.count(TopoSystem.GPU) > 1) {
      boolean p2pAll = true;
      boolean read = true;
      for (int g = 0; g < sys.count(TopoSystem.GPU); g++) {
        for (int p = 0; p < sys.count(TopoSystem.GPU); p++) {
          if (g == p) {
            continue;
          }
          TopoSystem.Path path = sys.node(TopoSystem.GPU, g).paths[TopoSystem.GPU][p];
          p2pAll &= path.type <= sys.p2pLevel;
          read &= path.type == PATH_NVL && sys.node(TopoSystem.GPU, g).cc == 80 && sys.node(TopoSystem.GPU, p).cc == 80;
        }
      }
      boolean shmDisabled = NcclEnv.longOr(NcclEnv.get(env, "NCCL_SHM_DISABLE"), 0) == 1;
      if (p2pAll) {
        String cumemEnv = NcclEnv.get(env, "NCCL_CUMEM_ENABLE");
        boolean cumem = cumemEnv != null ? NcclEnv.longOr(cumemEnv, 1) != 0 : cuda == null || cuda.major() >= 12;
        String rd = read ? "/read" : "";
        if (cumemEnv == null && cumem) {
          // Unset, NCCL enables cuMem only where the driver supports it, which is not an input: say so, so that
          // accept judges the P2P family and leaves the mechanism unproven (no evidence here can tell which one).
          unknownCumem[0] = true;
          kinds.add("P2P/CUMEM" + rd + " or P2P/IPC" + rd);
        } else {
          kinds.add((cumem ? "P2P/CUMEM" : "P2P/IPC") + rd);
        }
      } else if (!shmDisabled) {
        kinds.add("SHM");
      } else {
        kinds.add("NET");
        notes.add("P2P and SHM both unavailable between local GPUs: NCCL falls back to the network transport");
      }
    }
    if (nNodes > 1) {
      String kind = host.nics().isEmpty() || host.nics().get(0).kind() == null ? "" : host.nics().get(0).kind();
      boolean gdr = !host.nics().isEmpty() && host.nics().get(0).gdr();
      String k = kind.toLowerCase(Locale.ROOT);
      if (k.equals("net")) {
        // An NCCL topology dump or nvidia-smi matrix names the port, not the net plugin that drives it: NCCL prints
        // that plugin's own name (transport/net.cc@v2.28.9-1:313, 359: "via NET/%s/%d", ncclNet->name), so only
        // the family and GPUDirect follow.
        notes.add("network plugin not named by the topology file: the NET transport is predicted by family"
            + (gdr ? " and GPUDirect RDMA (the NIC's gdr=\"1\")" : ""));
        kinds.add("NET" + (gdr ? "/GDRDMA" : ""));
      } else {
        String net = k.contains("ib") || k.contains("roce") || k.isEmpty() ? "NET/IB" : "NET/Socket";
        kinds.add(net + (gdr && net.equals("NET/IB") ? "/GDRDMA" : ""));
      }
    }
    return kinds.isEmpty() ? "none" : String.join(" + ", kinds) + (unknownCumem[0] ? ": cuMem support unknown" : "");
  }

  /** The hosts' searched graphs, joined into rings and trees as ncclTopoPostset does ({@link Postset}). */
  private static Postset postset(List<HostGraphs> perHost, List<Host> hosts, int graphChannels,
      NcclVersionTable table) {
    List<Postset.HostGraph> joined = new ArrayList<>();
    for (int h = 0; h < hosts.size(); h++) {
      HostGraphs hg = perHost.get(h);
      // ranks in the graph are those of the first host with this structure; shift to this host's ranks.
      int base = hosts.get(h).ranks()[0] - hg.sys().node(TopoSystem.GPU, 0).rank;
      joined.add(new Postset.HostGraph(hg.ring(), hg.tree(), hosts.get(h).gpus().size(), base));
    }
    return Postset.of(joined, graphChannels, table.crossNicTwo());
  }
}

package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Topology;
import io.pathproof.scenario.Version;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What ncclCommInitRank builds for a scenario, one method per step of NCCL's own init: ranks placed on hosts, the
 * topology search per host, the AllGather3 alignment, Postset's channel count, the p2p channels, the tuning model and
 * the transport. {@link NcclModel#of} runs the steps in this order and keeps what they built.
 */
final class CommInit {
    /** One host with the GPUs that hold ranks of the communicator. */
    record Host(Topology.Node node, List<Topology.Gpu> gpus, int[] ranks) {}

    /** The per-host result of the searches: what ncclTopoCompute returns and what the allgather aligns. */
    record HostGraphs(TopoGraph ring, TopoGraph tree, TopoSystem sys) {}

    private final Scenario scenario;
    final NcclVersionTable table;
    private final Map<String, String> env;
    private final List<String> notes = new ArrayList<>();
    private final List<String> cannot = new ArrayList<>();
    /** Which predicted fields each cannot-predict note voids (accept leaves those rows UNPROVEN with the note). */
    private final Map<String, List<String>> voids = new LinkedHashMap<>();

    private final List<Host> hosts = new ArrayList<>();
    int nRanks;
    int nNodes;
    private final List<HostGraphs> perHost = new ArrayList<>();
    TopoGraph ring;
    TopoGraph tree;
    private int maxTreePattern;
    /** The graphs' channels after the alignment, before Postset. */
    private int graphChannels;

    private int minCc = Integer.MAX_VALUE;
    private int maxCc;
    private final Set<Integer> vendors = new HashSet<>();
    private final Set<Integer> archs = new HashSet<>();
    int collChannels;
    private int p2pChannels;
    private int p2pPerPeer;
    TuningModel tuning;
    String transport;
    /** Each local GPU pair's transport by rank ("0->1"), where a host's pairs differ; else empty. */
    Map<String, String> peerTransports;

    CommunicatorPrediction communicator;

    private CommInit(Scenario scenario) {
        this.scenario = scenario;
        this.table = NcclVersionTable.forVersion(scenario.versions().nccl());
        this.env = scenario.env();
    }

    /** Runs the steps of the init; throws a bad-input error for an unsupported version or an impossible topology. */
    static CommInit of(Scenario scenario) {
        CommInit c = new CommInit(scenario);
        c.placeRanks();
        c.search();
        c.allGather3();
        c.postset();
        c.p2pChannels();
        c.unpredictable();
        c.tuning = c.tuningModel();
        PeerTransports.Result t =
                PeerTransports.of(c.hosts, c.perHost, c.env, scenario.versions().cuda(), c.nNodes, c.notes);
        c.transport = t.summary();
        c.peerTransports = t.perPair();
        c.communicator = c.communicatorPrediction();
        return c;
    }

    /**
     * The channel lines NCCL logs under the ring's and then the tree's GRAPH line on the host of {@code rank}: each
     * graph as ncclTopoCompute left it on that host, before the allgather aligns the hosts (init.cc@v2.28.9-1:1020-1029).
     */
    List<List<String>> graphListing(int rank) {
        for (int h = 0; h < hosts.size(); h++) {
            for (int r : hosts.get(h).ranks()) {
                if (r == rank) {
                    HostGraphs hg = perHost.get(h);
                    int base = hosts.get(h).ranks()[0] - hg.sys().node(TopoSystem.GPU, 0).rank;
                    NcclVersionTable.GraphPrint print = table.graphPrint();
                    return List.of(
                            GraphListing.lines(hg.ring(), hg.sys(), print, base),
                            GraphListing.lines(hg.tree(), hg.sys(), print, base));
                }
            }
        }
        throw PathproofException.badInput("rank " + rank + ": not a rank of this communicator");
    }

    private TopoSystem sys0() {
        return perHost.get(0).sys();
    }

    private void cannot(String note, List<String> voided) {
        cannot.add(note);
        voids.put(note, voided);
    }

    /** Ranks node by node, GPU by GPU (Scenario's contract); a multi-node host without a NIC cannot be predicted. */
    private void placeRanks() {
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
                hosts.add(new Host(
                        node, gpus, ranks.stream().mapToInt(Integer::intValue).toArray()));
            }
        }
        if (hosts.isEmpty()) {
            throw PathproofException.badInput(
                    "topology '" + scenario.topology().name() + "': no GPU to place a rank on");
        }
        nRanks = r;
        nNodes = hosts.size();
        for (Host h : hosts) {
            checkPciTree(h.node());
        }
        if (nNodes > 1) {
            for (Host h : hosts) {
                if (h.node().nics().isEmpty()) {
                    cannot(
                            "cannot predict: host " + h.node().hostname()
                                    + " has no NIC in the topology (network paths unknown)",
                            CommunicatorPrediction.VOIDABLE);
                }
            }
        }
    }

    /** ncclTopoCompute for the ring and the tree, once per distinct host structure (a homogeneous cluster shares it). */
    private void search() {
        boolean nvbDisable = NcclEnv.longOr(NcclEnv.get(env, "NCCL_NVB_DISABLE"), 0) == 1;
        Integer userP2p = NcclEnv.userP2pLevel(env);
        int crossNic = (int) NcclEnv.longOr(NcclEnv.get(env, "NCCL_CROSS_NIC"), 2);
        Map<Object, HostGraphs> cache = new HashMap<>();
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
                List<String> denied = sys.applyP2pLevel(
                        userP2p,
                        NcclEnv.longOr(NcclEnv.get(env, "NCCL_PXN_DISABLE"), 0) == 1,
                        NcclEnv.userGdrLevel(env),
                        NcclEnv.longOr(NcclEnv.get(env, "NCCL_IGNORE_DISABLED_P2P"), 0));
                peerAccessNotes(sys, h.node(), denied);
                GraphSearch search = new GraphSearch(sys, crossNic);
                int ngpus = sys.count(TopoSystem.GPU);
                TopoGraph ringG = new TopoGraph(
                        0, TopoGraph.PATTERN_RING, 1, table.maxChannels() / 2, ngpus, table.maxChannels());
                search.compute(ringG);
                TopoGraph treeG = new TopoGraph(
                        1,
                        TopoGraph.PATTERN_BALANCED_TREE,
                        ringG.nChannels,
                        ringG.nChannels,
                        ngpus,
                        table.maxChannels());
                search.compute(treeG);
                hg = new HostGraphs(ringG, treeG, sys);
                cache.put(key, hg);
            }
            perHost.add(hg);
        }
    }

    /**
     * AllGather3 alignment (init.cc@v2.28.9-1:1175-1192): min channels and bandwidths, max path types; and what the
     * tuner needs of every host's system (compute capabilities, CPU vendors and architectures).
     */
    private void allGather3() {
        ring = perHost.get(0).ring().copy();
        tree = perHost.get(0).tree().copy();
        for (HostGraphs hg : perHost) {
            align(ring, hg.ring());
            align(tree, hg.tree());
            maxTreePattern = Math.max(maxTreePattern, hg.tree().pattern);
        }
        graphChannels = Math.min(tree.nChannels, ring.nChannels);
        tree.nChannels = ring.nChannels = graphChannels;
        for (HostGraphs hg : perHost) {
            minCc = Math.min(minCc, hg.sys().minCc());
            maxCc = Math.max(maxCc, hg.sys().maxCc());
            vendors.add(hg.sys().node(TopoSystem.CPU, 0).vendor);
            archs.add(hg.sys().node(TopoSystem.CPU, 0).arch);
        }
    }

    /** ncclTopoPostset (graph/connect.cc@v2.28.9-1:460-506; @v2.22.3-1:452-487): the communicator's channels. */
    private void postset() {
        int nChannels = Math.min(table.maxChannels(), graphChannels * 2);
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
        collChannels = Math.max(nChannels, Math.max(minN, minCtas));
    }

    /**
     * p2p channels and channels per peer: ncclTopoGetNchannels and ncclTopoComputeP2pChannels as the version's
     * {@link NcclVersionTable.P2pPerPeer} says (graph/paths.cc@v2.28.9-1:817-892, @v2.29.7-1:832-910,
     * @v2.30.7-1:918-1008).
     */
    private void p2pChannels() {
        int p2pMax = (int) NcclEnv.longOr(NcclEnv.get(env, "NCCL_MAX_P2P_NCHANNELS"), table.maxChannels());
        int p2pMin = (int) NcclEnv.longOr(NcclEnv.get(env, "NCCL_MIN_P2P_NCHANNELS"), 1);
        int p2pn = Math.max(Math.min(collChannels, p2pMax), p2pMin);
        p2pChannels = Math.min(NcclModel.pow2Up(p2pn), table.maxChannels());
        if (table.p2pPerPeer() == NcclVersionTable.P2pPerPeer.HOST_GPUS_NET_BY_RANKS) {
            p2pPerPeer = Math.min(NcclModel.pow2Up(hostGpusMinPerPeer(p2pn)), p2pChannels);
            return;
        }
        long perNet = NcclEnv.longOr(NcclEnv.get(env, "NCCL_NCHANNELS_PER_NET_PEER"), -1);
        int perPeer = NcclModel.pow2Up(ranksMinPerPeer(perNet));
        if (nNodes > 1 && perNet <= 0) {
            // "the network is the bottleneck": fewer channels per peer until every peer fits one round of
            // NCCL_MAX_DEV_WORK_P2P_PER_BATCH works per channel (paths.cc@v2.29.7-1:902-905, @v2.30.7-1:993-1001).
            int maxPeers = nRanks;
            if (table.p2pPerPeer() == NcclVersionTable.P2pPerPeer.RANK_GPU_NET_BW_MAX_PEERS) {
                // NCCL_P2P_MAX_PEERS (init.cc@v2.30.7-1:66, 2090-2100; ≤ 0 ignored), capped at nRanks (:1228-1232).
                long maxPeersEnv = NcclEnv.longOr(NcclEnv.get(env, "NCCL_P2P_MAX_PEERS"), -1);
                maxPeers = maxPeersEnv > 0 ? (int) Math.min(maxPeersEnv, nRanks) : nRanks;
            }
            int rounds = (maxPeers + MAX_DEV_WORK_P2P_PER_BATCH - 1) / MAX_DEV_WORK_P2P_PER_BATCH;
            while (perPeer * rounds > p2pChannels && perPeer > 1) {
                perPeer /= 2;
            }
        } else {
            perPeer = Math.min(p2pChannels, perPeer);
        }
        p2pPerPeer = perPeer;
    }

    /** NCCL_MAX_DEV_WORK_P2P_PER_BATCH (include/device.h@v2.29.7-1:386, @v2.30.7-1:391). */
    private static final int MAX_DEV_WORK_P2P_PER_BATCH = 8;

    /** NCCL_P2P_PER_CHANNEL_NET_BW's default, GB/s (graph/paths.cc@v2.29.7-1:832, @v2.30.7-1:918). */
    private static final int P2P_PER_CHANNEL_NET_BW = 14;

    /**
     * ≤ 2.28: the minimum of ncclTopoGetNchannels over every GPU of rank 0's host and every peer, starting from the p2p
     * channels (graph/paths.cc@v2.28.9-1:817-882).
     */
    private int hostGpusMinPerPeer(int p2pn) {
        TopoSystem sys0 = sys0();
        int minPeer = p2pn;
        for (int g = 0; g < sys0.count(TopoSystem.GPU); g++) {
            for (int p = 0; p < sys0.count(TopoSystem.GPU); p++) {
                if (p != g) {
                    minPeer = Math.min(minPeer, localPeerChannels(sys0, g, p));
                }
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
        return minPeer;
    }

    /**
     * 2.29+: ncclTopoComputeP2pChannelsPerPeer on every rank, its own GPU against every peer from MAXCHANNELS, then the
     * minimum over the ranks in AllGather3 (graph/paths.cc@v2.29.7-1:872-885, init.cc@v2.29.7-1:1145, 1270).
     */
    private int ranksMinPerPeer(long perNet) {
        int min = table.maxChannels();
        for (HostGraphs hg : perHost) {
            TopoSystem sys = hg.sys();
            for (int g = 0; g < sys.count(TopoSystem.GPU); g++) {
                for (int p = 0; p < sys.count(TopoSystem.GPU); p++) {
                    if (p != g) {
                        min = Math.min(min, localPeerChannels(sys, g, p));
                    }
                }
                if (nNodes > 1) {
                    min = Math.min(min, perNet > 0 ? (int) perNet : netPeerChannels(sys, g));
                }
            }
        }
        return min;
    }

    /**
     * A peer on the same host: twice the NVLink multiple over an NVLink path (NVB too from 2.30), else 2
     * (graph/paths.cc@v2.28.9-1:827-834, @v2.29.7-1:845-851, @v2.30.7-1:932-940).
     */
    private int localPeerChannels(TopoSystem sys, int g, int p) {
        TopoSystem.Path path = sys.node(TopoSystem.GPU, p).paths[TopoSystem.GPU][g];
        boolean nvLink = path.type == PATH_NVL
                || (path.type == PATH_NVB
                        && table.p2pPerPeer() == NcclVersionTable.P2pPerPeer.RANK_GPU_NET_BW_MAX_PEERS);
        if (!nvLink) {
            return 2;
        }
        float nvlBw = table.nvlBw(sys.node(TopoSystem.GPU, g).cc);
        return 2 * Math.max(1, (int) (path.bw / nvlBw));
    }

    /**
     * 2.29+: a peer over the network, NCCL_NCHANNELS_PER_NET_PEER unset: at least one channel per NIC the GPU's
     * rotation uses, more to carry their bandwidth at NCCL_P2P_PER_CHANNEL_NET_BW per channel; 2 without a NIC
     * (graph/paths.cc@v2.29.7-1:852-864, @v2.30.7-1:941-953).
     */
    private int netPeerChannels(TopoSystem sys, int g) {
        float[] countBw = netCountAndBw(sys, g);
        int count = (int) countBw[0];
        if (count == 0) {
            return 2;
        }
        long perChannelEnv = NcclEnv.longOr(NcclEnv.get(env, "NCCL_P2P_PER_CHANNEL_NET_BW"), P2P_PER_CHANNEL_NET_BW);
        int perChannel = (int) Math.max(1, perChannelEnv);
        int netBw = (int) countBw[1];
        return Math.max(count, (netBw + perChannel - 1) / perChannel);
    }

    /**
     * 2.29+ getLocalNetCountByBw: the NICs of the GPU's channel rotation (ncclTopoGetLocalNet) until one repeats or
     * their bandwidth from the GPU reaches the GPU's path to its local CPU; {count, bandwidth}
     * (graph/topo.cc@v2.29.7-1:1626-1651, @v2.30.7-1:1974-1999).
     */
    private float[] netCountAndBw(TopoSystem sys, int g) {
        TopoSystem.Node gpu = sys.node(TopoSystem.GPU, g);
        float gpuBw = gpu.paths[TopoSystem.CPU][sys.localCpu(g)].bw;
        int count = 0;
        float total = 0;
        int first = -1;
        for (int c = 0; c < table.maxChannels(); c++) {
            int net = sys.localNet(g, c);
            if (net < 0) {
                break;
            }
            if (c == 0) {
                first = net;
            } else if (net == first) {
                break;
            }
            total += gpu.paths[TopoSystem.NET][net].bw;
            count++;
            if (total >= gpuBw) {
                break;
            }
        }
        return new float[] {count, total};
    }

    /** What the inputs cannot decide (NVLS multicast, a tuner plugin, a graph file) and settings NCCL replaces. */
    private void unpredictable() {
        // NVLS: nvlsSupport needs an NVSwitch, sm90+, and multicast from the driver/fabric manager (not an input).
        boolean nvsPresent = false;
        for (HostGraphs hg : perHost) {
            nvsPresent |= hg.sys().count(TopoSystem.NVS) > 0;
        }
        String nvlsEnable = NcclEnv.get(env, "NCCL_NVLS_ENABLE");
        if (nvsPresent && minCc >= 90 && nRanks > 1 && (nvlsEnable == null || NcclEnv.longOr(nvlsEnable, 2) != 0)) {
            // NVLS enters the tuner's table and its own channels; the ring's peer connections are made as before.
            cannot(
                    "cannot predict: NVLS may be enabled on this NVSwitch sm" + minCc
                            + " system (multicast support of the driver/fabric manager is not an input); set NCCL_NVLS_ENABLE=0",
                    List.of(
                            "algorithm",
                            "protocol",
                            "tuner-time",
                            "coll-channels",
                            "launch-shape",
                            "busbw",
                            "tuning-table"));
        }
        if (NcclEnv.get(env, "NCCL_TUNER_PLUGIN") != null) {
            // A tuner plugin picks algorithm, protocol, channels and threads per call; the communicator is set up as
            // before, but from 2.28 the plugin's init may change the tuner constants the printed table is computed from
            // (init.cc:1354@v2.28.9-1, &comm->tunerConstants).
            cannot(
                    "cannot predict: NCCL_TUNER_PLUGIN is set; a tuner plugin may override the cost table",
                    List.of("algorithm", "protocol", "tuner-time", "launch-shape", "busbw", "tuning-table"));
        }
        if (NcclEnv.longOr(NcclEnv.get(env, "NCCL_COLLNET_ENABLE"), 0) == 1) {
            notes.add("NCCL_COLLNET_ENABLE=1 but no CollNet plugin is described; CollNet is modelled as unsupported");
        }
        if (NcclEnv.get(env, "NCCL_GRAPH_FILE") != null) {
            cannot(
                    "cannot predict: NCCL_GRAPH_FILE replaces the graph search with a file that is not an input",
                    CommunicatorPrediction.VOIDABLE);
        }
        String nt = NcclEnv.get(env, "NCCL_NTHREADS");
        if (nt != null) {
            long v2 = NcclEnv.longOr(nt, -2);
            if (v2 > 0 && (v2 % WARP_SIZE != 0 || v2 < 64 || v2 > 512)) {
                notes.add("NCCL_NTHREADS=" + nt + " is not a multiple of 32 in 64..512; NCCL warns and replaces it");
            }
        }
    }

    /** ncclTopoTuneModel's inputs: the aligned graphs, the hosts' systems and the tuning variables of the env. */
    private TuningModel tuningModel() {
        TopoSystem sys0 = sys0();
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
        in.commNChannels = collChannels;
        in.protoEnv = NcclEnv.get(env, "NCCL_PROTO");
        in.algoEnv = NcclEnv.get(env, "NCCL_ALGO");
        in.nthreadsEnv = NcclEnv.get(env, "NCCL_NTHREADS");
        in.ll128NthreadsEnv = NcclEnv.get(env, "NCCL_LL128_NTHREADS");
        in.netOverheadEnv = NcclEnv.get(env, "NCCL_NET_OVERHEAD");
        in.threadThresholdsEnv = NcclEnv.get(env, "NCCL_THREAD_THRESHOLDS");
        return new TuningModel(in);
    }

    /** The communicator as NCCL's INIT lines describe it, with what could not be predicted. */
    private CommunicatorPrediction communicatorPrediction() {
        int nvlsChannels = 0;
        String initLine = String.format(
                Locale.ROOT,
                "%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p channels per peer",
                collChannels,
                collChannels,
                nvlsChannels,
                p2pChannels,
                p2pPerPeer);
        Postset joined = postset(perHost, hosts, ring.nChannels, ring.crossNic, table);
        List<String> ringOrders = nRanks > 64 ? List.of() : joined.ringOrders(collChannels);
        List<String> trees = nRanks > 64 ? List.of() : joined.trees(collChannels);
        if (nRanks > 64) {
            notes.add("ring orders and trees not listed for more than 64 ranks");
        }
        return new CommunicatorPrediction(
                nRanks,
                nNodes,
                collChannels,
                p2pChannels,
                p2pPerPeer,
                nvlsChannels,
                ring.summary(),
                tree.summary(),
                transport,
                ringOrders,
                initLine,
                tuning.threadThresholdsLine(),
                cannot.isEmpty() ? null : String.join("; ", cannot),
                notes,
                voids,
                trees,
                nodeGraphs(),
                peerTransports,
                tuning.allReduceTable());
    }

    /** Each node's own search where the nodes' searches differ; empty when every node found the same. */
    private List<CommunicatorPrediction.NodeGraphs> nodeGraphs() {
        GraphSummary r = perHost.get(0).ring().summary();
        GraphSummary t = perHost.get(0).tree().summary();
        boolean differ = false;
        for (HostGraphs hg : perHost) {
            differ |= !hg.ring().summary().equals(r) || !hg.tree().summary().equals(t);
        }
        if (!differ) {
            return List.of();
        }
        List<CommunicatorPrediction.NodeGraphs> out = new ArrayList<>();
        for (int h = 0; h < hosts.size(); h++) {
            HostGraphs hg = perHost.get(h);
            out.add(new CommunicatorPrediction.NodeGraphs(
                    hosts.get(h).node().hostname(),
                    hosts.get(h).ranks()[0],
                    hosts.get(h).ranks().length,
                    hg.ring().summary(),
                    hg.tree().summary()));
        }
        return out;
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
                    throw PathproofException.badInput(
                            "topology." + node.hostname() + ".pciSwitches[" + p.id()
                                    + "].parent: the parent chain loops and never reaches a CPU, so its GPUs have no path to the others");
                }
                cur = sw.get(cur.parent());
            }
        }
    }

    /**
     * What the host's peer access did to P2P, said: the pairs NVML denies (only their traffic goes through the CPU,
     * over SHM), or, where NVML's answer is not known, that P2P over PCIe was assumed allowed: drivers deny it on GeForce GPUs
     * and in many virtual machines, and NCCL asks NVML before it uses it (paths.cc@v2.28.9-1:337-365).
     */
    private void peerAccessNotes(TopoSystem sys, Topology.Node node, List<String> denied) {
        if (!denied.isEmpty()) {
            notes.add(node.hostname() + ": peer access denied by the driver (NVML) between GPUs "
                    + String.join(", ", denied) + ": only these pairs lose P2P"
                    + (NcclEnv.longOr(NcclEnv.get(env, "NCCL_SHM_DISABLE"), 0) == 1
                            ? " and fall back to the network (NCCL_SHM_DISABLE=1)"
                            : ", their traffic goes through the CPU over SHM")
                    + "; NCCL picks the transport per pair, the other pairs keep theirs (paths.cc:337-365@v2.28.9-1,"
                    + " p2pCanConnect in transport/p2p.cc:123-131)");
            return;
        }
        if (node.p2pDenied() != null) {
            return;
        }
        for (int g = 0; g < sys.count(TopoSystem.GPU); g++) {
            for (int p = 0; p < sys.count(TopoSystem.GPU); p++) {
                int t = sys.node(TopoSystem.GPU, g).paths[TopoSystem.GPU][p].type;
                if (g != p && sys.p2p[g][p] && t > NcclVersionTable.PATH_NVB) {
                    notes.add(node.hostname() + ": P2P over PCIe assumed allowed by the driver; NVML's peer-access"
                            + " status is not in the topology (GeForce drivers and many virtual machines deny it, and"
                            + " NCCL then routes GPU-to-GPU traffic through the CPU over SHM): give --peer-access with"
                            + " the output of `nvidia-smi topo -p2p r`");
                    return;
                }
            }
        }
    }

    /** What the search depends on, without hostnames, bus ids or model names (records compare structurally). */
    private static Object structureKey(Host h, boolean inter) {
        Topology.Node n = h.node();
        List<Topology.Gpu> gpus = new ArrayList<>(h.gpus().size());
        for (Topology.Gpu g : h.gpus()) {
            gpus.add(new Topology.Gpu(
                    g.index(),
                    "",
                    g.computeCapability(),
                    null,
                    g.pciParent(),
                    g.pciGen(),
                    g.pciWidth(),
                    g.nvswitchLinks()));
        }
        List<Object> nics = new ArrayList<>();
        if (inter) {
            for (Topology.Nic c : n.nics()) {
                nics.add(List.of(String.valueOf(c.pciParent()), c.speedMbps(), c.gdr()));
            }
        }
        return List.of(inter, n.cpus(), n.pciSwitches(), gpus, n.nvlinks(), nics, String.valueOf(n.p2pDenied()));
    }

    /** The hosts' searched graphs, joined into rings and trees as ncclTopoPostset does ({@link Postset}). */
    private static Postset postset(
            List<HostGraphs> perHost, List<Host> hosts, int graphChannels, int ringCrossNic, NcclVersionTable table) {
        List<Postset.HostGraph> joined = new ArrayList<>();
        for (int h = 0; h < hosts.size(); h++) {
            HostGraphs hg = perHost.get(h);
            // ranks in the graph are those of the first host with this structure; shift to this host's ranks.
            int base = hosts.get(h).ranks()[0] - hg.sys().node(TopoSystem.GPU, 0).rank;
            joined.add(new Postset.HostGraph(
                    hg.ring(), hg.tree(), hosts.get(h).gpus().size(), base));
        }
        return Postset.of(joined, graphChannels, table.ringExchange(), ringCrossNic);
    }
}

package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;
import static io.pathproof.nccl.TopoGraph.*;
import static io.pathproof.nccl.TopoSystem.*;

import io.pathproof.nccl.NcclVersionTable.NetSearch;
import java.util.Arrays;

/**
 * A port of NCCL's graph search (graph/search.cc ncclTopoCompute and the recursive search under it) over a
 * {@link TopoSystem}: a budgeted depth-first search that lays channels (rings or chains) over the links, consuming
 * each link's bandwidth as it goes, at decreasing speeds, keeping the best graph by nChannels × bwIntra (ties: fewer
 * hops). Line numbers are those of search.cc@v2.28.9-1 unless noted; where 2.22 differs the table says so.
 */
final class GraphSearch {
    private static final int FORCED_ORDER_PCI = 1;
    private static final int FORCED_ORDER_REPLAY = 2;

    private final TopoSystem sys;
    private final NcclVersionTable table;
    private final int crossNicParam;
    private final int ngpus;

    GraphSearch(TopoSystem sys, int crossNicParam) {
        this.sys = sys;
        this.table = sys.table;
        this.crossNicParam = crossNicParam;
        this.ngpus = sys.count(GPU);
        this.scratch = new int[8][ngpus];
    }

    private final int[][] scratch;
    private int[][] nextBuffers = new int[0][];

    /** The "next GPUs" array of one frame of the recursion (frames are identified by channel and step). */
    private int[] nextBuffer(int frame) {
        if (frame >= nextBuffers.length) {
            nextBuffers = Arrays.copyOf(nextBuffers, Math.max(frame + 1, nextBuffers.length * 2));
        }
        if (nextBuffers[frame] == null) {
            nextBuffers[frame] = new int[ngpus];
        }
        return nextBuffers[frame];
    }

    /** A mutable int the recursion shares, like the {@code int* time} of the C code. */
    private static final class Budget {
        int time;

        Budget(int time) {
            this.time = time;
        }
    }

    // roundf semantics: halfway cases away from zero.
    private static float roundf(float x) {
        float ax = Math.abs(x);
        float f = (float) Math.floor(ax);
        if (ax - f >= 0.5f) {
            f += 1f;
        }
        return Math.copySign(f, x);
    }

    /** SUB_ROUND(a, b) (search.cc:79): a = roundf((a-b)*1000)/1000. */
    private static float subRound(float a, float b) {
        return roundf((a - b) * 1000) / 1000;
    }

    /** followPath (search.cc:81-118): consume bw on up to maxSteps links of the path; returns the steps done. */
    private int followPath(Path path, Node start, int maxSteps, float bw) {
        float pciBw = bw;
        for (int step = 0; path.type == PATH_PHB && start.type == GPU && step < path.count; step++) {
            Node node = path.list[step].rem;
            if (node.type == CPU
                    && path.type == PATH_PHB
                    && start.type == GPU
                    && node.arch == ARCH_X86
                    && node.vendor == VENDOR_INTEL) {
                pciBw = bw * 6 / 5; // INTEL_P2P_OVERHEAD
            }
        }
        Node node = start;
        for (int step = 0; step < maxSteps; step++) {
            Link link = path.list[step];
            Link revLink = null;
            float fwBw = link.type == LINK_PCI ? pciBw : bw;
            float revBw = 0;
            if (link.rem.type == GPU && link.rem.cc < 80 && start.type != GPU) {
                revLink = link.rem.linkTo(node, link.type);
                revBw += fwBw / 8;
            }
            if (link.rem.type == CPU && link.rem.arch == ARCH_POWER && link.type == LINK_NVL) {
                revLink = link.rem.linkTo(node, link.type);
                revBw += fwBw;
            }
            if (link.bw < fwBw || (revBw != 0 && revLink.bw < revBw)) {
                return step;
            }
            link.bw = subRound(link.bw, fwBw);
            if (revBw != 0) {
                revLink.bw = subRound(revLink.bw, revBw);
            }
            node = link.rem;
        }
        return maxSteps;
    }

    /** ncclTopoFollowPath (search.cc:127-170); returns the destination, or null when bandwidth or path type fail. */
    private Node followPath(TopoGraph graph, int type1, int index1, int type2, int index2, float mult) {
        Node node2 = sys.node(type2, index2);
        if (type1 == -1) {
            return node2;
        }
        Node node1 = sys.node(type1, index1);
        Path path = node1.paths[type2][index2];
        Path revPath = node2.paths[type1][index1];
        if (path.type >= PATH_DIS) {
            return null;
        }
        boolean intra = (type1 == GPU || type1 == NVS) && (type2 == GPU || type2 == NVS);
        float bw = intra ? graph.bwIntra : graph.bwInter;
        int type = intra ? graph.typeIntra : graph.typeInter;
        if (mult == 1 && path.type > type) {
            return null;
        }
        if (mult == 1
                && (graph.pattern == PATTERN_BALANCED_TREE
                        || graph.pattern == PATTERN_TREE
                        || graph.pattern == PATTERN_SPLIT_TREE)
                && revPath.type > type) {
            return null;
        }
        bw *= mult;
        int step = followPath(path, node1, path.count, bw);
        if (step < path.count) {
            followPath(path, node1, step, -bw);
            return null;
        }
        graph.nHops += (int) (mult * path.count);
        return node2;
    }

    private int[] pciBwCache;

    private int gpuPciBw(Node gpu) {
        if (pciBwCache == null) {
            pciBwCache = new int[ngpus];
            for (int g = 0; g < ngpus; g++) {
                pciBwCache[g] = computeGpuPciBw(sys.node(GPU, g));
            }
        }
        return pciBwCache[gpu.index];
    }

    private static int computeGpuPciBw(Node gpu) {
        for (Link gl : gpu.links) {
            if (gl.type != LINK_PCI) {
                continue;
            }
            for (Link pl : gl.rem.links) {
                if (pl.rem == gpu) {
                    return (int) Math.min(gl.bw, pl.bw);
                }
            }
        }
        return -1;
    }

    /** ncclTopoSearchNextGpuSort (search.cc:253-326). */
    private int nextGpuSort(TopoGraph graph, Node gpu, int[] next, int sortNet) {
        long flag = 1L << graph.nChannels;
        Path[] paths = gpu.paths[GPU];
        Path[] netPaths = sortNet != 0 ? sys.node(NET, graph.inter[graph.nChannels * 2]).paths[GPU] : null;
        // Scores as ncclGpuScore; sorted with cmpScore (a total order, so any correct sort gives qsort's result).
        // The score arrays are scratch: they are consumed before the search recurses.
        int[] sg = scratch[0];
        int[] sStart = scratch[1];
        int[] sIntraHops = scratch[2];
        int[] sIntraBw = scratch[3];
        int[] sInterHops = scratch[4];
        int[] sInterPciBw = scratch[5];
        int[] sInterBw = scratch[6];
        int[] order = scratch[7];
        int start = gpu.index;
        int count = 0;
        for (int i = 1; i < ngpus; i++) {
            int g = (start + i) % ngpus;
            if (paths[g].count == 0) {
                continue;
            }
            if ((sys.node(GPU, g).used & flag) != 0) {
                continue;
            }
            sg[count] = g;
            sStart[count] = i;
            sIntraHops[count] = paths[g].count;
            sIntraBw[count] = (int) paths[g].bw;
            if (netPaths != null) {
                sInterHops[count] = netPaths[g].count;
                sInterPciBw[count] = gpuPciBw(sys.node(GPU, g));
                sInterBw[count] = (int) netPaths[g].bw;
            }
            count++;
        }
        for (int i = 0; i < count; i++) {
            order[i] = i;
            // insertion sort by cmpScore (search.cc:201-211)
            for (int j = i; j > 0; j--) {
                int x = order[j - 1];
                int y = order[j];
                int d = sInterBw[y] - sInterBw[x];
                if (d == 0) {
                    d = sInterPciBw[y] - sInterPciBw[x];
                }
                if (d == 0) {
                    d = sInterHops[x] - sInterHops[y];
                }
                if (d == 0) {
                    d = sIntraBw[y] - sIntraBw[x];
                }
                if (d == 0) {
                    d = sIntraHops[x] - sIntraHops[y];
                }
                if (d == 0) {
                    d = sStart[x] - sStart[y];
                }
                if (d <= 0) {
                    break;
                }
                order[j - 1] = y;
                order[j] = x;
            }
        }
        boolean sameIntra = true;
        for (int i = 1; i < count; i++) {
            if (sIntraBw[order[i]] != sIntraBw[order[0]] || sIntraHops[order[i]] != sIntraHops[order[0]]) {
                sameIntra = false;
            }
        }
        if (sortNet == -1 && sameIntra) {
            for (int i = 0; i < count; i++) {
                next[i] = sg[order[count - 1 - i]];
            }
        } else {
            for (int i = 0; i < count; i++) {
                next[i] = sg[order[i]];
            }
        }
        if (sys.count(NVS) > 0) {
            // NVSwitches prefer when we talk to a limited set of peers. Try to use neighbors first.
            int index = gpu.index;
            int prevGpu = (index - 1 + ngpus) % ngpus;
            int nextGpu = (index + 1) % ngpus;
            int[] first = new int[2];
            int firstCount;
            if (graph.pattern == PATTERN_RING) {
                first[0] = nextGpu;
                first[1] = prevGpu;
                firstCount = 2;
            } else if (graph.pattern == PATTERN_SPLIT_TREE || graph.pattern == PATTERN_BALANCED_TREE) {
                first[0] = prevGpu;
                first[1] = nextGpu;
                firstCount = 2;
            } else {
                first[0] = nextGpu;
                firstCount = 1;
            }
            if (nextGpu == prevGpu && firstCount == 2) {
                firstCount = 1;
            }
            int real = 0;
            for (int f = 0; f < firstCount; f++) {
                int i;
                for (i = 0; i < count && next[i] != first[f]; i++) {
                    // find
                }
                if (i < count) {
                    for (; i > 0; i--) {
                        next[i] = next[i - 1];
                    }
                    next[0] = first[f];
                    real++;
                }
            }
            return real;
        }
        return count;
    }

    private int replayGetGpu(TopoGraph graph, int step) {
        int nextRank = graph.intra[(graph.nChannels - 1) * ngpus + step + 1];
        for (int i = 0; i < ngpus; i++) {
            if (sys.node(GPU, i).rank == nextRank) {
                return i;
            }
        }
        throw new IllegalStateException("replay: rank " + nextRank + " not found");
    }

    private void tryGpu(
            TopoGraph graph,
            TopoGraph save,
            int step,
            int backToNet,
            int backToFirstRank,
            int forcedOrder,
            Budget time,
            int type,
            int index,
            int g) {
        long flag = 1L << graph.nChannels;
        Node gpu = followPath(graph, type, index, GPU, g, 1);
        if (gpu != null) {
            gpu.used ^= flag;
            recGpu(graph, save, gpu, step, backToNet, backToFirstRank, forcedOrder, time);
            gpu.used ^= flag;
            followPath(graph, type, index, GPU, g, -1);
        }
    }

    /** ncclTopoCompareGraphs (search.cc@v2.22.3-1:416-435). */
    private static boolean better(TopoGraph graph, TopoGraph ref) {
        if (graph.nChannels < graph.minChannels) {
            return false;
        }
        float a = graph.nChannels * graph.bwIntra;
        float b = ref.nChannels * ref.bwIntra;
        if (a > b) {
            return true;
        }
        if (a < b) {
            return false;
        }
        return graph.pattern == ref.pattern && graph.crossNic == ref.crossNic && graph.nHops < ref.nHops;
    }

    private final int[][][] netLists = new int[PATH_DIS + 2][][];

    /** selectNets memoized per (typeInter, gpu): its inputs (paths, local NETs) are fixed during the search. */
    private int[] selectNets(int typeInter, int gpu) {
        int[][] row = netLists[typeInter + 1];
        if (row == null) {
            row = new int[ngpus + 1][];
            netLists[typeInter + 1] = row;
        }
        int[] nets = row[gpu + 1];
        if (nets == null) {
            nets = computeSelectNets(typeInter, gpu);
            row[gpu + 1] = nets;
        }
        return nets;
    }

    /** ncclTopoSelectNets (search.cc@v2.28.9-1:475-555, channel-first order, NETDEVS_POLICY=AUTO). */
    private int[] computeSelectNets(int typeInter, int gpu) {
        int[] nets = new int[sys.count(NET)];
        int netCount = 0;
        for (int g = 0; g < ngpus; g++) {
            if (gpu != -1 && gpu != g) {
                continue;
            }
            int[] local = new int[table.maxChannels()];
            int localCount = 0;
            for (int c = 0; c < table.maxChannels(); c++) {
                local[localCount] = sys.localNet(g, c);
                if (localCount > 0 && local[localCount] == local[0]) {
                    break;
                }
                localCount++;
            }
            for (int i = 0; i < localCount; i++) {
                netCount = appendUnique(nets, netCount, local[i]);
            }
        }
        for (int t = 0; t <= typeInter; t++) {
            for (int g = 0; g < ngpus; g++) {
                if (gpu != -1 && gpu != g) {
                    continue;
                }
                Path[] paths = sys.node(GPU, g).paths[NET];
                for (int n = 0; n < sys.count(NET) && n < table.maxChannels(); n++) {
                    if (paths[n].type == t) {
                        netCount = appendUnique(nets, netCount, n);
                    }
                }
            }
        }
        return Arrays.copyOf(nets, netCount);
    }

    private static int appendUnique(int[] nets, int netCount, int n) {
        if (n < 0) {
            return netCount;
        }
        for (int i = 0; i < netCount; i++) {
            if (nets[i] == n) {
                return netCount;
            }
        }
        nets[netCount] = n;
        return netCount + 1;
    }

    /**
     * ncclTopoSearchCheckNet (search.cc@v2.28.9-1:559-573), without MNNVL rails; 2.22 inlines the same tests with
     * crossNic 0/1 (the backToNet loop of ncclTopoSearchRecGpu, search.cc@v2.22.3-1).
     */
    private boolean checkNet(TopoGraph graph, Node startNet, int n, int step) {
        Node net = sys.node(NET, n);
        if (graph.pattern == PATTERN_TREE && net != startNet) {
            return false;
        }
        if (!table.crossNicTwo()) {
            if (graph.crossNic != 1 && (net.asic != startNet.asic || net.port != startNet.port)) {
                return false;
            }
            if (graph.crossNic != 0 && (graph.nChannels & 1) != 0 && n != graph.inter[(graph.nChannels - 1) * 2]) {
                return false;
            }
            return !(graph.pattern == PATTERN_BALANCED_TREE && step != 0 && n != graph.inter[graph.nChannels * 2 + 1]);
        }
        if (graph.pattern == PATTERN_RING && graph.crossNic == 2) {
            if ((graph.nChannels & 1) != 0 && n != graph.inter[(graph.nChannels - 1) * 2]) {
                return false;
            }
        } else if (graph.crossNic == 0) {
            if (net.asic != startNet.asic || net.port != startNet.port) {
                return false;
            }
        }
        return !(graph.pattern == PATTERN_BALANCED_TREE && step != 0 && n != graph.inter[graph.nChannels * 2 + 1]);
    }

    /** ncclTopoSearchRecGpu (search.cc@v2.28.9-1:595-668). */
    private void recGpu(
            TopoGraph graph,
            TopoGraph save,
            Node gpu,
            int step,
            int backToNet,
            int backToFirstRank,
            int forcedOrder,
            Budget time) {
        if (time.time <= 0) {
            return;
        }
        time.time--;
        if (step == ngpus) {
            graph.nChannels++;
            if (better(graph, save)) {
                save.copyFrom(graph);
                if (graph.nChannels == graph.maxChannels) {
                    time.time = -1;
                }
            }
            if (graph.nChannels < graph.maxChannels) {
                searchRec(graph, save, time);
            }
            graph.nChannels--;
            return;
        }
        graph.intra[graph.nChannels * ngpus + step] = gpu.rank;
        int g = gpu.index;
        if (step == backToNet) {
            if (sys.inter) {
                Node startNet = sys.node(NET, graph.inter[graph.nChannels * 2]);
                int[] nets = selectNets(graph.typeInter, g);
                for (int n : nets) {
                    if (!checkNet(graph, startNet, n, step)) {
                        continue;
                    }
                    int nextBackToNet = -1;
                    float bwInterSave = graph.bwInter;
                    if (graph.pattern == PATTERN_BALANCED_TREE) {
                        if (step == 0) {
                            nextBackToNet = 1;
                        }
                        graph.bwInter /= 2;
                    }
                    Node net = followPath(graph, GPU, g, NET, n, 1);
                    graph.bwInter = bwInterSave;
                    if (net != null) {
                        graph.inter[graph.nChannels * 2 + 1] = n;
                        recGpu(graph, save, gpu, step, nextBackToNet, backToFirstRank, forcedOrder, time);
                        if (graph.pattern == PATTERN_BALANCED_TREE) {
                            graph.bwInter /= 2;
                        }
                        followPath(graph, GPU, g, NET, n, -1);
                        graph.bwInter = bwInterSave;
                    }
                }
            }
        } else if (step < ngpus - 1) {
            int[] next = nextBuffer(graph.nChannels * ngpus + step);
            int count;
            if (forcedOrder == FORCED_ORDER_PCI) {
                next[0] = step + 1;
                count = 1;
            } else if (forcedOrder == FORCED_ORDER_REPLAY) {
                next[0] = replayGetGpu(graph, step);
                count = 1;
            } else {
                count = nextGpuSort(graph, gpu, next, backToNet == -1 ? 0 : backToNet == step + 1 ? 1 : -1);
            }
            for (int i = 0; i < count; i++) {
                tryGpu(graph, save, step + 1, backToNet, backToFirstRank, forcedOrder, time, GPU, g, next[i]);
            }
        } else if (step == backToFirstRank) {
            int p = -1;
            int firstRank = graph.intra[graph.nChannels * ngpus];
            for (int i = 0; i < ngpus; i++) {
                if (sys.node(GPU, i).rank == firstRank) {
                    p = i;
                }
            }
            Node firstGpu = followPath(graph, GPU, g, GPU, p, 1);
            if (firstGpu != null) {
                recGpu(graph, save, firstGpu, step + 1, backToNet, -1, forcedOrder, time);
                followPath(graph, GPU, g, GPU, p, -1);
            }
        } else {
            recGpu(graph, save, gpu, ngpus, -1, -1, forcedOrder, time);
        }
    }

    /** ncclTopoSearchRecNet (search.cc@v2.28.9-1:669-750; 2.22: search.cc@v2.22.3-1:598-687). */
    private void recNet(TopoGraph graph, TopoGraph save, int backToNet, int backToFirstRank, Budget time) {
        int bw = (int) graph.bwInter;
        int[] nets = selectNets(graph.typeInter, -1);
        int netCount = nets.length;
        for (int i = 0; i < netCount; i++) {
            int n = nets[(graph.nChannels + i) % netCount];
            Node net = sys.node(NET, n);
            if (net.netBw < bw) {
                continue;
            }
            if (table.crossNicTwo()) {
                if (graph.pattern == PATTERN_RING
                        && graph.crossNic == 2
                        && (graph.nChannels & 1) != 0
                        && n != graph.inter[(graph.nChannels - 1) * 2 + 1]) {
                    continue;
                }
            } else if (graph.crossNic != 0
                    && (graph.nChannels & 1) != 0
                    && n != graph.inter[(graph.nChannels - 1) * 2 + 1]) {
                continue;
            }
            graph.inter[graph.nChannels * 2] = n;
            graph.latencyInter = net.latency;
            for (Node o : sys.nodes[NET]) {
                if (o.asic == net.asic && o.port == net.port) {
                    o.netBw -= bw;
                }
            }
            boolean skipRestore = false;
            if (table.netSearch() == NetSearch.LOCAL_GPU_FIRST) {
                // search.cc@v2.28.9-1:714-740 (@v2.27.5-1:690-715)
                if (graph.nChannels > 0 && graph.sameChannels == 1) {
                    int g = replayGetGpu(graph, -1);
                    tryGpu(graph, save, 0, backToNet, backToFirstRank, FORCED_ORDER_REPLAY, time, NET, n, g);
                } else {
                    tryPciOrderFirst(graph, save, backToNet, backToFirstRank, time, n);
                    int localGpu = net.localGpu;
                    if (localGpu != -1) {
                        tryGpu(graph, save, 0, backToNet, backToFirstRank, 0, time, NET, n, localGpu);
                    }
                    int[] localGpus = localGpusOfNet(n);
                    if (localGpus.length == 0) {
                        skipRestore = true; // search.cc@v2.28.9-1:736 "continue" before the bandwidth is given back
                    } else {
                        for (int lg : localGpus) {
                            if (lg != localGpu) {
                                tryGpu(graph, save, 0, backToNet, backToFirstRank, 0, time, NET, n, lg);
                            }
                        }
                    }
                }
            } else {
                if (graph.nChannels > 0) {
                    int g = replayGetGpu(graph, -1);
                    tryGpu(graph, save, 0, backToNet, backToFirstRank, FORCED_ORDER_REPLAY, time, NET, n, g);
                }
                if (graph.nChannels == 0 || graph.sameChannels == 0) {
                    tryPciOrderFirst(graph, save, backToNet, backToFirstRank, time, n);
                    if (table.netSearch() == NetSearch.LOCAL_GPUS) {
                        // search.cc@v2.27.3-1:660-667: the NIC's local GPUs (best bandwidth, then path type) in index
                        // order; a NIC
                        // with none is skipped before its bandwidth is given back.
                        int[] localGpus = localGpusOfNet(n);
                        if (localGpus.length == 0) {
                            skipRestore = true;
                        }
                        for (int lg : localGpus) {
                            tryGpu(graph, save, 0, backToNet, backToFirstRank, 0, time, NET, n, lg);
                        }
                    } else {
                        // search.cc@v2.22.3-1:659-676, @v2.26.2-1:660-679: the GPUs with the best bandwidth, then
                        // fewest hops.
                        float maxBw = 0;
                        int minHops = 0xfffffff;
                        Path[] paths = net.paths[GPU];
                        for (int g = 0; g < ngpus; g++) {
                            if (paths[g].bw > maxBw) {
                                maxBw = paths[g].bw;
                                minHops = paths[g].count;
                            } else if (paths[g].bw == maxBw && paths[g].count < minHops) {
                                minHops = paths[g].count;
                            }
                        }
                        if (maxBw >= bw) {
                            for (int k = 0; k < ngpus; k++) {
                                int g = (graph.nChannels + k) % ngpus;
                                if (paths[g].bw == maxBw && paths[g].count == minHops) {
                                    tryGpu(graph, save, 0, backToNet, backToFirstRank, 0, time, NET, n, g);
                                }
                            }
                        }
                    }
                }
            }
            if (!skipRestore) {
                for (Node o : sys.nodes[NET]) {
                    if (o.asic == net.asic && o.port == net.port) {
                        o.netBw += bw;
                    }
                }
            }
        }
    }

    /** "Always try the PCI order first to set a reference, but don't count in the timeout nor let it run for long." */
    private void tryPciOrderFirst(
            TopoGraph graph, TopoGraph save, int backToNet, int backToFirstRank, Budget time, int n) {
        if (graph.nChannels == 0 && sys.count(NVS) == 0) {
            Budget t = new Budget(1 << 10);
            tryGpu(graph, save, 0, backToNet, backToFirstRank, FORCED_ORDER_PCI, t, NET, n, 0);
            if (t.time == -1) {
                time.time = -1;
            }
        }
    }

    private int[][] localGpusCache;

    private int[] localGpusOfNet(int n) {
        if (localGpusCache == null) {
            localGpusCache = new int[sys.count(NET)][];
        }
        if (localGpusCache[n] == null) {
            localGpusCache[n] = sys.local(NET, n, GPU);
        }
        return localGpusCache[n];
    }

    /** ncclTopoSearchRec (search.cc@v2.28.9-1:785-812). */
    private void searchRec(TopoGraph graph, TopoGraph save, Budget time) {
        int backToNet;
        int backToFirstRank;
        if (sys.inter) {
            backToNet = graph.pattern == PATTERN_RING ? ngpus - 1 : graph.pattern == PATTERN_SPLIT_TREE ? 1 : 0;
            backToFirstRank = -1;
            recNet(graph, save, backToNet, backToFirstRank, time);
            return;
        }
        backToNet = -1;
        backToFirstRank = graph.pattern == PATTERN_RING ? ngpus - 1 : -1;
        if (graph.nChannels == 0) {
            tryGpu(graph, save, 0, backToNet, backToFirstRank, FORCED_ORDER_PCI, time, -1, -1, 0);
        } else {
            int g = replayGetGpu(graph, -1);
            tryGpu(graph, save, 0, backToNet, backToFirstRank, FORCED_ORDER_REPLAY, time, -1, -1, g);
        }
        if (graph.sameChannels == 0 || graph.nChannels == 0) {
            for (int g = 0; g < ngpus; g++) {
                tryGpu(graph, save, 0, backToNet, backToFirstRank, 0, time, -1, -1, g);
            }
        }
    }

    /** ncclTopoDupChannels (search.cc@v2.28.9-1:970-984). */
    private void dupChannels(TopoGraph graph, int ccMin) {
        if (graph.nChannels == 0 || graph.pattern == PATTERN_NVLS || graph.bwIntra < 25.0) {
            return;
        }
        if (ccMin > 80 && graph.bwIntra < 50.0 && graph.nChannels > 4) {
            return;
        }
        int dup = Math.min(graph.nChannels * 2, graph.maxChannels);
        System.arraycopy(graph.intra, 0, graph.intra, graph.nChannels * ngpus, (dup - graph.nChannels) * ngpus);
        System.arraycopy(graph.inter, 0, graph.inter, graph.nChannels * 2, (dup - graph.nChannels) * 2);
        int div = (dup + graph.nChannels - 1) / graph.nChannels;
        graph.bwIntra /= div;
        graph.bwInter /= div;
        graph.nChannels = dup;
    }

    private int nextLevel(int type) {
        int[] levels = table.pathLevels();
        for (int i = 0; i < levels.length - 1; i++) {
            if (levels[i] == type) {
                return levels[i + 1];
            }
        }
        return PATH_DIS;
    }

    /** ncclTopoCompute (search.cc@v2.28.9-1:991-1205; @v2.22.3-1:919-1104). Fills {@code graph}. */
    void compute(TopoGraph graph) {
        int crossNic = sys.count(NET) > 1
                        && (graph.pattern == PATTERN_RING
                                || graph.pattern == PATTERN_BALANCED_TREE
                                || graph.pattern == PATTERN_SPLIT_TREE)
                ? crossNicParam
                : 0;
        graph.crossNic = crossNic == 1 ? 1 : 0;
        graph.bwIntra = 0;
        graph.bwInter = 0;
        graph.latencyInter = 0;
        int minTypeIntra;
        int minTypeInter;
        int maxTypeIntra;
        int maxTypeInter;
        int ccMin = sys.minCc();
        if (table.searchBoundsFromSystem()) {
            // search.cc@v2.26.2-1:937-947, @v2.28.9-1:1000-1013
            minTypeIntra = PATH_LOC;
            minTypeInter = PATH_PIX;
            maxTypeIntra = PATH_SYS;
            maxTypeInter = PATH_SYS;
            if (ngpus > 1) {
                minTypeIntra = sys.gpuPathBound(GPU, false);
                maxTypeIntra = sys.gpuPathBound(GPU, true);
            }
            if (sys.inter) {
                minTypeInter = sys.gpuPathBound(NET, false);
                maxTypeInter = sys.gpuPathBound(NET, true);
                maxTypeIntra = maxTypeInter;
            }
            if (table.preHopperMaxTypeInterSys() && ccMin < 90) {
                maxTypeInter = PATH_SYS;
            }
        } else {
            minTypeIntra = ngpus == 1 ? PATH_LOC : PATH_NVL;
            minTypeInter = PATH_PIX;
            maxTypeIntra = sys.inter ? -1 : PATH_SYS; // 2.22: maxTypeIntra = NET ? typeInter : SYS (set in the loop)
            maxTypeInter = PATH_SYS;
        }
        graph.typeIntra = minTypeIntra;
        graph.typeInter = minTypeInter;
        graph.nChannels = 0;
        int trySameChannels = 1;
        graph.sameChannels = trySameChannels;

        if (ngpus == 1 && graph.pattern != PATTERN_RING) {
            graph.pattern = PATTERN_TREE;
        }
        if (table.splitNvLinkForcesTwoChannels() && graph.pattern == PATTERN_RING && sys.splitNvLink()) {
            if (graph.maxChannels >= 2 && graph.minChannels == 1) {
                graph.minChannels = 2;
            }
        }
        Node cpu0 = sys.node(CPU, 0);
        TopoGraph tmp = graph.copy();
        float[] speedArray = sys.inter ? table.speedArrayInter(ccMin) : table.speedArrayIntra(ccMin);
        int nspeeds = speedArray.length;
        int pass = 1;
        int speedIndex = 0;
        float maxBw = sys.maxBw;
        float totalBw = sys.totalBw;
        if (ngpus > 1 && graph.pattern != PATTERN_RING) {
            totalBw *= ngpus * 1.0 / (ngpus - 1);
        }
        while ((speedArray[speedIndex] > maxBw || speedArray[speedIndex] * graph.minChannels > totalBw)
                && speedIndex < nspeeds - 1) {
            speedIndex++;
        }
        tmp.bwIntra = tmp.bwInter = speedArray[speedIndex];
        long globalTimeout = SEARCH_GLOBAL_TIMEOUT;

        Budget time;
        while (true) {
            // search:
            time = new Budget(
                    tmp.sameChannels == 1
                            ? SEARCH_TIMEOUT_SAMECHANNELS
                            : tmp.pattern == PATTERN_TREE ? SEARCH_TIMEOUT_TREE : SEARCH_TIMEOUT);
            tmp.nChannels = 0;
            globalTimeout -= time.time;
            searchRec(tmp, graph, time);
            boolean done = time.time == -1 || graph.nChannels * graph.bwInter >= sys.totalBw;
            if (!done && pass == 1) {
                if (tmp.sameChannels == 1
                        && !(cpu0.arch == ARCH_X86 && cpu0.vendor == VENDOR_AMD && tmp.typeIntra == PATH_SYS)) {
                    tmp.sameChannels = 0;
                    continue;
                }
                tmp.sameChannels = trySameChannels;
                if (time.time != -1) {
                    globalTimeout += time.time;
                } else {
                    globalTimeout = SEARCH_GLOBAL_TIMEOUT;
                }
                if (globalTimeout < 0 && graph.nChannels > 0) {
                    done = true;
                }
                if (!done) {
                    if (ccMin >= 90 && tmp.pattern == PATTERN_BALANCED_TREE) {
                        tmp.pattern = PATTERN_TREE;
                        continue;
                    }
                    tmp.pattern = graph.pattern;
                    int maxIntra = sys.inter ? tmp.typeInter : maxTypeIntra;
                    if (tmp.typeIntra < maxIntra && (graph.nChannels == 0 || tmp.typeIntra < graph.typeIntra)) {
                        tmp.typeIntra = nextLevel(tmp.typeIntra);
                        if (tmp.typeIntra < PATH_DIS || !table.relaxStopsBeforeDis()) {
                            continue;
                        }
                    }
                    tmp.typeIntra = minTypeIntra;
                    if (sys.inter
                            && tmp.typeInter < maxTypeInter
                            && (graph.nChannels == 0 || tmp.typeInter < graph.typeInter || tmp.typeInter < PATH_PXN)) {
                        tmp.typeInter = nextLevel(tmp.typeInter);
                        if (tmp.typeInter < PATH_DIS || !table.relaxStopsBeforeDis()) {
                            continue;
                        }
                    }
                    tmp.typeInter = minTypeInter;
                    if (crossNic == 2
                            && tmp.crossNic == 0
                            && (!table.crossNicTwo()
                                    || graph.pattern == PATTERN_RING
                                    || graph.pattern == PATTERN_BALANCED_TREE)) {
                        tmp.crossNic = table.crossNicTwo() ? 2 : 1;
                        continue;
                    }
                    tmp.crossNic = crossNic == 1 ? 1 : 0;
                    if (speedIndex < nspeeds - 1
                            && (graph.nChannels == 0 || speedArray[speedIndex + 1] / graph.bwInter > .49)) {
                        tmp.bwInter = tmp.bwIntra = speedArray[++speedIndex];
                        continue;
                    }
                    speedIndex = 0;
                    while (speedArray[speedIndex] > maxBw && speedIndex < nspeeds - 1) {
                        speedIndex++;
                    }
                    tmp.bwIntra = tmp.bwInter = speedArray[speedIndex];
                }
            }
            // done:
            if (pass == 1) {
                time.time = -1;
                dupChannels(graph, ccMin);
                tmp.copyFrom(graph);
                speedIndex = 0;
                while (speedArray[speedIndex] > graph.bwInter && speedIndex < nspeeds - 1) {
                    speedIndex++;
                }
                tmp.bwIntra = tmp.bwInter = speedArray[speedIndex];
                tmp.minChannels = graph.nChannels;
                pass = 2;
            }
            if (pass == 2) {
                if (time.time != 0 && speedIndex > 0) {
                    if (graph.pattern == PATTERN_RING) {
                        tmp.bwIntra = tmp.bwInter = speedArray[--speedIndex];
                        continue;
                    } else if (tmp.bwIntra == graph.bwIntra && tmp.bwIntra < tmp.bwInter * 2) {
                        tmp.bwIntra = speedArray[--speedIndex];
                        continue;
                    }
                }
                tmp.copyFrom(graph);
            }
            break;
        }
        if (graph.nChannels == 0 && !graph.collNet) {
            // "Could not find a path for pattern %d, falling back to simple order"
            for (int i = 0; i < ngpus; i++) {
                graph.intra[i] = sys.node(GPU, i).rank;
            }
            graph.inter[0] = graph.inter[1] = 0;
            graph.bwIntra = graph.bwInter = 0.1f;
            graph.typeIntra = graph.typeInter = PATH_SYS;
            graph.nChannels = 1;
        }
    }
}

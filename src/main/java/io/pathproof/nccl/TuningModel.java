package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;

import io.pathproof.core.PathproofException;
import java.util.Locale;

/**
 * ncclTopoTuneModel and ncclTopoGetAlgoTime (graph/tuning.cc) for AllReduce: per (algorithm, protocol) a latency (µs)
 * and an algorithm bandwidth (GB/s) from the graphs' channels × bwIntra, then time = lat + bytes / (1000 × bw).
 * NCCL's types are kept: busBw, ratio, latency and time are {@code float}; the {@code std::min} calls take a double
 * (a float times a double literal) and the result is stored back into a float. Line numbers cite
 * tuning.cc@v2.22.3-1 (2.28 in brackets).
 */
final class TuningModel {
    static final int HW_NVLINK = 0;
    static final int HW_PCI = 1;
    static final int HW_NET = 2;
    static final int ALLREDUCE = 4; // ncclFuncAllReduce

    final NcclVersionTable table;
    final int nRanks;
    final int nNodes;
    final float[][] bandwidth;
    final float[][] latency;
    final int[][] maxThreads;
    final long[][] threadThresholds;
    final boolean[] algoSkipped;
    final int minCc;
    final int commNChannels;

    static final class Inputs {
        NcclVersionTable table;
        int nRanks;
        int nNodes;
        int minCc;
        int maxCc;
        TopoGraph ring;
        TopoGraph tree;
        int maxTreePattern;
        int cpuArch;
        int cpuVendor;
        boolean cpuMixedVendor;
        boolean cpuMixedArch;
        boolean cuda118;
        int commNChannels;
        String protoEnv;
        String algoEnv;
        String nthreadsEnv;
        String ll128NthreadsEnv;
        String netOverheadEnv;
        String threadThresholdsEnv;
    }

    TuningModel(Inputs in) {
        this.table = in.table;
        this.nRanks = in.nRanks;
        this.nNodes = in.nNodes;
        this.minCc = in.minCc;
        this.commNChannels = in.commNChannels;
        int na = table.numAlgorithms();
        bandwidth = new float[na][3];
        latency = new float[na][3];
        maxThreads = new int[na][3];
        threadThresholds = new long[na][3];
        algoSkipped = new boolean[na];
        TopoGraph[] graphs = graphs(in);
        setMaxThreads(in);
        setThreadThresholds(in.threadThresholdsEnv);
        if (nRanks <= 1) {
            return;
        }
        // comm->cpuArch / cpuVendor: rank 0's first CPU; from 2.24 MIXED when the hosts' CPUs differ
        // (init.cc@v2.24.3-1:991-998).
        int cpuArch = table.mixedCpus() && in.cpuMixedArch ? TopoSystem.ARCH_MIXED : in.cpuArch;
        int cpuVendor = table.mixedCpus() && in.cpuMixedVendor ? TopoSystem.VENDOR_MIXED : in.cpuVendor;
        setBandwidths(graphs, in, cpuVendor);
        setLatencies(graphs, in, cpuArch, cpuVendor);
        applyEnables(graphs, in);
        // updateCollCostTable (enqueue.cc@v2.22.3-1:1543-1578): CollNet and NVLS rows are never compared here.
        for (int a = 0; a < na; a++) {
            algoSkipped[a] = a == COLLNET_DIRECT || a == COLLNET_CHAIN || a == NVLS || a == NVLS_TREE || a == PAT;
        }
    }

    /** The graph of each algorithm: the searched ring and tree; CollNet and NVLS graphs are not searched. */
    private TopoGraph[] graphs(Inputs in) {
        TopoGraph[] graphs = new TopoGraph[table.numAlgorithms()];
        TopoGraph empty = new TopoGraph(-1, 0, 0, 0, 1, 1);
        for (int a = 0; a < graphs.length; a++) {
            // CollNet and NVLS graphs are zeroed and not searched: CollNet off, NVLS off (init.cc:1031-1058@v2.28.9-1;
            // see NcclModel notes). Zeroed, their typeIntra is PATH_LOC (PCI latencies) and latencyInter 0.
            graphs[a] = empty;
        }
        graphs[TREE] = in.tree;
        graphs[RING] = in.ring;
        return graphs;
    }

    /** Threads per block by algorithm and protocol, NCCL_NTHREADS and NCCL_LL128_NTHREADS applied. */
    private void setMaxThreads(Inputs in) {
        // tuning.cc:119-131 [2.28: 231-243]
        int simpleDefault = in.ring.bwIntra * in.ring.nChannels <= PCI_BW ? 256 : NCCL_SIMPLE_MAX_NTHREADS;
        long nt = NcclEnv.longOr(in.nthreadsEnv, -2);
        long nt128 = NcclEnv.longOr(in.ll128NthreadsEnv, -2);
        maxThreads[RING][SIMPLE] = getNthreads(nt, 2 * WARP_SIZE, NCCL_SIMPLE_MAX_NTHREADS, simpleDefault);
        maxThreads[TREE][SIMPLE] = getNthreads(nt, 2 * WARP_SIZE, NCCL_SIMPLE_MAX_NTHREADS, NCCL_SIMPLE_MAX_NTHREADS);
        for (int a = COLLNET_DIRECT; a <= NVLS_TREE; a++) {
            maxThreads[a][SIMPLE] = NCCL_MAX_NTHREADS;
        }
        maxThreads[RING][LL] =
                maxThreads[TREE][LL] = getNthreads(nt, 2 * WARP_SIZE, NCCL_LL_MAX_NTHREADS, NCCL_LL_MAX_NTHREADS);
        maxThreads[RING][LL128] = maxThreads[TREE][LL128] =
                getNthreads(nt128, NCCL_LL128_MAX_NTHREADS / 4, NCCL_LL128_MAX_NTHREADS, NCCL_LL128_MAX_NTHREADS);
    }

    /** The thread thresholds and NCCL_THREAD_THRESHOLDS over them. */
    private void setThreadThresholds(String threadThresholdsEnv) {
        // tuning.cc:374-395 [2.28: 533-555] thread thresholds
        for (long[] row : threadThresholds) {
            row[LL] = NCCL_LL_THREAD_THRESHOLD;
            row[LL128] = NCCL_LL128_THREAD_THRESHOLD;
            row[SIMPLE] = NCCL_SIMPLE_THREAD_THRESHOLD;
        }
        threadThresholds[RING][LL] *= nRanks;
        threadThresholds[COLLNET_DIRECT][SIMPLE] = 512;
        threadThresholds[COLLNET_CHAIN][SIMPLE] = 512;
        if (threadThresholdsEnv != null) {
            String[] f = threadThresholdsEnv.trim().split("\\s+");
            for (int i = 0; i < Math.min(6, f.length); i++) {
                long v = NcclEnv.longOr(f[i], -2);
                if (v >= 0) {
                    threadThresholds[i / 3][i % 3] = v;
                }
            }
        }
    }

    /**
     * Whether AllReduce has a cost for (a, p): no PAT [2.28: 277], NVLS only with Simple (tuning.cc:170 [2.28: 280]);
     * from 2.28 NVLS and NVLSTree only with a graph of two channels or more [2.28: 287-288]. Other cells stay 0/0, as
     * in NCCL's zeroed comm.
     */
    private boolean costed(int a, int p, TopoGraph[] graphs) {
        boolean nvls = a == NVLS || a == NVLS_TREE;
        return a != PAT && (!nvls || p == SIMPLE) && !(nvls && table.nvlsNeedsTwoChannels() && graphs[a].nChannels < 2);
    }

    /**
     * The algorithm bandwidth of each (a, p): the graph's channels × bandwidth per channel, refined per algorithm and
     * protocol and capped by the per-channel maxima of the compute capability, then converted from bus to algorithm
     * bandwidth.
     */
    private void setBandwidths(TopoGraph[] graphs, Inputs in, int cpuVendor) {
        int compCapIndex = table.compCapIndex(in.minCc);
        int index2 = nNodes <= 2 ? nNodes - 1 : 2;
        // AMD and MIXED take the AMD row (tuning.cc@v2.24.3-1:214).
        boolean amdLike = cpuVendor == TopoSystem.VENDOR_AMD || cpuVendor == TopoSystem.VENDOR_MIXED;
        int index1 = nNodes == 1 ? compCapIndex : amdLike ? 1 : 0;
        double llMaxBw = table.llMaxBws()[index1][index2];
        double perChMaxTreeBw = table.perChMaxTreeBws()[compCapIndex][index2];
        double perChMaxRingLL128Bw = table.perChMaxRingLL128Bws()[compCapIndex][index2];
        double perChMaxTreeLL128Bw = table.perChMaxTreeLL128Bws()[compCapIndex][index2];
        float ppn = (float) nRanks / nNodes;
        // tuning.cc@v2.26.2-1:261 comm->maxTreePattern over all ranks; before, this rank's tree graph
        int treePattern = table.maxTreePattern() ? in.maxTreePattern : graphs[TREE].pattern;
        for (int a = 0; a < table.numAlgorithms(); a++) {
            for (int p = 0; p < 3; p++) {
                if (!costed(a, p, graphs)) {
                    continue;
                }
                boolean collnet = a == COLLNET_DIRECT || a == COLLNET_CHAIN;
                float bw = nNodes <= 2 || collnet ? graphs[a].bwIntra : graphs[a].bwInter;
                float busBw = graphs[a].nChannels * bw;
                // Various model refinements (tuning.cc:178-185 [2.28: 304-311])
                if (a == RING && p == LL) {
                    busBw = (float) Math.min(llMaxBw, busBw * .5);
                }
                if (a == RING && p == LL128) {
                    double f = table.ringLL128LowPpnDiscount() && ppn < 2 ? 0.7 : 0.92;
                    busBw = (float) Math.min(busBw * f, graphs[a].nChannels * perChMaxRingLL128Bw);
                }
                if (a == TREE) {
                    busBw = (float) Math.min(busBw * .92, graphs[a].nChannels * perChMaxTreeBw);
                }
                if (a == TREE && p == LL) {
                    busBw = (float) Math.min(busBw * 1.0 / 3.8, llMaxBw);
                }
                if (a == TREE && p == LL128) {
                    busBw = (float) Math.min(
                            busBw * (nNodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                            graphs[a].nChannels * perChMaxTreeLL128Bw);
                }
                if (a == TREE && treePattern == TopoGraph.PATTERN_TREE) {
                    busBw *= .85;
                }
                if (collnet && p != SIMPLE) {
                    busBw = 0;
                }
                busBw *= busToAlgoRatio(a);
                bandwidth[a][p] = busBw;
            }
        }
    }

    /** Bus bandwidth to algorithm bandwidth (tuning.cc:211-217 [2.28: 339-344]). */
    private float busToAlgoRatio(int a) {
        int nsteps = 2 * (nRanks - 1);
        float ratio = 1.0f;
        if (a == RING) {
            ratio *= (1.0 * nRanks) / nsteps;
        } else if (a == NVLS || a == NVLS_TREE) {
            ratio *= table.nvlsRatioRanksOverSteps() ? (1.0 * nRanks) / nsteps : 5.0 / 6.0;
        } else {
            ratio *= .5;
        }
        return ratio;
    }

    /**
     * The latency of each (a, p): the base latency plus the hardware latency of each step, NVLink or PCI inside a
     * host, NET between hosts; a ring step costs at least the network overhead once the ring crosses hosts.
     */
    private void setLatencies(TopoGraph[] graphs, Inputs in, int cpuArch, int cpuVendor) {
        float[][][] hwLat = hwLat(cpuArch);
        float ppn = (float) nRanks / nNodes;
        int nsteps = 2 * (nRanks - 1);
        int nInterSteps =
                table.interStepsTwoPerNode() ? (nNodes > 1 ? 2 * nNodes : 0) : (nNodes == 1 ? 0 : 2 * (nNodes - 1));
        for (int a = 0; a < table.numAlgorithms(); a++) {
            int intraHw = graphs[a].typeIntra == TopoSystem.LINK_NVL ? HW_NVLINK : HW_PCI;
            for (int p = 0; p < 3; p++) {
                if (!costed(a, p, graphs)) {
                    continue;
                }
                latency[a][p] = table.baseLat()[a][p];
                float intraLat = hwLat[intraHw][a][p];
                float interLat =
                        table.interLatUsesTreeAtOnePpn() && ppn == 1 ? hwLat[HW_NET][TREE][p] : hwLat[HW_NET][a][p];
                interLat += graphs[a].latencyInter;
                if (p == SIMPLE) {
                    interLat += graphs[a].latencyInter;
                }
                if (a == RING) {
                    float netOverhead = 0.0f;
                    if (nNodes > 1) {
                        netOverhead = netOverhead(in.netOverheadEnv, cpuArch, cpuVendor);
                        if (p == SIMPLE) {
                            netOverhead *= 3;
                        }
                    }
                    intraLat = Math.max(intraLat, netOverhead);
                    latency[a][p] += (nsteps - nInterSteps) * intraLat + nInterSteps * interLat;
                } else if (a == TREE) {
                    latency[a][p] += 2 * ((nRanks / nNodes - 1) * intraLat + log2i(nNodes) * interLat);
                } else if (a == COLLNET_DIRECT) {
                    // tuning.cc:251-253 [2.28: 386-388] "Add 0.4 us arity serialization latency" (double arithmetic)
                    int ppnM1 = nRanks / nNodes - 1;
                    latency[a][p] += 2 * (Math.min(1, ppnM1) * intraLat + ppnM1 * 0.4) + interLat;
                } else if (a == COLLNET_CHAIN) {
                    latency[a][p] += 2 * (nRanks / nNodes - 1) * intraLat + interLat; // tuning.cc:255 [2.28: 390]
                } else if (a == NVLS) {
                    latency[a][p] = nNodes > 1 ? intraLat + interLat : intraLat; // tuning.cc:257-258 [2.28: 392-393]
                } else if (a == NVLS_TREE) {
                    latency[a][p] += intraLat + 2 * log2i(nNodes) * interLat; // tuning.cc:260 [2.28: 395]
                }
            }
        }
    }

    /** The version's hardware latencies; on POWER, Tree Simple over PCI costs what Ring Simple does. */
    private float[][][] hwLat(int cpuArch) {
        float[][][] hwLat = new float[3][][];
        for (int h = 0; h < 3; h++) {
            hwLat[h] = new float[table.hwLat()[h].length][];
            for (int a = 0; a < hwLat[h].length; a++) {
                hwLat[h][a] = table.hwLat()[h][a].clone();
            }
        }
        if (cpuArch == TopoSystem.ARCH_POWER) {
            hwLat[HW_PCI][TREE][SIMPLE] = hwLat[HW_PCI][RING][SIMPLE];
        }
        return hwLat;
    }

    /** Protocol/algorithm enables (tuning.cc:266-319 [2.28: 405-496]): a disabled pair gets no bandwidth. */
    private void applyEnables(TopoGraph[] graphs, Inputs in) {
        int na = table.numAlgorithms();
        int[] protoEnable = {1, 2, 1};
        if (in.protoEnv != null) {
            protoEnable =
                    NcclEnv.parseList("NCCL_PROTO", in.protoEnv, NcclProtocol.ncclNames(), 3, table.strictEnvLists());
        }
        int[] algoEnable = algoEnable(in.algoEnv);
        float[] ringBackup = bandwidth[RING].clone();
        for (int a = 0; a < na; a++) {
            for (int p = 0; p < 3; p++) {
                int pEnable = protoEnable[p];
                if (pEnable == 2 && p == LL128) {
                    pEnable = ll128Enabled(graphs[a], in) ? 1 : 0;
                }
                if (pEnable == 0 || algoEnable[a] == 0) {
                    bandwidth[a][p] = 0;
                }
                if (a == RING && pEnable == 0 && table.ringBackupDropsDisabledProtocols()) {
                    ringBackup[p] = 0; // tuning.cc@v2.22.3-1:318 (2.21 keeps them: tuning.cc@v2.21.5-1:223, 322-335)
                }
            }
        }
        if (!table.strictEnvLists()) {
            boolean any = false;
            for (int a = 0; a < na; a++) {
                for (int p = 0; p < 3; p++) {
                    any |= bandwidth[a][p] != 0;
                }
            }
            if (!any) {
                bandwidth[RING] = ringBackup; // tuning.cc:321-335 "at least set ring algo available"
            }
        }
    }

    /** NCCL_ALGO, then what the communicator cannot run: CollNet without a plugin, NVLS (nvlsSupport 0). */
    private int[] algoEnable(String algoEnv) {
        int na = table.numAlgorithms();
        int[] algoEnable = new int[na];
        java.util.Arrays.fill(algoEnable, 1);
        if (algoEnv != null) {
            algoEnable = NcclEnv.parseList("NCCL_ALGO", algoEnv, NcclAlgorithm.ncclNames(), na, table.strictEnvLists());
        }
        if (nNodes == 1) {
            algoEnable[NVLS_TREE] = 0;
        }
        // CollNet is not supported without a CollNet plugin; NVLS is off (nvlsSupport 0).
        algoEnable[COLLNET_DIRECT] = 0;
        algoEnable[COLLNET_CHAIN] = 0;
        if (nNodes > 1) {
            algoEnable[NVLS] = 0; // collNetSupport == 0 disables NVLS across nodes in every version
        }
        if (!table.strictEnvLists()
                && algoEnable[RING] == 0
                && algoEnable[TREE] == 0
                && algoEnable[NVLS] == 0
                && algoEnable[NVLS_TREE] == 0) {
            algoEnable[RING] = algoEnable[TREE] = 1; // tuning.cc:289-293 "hard set NCCL_ALGO=COLLNET, ignore it"
        }
        return algoEnable;
    }

    private boolean ll128Enabled(TopoGraph g, Inputs in) {
        int minCc = in.minCc;
        int maxCc = in.maxCc;
        boolean e;
        switch (table.ll128Rule()) {
            case CC_70_80_90:
            case CC_70_80_90_100_120:
                e = g.typeInter <= PATH_PXB || (minCc >= 90 && g.typeInter <= PATH_PXN);
                e &= g.typeIntra <= PATH_NVB;
                e &= minCc == maxCc;
                e &= minCc == 70
                        || minCc == 80
                        || (minCc == 90 && !(in.cuda118 && nRanks == 2))
                        || (table.ll128Rule() == Ll128Rule.CC_70_80_90_100_120 && (minCc == 100 || minCc == 120));
                return e;
            case C2C_ONE_CC:
            case C2C_MIXED_HOPPER:
            default:
                e = minCc >= 90 ? g.typeInter <= PATH_PXN : g.typeInter <= PATH_PXB;
                e &= g.typeIntra <= PATH_NVB;
                e &= minCc == maxCc || (table.ll128Rule() == Ll128Rule.C2C_MIXED_HOPPER && minCc >= 90);
                e &= !(minCc < 70 || (minCc == 90 && in.cuda118 && nRanks == 2));
                return e;
        }
    }

    /** getNetOverhead (tuning.cc:111-116). */
    private static float netOverhead(String netOverheadEnv, int cpuArch, int cpuVendor) {
        long env = NcclEnv.longOr(netOverheadEnv, -2);
        if (env != -2) {
            return (float) (env * .001);
        }
        if (cpuArch == TopoSystem.ARCH_X86 && cpuVendor == TopoSystem.VENDOR_INTEL) {
            return 1.0f;
        }
        if (cpuArch == TopoSystem.ARCH_X86 && cpuVendor == TopoSystem.VENDOR_AMD) {
            return 2.0f;
        }
        return 1.0f;
    }

    /** getNthreads (tuning.cc:15-32): an env value that is not a multiple of 32 or out of range is replaced. */
    static int getNthreads(long env, int min, int max, int def) {
        long nt = env;
        if (nt > 0) {
            if (nt % WARP_SIZE != 0) {
                nt = max;
            } else if (nt > max) {
                nt = max;
            } else if (nt < min) {
                nt = min;
            }
        } else {
            nt = def;
        }
        return (int) nt;
    }

    static int log2i(long n) {
        int l = 0;
        while ((n >>= 1) != 0) {
            l++;
        }
        return l;
    }

    /**
     * ncclTopoGetAlgoTime (tuning.cc:417-443 [2.28: 584-600]) for one op (numPipeOps 1); -1 when unavailable. The
     * ring-plateau factor uses comm->nChannels (not the graph's).
     */
    float time(int a, int p, long nBytes) {
        float bw = bandwidth[a][p];
        float lat = latency[a][p];
        if (bw == 0) {
            return -1.0f;
        }
        int logSize = log2i(nBytes >> 6);
        if (a == TREE && logSize >= 0 && logSize < 23) {
            bw *= TREE_CORRECTION[p][logSize];
        }
        if (a == RING && p == SIMPLE && nNodes > 1 && nBytes / ((long) commNChannels * nRanks) >= 64) {
            lat *= minCc < 80 ? 1.9 : 1.4;
        }
        int latCount = 1;
        return lat * latCount + (float) nBytes / (1000 * bw);
    }

    /**
     * The AllReduce row of the table rank 0 prints at init (tuning.cc:504-533@v2.28.9-1): per algorithm of this version
     * and protocol, comm->latencies and comm->bandwidths as this model computes them (before any per-size correction,
     * which {@link #time} applies), and comm->maxThreads. Empty for one rank, where NCCL returns before the table
     * (tuning.cc:247@v2.28.9-1).
     */
    java.util.List<CommunicatorPrediction.TuningCell> allReduceTable() {
        java.util.List<CommunicatorPrediction.TuningCell> out = new java.util.ArrayList<>();
        if (nRanks <= 1) {
            return out;
        }
        for (int a = 0; a < table.numAlgorithms(); a++) {
            for (int p = 0; p < 3; p++) {
                out.add(new CommunicatorPrediction.TuningCell(
                        "AllReduce",
                        NcclAlgorithm.ofId(a).ncclName(),
                        NcclProtocol.ofId(p).ncclName(),
                        NcclModel.fmt(latency[a][p]),
                        NcclModel.fmt(bandwidth[a][p]),
                        maxThreads[a][p]));
            }
        }
        return out;
    }

    /** "threadThresholds %ld/%ld/%ld | %ld/%ld/%ld | %ld | %ld" (tuning.cc:397 [2.28: 556]). */
    String threadThresholdsLine() {
        return String.format(
                Locale.ROOT,
                "threadThresholds %d/%d/%d | %d/%d/%d | %d | %d",
                threadThresholds[TREE][LL],
                threadThresholds[TREE][LL128],
                threadThresholds[TREE][SIMPLE],
                threadThresholds[RING][LL],
                threadThresholds[RING][LL128],
                threadThresholds[RING][SIMPLE],
                threadThresholds[COLLNET_DIRECT][SIMPLE],
                threadThresholds[COLLNET_CHAIN][SIMPLE]);
    }

    static PathproofException noAlgorithm(String algo, String proto) {
        return PathproofException.badInput("nccl: no algorithm/protocol available for AllReduce"
                + (algo != null ? "; NCCL_ALGO was set to " + algo : "")
                + (proto != null ? "; NCCL_PROTO was set to " + proto : ""));
    }
}

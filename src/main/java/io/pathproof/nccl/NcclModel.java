package io.pathproof.nccl;

import static io.pathproof.nccl.NcclVersionTable.*;

import io.pathproof.core.PathproofException;
import io.pathproof.scenario.DType;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Version;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;

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
    private final CommInit init;

    private NcclModel(
            Scenario scenario,
            NcclVersionTable table,
            int nRanks,
            int nNodes,
            TuningModel tuning,
            CommunicatorPrediction comm,
            TopoGraph ring,
            TopoGraph tree,
            int collChannels,
            String transport,
            CommInit init) {
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
        this.init = init;
    }

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
        CommInit init = CommInit.of(scenario);
        return new NcclModel(
                scenario,
                init.table,
                init.nRanks,
                init.nNodes,
                init.tuning,
                init.communicator,
                init.ring,
                init.tree,
                init.collChannels,
                init.transport,
                init);
    }

    public CommunicatorPrediction communicator() {
        return comm;
    }

    /**
     * What NCCL logs under the ring's and the tree's {@code Pattern …} GRAPH lines on the host of {@code rank}: per
     * graph, one line per channel with the NET it enters and leaves by and its GPUs in order, as ncclTopoPrintGraph
     * prints them (search.cc@v2.28.9-1:1200-1227; {@link GraphListing}). Not part of the prediction: it shows which NIC
     * each channel uses (PXN, channels per NIC) for comparing with NCCL's logs.
     */
    public List<List<String>> graphListing(int rank) {
        return init.graphListing(rank);
    }

    /** NCCL's decision for one AllReduce of {@code nBytes} of {@code dtype}, for bucket {@code bucketIndex}. */
    public CollectivePrediction allReduce(int bucketIndex, long nBytes, DType dtype) {
        if (dtype == null) {
            throw PathproofException.badInput("allReduce: dtype missing");
        }
        if (nBytes < 0 || nBytes % dtype.elementSize() != 0) {
            throw PathproofException.badInput(
                    "allReduce: " + nBytes + " bytes is not a whole number of " + dtype.torchName() + " elements");
        }
        long count = nBytes / dtype.elementSize();
        if (nRanks == 1 || count == 0) {
            return noKernel(bucketIndex, nBytes);
        }
        Choice c = choose(nBytes);
        LaunchPlanner.Shape shape =
                LaunchPlanner.plan(table, tuning, collChannels, c.algo, c.proto, nBytes, count, dtype.elementSize());
        int steps = c.algo == RING ? nRanks - 1 : 0;
        double busFactor = 2.0 * (nRanks - 1) / nRanks;
        long busBytes = java.math.BigInteger.valueOf(nBytes)
                .multiply(java.math.BigInteger.valueOf(2L * (nRanks - 1)))
                .divide(java.math.BigInteger.valueOf(nRanks))
                .longValueExact();
        String kernel = "ncclDevKernel_AllReduce_Sum_" + unsignedSuffix(dtype) + "_"
                + (c.algo == TREE ? NcclAlgorithm.TREE : NcclAlgorithm.RING) + "_LL";
        return new CollectivePrediction(
                bucketIndex,
                nBytes,
                NcclAlgorithm.ofId(c.algo).ncclName(),
                c.algo,
                NcclProtocol.ofId(c.proto).ncclName(),
                c.proto,
                fmt(c.time),
                shape.gridX(),
                shape.gridX(),
                shape.blockX(),
                steps,
                steps,
                busFactor,
                busBytes,
                transport,
                expectedTime(busBytes, shape.gridX(), c.algo, c.proto),
                kernel,
                tuningLine(nBytes, c, shape),
                false,
                c.entries,
                null);
    }

    /** One rank: ncclAllReduce copies sendbuff to recvbuff (no kernel, no TUNING line); count 0 returns at once. */
    private CollectivePrediction noKernel(int bucketIndex, long nBytes) {
        return new CollectivePrediction(
                bucketIndex,
                nBytes,
                "none",
                -1,
                "none",
                -1,
                null,
                0,
                0,
                0,
                0,
                0,
                0.0,
                0L,
                nRanks == 1 ? "none (local copy)" : "none (empty)",
                null,
                null,
                null,
                true,
                List.of(),
                null);
    }

    /** The tuner's choice: the cheapest (algorithm, protocol), and every time it compared. */
    private record Choice(int algo, int proto, float time, List<CollectivePrediction.TuningEntry> entries) {}

    /** getAlgoInfo's selection over the cost table: the first strictly smallest time wins. */
    private Choice choose(long nBytes) {
        float minTime = 3600000000.0f;
        int algo = -1;
        int proto = -1;
        List<CollectivePrediction.TuningEntry> entries = new ArrayList<>();
        for (int a = 0; a < table.numAlgorithms(); a++) {
            if (tuning.algoSkipped[a]) {
                continue;
            }
            for (int p = 0; p < 3; p++) {
                float t = tuning.time(a, p, nBytes);
                entries.add(new CollectivePrediction.TuningEntry(
                        NcclAlgorithm.ofId(a).ncclName(),
                        NcclProtocol.ofId(p).ncclName(),
                        fmt(tuning.latency[a][p]),
                        fmt(tuning.bandwidth[a][p]),
                        t < 0 ? null : fmt(t)));
                if (t >= 0.0 && t < minTime) {
                    algo = a;
                    proto = p;
                    minTime = t;
                }
            }
        }
        if (algo < 0) {
            throw TuningModel.noAlgorithm(
                    NcclEnv.get(scenario.env(), "NCCL_ALGO"), NcclEnv.get(scenario.env(), "NCCL_PROTO"));
        }
        return new Choice(algo, proto, minTime, entries);
    }

    /** The TUNING line this version prints for the choice. */
    private String tuningLine(long nBytes, Choice c, LaunchPlanner.Shape shape) {
        if (table.tuningLine() == TuningLineFormat.BYTES_ALGO_PROTO_TIME) {
            return nBytes + " Bytes -> Algo " + c.algo + " proto " + c.proto + " time "
                    + fmt(c.time).toPlainString();
        } else if (table.tuningLine() == TuningLineFormat.FUNC_BYTES_ALGO_PROTO_TIME) {
            return "AllReduce: " + nBytes + " Bytes -> Algo " + c.algo + " proto " + c.proto + " time "
                    + fmt(c.time).toPlainString();
        }
        return "AllReduce: " + nBytes + " Bytes -> Algo " + NcclAlgorithm.ofId(c.algo) + " proto "
                + NcclProtocol.ofId(c.proto) + " channel{Lo..Hi}={" + shape.channelLo() + ".." + shape.channelHi()
                + "}";
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
        double lat = intraHops * table.hwLat()[intraHw][algo][proto]
                + interHops * table.hwLat()[TuningModel.HW_NET][algo][proto];
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
            case INT32:
                return "u32";
            case INT64:
                return "u64";
            case INT8:
                return "u8";
            default:
                return d.kernelSuffix();
        }
    }

    static int pow2Up(int x) {
        int y = 1;
        while (y < x) {
            y <<= 1;
        }
        return y;
    }
}

package io.pathproof.prove;

import io.pathproof.core.PathproofException;
import io.pathproof.ddp.Bucket;
import io.pathproof.diagnose.Layer;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.NcclAlgorithm;
import io.pathproof.nccl.NcclProtocol;
import io.pathproof.predict.Prediction;
import io.pathproof.predict.Predictor;
import io.pathproof.scenario.Scenario;
import io.pathproof.scenario.Workload;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * The faults prove can inject, sized from the model of this scenario and the seed, never from a measurement or a table
 * of outcomes: each is only offered where the mechanism says it changes something (a bucket cap only when the planner
 * forms other buckets with it, a protocol only other than the one NCCL was predicted to pick). One seed and one
 * scenario give one fault, size included, on any machine under any load.
 */
final class Faults {
    private Faults() {}

    /** torch's default {@code bucket_cap_mb} (distributed.py), used when the workload does not set one. */
    private static final double TORCH_DEFAULT_CAP_MB = 25.0;

    /** A compute slowdown is never smaller than this: below it a loaded 2-core machine's step noise can hide it. */
    static final double MIN_DELAY_MS = 40.0;

    /**
     * The CPU cost of one gloo step per MiB of parameters, on the pessimistic side. Forward, backward, the AllReduce
     * (2(n−1)/n of the bytes through the loopback) and the optimizer each touch every parameter byte; the 64 MiB model
     * steps in 0.6–3 s on the shared 2-core machine (9–47 ms per MiB, docs/PERFORMANCE.md), so a delay of this many
     * ms per MiB is about the step it is added to, or more: the variant's step about doubles.
     */
    static final double CPU_MS_PER_MIB = 32.0;

    /**
     * On a GPU the step of these models is the AllReduce and little else: a delay of this many times the predicted
     * AllReduce time of one step (every bucket's expected time) stands far above it.
     */
    static final double GPU_COMM_MULTIPLE = 10.0;

    /** The seed scales the slowdown by one of these, so that a diagnosis is not tuned to one size. */
    private static final double[] DELAY_SCALE = {1.0, 1.5, 2.0};

    /**
     * The compute slowdown of this prediction and seed, in whole ms: from the model's step (parameter bytes on a CPU,
     * predicted AllReduce time on a GPU), never under {@link #MIN_DELAY_MS}, scaled by the seed. Never from a
     * measurement: the baseline's median differs from run to run, and one seed must give one fault on any machine.
     */
    static double computeDelayMs(Prediction p, String backend, long seed) {
        double base;
        if (backend.equals("nccl")) {
            double commUs = 0;
            for (CollectivePrediction c : p.collectives()) {
                commUs += c.expectedTimeUs() == null ? 0 : c.expectedTimeUs().doubleValue();
            }
            base = GPU_COMM_MULTIPLE * commUs / 1000.0;
        } else {
            base = p.buckets() == null ? 0 : CPU_MS_PER_MIB * p.buckets().parameterBytes() / (1024.0 * 1024.0);
        }
        // A stream of its own: the fault's kind is drawn from a fresh generator of the same seed (draw), unchanged by
        // this.
        double scale = DELAY_SCALE[new SplittableRandom(seed).split().nextInt(DELAY_SCALE.length)];
        return Math.ceil(Math.max(MIN_DELAY_MS, base) * scale);
    }

    /** Every fault this scenario supports on real machines; the seed sizes the compute slowdown. */
    static List<Fault> catalogue(Scenario s, Prediction p, String backend, int worldSize, long seed) {
        return catalogue(s, p, backend, worldSize, seed, false);
    }

    /**
     * Every fault this scenario supports; the seed sizes the compute slowdown ({@link #computeDelayMs}). {@code
     * emulated}: the machine is emulated, so its hardware can be degraded too (a node's NICs slowed), which pathproof
     * cannot do to a real cluster.
     */
    static List<Fault> catalogue(Scenario s, Prediction p, String backend, int worldSize, long seed, boolean emulated) {
        List<Fault> out = new ArrayList<>();
        double delay = computeDelayMs(p, backend, seed);
        out.add(new Fault(
                "compute slowdown",
                List.of("compute_delay_ms=" + fmt(delay)),
                Layer.COMPUTE,
                "every rank spends " + fmt(delay)
                        + " ms more between forward and backward in each step, outside communication"));
        if (worldSize >= 2) {
            out.add(new Fault(
                    "corrupted gradient",
                    List.of("corrupt_grad_rank=" + (worldSize - 1)),
                    Layer.CORRECTNESS,
                    "rank " + (worldSize - 1)
                            + " adds an error to its gradient after the AllReduce, so its replica drifts"));
        }
        String cap = smallerCapThatRebuckets(s, p);
        if (cap != null) {
            out.add(new Fault(
                    "bucket-cap change",
                    List.of("bucket_cap_mb=" + cap),
                    Layer.BUCKETS,
                    "DDP is built with bucket_cap_mb=" + cap + " instead of " + fmt(capOf(s.workload()))
                            + ", which the planner says forms other buckets"));
        }
        if (!s.workload().findUnusedParameters()) {
            // A DDP constructor flag, not the bucket cap: DDP's logging data records it and the diagnose room names it
            // on its
            // own layer, ddp-config (the steady buckets need not change at all).
            out.add(
                    new Fault(
                            "find_unused_parameters",
                            List.of("find_unused_parameters=true"),
                            Layer.DDP_CONFIG,
                            "DDP is built with find_unused_parameters=True: a graph walk every step and an extra used-map AllReduce"));
        }
        if (backend.equals("nccl")) {
            out.addAll(ncclFaults(
                    p,
                    io.pathproof.nccl.NcclModel.perFunctionEnvLists(s.versions().nccl())));
            out.addAll(networkFaults(s, p, emulated));
        }
        return out;
    }

    /**
     * The network faults of a multi-node scenario, each offered only where the model, predicting the scenario again
     * with the variable set, says NCCL reaches the other nodes differently (another inter-node graph or NET transport):
     * GPUDirect RDMA off (NCCL_NET_GDR_LEVEL=LOC, ncclTopoCheckGdr, graph/paths.cc@v2.28.9-1:452-475), the other NIC
     * pairing (NCCL_CROSS_NIC, graph/search.cc), PXN off (NCCL_PXN_DISABLE, graph/paths.cc:708-740), fewer channels per
     * net peer; and where the machine is {@code emulated}, one node's NICs slower ({@link #slowerNode}).
     */
    static List<Fault> networkFaults(Scenario s, Prediction p, boolean emulated) {
        List<Fault> out = new ArrayList<>();
        if (p.communicator() == null
                || p.communicator().nNodes() < 2
                || p.communicator().cannotPredict() != null) {
            return out;
        }
        String base = network(p);
        int crossNic = p.communicator().ringGraph() == null
                ? 0
                : p.communicator().ringGraph().crossNic();
        String[][] candidates = {
            {"GPUDirect RDMA off", "NCCL_NET_GDR_LEVEL", "LOC", "NICs reached through the CPU: GPUDirect RDMA off"},
            {
                "NIC pairing",
                "NCCL_CROSS_NIC",
                crossNic == 0 ? "1" : "0",
                crossNic == 0
                        ? "rings may leave a node on another NIC than they entered"
                        : "each ring leaves a node on the NIC it entered"
            },
            {"PXN off", "NCCL_PXN_DISABLE", "1", "no relay through an NVLink peer that sits next to the NIC"}
        };
        for (String[] c : candidates) {
            Prediction q;
            try {
                q = Predictor.predict(s.withEnv(java.util.Map.of(c[1], c[2])));
            } catch (PathproofException ex) {
                continue; // the model cannot predict with it: not offered, since the mechanism cannot say what it
                // changes
            }
            String changed = network(q);
            if (!changed.equals(base)) {
                out.add(new Fault(
                        c[0],
                        List.of(c[1] + "=" + c[2]),
                        Layer.NETWORK,
                        c[1] + "=" + c[2] + ": " + c[3] + " (predicted " + base + " → " + changed + ")"));
            }
        }
        Fault perPeer = fewerChannelsPerNetPeer(s, p);
        if (perPeer != null) {
            out.add(perPeer);
        }
        Fault slow = emulated ? slowerNode(s, p, base) : null;
        if (slow != null) {
            out.add(slow);
        }
        return out;
    }

    /** Fewer p2p channels to each peer on another node than the model predicts NCCL gives it, or null. */
    static Fault fewerChannelsPerNetPeer(Scenario s, Prediction p) {
        int perPeer = p.communicator().p2pChannelsPerPeer();
        if (perPeer < 2) {
            return null;
        }
        // NCCL refuses a value below 1 and rounds the per-peer count to a power of two (init.cc:1684-1691,
        // graph/paths.cc:882@v2.28.9-1); 1 is the fewest it takes.
        Prediction q;
        try {
            q = Predictor.predict(s.withEnv(java.util.Map.of("NCCL_NCHANNELS_PER_NET_PEER", "1")));
        } catch (PathproofException ex) {
            return null;
        }
        int fewer = q.communicator().p2pChannelsPerPeer();
        if (fewer >= perPeer) {
            return null;
        }
        return new Fault(
                "fewer channels per net peer",
                List.of("NCCL_NCHANNELS_PER_NET_PEER=1"),
                Layer.NETWORK,
                "NCCL_NCHANNELS_PER_NET_PEER=1: send/recv to a peer on another node on fewer channels (predicted "
                        + perPeer + " → " + fewer + " p2p channels per peer); DDP's AllReduce rides the rings and"
                        + " trees, not these");
    }

    /**
     * One node of an emulated cluster whose NICs came up slower than the description says: the last node's NICs at the
     * first of 1/2, 1/4, 1/8 of their slowest speed with which the model, predicting the degraded cluster again, says
     * NCCL reaches the other nodes differently (each node searches its own graphs and the ranks keep the minimum,
     * init.cc@v2.28.9-1:1175-1192); null when none does. The emulation applies it (knob node_nic_mbps). {@code base}:
     * how the model says NCCL reaches the other nodes now ({@link #network}).
     */
    private static Fault slowerNode(Scenario s, Prediction p, String base) {
        int last = s.topology().nodes().size() - 1;
        io.pathproof.scenario.Topology.Node node = s.topology().nodes().get(last);
        if (node.nics().isEmpty()) {
            return null;
        }
        long speed = node.nics().stream()
                .mapToLong(io.pathproof.scenario.Topology.Nic::speedMbps)
                .min()
                .getAsLong();
        for (int div = 2; div <= 8; div *= 2) {
            long slower = speed / div;
            if (slower <= 0) {
                break;
            }
            Prediction q;
            try {
                q = Predictor.predict(s.withTopology(s.topology().withNodeNicSpeed(last, slower)));
            } catch (PathproofException ex) {
                return null;
            }
            String changed = network(q);
            if (!changed.equals(base)) {
                return new Fault(
                        "one node's NICs slower",
                        List.of("node_nic_mbps=" + last + ":" + slower),
                        Layer.NETWORK,
                        "every NIC of node " + last + " (" + node.hostname() + ") at " + slower + " Mb/s instead of "
                                + speed + ", as if its links trained slower (predicted " + base + " → " + changed
                                + ")");
            }
        }
        return null;
    }

    /** How the model says NCCL reaches the other nodes: the inter-node side of both graphs and the NET transport. */
    private static String network(Prediction p) {
        io.pathproof.nccl.CommunicatorPrediction c = p.communicator();
        StringBuilder b = new StringBuilder();
        for (io.pathproof.nccl.GraphSummary g : new io.pathproof.nccl.GraphSummary[] {c.ringGraph(), c.treeGraph()}) {
            if (g != null) {
                b.append(String.format(
                        Locale.ROOT,
                        "%d ch %s/%s bw %s/%s crossNic %d; ",
                        g.nChannels(),
                        g.typeIntra(),
                        g.typeInter(),
                        fmt(g.bwIntra()),
                        fmt(g.bwInter()),
                        g.crossNic()));
            }
        }
        String t = c.transport() == null ? "" : c.transport();
        return b.append(t.substring(Math.max(0, t.indexOf("NET")))).toString();
    }

    /**
     * The NCCL faults of the seed and its neighbours, each set against what NCCL was predicted to choose. With
     * {@code perFunctionLists} (NCCL ≥ 2.24) the algorithm is forced for AllReduce only: DDP also calls AllGather (the
     * parameter-shape check) and Broadcast, which have no Tree, and a plain NCCL_ALGO=Tree makes NCCL refuse them ("no
     * algorithm/protocol available for function AllGather", tuning.cc@v2.28.9-1 getAlgoInfo) before the first bucket.
     */
    static List<Fault> ncclFaults(Prediction p, boolean perFunctionLists) {
        List<Fault> out = new ArrayList<>();
        CollectivePrediction big = p.collectives().stream()
                .filter(c -> !c.noKernel() && c.bucket() >= 0)
                .max(Comparator.comparingLong(CollectivePrediction::bytes))
                .orElse(null);
        if (p.communicator() != null && p.communicator().collChannels() > 1) {
            out.add(new Fault(
                    "channel cap",
                    List.of("NCCL_MIN_NCHANNELS=1", "NCCL_MAX_NCHANNELS=1"),
                    Layer.CHANNELS,
                    "the seed's variant: one channel instead of "
                            + p.communicator().collChannels()));
        }
        if (big == null) {
            return out; // one rank: NCCL copies, no algorithm, protocol or launch shape to change
        }
        String proto = (NcclProtocol.parse(big.protocol()) == NcclProtocol.SIMPLE
                        ? NcclProtocol.LL
                        : NcclProtocol.SIMPLE)
                .ncclName();
        out.add(new Fault(
                "protocol",
                List.of("NCCL_PROTO=" + proto),
                Layer.PROTOCOL,
                "NCCL_PROTO=" + proto + " where the tuner picks " + big.protocol() + " for the largest bucket"));
        String algo = (NcclAlgorithm.parse(big.algorithm()) == NcclAlgorithm.RING
                        ? NcclAlgorithm.TREE
                        : NcclAlgorithm.RING)
                .ncclName();
        String algoEnv = "NCCL_ALGO=" + (perFunctionLists ? "allreduce:" + algo.toLowerCase(Locale.ROOT) : algo);
        out.add(new Fault(
                "algorithm",
                List.of(algoEnv),
                Layer.ALGORITHM,
                algoEnv + " where the tuner picks " + big.algorithm() + " for the largest bucket"));
        if (big.transport() != null && big.transport().toUpperCase(Locale.ROOT).contains("P2P")) {
            out.add(new Fault(
                    "P2P disabled",
                    List.of("NCCL_P2P_DISABLE=1"),
                    Layer.TRANSPORT,
                    "NCCL_P2P_DISABLE=1: peers fall back from " + big.transport() + " to SHM"));
        }
        if (big.blockX() > 64) {
            int threads = Math.max(64, big.blockX() / 2 / 32 * 32); // NCCL_NTHREADS must be a multiple of the warp (32)
            out.add(new Fault(
                    "threads",
                    List.of("NCCL_NTHREADS=" + threads),
                    Layer.THREADS,
                    "NCCL_NTHREADS=" + threads + " where NCCL launches " + big.blockX() + " threads per block"));
        }
        return out;
    }

    /** Draws one fault; the same seed and catalogue give the same fault. */
    static Fault draw(List<Fault> catalogue, long seed) {
        if (catalogue.isEmpty()) {
            throw PathproofException.usage("prove: no fault applies to this scenario");
        }
        // SplittableRandom mixes the seed first: java.util.Random's first nextInt(4) is 2 for every small seed.
        return catalogue.get(new SplittableRandom(seed).nextInt(catalogue.size()));
    }

    /**
     * A fault given as {@code K=V} (several with commas): the layer is the catalogue's where the name is there, else the
     * one the diagnose room's knob table gives the name ({@link Layer#actedOnBy}); the harness's own knobs act on the
     * job's compute and correctness, which no knob table holds.
     */
    static Fault given(String spec, List<Fault> catalogue) {
        List<String> settings = new ArrayList<>();
        for (String part : spec.split(",")) {
            String t = part.trim();
            if (t.indexOf('=') <= 0) {
                throw PathproofException.usage("--fault '" + spec + "': expected K=V[,K=V] or random");
            }
            settings.add(t);
        }
        String key = settings.get(0).substring(0, settings.get(0).indexOf('='));
        for (Fault f : catalogue) {
            if (f.keys().contains(key)) {
                return new Fault(
                        f.kind(), settings, f.layer(), "given on the command line: " + String.join(", ", settings));
            }
        }
        Layer layer =
                switch (key) {
                    // The harness's own faults act on what the job does, which no configuration the diagnosis reads
                    // shows.
                    case "compute_delay_ms" -> Layer.COMPUTE;
                    case "corrupt_grad_rank" -> Layer.CORRECTNESS;
                    case "node_nic_mbps" -> Layer.NETWORK; // the emulated hardware between nodes
                    default -> Layer.actedOnBy(key);
                };
        return new Fault("given", settings, layer, "given on the command line: " + String.join(", ", settings));
    }

    /** The knobs run --inject takes besides NCCL, TORCH and DDP variables (vocabulary.json, shared with the ranks). */
    private static final List<String> KNOBS = io.pathproof.rundir.Vocabulary.knobs();

    /** Checks a given --fault before anything runs: a typo must not cost a baseline run. */
    static void check(String spec) {
        check(spec, false);
    }

    /**
     * {@link #check(String)}, and a degraded node ({@code node_nic_mbps}) only where the machine is emulated: pathproof
     * cannot slow a real NIC.
     */
    static void check(String spec, boolean emulated) {
        if (!emulated && spec != null && spec.contains("node_nic_mbps")) {
            throw PathproofException.usage("--fault node_nic_mbps: slows a node of an emulated cluster; give --emulate"
                    + " with a cluster (--topology NODE --nodes N)");
        }
        if (spec == null || spec.equals("random")) {
            return;
        }
        for (String part : spec.split(",")) {
            String t = part.trim();
            int eq = t.indexOf('=');
            if (eq <= 0) {
                throw PathproofException.usage("--fault '" + spec + "': expected K=V[,K=V] or random");
            }
            String k = t.substring(0, eq);
            if (!k.matches("(NCCL|TORCH|DDP)_[A-Z0-9_]+") && !KNOBS.contains(k)) {
                throw PathproofException.usage("--fault '" + k + "': not an NCCL_*/TORCH_*/DDP_* variable nor one of "
                        + String.join(", ", KNOBS));
            }
        }
    }

    private static double capOf(Workload w) {
        return w.bucketCapMb() == null ? TORCH_DEFAULT_CAP_MB : w.bucketCapMb();
    }

    /** The largest cap (the workload's halved again and again) with which the planner forms other steady buckets. */
    static String smallerCapThatRebuckets(Scenario s, Prediction p) {
        List<List<String>> base = layout(p);
        Workload w = s.workload();
        double cap = capOf(w);
        for (int k = 1; k <= 16; k++) {
            double c = cap / Math.pow(2, k);
            Workload wk = w.withDdpFlags(c, w.findUnusedParameters(), w.staticGraph(), w.gradientAsBucketView());
            Scenario sk = new Scenario(s.name(), wk, s.topology(), s.versions(), s.ranks(), s.env(), s.backend());
            if (!layout(Predictor.predict(sk)).equals(base)) {
                return fmt(c);
            }
        }
        return null;
    }

    private static List<List<String>> layout(Prediction p) {
        List<Bucket> steady = p.buckets().rebuilt().isEmpty()
                ? p.buckets().construction()
                : p.buckets().rebuilt();
        return steady.stream().map(Bucket::params).toList();
    }

    static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
}

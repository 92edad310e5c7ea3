package io.pathproof.diagnose;

import com.fasterxml.jackson.databind.JsonNode;
import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
import io.pathproof.evidence.Source;
import io.pathproof.nccl.NcclAlgorithm;
import io.pathproof.nccl.NcclProtocol;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The path fingerprint of one run, layer by layer, as canonical strings that two runs can be compared on: bucket
 * layout and collective shapes, algorithm, protocol, transport, channels (collChannels, gridX, TUNING channel range),
 * threads (blockX); plus the measurements (step times, compute time outside communication, NCCL kernel durations)
 * and the within-run correctness facts. A layer whose evidence is absent has a null value (not comparable).
 */
final class Fingerprint {
    /** One layer's canonical value, the evidence kinds behind it and where it was read. */
    record Facet(String value, List<EvidenceKind> kinds, List<String> provenance) {}

    final Evidence e;
    final Map<Layer, Facet> path = new LinkedHashMap<>();
    /** Per measured iteration, the step time of the job (ms): the slowest rank gates a synchronous DDP step. */
    final double[] steps;
    /** Per measured iteration, step time minus the time the buckets spent in communication (ms): hooked iterations. */
    final double[] compute;
    /** Per measured iteration, the host's forward and optimizer phases (ms); empty unless the host does the work. */
    final double[] hostCompute;
    /** Per measured iteration, the same less the main thread's wait for a core there (ms); empty without the waits. */
    final double[] hostOwnCompute;
    /** NCCL AllReduce kernel durations (µs). */
    final double[] kernelUs;

    final Correctness correctness;
    /** The machine's load beside the step times, or null where the run did not record it. */
    final MachineLoad load;

    /** Within-run correctness: replica digests grouped, numerics samples of the majority. */
    record Correctness(Boolean equal, Map<String, List<Integer>> digestGroups, List<Double> samples, String source) {
        boolean known() {
            return equal != null || !digestGroups.isEmpty();
        }

        boolean broken() {
            return Boolean.FALSE.equals(equal) || digestGroups.size() > 1;
        }

        /** Ranks whose digest is not the majority's. */
        List<Integer> minorityRanks() {
            List<Integer> out = new ArrayList<>();
            int max = 0;
            String major = null;
            for (Map.Entry<String, List<Integer>> en : digestGroups.entrySet()) {
                if (en.getValue().size() > max) {
                    max = en.getValue().size();
                    major = en.getKey();
                }
            }
            for (Map.Entry<String, List<Integer>> en : digestGroups.entrySet()) {
                if (!en.getKey().equals(major)) {
                    out.addAll(en.getValue());
                }
            }
            out.sort(null);
            return out;
        }
    }

    Fingerprint(Evidence e) {
        this.e = e;
        buckets();
        tuning();
        transport();
        network();
        channels();
        threads();
        this.steps = steps();
        this.compute = compute();
        boolean work = hostWork();
        this.hostCompute = work ? hostWorkCompute(false) : new double[0];
        this.hostOwnCompute = work && waitsKnown() ? hostWorkCompute(true) : new double[0];
        this.kernelUs = kernelDurations();
        this.correctness = correctness();
        this.load = MachineLoad.of(e);
    }

    private static <T> List<T> list(List<T> l) {
        return l == null ? List.of() : l;
    }

    private List<Evidence.Kernel> ncclKernels() {
        List<Evidence.Kernel> out = new ArrayList<>();
        for (Evidence.Kernel k : list(e.kernels())) {
            if (k.nccl()
                    && k.name() != null
                    && k.name().toLowerCase(Locale.ROOT).contains("allreduce")) {
                out.add(k);
            }
        }
        return out;
    }

    private static String src(Source s) {
        return s == null ? null : s.toString();
    }

    private static List<String> provs(String... s) {
        List<String> out = new ArrayList<>();
        for (String x : s) {
            if (x != null) {
                out.add(x);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ layers
    private void buckets() {
        List<String> parts = new ArrayList<>();
        List<EvidenceKind> kinds = new ArrayList<>();
        List<String> prov = new ArrayList<>();
        List<Evidence.BucketRecord> hooks =
                e.ddp() == null ? List.of() : list(e.ddp().buckets());
        if (!hooks.isEmpty()) {
            // The steady-state layout: the last iteration of the lowest rank (after any rebuild).
            int rank =
                    hooks.stream().mapToInt(Evidence.BucketRecord::rank).min().getAsInt();
            int last = hooks.stream()
                    .filter(b -> b.rank() == rank)
                    .mapToInt(Evidence.BucketRecord::iteration)
                    .max()
                    .getAsInt();
            List<Evidence.BucketRecord> it = new ArrayList<>(hooks.stream()
                    .filter(b -> b.rank() == rank && b.iteration() == last)
                    .toList());
            it.sort(Comparator.comparingInt(Evidence.BucketRecord::index));
            List<Long> bytes = new ArrayList<>();
            for (Evidence.BucketRecord b : it) {
                bytes.add(b.bytes());
            }
            parts.add(bytes.size() + " bucket(s) " + bytes + " B");
            kinds.add(EvidenceKind.HOOK);
            prov.add(src(it.get(0).source()));
        } else if (e.ddp() != null && e.ddp().logging() != null) {
            for (Map.Entry<String, JsonNode> en : new TreeMap<>(e.ddp().logging()).entrySet()) {
                JsonNode s = en.getValue() == null ? null : en.getValue().get("rebuilt_bucket_sizes");
                if (s == null || s.asText().isBlank()) {
                    s = en.getValue() == null ? null : en.getValue().get("bucket_sizes");
                }
                if (s != null && !s.asText().isBlank()) {
                    String[] sz = s.asText().split(",\\s*");
                    parts.add(sz.length + " bucket(s) [" + String.join(", ", sz) + "] B");
                    kinds.add(EvidenceKind.DDP_LOGGING);
                    prov.add("ddp logging rank " + en.getKey());
                    break;
                }
            }
        }
        TreeSet<String> shapes = new TreeSet<>();
        String first = null;
        if (e.nccl() != null) {
            for (Evidence.Coll c : list(e.nccl().colls())) {
                if (c.op() != null && c.op().equalsIgnoreCase("AllReduce")) {
                    shapes.add("AllReduce count " + c.count() + " datatype " + c.datatype() + " op " + c.redOp());
                    if (first == null) {
                        first = src(c.source());
                    }
                }
            }
        }
        if (!shapes.isEmpty()) {
            parts.add(String.join(", ", shapes));
            kinds.add(EvidenceKind.NCCL_LOG);
            prov.add(first);
        }
        path.put(
                Layer.BUCKETS,
                parts.isEmpty()
                        ? null
                        : new Facet(String.join("; ", parts), kinds, provs(prov.toArray(new String[0]))));
    }

    private void tuning() {
        TreeMap<Long, TreeSet<String>> algos = new TreeMap<>();
        TreeMap<Long, TreeSet<String>> protos = new TreeMap<>();
        String first = null;
        if (e.nccl() != null) {
            for (Evidence.Tuning t : list(e.nccl().tuning())) {
                if (t.op() != null && !t.op().equalsIgnoreCase("AllReduce")) {
                    continue;
                }
                String algo = NcclAlgorithm.canonical(t.algorithm(), t.algorithmId());
                String proto = NcclProtocol.canonical(t.protocol(), t.protocolId());
                algos.computeIfAbsent(t.bytes(), b -> new TreeSet<>()).add(algo == null ? "?" : algo);
                protos.computeIfAbsent(t.bytes(), b -> new TreeSet<>()).add(proto == null ? "?" : proto);
                if (first == null) {
                    first = src(t.source());
                }
            }
        }
        path.put(
                Layer.ALGORITHM,
                algos.isEmpty() ? null : new Facet(bySize(algos), List.of(EvidenceKind.NCCL_LOG), provs(first)));
        path.put(
                Layer.PROTOCOL,
                protos.isEmpty() ? null : new Facet(bySize(protos), List.of(EvidenceKind.NCCL_LOG), provs(first)));
    }

    private static String bySize(TreeMap<Long, TreeSet<String>> m) {
        // Sizes that share one decision are folded together: the layer is about the decision, not the bucket sizes.
        TreeSet<String> all = new TreeSet<>();
        m.values().forEach(all::addAll);
        return String.join("+", all);
    }

    /** A communicator across nodes: its NET connectors belong to the network layer, not to the transport between GPUs. */
    private static boolean multiNode(Evidence.Communicator c) {
        return c.nNodes() != null && c.nNodes() > 1;
    }

    private static boolean net(String transport) {
        return transport.startsWith("NET");
    }

    private void transport() {
        TreeSet<String> ts = new TreeSet<>();
        String first = null;
        if (e.nccl() != null) {
            for (Evidence.Communicator c : list(e.nccl().communicators())) {
                for (Evidence.Connection cn : list(c.connections())) {
                    if (cn.transport() != null && !(multiNode(c) && net(cn.transport()))) {
                        ts.add(cn.transport());
                        if (first == null) {
                            first = src(cn.source());
                        }
                    }
                }
                if (ts.isEmpty()) {
                    list(c.transports()).stream()
                            .filter(t -> !(multiNode(c) && net(t)))
                            .forEach(ts::add);
                    if (!ts.isEmpty() && first == null) {
                        first = src(c.source());
                    }
                }
            }
        }
        path.put(
                Layer.TRANSPORT,
                ts.isEmpty() ? null : new Facet(String.join(", ", ts), List.of(EvidenceKind.NCCL_LOG), provs(first)));
    }

    /**
     * The network between nodes, per multi-node communicator: node count, the NET connectors (net module, device,
     * GPUDirect RDMA) and every distinct graph the ranks' searches printed (pattern, channels, path type to the NIC,
     * inter-node bandwidth, crossNic). Absent on a single node.
     */
    private void network() {
        TreeSet<String> parts = new TreeSet<>();
        String first = null;
        // The file:line of the first search of each kind where the ranks' own searches disagree.
        List<String> splitSources = new ArrayList<>();
        if (e.nccl() != null) {
            for (Evidence.Communicator c : list(e.nccl().communicators())) {
                if (!multiNode(c)) {
                    continue;
                }
                TreeSet<String> nets = new TreeSet<>();
                for (Evidence.Connection cn : list(c.connections())) {
                    if (cn.transport() != null && net(cn.transport())) {
                        nets.add(cn.transport() + (cn.gdr() ? "/GDRDMA" : ""));
                    }
                }
                if (nets.isEmpty()) {
                    list(c.transports()).stream().filter(Fingerprint::net).forEach(nets::add);
                }
                TreeSet<String> graphs = new TreeSet<>();
                for (Evidence.Graph g : list(c.graphs())) {
                    graphs.add(String.format(
                            Locale.ROOT,
                            "pattern %d: %d ch, %s/%s, bw %s/%s, crossNic %d",
                            g.pattern(),
                            g.nChannels(),
                            g.typeIntra(),
                            g.typeInter(),
                            num(g.bwIntra()),
                            num(g.bwInter()),
                            g.crossNic()));
                }
                String disagree = disagreement(list(c.graphs()), splitSources);
                parts.add(c.nNodes() + " nodes; net "
                        + (nets.isEmpty() ? "(no connector lines)" : String.join(", ", nets))
                        + (graphs.isEmpty() ? "" : "; graphs " + String.join("; ", graphs))
                        + (c.p2pChannelsPerPeer() == null ? "" : "; p2p channels per peer " + c.p2pChannelsPerPeer())
                        + disagree);
                if (first == null) {
                    first = src(c.source());
                }
            }
        }
        List<String> prov = splitSources.isEmpty() ? provs(first) : splitSources;
        path.put(
                Layer.NETWORK,
                parts.isEmpty() ? null : new Facet(String.join(" | ", parts), List.of(EvidenceKind.NCCL_LOG), prov));
    }

    /** The words that say a cluster's nodes searched different graphs (Remedies keys its fix on them). */
    static final String SEARCHES_DISAGREE = "the ranks' own searches disagree";

    /**
     * Where the ranks' own searches of one pattern printed different graphs: every rank searches the node it sees and
     * the ranks keep the minimum only afterwards (init.cc@v2.28.9-1:1175-1192), so a node whose NICs are slower (or
     * whose topology differs) prints its own bandwidths before that exchange. Names the log of the first rank that
     * printed each; {@code sources} gets their file:line. Empty when every rank found the same.
     */
    static String disagreement(List<Evidence.Graph> graphs, List<String> sources) {
        java.util.TreeMap<Integer, List<Evidence.Graph>> byPattern = new java.util.TreeMap<>();
        for (Evidence.Graph g : graphs) {
            byPattern.computeIfAbsent(g.pattern(), k -> new ArrayList<>()).add(g);
        }
        StringBuilder b = new StringBuilder();
        for (Map.Entry<Integer, List<Evidence.Graph>> en : byPattern.entrySet()) {
            if (en.getValue().size() < 2) {
                continue;
            }
            List<String> each = new ArrayList<>();
            for (Evidence.Graph g : en.getValue()) {
                String file = g.source() == null || g.source().file() == null
                        ? "?"
                        : java.nio.file.Path.of(g.source().file()).getFileName().toString();
                each.add(String.format(
                        Locale.ROOT,
                        "%d ch bw %s/%s %s/%s in %s",
                        g.nChannels(),
                        num(g.bwIntra()),
                        num(g.bwInter()),
                        g.typeIntra(),
                        g.typeInter(),
                        file));
                if (g.source() != null) {
                    sources.add(src(g.source()));
                }
            }
            b.append("; ")
                    .append(SEARCHES_DISAGREE)
                    .append(" on pattern ")
                    .append(en.getKey())
                    .append(": ")
                    .append(String.join(" vs ", each));
        }
        return b.toString();
    }

    private static String num(double x) {
        return x == Math.rint(x) ? Long.toString((long) x) : Double.toString(x);
    }

    private void channels() {
        List<String> parts = new ArrayList<>();
        List<EvidenceKind> kinds = new ArrayList<>();
        List<String> prov = new ArrayList<>();
        TreeSet<Integer> coll = new TreeSet<>();
        TreeSet<Integer> range = new TreeSet<>();
        if (e.nccl() != null) {
            for (Evidence.Communicator c : list(e.nccl().communicators())) {
                if (c.collChannels() != null) {
                    coll.add(c.collChannels());
                    if (prov.isEmpty()) {
                        prov.add(src(c.source()));
                    }
                }
            }
            for (Evidence.Tuning t : list(e.nccl().tuning())) {
                if (t.channelLo() != null && t.channelHi() != null) {
                    range.add(t.channelHi() - t.channelLo() + 1);
                }
            }
        }
        if (!coll.isEmpty()) {
            parts.add("collChannels " + coll);
            kinds.add(EvidenceKind.NCCL_LOG);
        }
        if (!range.isEmpty()) {
            parts.add("TUNING channels " + range);
            if (!kinds.contains(EvidenceKind.NCCL_LOG)) {
                kinds.add(EvidenceKind.NCCL_LOG);
            }
        }
        TreeSet<Integer> grid = new TreeSet<>();
        for (Evidence.Kernel k : ncclKernels()) {
            if (k.grid() != null && k.grid().length > 0) {
                grid.add(k.grid()[0]);
                if (grid.size() == 1 && prov.size() < 2) {
                    prov.add(src(k.source()));
                }
            }
        }
        if (!grid.isEmpty()) {
            parts.add("gridX " + grid);
            kinds.add(EvidenceKind.KERNEL_TRACE);
        }
        path.put(
                Layer.CHANNELS,
                parts.isEmpty()
                        ? null
                        : new Facet(String.join("; ", parts), kinds, provs(prov.toArray(new String[0]))));
    }

    private void threads() {
        TreeSet<Integer> block = new TreeSet<>();
        String first = null;
        for (Evidence.Kernel k : ncclKernels()) {
            if (k.block() != null && k.block().length > 0) {
                block.add(k.block()[0]);
                if (first == null) {
                    first = src(k.source());
                }
            }
        }
        path.put(
                Layer.THREADS,
                block.isEmpty()
                        ? null
                        : new Facet("blockX " + block, List.of(EvidenceKind.KERNEL_TRACE), provs(first)));
    }

    // ------------------------------------------------------------------ measurements
    private List<Evidence.Step> measuredSteps() {
        List<Evidence.Step> all = list(e.steps());
        List<Evidence.Step> m = all.stream().filter(Evidence.Step::measured).toList();
        return m.isEmpty() ? all : m;
    }

    /** The one definition of a run's step times ({@link StepStats#stepTimes}). */
    private double[] steps() {
        return StepStats.stepTimes(e);
    }

    /** The measures of compute outside gradient communication, by what the runs' evidence allows. */
    enum ComputeKind {
        /**
         * Every measured step where the host does the work (CPU ranks): its forward and optimizer phases, which hold no
         * gradient communication.
         */
        HOST_OWN(
                "the job's own time in forward and optimizer (less its wait for a core, every step)",
                "each step's host forward and optimizer boundaries and the main thread's run-queue wait inside them",
                "steps",
                EvidenceKind.STEPS),
        /** As HOST_OWN, for step rows written without the waits: the wall time of the two phases. */
        HOST_WORK(
                "compute outside communication (forward and optimizer, every step)",
                "each step's host forward, backward and optimizer boundaries",
                "steps",
                EvidenceKind.STEPS),
        /** Hooked iterations only: the step less the union of its buckets' communication intervals. */
        HOOKED(
                "compute outside communication",
                "hook ready to GPU-done / future-done times and step times",
                "hook + steps",
                EvidenceKind.HOOK);

        /** What is measured, in words. */
        final String words;
        /** Where it is read, in words. */
        final String source;
        /** Where it is read, in short. */
        final String sources;

        final EvidenceKind kind;

        ComputeKind(String words, String source, String sources, EvidenceKind kind) {
            this.words = words;
            this.source = source;
            this.sources = sources;
            this.kind = kind;
        }

        /** The host's phases where every run has them on every step; else the hooked iterations. */
        static ComputeKind forRuns(List<Fingerprint> runs) {
            if (!runs.isEmpty() && runs.stream().allMatch(f -> f.hostOwnCompute.length > 0)) {
                return HOST_OWN;
            }
            return !runs.isEmpty() && runs.stream().allMatch(f -> f.hostCompute.length > 0) ? HOST_WORK : HOOKED;
        }

        double[] of(Fingerprint f) {
            return this == HOST_OWN ? f.hostOwnCompute : this == HOST_WORK ? f.hostCompute : f.compute;
        }

        /**
         * The machine's load is taken out of this measure: a decided change of it is the job's, whether or not the
         * step moved with it (a sleep frees the cores that the machine's other work then fills).
         */
        boolean ownTime() {
            return this == HOST_OWN;
        }
    }

    /** Every measured step has host phases, and they are work, not GPU issue (the host is the device). */
    private boolean hostWork() {
        List<Evidence.Step> m = measuredSteps();
        return !m.isEmpty()
                && m.stream()
                        .allMatch(s -> s.hostPhases() != null && !s.hostPhases().issueOnly());
    }

    /** Every measured step carries the main thread's run-queue wait inside its forward and optimizer phases. */
    private boolean waitsKnown() {
        return measuredSteps().stream().allMatch(s -> s.hostPhases().forwardRunQueueMs() != null);
    }

    /**
     * Per measured iteration, the median over ranks of the host's forward phase (forward start to backward start:
     * forward, loss, anything the job does before backward) plus its optimizer phase. On CPU ranks these are the
     * job's own work and hold no gradient AllReduce: DDP's reducer runs those inside backward, whose end waits for them
     * (reducer.cpp finalize_backward). Every step has them, where the hook-based estimate has one iteration in
     * {@code --hook-every}: a 20-step job gave one or two samples per run, too few to decide anything. Backward compute
     * is left out (on gloo it cannot be told from the wait for the last buckets without hook records); a slower model
     * or clock slows its forward too. Under load the forward phase stretches less than the backward, whose AllReduce
     * threads compete for the same cores (recorded beside two CPU burners: forward 79 → 97 ms while backward 124 → 200 ms
     * over three identical runs). With {@code lessWait} the main thread's wait for a core inside the two phases is
     * taken out: what is left is the job's own time there, on a core or blocked by itself (a sleep, a lock, a read),
     * which a busier machine does not stretch the way it stretches the wall time. A burst that lifted one run's forward
     * phase from about 100 to 180 ms made the three pairs of a 122 ms sleep read 3.1, 1.9 and 2.2x on the wall time;
     * the next three pairs, beside the same burners, read 59, 53, 59 ms against 168, 170, 168 ms of own time.
     */
    private double[] hostWorkCompute(boolean lessWait) {
        TreeMap<Integer, List<Double>> perIt = new TreeMap<>();
        for (Evidence.Step s : measuredSteps()) {
            Evidence.HostPhases h = s.hostPhases();
            double ms =
                    ((h.backwardStartNs() - h.forwardStartNs()) + (h.optimizerEndNs() - h.optimizerStartNs())) / 1e6;
            if (lessWait) {
                ms -= h.forwardRunQueueMs() + h.optimizerRunQueueMs();
            }
            perIt.computeIfAbsent(s.iteration(), i -> new ArrayList<>()).add(ms);
        }
        return medians(perIt);
    }

    private static double[] medians(TreeMap<Integer, List<Double>> perIt) {
        double[] out = new double[perIt.size()];
        int i = 0;
        for (List<Double> l : perIt.values()) {
            out[i++] =
                    StepStats.median(l.stream().mapToDouble(Double::doubleValue).toArray());
        }
        return out;
    }

    /**
     * Per measured iteration: step time minus the time during which some bucket was in communication (hook entry to GPU
     * done where the run has GPU boundaries, else to future done), the median over ranks. What is left is forward,
     * backward outside communication and the optimizer: the compute a slower model, data loader or clock would change.
     * The communication time is the union of the buckets' intervals, not their sum: on gloo the next bucket is ready
     * while the previous one is still in flight, and a sum counts that time twice (a negative compute on a loaded
     * machine). The union lies inside the step, so the estimate is never negative; it is clamped at 0 for
     * clocks that disagree. On NCCL the future completes at enqueue, not when the AllReduce finished (the harness's
     * note; ProcessGroupNCCL futures are CUDA-aware), so only GPU done bounds the communication there.
     */
    private double[] compute() {
        List<Evidence.BucketRecord> hooks =
                e.ddp() == null ? List.of() : list(e.ddp().buckets());
        if (hooks.isEmpty()) {
            return new double[0];
        }
        Map<String, List<long[]>> intervals = new TreeMap<>();
        for (Evidence.BucketRecord b : hooks) {
            Long end = b.gpuDoneNs() != null ? b.gpuDoneNs() : b.futureDoneNs();
            if (b.readyNs() != null && end != null && end >= b.readyNs()) {
                intervals
                        .computeIfAbsent(b.rank() + "/" + b.iteration(), k -> new ArrayList<>())
                        .add(new long[] {b.readyNs(), end});
            }
        }
        TreeMap<Integer, List<Double>> perIt = new TreeMap<>();
        for (Evidence.Step s : measuredSteps()) {
            List<long[]> iv = intervals.get(s.rank() + "/" + s.iteration());
            if (iv != null) {
                perIt.computeIfAbsent(s.iteration(), i -> new ArrayList<>()).add(Math.max(0.0, s.ms() - unionMs(iv)));
            }
        }
        return medians(perIt);
    }

    /** The length of the union of [start, end] intervals, in ms. */
    static double unionMs(List<long[]> intervals) {
        List<long[]> iv = new ArrayList<>(intervals);
        iv.sort(Comparator.comparingLong(x -> x[0]));
        long total = 0;
        long curStart = Long.MIN_VALUE;
        long curEnd = Long.MIN_VALUE;
        for (long[] x : iv) {
            if (x[0] > curEnd) {
                if (curEnd > curStart) {
                    total += curEnd - curStart;
                }
                curStart = x[0];
                curEnd = x[1];
            } else {
                curEnd = Math.max(curEnd, x[1]);
            }
        }
        if (curEnd > curStart) {
            total += curEnd - curStart;
        }
        return total / 1e6;
    }

    private double[] kernelDurations() {
        return ncclKernels().stream()
                .filter(k -> k.durUs() != null)
                .mapToDouble(k -> k.durUs().doubleValue())
                .toArray();
    }

    private Correctness correctness() {
        Evidence.Replicas r = e.replicas();
        if (r == null) {
            return new Correctness(null, Map.of(), List.of(), null);
        }
        Map<String, List<Integer>> groups = new TreeMap<>();
        List<Double> samples = List.of();
        for (Evidence.Digest d : list(r.digests())) {
            groups.computeIfAbsent(String.valueOf(d.sha256()), k -> new ArrayList<>())
                    .add(d.rank());
        }
        Correctness tmp = new Correctness(r.equal(), groups, List.of(), src(r.source()));
        List<Integer> minority = tmp.minorityRanks();
        for (Evidence.Digest d : list(r.digests())) {
            if (!minority.contains(d.rank()) && d.samples() != null) {
                samples = d.samples();
                break;
            }
        }
        return new Correctness(r.equal(), groups, samples, src(r.source()));
    }
}

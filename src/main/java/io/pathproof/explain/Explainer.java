package io.pathproof.explain;

import io.pathproof.ddp.Bucket;
import io.pathproof.diagnose.Diagnosis;
import io.pathproof.diagnose.Layer;
import io.pathproof.evidence.Evidence;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.CommunicatorPrediction;
import io.pathproof.nccl.NcclAlgorithm;
import io.pathproof.predict.Prediction;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Answers the method's 16 exam questions (seed, "最终验收题") for a scenario, with the numbers computed from its
 * prediction and, when a run is given, from the run's evidence. Every number comes from the prediction or the
 * evidence passed in; nothing is looked up.
 */
public final class Explainer {
    /** One answer: question number, the question, the answer, and what the answer rests on. */
    public record Answer(int number, String question, String answer, String basis) {}

    private Explainer() {}

    public static List<Answer> explain(Prediction p, Evidence run) {
        return explain(p, run, null);
    }

    /**
     * The 16 answers; 14 and 15 come from {@code diagnosis} (this run's blind diagnosis) when given, and say that there
     * is no regression here otherwise.
     */
    public static List<Answer> explain(Prediction p, Evidence run, Diagnosis diagnosis) {
        int ranks = p.inputs().path("ranks").asInt();
        List<Bucket> steady = p.buckets().rebuilt().isEmpty()
                ? p.buckets().construction()
                : p.buckets().rebuilt();
        Bucket first = steady.get(0);
        CollectivePrediction c = p.collectives().stream()
                .filter(x -> x.bucket() == first.index())
                .findFirst()
                .orElse(null);
        CommunicatorPrediction comm = p.communicator();
        return new ArrayList<>(List.of(
                payload(p, steady, first),
                bucketReady(first),
                hookTiming(run),
                streamDependency(),
                endEventAndWatchdog(),
                tuningBeforePlan(),
                algorithmInSource(p, c),
                channels(p, c, comm, run),
                steps(c, comm, ranks),
                busFactor(c, first, ranks),
                p2pAgainstGdr(comm),
                kernelName(c),
                replicaEquality(run),
                regressionSeparated(diagnosis),
                rightFix(diagnosis),
                newBucketShape()));
    }

    /** The first steady bucket's payload in elements. */
    private static Answer payload(Prediction p, List<Bucket> steady, Bucket first) {
        long elements = first.bytes() / first.dtype().elementSize();
        return new Answer(
                1,
                "How many elements does the bucket's parameter payload hold?",
                String.format(
                        Locale.ROOT,
                        "%,d bytes / %d bytes per %s = %,d elements (%d parameter(s), %d bucket(s) per iteration once rebuilt)",
                        first.bytes(),
                        first.dtype().elementSize(),
                        first.dtype().torchName(),
                        elements,
                        p.buckets().parameterCount(),
                        steady.size()),
                "workload shapes and dtypes; ddp bucket plan");
    }

    private static Answer bucketReady(Bucket first) {
        return new Answer(
                2,
                "When does DDP consider a bucket ready?",
                "When the Reducer has marked every variable of the bucket ready (its pending count reaches 0) during backward; "
                        + "buckets are then reduced strictly in index order, so bucket " + first.index() + " with "
                        + first.params().size()
                        + " parameter(s) launches once all of them have gradients and all lower-index buckets have launched.",
                "reducer.cpp mark_variable_ready / mark_bucket_ready");
    }

    private static Answer hookTiming(Evidence run) {
        return new Answer(
                3,
                "How does the comm hook's ready time differ from GPU completion?",
                "The hook runs on the host when the bucket is ready, before any NCCL work is even enqueued; the returned Future "
                        + "completes later on the host, and the GPU finishes the AllReduce kernel later still (CUDA end event). "
                        + hookGaps(run),
                run == null ? "ProcessGroupNCCL source" : "hook records of the run (three boundaries per bucket)");
    }

    private static Answer streamDependency() {
        return new Answer(
                4,
                "Why does ProcessGroupNCCL need a stream dependency?",
                "The gradient is produced on the user's compute stream but NCCL runs on its own stream; syncStream records an "
                        + "event on the user stream and makes the NCCL stream wait for it, or NCCL could read the bucket before the "
                        + "gradient copy into it has finished.",
                "ProcessGroupNCCL::collective syncStream");
    }

    private static Answer endEventAndWatchdog() {
        return new Answer(
                5,
                "What do the Work end event and the watchdog each do?",
                "ncclEndEvent is recorded on the NCCL stream after ncclAllReduce and marks GPU completion of this Work; the "
                        + "watchdog thread polls queued Works, retires completed ones (flight recorder state) and times out stuck ones.",
                "ProcessGroupNCCL.cpp workEnqueue / watchdogHandler");
    }

    private static Answer tuningBeforePlan() {
        return new Answer(
                6,
                "Does NCCL tuning happen before or after task/plan?",
                "Before: ncclPrepareTasks calls getAlgoInfo (cost table, algorithm/protocol, channel and thread counts) and only "
                        + "then are tasks scheduled into the plan (scheduleCollTasksToPlan) and launched.",
                "enqueue.cc ncclPrepareTasks → scheduleCollTasksToPlan");
    }

    /** The chosen algorithm and protocol as nccl_common.h numbers them. */
    private static Answer algorithmInSource(Prediction p, CollectivePrediction c) {
        return new Answer(
                7,
                "How do Algo " + (c == null ? "?" : c.algorithmId()) + "/proto " + (c == null ? "?" : c.protocolId())
                        + " bind to fixed source?",
                c == null || c.noKernel()
                        ? "No NCCL algorithm is chosen here (" + (c == null ? "no NCCL collective" : "one rank: a copy")
                                + ")."
                        : String.format(
                                Locale.ROOT,
                                "nccl_common.h numbers algorithms Tree=0 Ring=1 … and protocols LL=0 LL128=1 Simple=2: "
                                        + "Algo %d = %s, proto %d = %s, chosen because its cost-model time %s µs is the smallest entry of the table%s.",
                                c.algorithmId(),
                                c.algorithm(),
                                c.protocolId(),
                                c.protocol(),
                                c.tunerTimeUs() == null ? "?" : c.tunerTimeUs().toPlainString(),
                                masked(p)),
                "predicted tuning table");
    }

    private static Answer channels(Prediction p, CollectivePrediction c, CommunicatorPrediction comm, Evidence run) {
        return new Answer(
                8,
                "How are the channels shown by both INIT and the kernel?",
                comm == null
                        ? "No NCCL communicator (backend " + p.backend() + ")."
                        : String.format(
                                Locale.ROOT,
                                "INIT prints \"%d coll channels\"; the kernel launches gridX = %s blocks (channels used for "
                                        + "this size, ≤ the communicator's). %s",
                                comm.collChannels(),
                                c == null ? "?" : Integer.toString(c.gridX()),
                                observedChannels(run)),
                "predicted communicator and launch shape"
                        + (run == null ? "" : "; INIT lines and kernel trace of the run"));
    }

    private static Answer p2pAgainstGdr(CommunicatorPrediction comm) {
        return new Answer(
                11,
                "What is the difference between P2P direct and GDR?",
                "P2P moves data GPU↔GPU inside a node (NVLink or PCIe, buffers mapped by CUDA IPC/cuMem); GPUDirect RDMA is a NIC "
                        + "reading/writing GPU memory for the inter-node NET transport. Predicted transport here: "
                        + (comm == null ? "none (gloo)" : comm.transport() + perPair(comm)) + ".",
                "p2p.cc vs net.cc");
    }

    /**
     * Where a host's GPU pairs differ (NCCL picks the transport per connection, transport.cc@v2.28.9-1:23-42): the
     * pairs of each transport but the commonest, then the commonest for the rest; a pair whose two directions agree is
     * named once ("0-1").
     */
    private static String perPair(CommunicatorPrediction comm) {
        if (comm.peerTransports().isEmpty()) {
            return "";
        }
        java.util.Map<String, List<String>> byTransport = new java.util.LinkedHashMap<>();
        java.util.Map<String, Integer> directed = new java.util.HashMap<>();
        comm.peerTransports().forEach((pair, t) -> {
            String[] ends = pair.split("->");
            String back = comm.peerTransports().get(ends[1] + "->" + ends[0]);
            String kind = t.contains(": ") ? t.substring(0, t.indexOf(": ")) : t;
            directed.merge(kind, 1, Integer::sum);
            if (!t.equals(back)) {
                byTransport.computeIfAbsent(kind, k -> new ArrayList<>()).add(pair);
            } else if (Integer.parseInt(ends[0]) < Integer.parseInt(ends[1])) {
                byTransport.computeIfAbsent(kind, k -> new ArrayList<>()).add(ends[0] + "-" + ends[1]);
            }
        });
        String commonest = null;
        for (java.util.Map.Entry<String, Integer> e : directed.entrySet()) {
            if (commonest == null
                    || e.getValue() > directed.get(commonest)
                    || (e.getValue().equals(directed.get(commonest))
                            && e.getKey().compareTo(commonest) < 0)) {
                commonest = e.getKey();
            }
        }
        List<String> parts = new ArrayList<>();
        for (java.util.Map.Entry<String, List<String>> e : byTransport.entrySet()) {
            if (!e.getKey().equals(commonest)) {
                parts.add(e.getKey() + " between ranks " + String.join(", ", e.getValue()));
            }
        }
        return " (per GPU pair: " + String.join("; ", parts) + "; " + commonest + " between the other pairs)";
    }

    private static Answer kernelName(CollectivePrediction c) {
        return new Answer(
                12,
                "Why can the kernel name not prove the protocol?",
                "NCCL emits one __global__ kernel per (collective, type, ring-or-tree), named with the Sum and LL suffixes; every "
                        + "other protocol runs inside it as a device function picked at run time. Predicted symbol: "
                        + (c == null || c.kernelName() == null ? "none" : c.kernelName()) + ", running protocol "
                        + (c == null ? "?" : c.protocol()) + ".",
                "device/generate.py best_kernel");
    }

    private static Answer replicaEquality(Evidence run) {
        return new Answer(
                13,
                "What does replica equality add?",
                "Numerical correctness: a kernel that ran proves execution, not that every rank ends with the same parameters. "
                        + replicas(run),
                run == null ? "method" : "replica digests of the run");
    }

    private static Answer newBucketShape() {
        return new Answer(
                16,
                "Can you write a prediction for a new bucket shape before running it?",
                "Yes: pathproof predict --workload FILE (JSON, or one JSON object per parameter dumped from a real model) "
                        + "--topology … --nccl … --torch … -o pred.json seals it; then run and accept against that file.",
                "pathproof predict");
    }

    /**
     * The steps of the algorithm NCCL was predicted to run, not always the ring's. Ring: reduce-scatter then all-gather,
     * N−1 steps each per channel (src/device/all_reduce.h runRing). Tree: no such phases; each chunk is reduced up the
     * tree and broadcast back down (runTreeUpDown / runTreeSplit): a chain of the ranks of one node, then NCCL's double
     * binary tree across nodes (src/graph/trees.cc ncclGetDtree), so depth (ranks per node − 1) + ⌈log2 nodes⌉ hops each
     * way. NVLS and CollNet reduce in the switch or the network: neither has per-rank ring steps.
     */
    static Answer steps(CollectivePrediction c, CommunicatorPrediction comm, int ranks) {
        String q = "How many reduce-scatter and all-gather steps does each rank do per channel?";
        if (c == null || c.noKernel()) {
            return new Answer(
                    9,
                    q,
                    ranks <= 1
                            ? "None: one rank copies its buffer; no step is taken."
                            : "No NCCL collective is predicted here (backend gloo).",
                    c == null ? "no NCCL prediction" : "1-rank communicator");
        }
        int nodes = comm == null ? 1 : Math.max(1, comm.nNodes());
        int perNode = Math.max(1, ranks / nodes);
        NcclAlgorithm algo = NcclAlgorithm.parse(c.algorithm());
        if (algo == NcclAlgorithm.RING) {
            return new Answer(
                    9,
                    q,
                    String.format(
                            Locale.ROOT,
                            "Ring: N−1 = %d reduce-scatter and N−1 = %d all-gather steps per channel "
                                    + "(N = %d ranks), each moving 1/N of the channel's share.",
                            c.reduceScatterSteps(),
                            c.allGatherSteps(),
                            ranks),
                    "predicted algorithm Ring; src/device/all_reduce.h runRing");
        }
        if (algo == NcclAlgorithm.TREE) {
            int inter = nodes <= 1 ? 0 : 32 - Integer.numberOfLeadingZeros(nodes - 1);
            int depth = (perNode - 1) + inter;
            return new Answer(
                    9,
                    q,
                    String.format(
                            Locale.ROOT,
                            "Tree: no reduce-scatter or all-gather phase. Each chunk is reduced up the tree "
                                    + "and broadcast back down: a chain through the %d rank(s) of a node (%d hop(s)) then a double binary tree over %d node(s) "
                                    + "(%d hop(s)), so %d hop(s) up and %d down per chunk, pipelined.",
                            perNode,
                            perNode - 1,
                            nodes,
                            inter,
                            depth,
                            depth),
                    "predicted algorithm Tree; src/device/all_reduce.h runTreeUpDown/runTreeSplit, src/graph/trees.cc");
        }
        boolean inSwitch = algo == NcclAlgorithm.NVLS || algo == NcclAlgorithm.NVLS_TREE;
        return new Answer(
                9,
                q,
                c.algorithm() + ": the reduction happens in the " + (inSwitch ? "NVSwitch" : "network")
                        + " (in-switch/in-network), so ranks take no ring reduce-scatter/all-gather steps.",
                "predicted algorithm " + c.algorithm());
    }

    /** nccl-tests' bus bandwidth factor is a definition, the same for every algorithm; what moves per rank is not. */
    static Answer busFactor(CollectivePrediction c, Bucket first, int ranks) {
        String q = "How is the bus factor derived?";
        double f = c == null ? 2.0 * (ranks - 1) / ranks : c.busFactor();
        long bus = c == null ? Math.round(first.bytes() * 2.0 * (ranks - 1) / ranks) : c.busBytes();
        String base = String.format(
                Locale.ROOT,
                "nccl-tests defines AllReduce bus bytes as payload × 2(N−1)/N: 2×%d/%d = %s; %,d payload bytes → %,d bus bytes. ",
                ranks - 1,
                ranks,
                fmt(f),
                first.bytes(),
                bus);
        String why;
        if (c == null || c.noKernel()) {
            why = ranks <= 1
                    ? "With one rank nothing crosses a link."
                    : "No NCCL collective here (gloo); the factor is the ring's by definition.";
        } else if (NcclAlgorithm.parse(c.algorithm()) == NcclAlgorithm.RING) {
            why =
                    "For the predicted Ring it is exactly what each rank sends: N−1 chunks of 1/N in reduce-scatter and again in all-gather.";
        } else {
            why = "The factor is a definition that makes algorithms comparable; the predicted " + c.algorithm()
                    + " does not move 2(N−1)/N per rank "
                    + "(a tree sends each chunk up once and down once), so its bus bandwidth is a normalized figure, not link traffic.";
        }
        return new Answer(
                10,
                q,
                base + why,
                c == null
                        ? "nccl-tests busbw definition"
                        : "predicted algorithm " + c.algorithm() + "; nccl-tests busbw definition");
    }

    /** NCCL_ALGO / NCCL_PROTO mask the table before the minimum is taken (src/graph/tuning.cc): say so when set. */
    private static String masked(Prediction p) {
        List<String> m = new ArrayList<>();
        for (String k : List.of("NCCL_ALGO", "NCCL_PROTO")) {
            String v = p.inputs().path("env").path(k).asText("");
            if (!v.isEmpty()) {
                m.add(k + "=" + v);
            }
        }
        return m.isEmpty() ? "" : " that " + String.join(" and ", m) + " leave" + (m.size() == 1 ? "s" : "");
    }

    private static Answer regressionSeparated(Diagnosis d) {
        String q = "How is a regression separated from other causes?";
        if (d == null) {
            return new Answer(
                    14, q, "No regression here: no variant run was diagnosed against this one.", "no diagnosis given");
        }
        StringBuilder sb = new StringBuilder();
        sb.append("This run's diagnosis: ").append(d.conclusion());
        if (d.rootCause() != null) {
            sb.append(", layer ")
                    .append(d.rootCause().layer())
                    .append(" (owner ")
                    .append(d.rootCause().owner())
                    .append("): ")
                    .append(d.rootCause().change())
                    .append(". ");
        }
        sb.append("Correctness ")
                .append(d.correctness().verdict().label())
                .append("; step time ")
                .append(d.regression().verdict());
        if (d.regression().ratio() != null) {
            sb.append(String.format(
                    Locale.ROOT,
                    " (median ratio %.3f, 95%% CI %.3f..%.3f)",
                    d.regression().ratio(),
                    d.regression().ciLow(),
                    d.regression().ciHigh()));
        }
        sb.append(". Eliminated in order: ");
        sb.append(
                d.eliminated().isEmpty()
                        ? "none"
                        : d.eliminated().stream().map(e -> e.layer().id()).collect(Collectors.joining(", ")));
        List<String> changed = d.diffs().stream()
                .filter(Diagnosis.LayerDiff::changed)
                .map(l -> l.layer().id())
                .toList();
        sb.append("; changed in the path fingerprint: ")
                .append(changed.isEmpty() ? "nothing" : String.join(", ", changed))
                .append('.');
        return new Answer(14, q, sb.toString(), "pathproof diagnose of " + d.variant() + " against " + d.baseline());
    }

    private static Answer rightFix(Diagnosis d) {
        String q = "What is the right fix, and what are wrong mitigations?";
        if (d != null && "inconclusive".equals(d.conclusion())) {
            // Undecided is not "no regression": neither a fix nor its absence can be claimed yet.
            return new Answer(
                    15,
                    q,
                    "Not decided yet: the step-time comparison is inconclusive, so no fault is named and none can be fixed; "
                            + d.rootCause().fix() + ".",
                    "pathproof diagnose: inconclusive");
        }
        if (d == null
                || d.rootCause() == null
                || d.rootCause().layer() == Layer.NONE && !d.regression().detected()) {
            return new Answer(
                    15,
                    q,
                    "No regression here, so nothing to fix; a mitigation applied anyway would only add a change to explain.",
                    d == null ? "no diagnosis given" : "pathproof diagnose: " + d.conclusion());
        }
        return new Answer(
                15,
                q,
                "Fix: " + d.rootCause().fix() + ". Wrong mitigations: "
                        + String.join("; ", d.rootCause().wrongMitigations()) + ". Proof of the fix: "
                        + d.rootCause().rerun() + ".",
                "pathproof diagnose root cause (" + d.rootCause().layer() + ")");
    }

    private static String fmt(double d) {
        return String.format(Locale.ROOT, "%.4f", d).replaceAll("0+$", "").replaceAll("\\.$", "");
    }

    private static String hookGaps(Evidence run) {
        if (run == null
                || run.ddp() == null
                || run.ddp().buckets() == null
                || run.ddp().buckets().isEmpty()) {
            return "";
        }
        List<Long> ready2done = run.ddp().buckets().stream()
                .filter(b -> b.readyNs() != null && b.futureDoneNs() != null)
                .map(b -> b.futureDoneNs() - b.readyNs())
                .sorted()
                .collect(Collectors.toList());
        if (ready2done.isEmpty()) {
            return "";
        }
        return String.format(
                Locale.ROOT,
                "In this run the median hook-ready → future-done gap is %.3f ms over %d records.",
                ready2done.get(ready2done.size() / 2) / 1e6,
                ready2done.size());
    }

    private static String observedChannels(Evidence run) {
        if (run == null
                || run.nccl() == null
                || run.nccl().communicators() == null
                || run.nccl().communicators().isEmpty()) {
            return "";
        }
        Evidence.Communicator cm = run.nccl().communicators().get(0);
        String grids = run.kernels() == null
                ? ""
                : run.kernels().stream()
                        .filter(Evidence.Kernel::nccl)
                        .map(k -> String.valueOf(k.grid() == null ? "?" : k.grid()[0]))
                        .distinct()
                        .collect(Collectors.joining(","));
        return "Observed: " + cm.collChannels() + " coll channels" + (grids.isEmpty() ? "" : ", kernel gridX " + grids)
                + ".";
    }

    private static String replicas(Evidence run) {
        if (run == null || run.replicas() == null || run.replicas().equal() == null) {
            return "";
        }
        return "In this run: replicas " + (run.replicas().equal() ? "equal" : "DIFFER") + " across "
                + (run.replicas().digests() == null
                        ? "?"
                        : run.replicas().digests().size()) + " ranks.";
    }
}

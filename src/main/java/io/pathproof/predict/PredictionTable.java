package io.pathproof.predict;

import io.pathproof.ddp.Bucket;
import io.pathproof.nccl.CollectivePrediction;
import io.pathproof.nccl.CommunicatorPrediction;
import io.pathproof.nccl.GraphSummary;
import java.util.List;
import java.util.Locale;

/** The readable form of a prediction: what a performance engineer reads before the run. */
public final class PredictionTable {
    private PredictionTable() {}

    public static String render(Prediction p) {
        StringBuilder sb = new StringBuilder();
        scenario(sb, p);
        buckets(sb, p.buckets());
        communicator(sb, p.communicator());
        collectives(sb, p.collectives());
        assumptions(sb, p.assumptions());
        seal(sb, p.seal());
        return sb.toString();
    }

    /** The scenario's name, ranks, versions, backend and the environment it sets. */
    private static void scenario(StringBuilder sb, Prediction p) {
        var in = p.inputs();
        sb.append("pathproof prediction — scenario ")
                .append(in.path("name").asText())
                .append(", ")
                .append(in.path("ranks").asInt())
                .append(" ranks, torch ")
                .append(in.path("versions").path("torch").path("text").asText())
                .append(", NCCL ")
                .append(in.path("versions").path("nccl").path("text").asText())
                .append(", backend ")
                .append(p.backend())
                .append('\n');
        if (!in.path("env").isEmpty()) {
            sb.append("env: ").append(in.path("env").toString()).append('\n');
        }
    }

    /** The DDP bucket plans: as constructed and, where DDP rebuilds them, as rebuilt. */
    private static void buckets(StringBuilder sb, Prediction.Buckets b) {
        sb.append(String.format(
                Locale.ROOT, "%nparameters: %d taking gradients, %,d bytes%n", b.parameterCount(), b.parameterBytes()));
        bucketTable(
                sb,
                "construction buckets"
                        + (b.firstRebuiltIteration() < 0 || b.rebuilt().isEmpty()
                                ? " (every iteration: DDP never rebuilds here)"
                                : " (iterations 0.." + (b.firstRebuiltIteration() - 1) + ")"),
                b.construction());
        if (!b.rebuilt().isEmpty() && b.firstRebuiltIteration() >= 0) {
            bucketTable(sb, "rebuilt buckets (iterations " + b.firstRebuiltIteration() + "..)", b.rebuilt());
        }
    }

    private static void communicator(StringBuilder sb, CommunicatorPrediction c) {
        if (c == null) {
            return;
        }
        sb.append("\ncommunicator\n");
        if (c.cannotPredict() != null) {
            sb.append("  ").append(c.cannotPredict()).append('\n');
        }
        // Which rows each note leaves UNPROVEN in accept, so the table and the JSON say the same.
        c.voids().forEach((note, fields) -> sb.append("  voids ")
                .append(String.join(", ", fields))
                .append(": ")
                .append(note)
                .append('\n'));
        sb.append(String.format(
                Locale.ROOT,
                "  collChannels %d, p2pChannels %d (%d per peer), nvlsChannels %d, transport %s%n",
                c.collChannels(),
                c.p2pChannels(),
                c.p2pChannelsPerPeer(),
                c.nvlsChannels(),
                c.transport()));
        graph(sb, "ring graph", c.ringGraph());
        graph(sb, "tree graph", c.treeGraph());
        if (!c.nodeGraphs().isEmpty()) {
            // The nodes' own searches differ: each node's ranks print theirs before the ranks keep the minimum above.
            sb.append("  the nodes' own searches differ; the graphs above are the minimum every rank keeps:\n");
            for (io.pathproof.nccl.CommunicatorPrediction.NodeGraphs n : c.nodeGraphs()) {
                String who =
                        "node " + n.host() + " (ranks " + n.firstRank() + "-" + (n.firstRank() + n.ranks() - 1) + ")";
                graph(sb, who + " ring", n.ring());
                graph(sb, who + " tree", n.tree());
            }
        }
        if (c.channelsInitLine() != null) {
            sb.append("  INIT: ").append(c.channelsInitLine()).append('\n');
        }
        if (c.threadThresholdsLine() != null) {
            sb.append("  INIT: ").append(c.threadThresholdsLine()).append('\n');
        }
        if (!c.trees().isEmpty()) {
            sb.append("  INIT (rank 0): Trees ").append(c.trees().get(0)).append('\n');
        }
    }

    /** One row per bucket's AllReduce, then the lines NCCL prints for it. */
    private static void collectives(StringBuilder sb, List<CollectivePrediction> collectives) {
        if (collectives.isEmpty()) {
            return;
        }
        sb.append("\ncollectives (AllReduce SUM, one per bucket)\n");
        sb.append(String.format(
                Locale.ROOT,
                "  %6s %12s %-7s %-7s %13s %4s %6s %6s %6s %9s %14s %-20s %12s%n",
                "bucket",
                "bytes",
                "algo",
                "proto",
                "tunerTimeUs",
                "ch",
                "gridX",
                "blockX",
                "RS+AG",
                "busFactor",
                "busBytes",
                "transport",
                "expectedUs"));
        collectives.forEach(x -> sb.append(row(x)));
        for (CollectivePrediction x : collectives) {
            if (x.tuningLine() != null) {
                sb.append("  TUNING (bucket ")
                        .append(x.bucket())
                        .append("): ")
                        .append(x.tuningLine())
                        .append('\n');
            }
            if (x.kernelName() != null) {
                sb.append("  kernel symbol (bucket ")
                        .append(x.bucket())
                        .append("): ")
                        .append(x.kernelName())
                        .append("  — the symbol's suffix is not the protocol\n");
            }
        }
        sb.append(
                "  tunerTimeUs is NCCL's cost-model estimate; expectedUs is pathproof's link-bandwidth estimate of the kernel."
                        + " Neither is a measurement.\n");
    }

    /** A collective's row: NCCL's choice, its launch shape and the two time estimates. */
    private static String row(CollectivePrediction x) {
        return String.format(
                Locale.ROOT,
                "  %6d %12d %-7s %-7s %13s %4d %6d %6d %6s %9.4f %14d %-20s %12s%n",
                x.bucket(),
                x.bytes(),
                x.algorithm() + "(" + x.algorithmId() + ")",
                x.protocol() + "(" + x.protocolId() + ")",
                x.tunerTimeUs() == null ? "-" : x.tunerTimeUs().toPlainString(),
                x.channels(),
                x.gridX(),
                x.blockX(),
                x.reduceScatterSteps() + "+" + x.allGatherSteps(),
                x.busFactor(),
                x.busBytes(),
                x.transport(),
                x.expectedTimeUs() == null ? "-" : x.expectedTimeUs().toPlainString());
    }

    private static void assumptions(StringBuilder sb, List<String> assumptions) {
        if (assumptions.isEmpty()) {
            return;
        }
        sb.append("\nassumptions\n");
        for (String a : assumptions) {
            sb.append("  - ").append(a).append('\n');
        }
    }

    private static void seal(StringBuilder sb, Prediction.Seal seal) {
        if (seal == null) {
            return;
        }
        sb.append("\nseal: sha256 ")
                .append(seal.sha256())
                .append(", created ")
                .append(seal.createdAt())
                .append(", ")
                .append(seal.tool())
                .append('\n');
    }

    private static void bucketTable(StringBuilder sb, String title, List<Bucket> buckets) {
        sb.append(title).append('\n');
        for (Bucket k : buckets) {
            sb.append(String.format(
                    Locale.ROOT,
                    "  #%d %,14d B %-9s %s%s%n",
                    k.index(),
                    k.bytes(),
                    k.dtype().torchName(),
                    k.isLast() ? "last " : "",
                    abbreviate(k.params())));
        }
    }

    private static String abbreviate(List<String> params) {
        if (params.size() <= 6) {
            return String.valueOf(params);
        }
        return "[" + String.join(", ", params.subList(0, 3)) + ", … " + (params.size() - 5) + " more …, "
                + String.join(", ", params.subList(params.size() - 2, params.size())) + "]";
    }

    private static void graph(StringBuilder sb, String name, GraphSummary g) {
        if (g == null) {
            return;
        }
        sb.append(String.format(
                Locale.ROOT,
                "  %s: pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d%n",
                name,
                g.pattern(),
                g.crossNic(),
                g.nChannels(),
                g.bwIntra(),
                g.bwInter(),
                g.typeIntra(),
                g.typeInter(),
                g.sameChannels() ? 1 : 0));
    }
}

package io.pathproof.nccl;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * What ncclCommInitRank will settle on for the scenario's communicator: channel counts after Postset and the env
 * clamps, p2p channels, the ring and tree graphs, transport per peer kind, and the INIT lines it will print.
 * {@code cannotPredict} is non-null when an input the model needs is missing (then the numbers are not meaningful).
 * {@code voids} says, for each cannot-predict note, which predicted fields it voids (the acceptance rows of those
 * names are UNPROVEN with that note): {@code algorithm}, {@code protocol}, {@code tuner-time}, {@code coll-channels},
 * {@code ring-order}, {@code launch-shape} (channels used → gridX, blockX), {@code transport}, {@code busbw},
 * {@code tuning-table}. Omitted from the JSON when empty, so predictions sealed before it existed keep their seal.
 * {@code trees}: each rank's trees as its {@code Trees} INIT line lists them ({@code [0] 1/8/-1->0->-1 …}), rank by
 * rank, ≤ 64 ranks; omitted when empty likewise.
 * {@code nodeGraphs}: where the nodes differ (a node's NICs slower, another node shape), each node's own search, which
 * its ranks print as their {@code Pattern …} lines before the ranks keep the minimum (init.cc@v2.28.9-1:1175-1192);
 * {@code ringGraph} and {@code treeGraph} are that minimum. Omitted when every node found the same.
 * {@code transport} names each transport kind once ("P2P/CUMEM + NET/IB", " + " between kinds, " or " between
 * mechanisms the model cannot choose, the reason after ": "). NCCL picks the transport per connection
 * (transport.cc@v2.28.9-1:23-42), so where the GPU pairs of a host do not all take the same one (the driver denies
 * some pairs peer access, some pairs are beyond the P2P level), {@code peerTransports} gives each directed pair of
 * GPUs on one host its own, keyed by rank as the connector lines print them ({@code "0->1": "SHM"}); omitted when
 * every such pair takes the same.
 * {@code tuningTable}: the AllReduce row of the table rank 0 prints at init, every algorithm and protocol of the
 * version ({@link TuningCell}); omitted when empty (one rank; predictions sealed before it existed).
 */
public record CommunicatorPrediction(
        int nRanks,
        int nNodes,
        int collChannels,
        int p2pChannels,
        int p2pChannelsPerPeer,
        int nvlsChannels,
        GraphSummary ringGraph,
        GraphSummary treeGraph,
        String transport,
        List<String> ringOrders,
        String channelsInitLine,
        String threadThresholdsLine,
        String cannotPredict,
        List<String> notes,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, List<String>> voids,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<String> trees,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<NodeGraphs> nodeGraphs,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) Map<String, String> peerTransports,
        @JsonInclude(JsonInclude.Include.NON_EMPTY) List<TuningCell> tuningTable) {
    /** One node's own ring and tree search: its hostname, its first rank and how many ranks it holds. */
    public record NodeGraphs(String host, int firstRank, int ranks, GraphSummary ring, GraphSummary tree) {}

    /**
     * One cell of the table rank 0 prints at init: comm->latencies (µs) and comm->bandwidths (GB/s, 0 where the
     * algorithm is unavailable) of {@code function} (AllReduce, the one the model costs) for an algorithm and protocol,
     * and comm->maxThreads, as ncclTopoTuneModel computes them (graph/tuning.cc:504-533@v2.28.9-1): the communicator's
     * table, before the per-size corrections of ncclTopoGetAlgoTime.
     */
    public record TuningCell(
            String function,
            String algorithm,
            String protocol,
            java.math.BigDecimal latencyUs,
            java.math.BigDecimal bandwidthGBs,
            int maxThreads) {}

    /** Every field a cannot-predict note may void, in table order. */
    public static final List<String> VOIDABLE = List.of(
            "algorithm",
            "protocol",
            "tuner-time",
            "coll-channels",
            "ring-order",
            "launch-shape",
            "transport",
            "busbw",
            "tuning-table");

    public CommunicatorPrediction {
        ringOrders = ringOrders == null ? List.of() : List.copyOf(ringOrders);
        trees = trees == null ? List.of() : List.copyOf(trees);
        notes = notes == null ? List.of() : List.copyOf(notes);
        voids = voids == null ? Map.of() : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(voids));
        nodeGraphs = nodeGraphs == null ? List.of() : List.copyOf(nodeGraphs);
        tuningTable = tuningTable == null ? List.of() : List.copyOf(tuningTable);
        peerTransports = peerTransports == null
                ? Map.of()
                : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(peerTransports));
    }

    /**
     * The transport predicted from rank {@code from} to rank {@code to}: the pair's own where the host's pairs differ
     * ({@code peerTransports}), else the communicator's.
     */
    public String transportBetween(int from, int to) {
        String t = peerTransports.get(from + "->" + to);
        return t != null ? t : transport;
    }

    /**
     * The cannot-predict note that voids {@code field}, or null. A prediction that carries a note but no voids (sealed
     * before voids existed) voids every field: never judge what the model disclaimed.
     */
    public String voidedBy(String field) {
        if (cannotPredict == null) {
            return null;
        }
        if (voids.isEmpty()) {
            return cannotPredict;
        }
        java.util.List<String> notes = new java.util.ArrayList<>();
        voids.forEach((note, fields) -> {
            if (fields.contains(field)) {
                notes.add(note);
            }
        });
        return notes.isEmpty() ? null : String.join("; ", notes);
    }
}

package io.pathproof.run;

import io.pathproof.core.PathproofException;

/**
 * Where the ranks of pathproof's own job are: {@code perNode} on each of {@code nodes} nodes, this launcher being node
 * {@code nodeRank}, and rank 0's rendezvous {@code HOST:PORT} (null: this host and a free port). Several nodes need
 * the endpoint, since the other nodes' launchers must find rank 0.
 */
public record RankLayout(int perNode, int nodes, int nodeRank, String rdzvEndpoint) {
    public RankLayout {
        if (perNode < 1) {
            throw PathproofException.usage("--nproc: must be >= 1, got " + perNode);
        }
        if (nodes < 1) {
            throw PathproofException.usage("--nnodes: must be >= 1, got " + nodes);
        }
        if (nodeRank < 0 || nodeRank >= nodes) {
            throw PathproofException.usage("--node-rank: must be in 0.." + (nodes - 1) + ", got " + nodeRank);
        }
        if (nodes > 1 && (rdzvEndpoint == null || rdzvEndpoint.isBlank())) {
            throw PathproofException.usage("--rdzv-endpoint H:P is required with --nnodes > 1");
        }
    }

    /** One node of one rank: what a run is unless told otherwise. */
    static final RankLayout ONE = new RankLayout(1, 1, 0, null);

    int worldSize() {
        return perNode * nodes;
    }

    /** The endpoint as given, trimmed, or null when none was given. */
    String endpoint() {
        return rdzvEndpoint == null || rdzvEndpoint.isBlank() ? null : rdzvEndpoint.trim();
    }
}

package io.pathproof.nccl;

import java.util.ArrayList;
import java.util.List;

/**
 * How NCCL joins the per-host ring and tree graphs into the communicator's rings and trees: ncclTopoPreset (each
 * rank's place in its host's graph channels), the ring exchange on odd nodes, connectRings and connectTrees with the
 * double binary tree, then the channel duplication of ncclTopoPostset (graph/connect.cc@v2.28.9-1:19-92, 94-175,
 * 374-506; graph/trees.cc@v2.28.9-1:31-111). Its outputs are what the INIT log prints: each ring from rank 0
 * ({@code Channel 00/16 : 0 7 6 …}, graph/rings.cc:47) and each rank's trees ({@code Trees [0] 1/8/-1->0->-1 …},
 * init.cc:1218-1226).
 */
final class Postset {
    /** One host's share of the communicator: its graphs (ranks as the search placed them) and its first rank. */
    record HostGraph(TopoGraph ring, TopoGraph tree, int localRanks, int rankShift) {}

    private final int nRanks;
    private final int[][] ringNext; // [graph channel][rank], the rings before duplication
    private final int[][][] tree; // [tree 0/1][graph channel][rank] → {up, down0, down1, down2}
    private final int graphChannels;

    private Postset(int nRanks, int graphChannels) {
        this.nRanks = nRanks;
        this.graphChannels = graphChannels;
        this.ringNext = new int[graphChannels][nRanks];
        this.tree = new int[2][graphChannels][nRanks * 4];
    }

    /**
     * Joins the hosts' graphs. {@code graphChannels} is comm->nChannels when Postset runs: the smaller of the aligned
     * ring and tree channel counts (init.cc@v2.28.9-1:1090, 1175-1192).
     */
    static Postset of(
            List<HostGraph> hosts, int graphChannels, NcclVersionTable.RingExchange exchange, int alignedCrossNic) {
        // Every rank is on one host, placed node by node: the hosts' local ranks add up to the communicator. (A host's
        // graph holds the ranks of the host it was searched for, shifted to its own by rankShift; a host searched
        // for itself, as a node unlike the others is, has shift 0 and its ranks already global.)
        int nRanks = 0;
        for (HostGraph h : hosts) {
            nRanks += h.localRanks();
        }
        Postset p = new Postset(nRanks, graphChannels);
        int nNodes = hosts.size();
        for (int c = 0; c < graphChannels; c++) {
            int[] recv = new int[nNodes];
            int[] send = new int[nNodes];
            for (int n = 0; n < nNodes; n++) {
                HostGraph h = hosts.get(n);
                // "Alternate rings to avoid crossing rails": on odd nodes and an even channel count, a rank takes
                // the ring of channel c^1 (graph/connect.cc@v2.21.5-1:383-395, @v2.26.2-1:392-404,
                // @v2.28.9-1:392-405), when the version's rule holds: the aligned graph's crossNic set (≤ 2.25),
                // the aligned graph's crossNic 2 (2.26–2.27), the rank's own search ended with crossNic 2 (2.28+).
                boolean swap =
                        switch (exchange) {
                            case ALIGNED_CROSS_NIC -> alignedCrossNic != 0;
                            case ALIGNED_CROSS_NIC_TWO -> alignedCrossNic == 2;
                            case OWN_CROSS_NIC_TWO -> h.ring().crossNic == 2;
                        };
                int gc = swap && graphChannels % 2 == 0 && n % 2 == 1 ? c ^ 1 : c;
                int[] ring = shifted(h.ring().channel(gc, h.localRanks()), h.rankShift());
                recv[n] = ring[0];
                send[n] = ring[ring.length - 1];
                for (int i = 0; i + 1 < ring.length; i++) {
                    p.ringNext[c][ring[i]] = ring[i + 1];
                }
            }
            // connectRings (connect.cc@v2.28.9-1:94-112): each node's last rank sends to the next node's first.
            for (int n = 0; n < nNodes; n++) {
                p.ringNext[c][send[n]] = recv[(n + 1) % nNodes];
            }
            p.connectTrees(hosts, c);
        }
        return p;
    }

    /** ncclTopoPreset's intra-node chain and connectTrees (connect.cc@v2.28.9-1:49-60, 137-175) for graph channel c. */
    private void connectTrees(List<HostGraph> hosts, int c) {
        int nNodes = hosts.size();
        int[] toParent = new int[nNodes];
        int[] toChild0 = new int[nNodes];
        int[] toChild1 = new int[nNodes];
        for (int n = 0; n < nNodes; n++) {
            HostGraph h = hosts.get(n);
            int[] chain = shifted(h.tree().channel(c, h.localRanks()), h.rankShift());
            int pattern = h.tree().pattern;
            toParent[n] = chain[0];
            toChild0[n] = chain[pattern == TopoGraph.PATTERN_TREE ? 0 : 1 % chain.length];
            toChild1[n] = chain[pattern == TopoGraph.PATTERN_SPLIT_TREE ? 1 % chain.length : 0];
            for (int i = 0; i < chain.length; i++) {
                for (int t = 0; t < 2; t++) {
                    int[] me = tree[t][c];
                    int r = chain[i];
                    me[4 * r] = i == 0 ? -1 : chain[i - 1];
                    me[4 * r + 1] = i == chain.length - 1 ? -1 : chain[i + 1];
                    me[4 * r + 2] = -1;
                    me[4 * r + 3] = -1;
                }
            }
        }
        for (int node = 0; node < nNodes; node++) {
            int[][] d = dtree(nNodes, node); // {u, d0, d1, childType} for tree 0 and tree 1
            for (int t = 0; t < 2; t++) {
                int[] me = tree[t][c];
                int u = d[t][0];
                if (u != -1) {
                    int[] from = d[t][3] == 0 ? toChild0 : toChild1;
                    me[4 * toParent[node]] = from[u];
                }
                if (d[t][1] != -1) {
                    addDown(me, toChild0[node], toParent[d[t][1]]);
                }
                if (d[t][2] != -1) {
                    addDown(me, toChild1[node], toParent[d[t][2]]);
                }
            }
        }
    }

    private static void addDown(int[] me, int rank, int child) {
        for (int x = 1; x < 4; x++) {
            if (me[4 * rank + x] < 0) {
                me[4 * rank + x] = child;
                return;
            }
        }
    }

    /** ncclGetBtree (trees.cc@v2.28.9-1:31-70): {up, down0, down1, parentChildType}. */
    static int[] btree(int nranks, int rank) {
        int bit = 1;
        while (bit < nranks && (bit & rank) == 0) {
            bit <<= 1;
        }
        if (rank == 0) {
            return new int[] {-1, -1, nranks > 1 ? bit >> 1 : -1, 0};
        }
        int up = (rank ^ bit) | (bit << 1);
        if (up >= nranks) {
            up = rank ^ bit;
        }
        int childType = rank < up ? 0 : 1;
        int lowbit = bit >> 1;
        int down0 = lowbit == 0 ? -1 : rank - lowbit;
        int down1 = lowbit == 0 ? -1 : rank + lowbit;
        while (down1 >= nranks) {
            down1 = lowbit == 0 ? -1 : rank + lowbit;
            lowbit >>= 1;
        }
        return new int[] {up, down0, down1, childType};
    }

    /** ncclGetDtree (trees.cc@v2.28.9-1:88-111): a btree, and its mirror (even count) or shift (odd count). */
    static int[][] dtree(int nranks, int rank) {
        int[] t0 = btree(nranks, rank);
        int[] t1;
        if (nranks % 2 == 1) {
            int[] s = btree(nranks, (rank - 1 + nranks) % nranks);
            t1 = new int[] {
                s[0] == -1 ? -1 : (s[0] + 1) % nranks,
                s[1] == -1 ? -1 : (s[1] + 1) % nranks,
                s[2] == -1 ? -1 : (s[2] + 1) % nranks,
                s[3]
            };
        } else {
            int[] s = btree(nranks, nranks - 1 - rank);
            t1 = new int[] {
                s[0] == -1 ? -1 : nranks - 1 - s[0],
                s[1] == -1 ? -1 : nranks - 1 - s[1],
                s[2] == -1 ? -1 : nranks - 1 - s[2],
                s[3]
            };
        }
        return new int[][] {t0, t1};
    }

    /**
     * The graph channel and tree (0 or 1) behind communicator channel c: Postset puts tree 1 on the copies
     * c + graphChannels (connect.cc@v2.28.9-1:145-160), and every later copy (copyChannels, :355-364) repeats the
     * channels from the first in order.
     */
    private int[] source(int c) {
        int k = c % (2 * graphChannels);
        return new int[] {k % graphChannels, k < graphChannels ? 0 : 1};
    }

    /** Each ring as ncclBuildRings prints it from rank 0 (rings.cc@v2.28.9-1:40-48), for {@code commChannels}. */
    List<String> ringOrders(int commChannels) {
        List<String> out = new ArrayList<>();
        for (int c = 0; c < commChannels; c++) {
            int[] next = ringNext[source(c)[0]];
            StringBuilder sb = new StringBuilder("0");
            for (int i = 1, cur = next[0]; i < nRanks; i++, cur = next[cur]) {
                sb.append(' ').append(cur);
            }
            out.add(sb.toString());
        }
        return out;
    }

    /** Each rank's trees as its {@code Trees} INIT line lists them, without the word (init.cc@v2.28.9-1:1218-1226). */
    List<String> trees(int commChannels) {
        List<String> out = new ArrayList<>();
        for (int r = 0; r < nRanks; r++) {
            StringBuilder sb = new StringBuilder();
            for (int c = 0; c < commChannels; c++) {
                int[] src = source(c);
                int[] me = tree[src[1]][src[0]];
                sb.append(c == 0 ? "" : " ")
                        .append('[')
                        .append(c)
                        .append("] ")
                        .append(me[4 * r + 1])
                        .append('/')
                        .append(me[4 * r + 2])
                        .append('/')
                        .append(me[4 * r + 3])
                        .append("->")
                        .append(r)
                        .append("->")
                        .append(me[4 * r]);
            }
            out.add(sb.toString());
        }
        return out;
    }

    private static int[] shifted(int[] ranks, int shift) {
        int[] out = ranks.clone();
        for (int i = 0; i < out.length; i++) {
            out[i] += shift;
        }
        return out;
    }
}

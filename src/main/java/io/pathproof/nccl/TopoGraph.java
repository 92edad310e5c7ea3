package io.pathproof.nccl;

import java.util.Arrays;

/**
 * One graph (struct ncclTopoGraph, include/graph.h): a pattern, a number of channels, each channel an ordered list of
 * GPU ranks (and the NET at each end when the communicator spans hosts), the bandwidth per channel and the worst path
 * types used. Mutable like its C counterpart because the search copies it wholesale (memcpy) as it goes.
 */
final class TopoGraph {
    static final int PATTERN_BALANCED_TREE = 1;
    static final int PATTERN_SPLIT_TREE = 2;
    static final int PATTERN_TREE = 3;
    static final int PATTERN_RING = 4;
    static final int PATTERN_NVLS = 5;
    static final int PATTERN_COLLNET_DIRECT = 6;

    int id;
    int pattern;
    int crossNic;
    boolean collNet;
    int minChannels;
    int maxChannels;
    int nChannels;
    float bwIntra;
    float bwInter;
    float latencyInter;
    int typeIntra;
    int typeInter;
    int sameChannels;
    int nHops;
    int[] intra;
    int[] inter;

    TopoGraph(int id, int pattern, int minChannels, int maxChannels, int ngpus, int maxAllChannels) {
        this.id = id;
        this.pattern = pattern;
        this.minChannels = minChannels;
        this.maxChannels = maxChannels;
        this.intra = new int[maxAllChannels * Math.max(1, ngpus)];
        this.inter = new int[maxAllChannels * 2];
    }

    private TopoGraph() {}

    TopoGraph copy() {
        TopoGraph g = new TopoGraph();
        g.copyFrom(this);
        return g;
    }

    void copyFrom(TopoGraph o) {
        id = o.id;
        pattern = o.pattern;
        crossNic = o.crossNic;
        collNet = o.collNet;
        minChannels = o.minChannels;
        maxChannels = o.maxChannels;
        nChannels = o.nChannels;
        bwIntra = o.bwIntra;
        bwInter = o.bwInter;
        latencyInter = o.latencyInter;
        typeIntra = o.typeIntra;
        typeInter = o.typeInter;
        sameChannels = o.sameChannels;
        nHops = o.nHops;
        if (intra == null || intra.length != o.intra.length) {
            intra = o.intra.clone();
            inter = o.inter.clone();
        } else {
            System.arraycopy(o.intra, 0, intra, 0, intra.length);
            System.arraycopy(o.inter, 0, inter, 0, inter.length);
        }
    }

    /** The ranks of channel c, in ring (or chain) order. */
    int[] channel(int c, int ngpus) {
        return Arrays.copyOfRange(intra, c * ngpus, (c + 1) * ngpus);
    }

    /** The graph as the GRAPH line prints it; bandwidths as the shortest decimal of the float (20.6, not 20.600000381). */
    GraphSummary summary() {
        return new GraphSummary(
                pattern,
                nChannels,
                Double.parseDouble(Float.toString(bwIntra)),
                Double.parseDouble(Float.toString(bwInter)),
                NcclVersionTable.PATH_NAMES[typeIntra],
                NcclVersionTable.PATH_NAMES[typeInter],
                sameChannels == 1,
                crossNic);
    }
}

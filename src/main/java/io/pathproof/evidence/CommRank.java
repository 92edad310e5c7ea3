package io.pathproof.evidence;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one NCCL log says about one rank of one communicator, while the log is read. Identified inside a file by
 * (process, comm pointer); joined across files into an {@link Evidence.Communicator} by commId.
 */
final class CommRank {
    final long processKey;
    long ptr = -1;
    String host;
    Integer pid;
    Integer cudaDev;
    Integer nvmlDev;
    String busId;
    Integer rank;
    /** The launcher's tag on this rank's lines (srun, mpirun, torchrun): kept as a label, never used as the rank. */
    String launcherLabel;

    Integer nRanks;
    Integer nNodes;
    Integer localRanks;
    String commId;
    /** A split child's parent's commId (where its init line is in the log) and color: its name when it has no commId. */
    String splitOf;

    Integer splitColor;
    /** The network NCCL chose for this communicator ("Using network %s": IB, Socket, a plugin's name), or null. */
    String network;

    Integer collChannels;
    Integer collnetChannels;
    Integer nvlsChannels;
    Integer p2pChannels;
    Integer p2pPerPeer;
    Source channelsSource;
    String threadThresholds;
    Source thresholdsSource;
    /** The tuning table this rank printed (rank 0 does), or null. */
    TuningTableLines.Table tuningTable;

    final TreeMap<Integer, String> rings = new TreeMap<>();
    Source ringsSource;
    /** The total after the slash of the ring-order lines ("Channel 00/12 : …"), the channel count of old logs. */
    Integer ringTotal;

    Source ringTotalSource;
    String realBusId;
    String reportedBusId;
    Integer realCompCap;
    Integer reportedCompCap;
    Source emulatedSource;
    final List<String> trees = new ArrayList<>();
    /** Trees lines already read for this rank (their text): an identical one is not parsed again. */
    final java.util.Set<String> treeLines = new java.util.HashSet<>();

    final List<Evidence.Graph> graphs = new ArrayList<>();
    final List<Evidence.Connection> connections = new ArrayList<>();
    /** Connections already listed, without their source: a repeated connector line is kept once. */
    final java.util.Set<ConnKey> connSeen = new java.util.HashSet<>();
    /** The same, packed into one long when every field fits (see ConnectorLines#connection): no key object per line. */
    final LongMap<Boolean> connPacked = new LongMap<>();

    /** {@code dir}: 0 none printed, 1 [send], 2 [receive] (both ends of a NET connection are printed). */
    record ConnKey(
            int channel, int from, int to, String transport, boolean read, boolean gdr, boolean shared, int dir) {}

    boolean connectedRings;
    boolean connectedTrees;
    BigDecimal initTotal;
    Map<String, BigDecimal> initPhases;
    Source initSource;
    Source source;
    final Map<TuneKey, Agg> tuning = new LinkedHashMap<>();
    final Map<CollKey, Agg> colls = new LinkedHashMap<>();
    long facts;

    CommRank(long processKey, Source source) {
        this.processKey = processKey;
        this.source = source;
    }

    boolean bound() {
        return ptr != -1;
    }

    /** The NCCL rank printed by NCCL, else the rank in the file's name; a launcher's tag is never taken for it. */
    Integer effectiveRank(Integer fileRank) {
        return rank != null ? rank : fileRank;
    }

    /** Moves what {@code other} (read before this rank's comm pointer was known) holds into this one. */
    void absorb(CommRank other) {
        if (other == this) {
            return;
        }
        if (host == null) {
            host = other.host;
            pid = other.pid;
        }
        cudaDev = cudaDev != null ? cudaDev : other.cudaDev;
        network = network != null ? network : other.network;
        launcherLabel = launcherLabel != null ? launcherLabel : other.launcherLabel;
        if (ringTotal == null) {
            ringTotal = other.ringTotal;
            ringTotalSource = other.ringTotalSource;
        }
        if (emulatedSource == null) {
            realBusId = other.realBusId;
            reportedBusId = other.reportedBusId;
            realCompCap = other.realCompCap;
            reportedCompCap = other.reportedCompCap;
            emulatedSource = other.emulatedSource;
        }
        if (collChannels == null && other.collChannels != null) {
            collChannels = other.collChannels;
            collnetChannels = other.collnetChannels;
            nvlsChannels = other.nvlsChannels;
            p2pChannels = other.p2pChannels;
            p2pPerPeer = other.p2pPerPeer;
            channelsSource = other.channelsSource;
        }
        if (threadThresholds == null) {
            threadThresholds = other.threadThresholds;
            thresholdsSource = other.thresholdsSource;
        }
        if (tuningTable == null) {
            tuningTable = other.tuningTable;
        } else if (other.tuningTable != null) {
            tuningTable.absorb(other.tuningTable);
        }
        other.rings.forEach(rings::putIfAbsent);
        if (ringsSource == null) {
            ringsSource = other.ringsSource;
        }
        trees.addAll(other.trees);
        graphs.addAll(other.graphs);
        // Lines read before the comm pointer was known: theirs are listed, and remembered for what follows.
        connections.addAll(other.connections);
        connSeen.addAll(other.connSeen);
        other.connPacked.forEachKey(k -> connPacked.put(k, Boolean.TRUE));
        connectedRings |= other.connectedRings;
        connectedTrees |= other.connectedTrees;
        if (initTotal == null) {
            initTotal = other.initTotal;
            initPhases = other.initPhases;
            initSource = other.initSource;
        }
        other.tuning.forEach((k, v) -> tuning.merge(k, v, Agg::plus));
        other.colls.forEach((k, v) -> colls.merge(k, v, Agg::plus));
        if (other.source != null && (source == null || other.source.line() < source.line())) {
            source = other.source;
        }
        facts += other.facts;
    }

    /** A repeated line kept once: first source, first opCount, how many times. */
    static final class Agg {
        final Source first;
        final String opCount;
        long n;

        Agg(Source first, String opCount, long n) {
            this.first = first;
            this.opCount = opCount;
            this.n = n;
        }

        Agg plus(Agg o) {
            n += o.n;
            return this;
        }
    }

    /**
     * A key the reader fills in place to probe a map without allocating; {@link #copy} is the one the map keeps. Its
     * fields are numbers and strings, so the field-by-field copy of {@link Object#clone} is a whole copy.
     */
    abstract static class ProbeKey<K extends ProbeKey<K>> implements Cloneable {
        @SuppressWarnings("unchecked")
        K copy() {
            try {
                return (K) clone();
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    /** Key of a COLL line. */
    static final class CollKey extends ProbeKey<CollKey> {
        String op;
        long count;
        int datatype;
        int redOp;
        int nRanks;

        @Override
        public boolean equals(Object o) {
            return o instanceof CollKey k
                    && k.op.equals(op)
                    && k.count == count
                    && k.datatype == datatype
                    && k.redOp == redOp
                    && k.nRanks == nRanks;
        }

        @Override
        public int hashCode() {
            return ((Long.hashCode(count) * 31 + datatype) * 31 + redOp) * 31 + op.hashCode() + nRanks * 7;
        }
    }

    /** Key of a TUNING line; the time is kept exactly as printed (unscaled digits and scale). */
    static final class TuneKey extends ProbeKey<TuneKey> {
        String op;
        long bytes;
        String algorithm;
        int algorithmId;
        String protocol;
        int protocolId;
        long timeUnscaled;
        int timeScale = -1;
        int channelLo = -1;
        int channelHi = -1;

        @Override
        public boolean equals(Object o) {
            return o instanceof TuneKey k
                    && k.bytes == bytes
                    && k.algorithmId == algorithmId
                    && k.protocolId == protocolId
                    && k.timeUnscaled == timeUnscaled
                    && k.timeScale == timeScale
                    && k.channelLo == channelLo
                    && k.channelHi == channelHi
                    && java.util.Objects.equals(k.op, op)
                    && java.util.Objects.equals(k.algorithm, algorithm)
                    && java.util.Objects.equals(k.protocol, protocol);
        }

        @Override
        public int hashCode() {
            return (int) (bytes * 31 + algorithmId * 7 + protocolId * 3 + timeUnscaled * 13 + channelHi * 17)
                    + (op == null ? 0 : op.hashCode());
        }
    }
}

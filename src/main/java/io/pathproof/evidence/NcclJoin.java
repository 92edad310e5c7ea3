package io.pathproof.evidence;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Joins the NCCL logs' facts of all files (one part of {@link Assembly}): each rank's comm-init facts into its
 * communicator, checked across ranks (ranks of one communicator must agree, NVIDIA/nccl #1136), the environment NCCL
 * printed, the NCCL version and the TUNING and COLL aggregates.
 */
final class NcclJoin {
    private NcclJoin() {}

    /** The NCCL facts of every file joined: the version, the environment, WARN lines, communicators and decisions. */
    static Evidence.Nccl nccl(List<FileFacts> files, List<Evidence.Finding> findings) {
        FileFacts versionFile = version(files, findings);
        Map<String, String> env = new TreeMap<>();
        Map<String, Source> envSources = new TreeMap<>();
        List<Evidence.Warning> warnings = new ArrayList<>();
        Map<String, String> scoped = new java.util.HashMap<>();
        Map<String, Source> scopedSources = new java.util.HashMap<>();
        Map<String, List<CommRank>> groups = new LinkedHashMap<>();
        Map<CommRank, FileFacts> fileOf = new LinkedHashMap<>();
        for (FileFacts ff : files) {
            if (ff.facts() instanceof Facts.Log log) {
                env(ff, log, env, envSources, scoped, scopedSources, findings);
                warnings.addAll(log.warnings());
                group(ff, log, groups, fileOf);
            }
        }
        List<Evidence.Communicator> comms = new ArrayList<>();
        List<Evidence.Tuning> tuning = new ArrayList<>();
        List<Evidence.Coll> colls = new ArrayList<>();
        for (List<CommRank> g : groups.values()) {
            g.sort(Comparator.comparing(
                    (CommRank cr) -> cr.effectiveRank(fileOf.get(cr).rank()),
                    Comparator.nullsLast(Comparator.naturalOrder())));
            comms.add(communicator(g, fileOf, findings, versionBefore222(g, fileOf)));
            decisions(g, fileOf, tuning, colls);
            crossRankTuning(g, fileOf, findings);
        }
        String version = versionFile == null ? null : versionFile.facts().ncclVersion();
        Source versionSource = versionFile == null ? null : versionFile.facts().ncclVersionSource();
        return new Evidence.Nccl(version, versionSource, comms, tuning, colls, env, envSources, warnings);
    }

    /**
     * The file whose NCCL version is the run's: logs first, as the log's own "NCCL version" line is the strongest
     * evidence of the version; any file naming another version is a finding.
     */
    private static FileFacts version(List<FileFacts> files, List<Evidence.Finding> findings) {
        FileFacts first = null;
        for (int pass = 0; pass < 2; pass++) {
            for (FileFacts ff : files) {
                String v = ff.facts().ncclVersion();
                if ((pass == 0) != (ff.kind() == FileKind.NCCL_LOG) || v == null) {
                    continue;
                }
                if (first == null) {
                    first = ff;
                } else if (!sameVersion(first.facts().ncclVersion(), v)) {
                    Source at = first.facts().ncclVersionSource();
                    findings.add(new Evidence.Finding(
                            "nccl-version-mismatch",
                            "NCCL " + v + " in some files but " + first.facts().ncclVersion() + " in " + at.file(),
                            List.of(at, ff.facts().ncclVersionSource()),
                            1));
                }
            }
        }
        return first;
    }

    /**
     * A log's NCCL_* variables join the run's (the first value of each, and where it was read); a variable with another
     * value in another file is a finding, but for those that describe the node, which only ranks of one node must share.
     */
    private static void env(
            FileFacts ff,
            Facts.Log log,
            Map<String, String> env,
            Map<String, Source> envSources,
            Map<String, String> scoped,
            Map<String, Source> scopedSources,
            List<Evidence.Finding> findings) {
        String node = node(log);
        log.env().forEach((k, v) -> {
            if (env.putIfAbsent(k, v) == null) {
                envSources.put(k, log.envSources().get(k));
            }
            String key = NODE_ENV.contains(k) && node != null ? k + "\u0000" + node : k;
            String old = scoped.putIfAbsent(key, v);
            if (old == null) {
                scopedSources.put(key, log.envSources().get(k));
            } else if (!old.equals(v)) {
                findings.add(new Evidence.Finding(
                        "env-mismatch",
                        k + " is " + old + " in " + scopedSources.get(key).file() + " and " + v + " in some other files"
                                + (key.equals(k) ? "" : " of node " + node),
                        List.of(scopedSources.get(key), log.envSources().get(k)),
                        1));
            }
        });
    }

    /**
     * Each rank of a log joins its communicator. Without a commId (NCCL < 2.10 prints none, excerpts lose it), a split
     * child joins the ranks split from the same parent with the same color; any other rank
     * joins the one commId of the same size in its file, else the communicators of that size in the same directory (one
     * run), else stays on its own. A rank known by neither commId nor size joins the file's one communicator, if it
     * names only one.
     */
    private static void group(
            FileFacts ff, Facts.Log log, Map<String, List<CommRank>> groups, Map<CommRank, FileFacts> fileOf) {
        Map<Integer, Set<String>> idsBySize = new LinkedHashMap<>();
        for (CommRank cr : log.commRanks()) {
            if (cr.commId != null && cr.nRanks != null) {
                idsBySize.computeIfAbsent(cr.nRanks, n -> new LinkedHashSet<>()).add(cr.commId);
            }
        }
        java.nio.file.Path parent = java.nio.file.Path.of(ff.file()).getParent();
        String dir = parent == null ? "" : parent.toString();
        Map<CommRank, String> keys = new LinkedHashMap<>();
        Set<String> named = new LinkedHashSet<>();
        for (CommRank cr : log.commRanks()) {
            String key;
            if (cr.commId != null) {
                key = cr.commId;
            } else if (cr.splitColor != null) {
                // A split child (2.23 on prints no commId for it) is never its parent nor any other communicator of
                // its size: its ranks are those split from the same parent with the same color.
                key = cr.splitOf != null
                        ? "split of " + cr.splitOf + " color " + cr.splitColor
                        : "split comm " + Long.toHexString(cr.ptr) + " of process " + cr.processKey + " in "
                                + ff.file();
            } else if (cr.nRanks != null
                    && idsBySize.getOrDefault(cr.nRanks, Set.of()).size() == 1) {
                key = idsBySize.get(cr.nRanks).iterator().next();
            } else if (cr.nRanks != null) {
                key = "nranks:" + cr.nRanks + " in " + dir;
            } else {
                key = null;
            }
            keys.put(cr, key);
            if (key != null) {
                named.add(key);
            }
        }
        for (Map.Entry<CommRank, String> e : keys.entrySet()) {
            // A process whose comm lines the log lost (an excerpt, a log begun mid-init) printed lines of a
            // communicator nobody named: where the file names one communicator only, they are its lines.
            String key = e.getValue() != null
                    ? e.getValue()
                    : named.size() == 1 ? named.iterator().next() : null;
            if (key == null) {
                key = "file:" + ff.file();
            }
            groups.computeIfAbsent(key, k -> new ArrayList<>()).add(e.getKey());
            fileOf.put(e.getKey(), ff);
        }
    }

    /** The TUNING and COLL aggregates of a communicator's ranks, each under the communicator's commId. */
    private static void decisions(
            List<CommRank> g,
            Map<CommRank, FileFacts> fileOf,
            List<Evidence.Tuning> tuning,
            List<Evidence.Coll> colls) {
        String commId = g.stream()
                .map(cr -> cr.commId)
                .filter(java.util.Objects::nonNull)
                .findFirst()
                .orElse(null);
        for (CommRank cr : g) {
            Integer rank = cr.effectiveRank(fileOf.get(cr).rank());
            // Every TUNING format is printed on rank 0 of its communicator only (see NcclLogReader.rankZero).
            Integer tuneRank = 0;
            cr.tuning.forEach((k, a) -> tuning.add(new Evidence.Tuning(
                    tuneRank,
                    k.op,
                    k.bytes,
                    k.algorithm,
                    k.algorithmId < 0 ? null : k.algorithmId,
                    k.protocol,
                    k.protocolId < 0 ? null : k.protocolId,
                    k.timeScale < 0 ? null : BigDecimal.valueOf(k.timeUnscaled, k.timeScale),
                    k.channelLo < 0 ? null : k.channelLo,
                    k.channelHi < 0 ? null : k.channelHi,
                    a.first,
                    commId,
                    a.n)));
            cr.colls.forEach((k, a) -> colls.add(new Evidence.Coll(
                    rank,
                    k.op,
                    a.opCount,
                    k.count,
                    k.datatype,
                    k.redOp,
                    k.nRanks < 0 ? null : k.nRanks,
                    a.first,
                    commId,
                    a.n)));
        }
    }

    /**
     * Variables that describe the rank's own node, so that nodes differ in them by design: the node's identity
     * (NCCL_HOSTID, misc/utils.cc:87@v2.28.9-1), the node's topology file, which each process reads for itself
     * (graph/topo.cc:1421@v2.28.9-1), and where and by which rank a node's fused topology is written
     * (graph/topo.cc:1531 and :715@v2.28.9-1). Ranks of one node must still agree on them.
     */
    static final Set<String> NODE_ENV =
            Set.of("NCCL_HOSTID", "NCCL_TOPO_FILE", "NCCL_TOPO_DUMP_FILE", "NCCL_TOPO_DUMP_FILE_RANK");

    /** The node a file's process ran on: its NCCL_HOSTID, else the host of its line prefix; null when neither shows. */
    private static String node(Facts.Log log) {
        String id = log.env().get("NCCL_HOSTID");
        if (id != null) {
            return id;
        }
        for (CommRank cr : log.commRanks()) {
            if (cr.host != null) {
                return cr.host;
            }
        }
        return null;
    }

    /** "2.28.9" from a log and "2.28.9" from a trace agree; so do "2.19.3" and "2.19.3-1". */
    private static boolean sameVersion(String a, String b) {
        return a.equals(b)
                || a.startsWith(b + "-")
                || b.startsWith(a + "-")
                || a.startsWith(b + "+")
                || b.startsWith(a + "+");
    }

    /**
     * True when every file of this communicator names an NCCL version older than 2.22: only then are trees connected at
     * init (init.cc:1169@v2.22.3-1 and group.cc:147 show the lazy connection that came with NCCL_RUNTIME_CONNECT=1), so
     * that a missing "Connected all trees" means no trees were connected.
     */
    private static boolean versionBefore222(List<CommRank> g, Map<CommRank, FileFacts> fileOf) {
        for (CommRank cr : g) {
            String v = fileOf.get(cr).facts().ncclVersion();
            if (v == null) {
                return false;
            }
            String[] p = v.split("[.+-]");
            try {
                if (p.length < 2
                        || Integer.parseInt(p[0]) > 2
                        || (Integer.parseInt(p[0]) == 2 && Integer.parseInt(p[1]) >= 22)) {
                    return false;
                }
            } catch (NumberFormatException e) {
                return false;
            }
        }
        return !g.isEmpty();
    }

    private static Evidence.Communicator communicator(
            List<CommRank> g, Map<CommRank, FileFacts> fileOf, List<Evidence.Finding> findings, boolean before222) {
        CommRank first = g.stream().filter(cr -> cr.commId != null).findFirst().orElse(g.get(0));
        Set<Integer> ranks = new java.util.TreeSet<>();
        List<Evidence.RankInit> inits = new ArrayList<>();
        for (CommRank cr : g) {
            Integer r = cr.effectiveRank(fileOf.get(cr).rank());
            if (r != null) {
                ranks.add(r);
                inits.add(rankInit(cr, r));
            }
        }
        List<Evidence.Connection> connections = new ArrayList<>();
        g.forEach(cr -> connections.addAll(cr.connections));
        Set<String> transports = new LinkedHashSet<>();
        connections.forEach(c -> transports.add(c.transport()));
        boolean connectedRings = g.stream().anyMatch(cr -> cr.connectedRings);
        boolean connectedTrees = g.stream().anyMatch(cr -> cr.connectedTrees);
        String label =
                first.commId != null ? "communicator " + first.commId : "communicator of " + first.nRanks + " ranks";
        Integer nRanks = agree(g, fileOf, cr -> cr.nRanks, cr -> cr.source, "nRanks", label, findings);
        Integer coll =
                agree(g, fileOf, cr -> cr.collChannels, cr -> cr.channelsSource, "coll channels", label, findings);
        if (coll == null) {
            coll = agree(g, fileOf, cr -> cr.ringTotal, cr -> cr.ringTotalSource, "ring channels", label, findings);
        }
        Integer nvls =
                agree(g, fileOf, cr -> cr.nvlsChannels, cr -> cr.channelsSource, "nvls channels", label, findings);
        Integer p2p = agree(g, fileOf, cr -> cr.p2pChannels, cr -> cr.channelsSource, "p2p channels", label, findings);
        Integer collnet = agree(
                g, fileOf, cr -> cr.collnetChannels, cr -> cr.channelsSource, "collnet channels", label, findings);
        Integer perPeer = agree(
                g, fileOf, cr -> cr.p2pPerPeer, cr -> cr.channelsSource, "p2p channels per peer", label, findings);
        String thr = agree(
                g, fileOf, cr -> cr.threadThresholds, cr -> cr.thresholdsSource, "threadThresholds", label, findings);
        CommRank ringPrinter = ringPrinter(g);
        Boolean trees3 = connectedTrees ? Boolean.TRUE : before222 && connectedRings ? Boolean.FALSE : null;
        return new Evidence.Communicator(
                first.commId,
                List.copyOf(ranks),
                nRanks,
                firstNonNull(g, cr -> cr.nNodes),
                firstNonNull(g, cr -> cr.localRanks),
                coll,
                p2p,
                perPeer,
                nvls,
                collnet,
                ringPrinter == null ? List.of() : List.copyOf(ringPrinter.rings.values()),
                ringPrinter == null ? List.of() : List.copyOf(ringPrinter.rings.keySet()),
                trees(g),
                graphs(g),
                thr,
                List.copyOf(transports),
                connections,
                connectedRings,
                trees3,
                inits,
                first.source,
                launcherLabels(g),
                g.stream()
                        .map(cr -> cr.network)
                        .filter(java.util.Objects::nonNull)
                        .distinct()
                        .toList(),
                TuningTableLines.join(g, cr -> cr.effectiveRank(fileOf.get(cr).rank()), label, findings));
    }

    private static Evidence.RankInit rankInit(CommRank cr, int rank) {
        Evidence.EmulatedDevice emu = cr.emulatedSource == null
                ? null
                : new Evidence.EmulatedDevice(
                        cr.realBusId,
                        cr.reportedBusId != null ? cr.reportedBusId : cr.busId,
                        cr.realCompCap,
                        cr.reportedCompCap,
                        cr.emulatedSource);
        return new Evidence.RankInit(
                rank,
                cr.cudaDev,
                cr.busId,
                cr.host,
                cr.pid,
                cr.nvmlDev,
                cr.initTotal,
                cr.initPhases,
                cr.source,
                emu,
                cr.launcherLabel,
                cr.network);
    }

    /** The first rank that printed rings: a ring is the same ring whichever rank prints it. */
    private static CommRank ringPrinter(List<CommRank> g) {
        for (CommRank cr : g) {
            if (!cr.rings.isEmpty()) {
                return cr;
            }
        }
        return null;
    }

    private static List<String> trees(List<CommRank> g) {
        List<String> trees = new ArrayList<>();
        g.forEach(cr -> trees.addAll(cr.trees));
        return trees;
    }

    /**
     * Every distinct search result: each rank searches its own node, so a cluster whose nodes differ (a slower NIC on
     * one) prints other graphs on that node's ranks before the exchange takes the minimum (init.cc@v2.28.9-1).
     */
    private static List<Evidence.Graph> graphs(List<CommRank> g) {
        List<Evidence.Graph> graphs = new ArrayList<>();
        for (CommRank cr : g) {
            for (Evidence.Graph x : cr.graphs) {
                if (graphs.size() < 64 && graphs.stream().noneMatch(x::sameShape)) {
                    graphs.add(x);
                }
            }
        }
        return graphs;
    }

    private static List<String> launcherLabels(List<CommRank> g) {
        List<String> labels = new ArrayList<>();
        for (CommRank cr : g) {
            if (cr.launcherLabel != null && !labels.contains(cr.launcherLabel)) {
                labels.add(cr.launcherLabel);
            }
        }
        return labels;
    }

    private static <T> T firstNonNull(List<CommRank> g, java.util.function.Function<CommRank, T> f) {
        for (CommRank cr : g) {
            T v = f.apply(cr);
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    /**
     * The value of the lowest rank that printed one; a rank printing another value is a finding: ranks of one
     * communicator that disagree on channels can hang (NVIDIA/nccl #1136).
     */
    private static <T> T agree(
            List<CommRank> g,
            Map<CommRank, FileFacts> fileOf,
            java.util.function.Function<CommRank, T> f,
            java.util.function.Function<CommRank, Source> src,
            String what,
            String label,
            List<Evidence.Finding> findings) {
        T value = null;
        CommRank holder = null;
        for (CommRank cr : g) {
            T v = f.apply(cr);
            if (v == null) {
                continue;
            }
            if (value == null) {
                value = v;
                holder = cr;
            } else if (!value.equals(v)) {
                findings.add(Evidence.Finding.once(
                        "cross-rank-disagreement",
                        label + ": rank "
                                + holder.effectiveRank(fileOf.get(holder).rank()) + " has " + what + " " + value
                                + " but rank " + cr.effectiveRank(fileOf.get(cr).rank()) + " has " + v
                                + " (ranks of one communicator must agree; NVIDIA/nccl #1136)",
                        sources(src.apply(holder), src.apply(cr))));
            }
        }
        return value;
    }

    private static List<Source> sources(Source a, Source b) {
        List<Source> l = new ArrayList<>();
        if (a != null) {
            l.add(a);
        }
        if (b != null) {
            l.add(b);
        }
        return l;
    }

    /** All ranks must pick the same algorithm, protocol and channels for the same collective and size. */
    private static void crossRankTuning(
            List<CommRank> g, Map<CommRank, FileFacts> fileOf, List<Evidence.Finding> findings) {
        Map<String, Object[]> seen = new LinkedHashMap<>();
        for (CommRank cr : g) {
            for (Map.Entry<CommRank.TuneKey, CommRank.Agg> e : cr.tuning.entrySet()) {
                CommRank.TuneKey k = e.getKey();
                String what = k.op + " " + k.bytes;
                String choice = k.algorithm + "/" + k.protocol
                        + (k.channelHi >= 0 ? " channels " + k.channelLo + ".." + k.channelHi : "");
                Object[] prev = seen.putIfAbsent(what, new Object[] {choice, cr, e.getValue().first});
                if (prev != null && !prev[0].equals(choice) && prev[1] != cr) {
                    CommRank other = (CommRank) prev[1];
                    findings.add(Evidence.Finding.once(
                            "cross-rank-disagreement",
                            what + " bytes: rank "
                                    + other.effectiveRank(fileOf.get(other).rank()) + " chose " + prev[0]
                                    + " but rank "
                                    + cr.effectiveRank(fileOf.get(cr).rank()) + " chose " + choice
                                    + " (NVIDIA/nccl #1136)",
                            sources((Source) prev[2], e.getValue().first)));
                }
            }
        }
    }
}

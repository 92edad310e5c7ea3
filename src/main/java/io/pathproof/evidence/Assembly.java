package io.pathproof.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/** Joins what each file said into one {@link Evidence}, and draws the cross-file findings. */
final class Assembly {
  private static final int MAX_KERNEL_FINDINGS = 10;

  private Assembly() {}

  static Evidence evidence(String runDir, List<FileFacts> files, List<HarnessFacts> harness, List<Problem> early) {
    return evidence(runDir, files, harness, early, null);
  }

  static Evidence evidence(String runDir, List<FileFacts> files, List<HarnessFacts> harness, List<Problem> early,
      Evidence.Integrity integrity) {
    List<Evidence.FileRead> reads = new ArrayList<>();
    List<Problem> problems = new ArrayList<>(early);
    List<Evidence.Finding> findings = new ArrayList<>();
    List<Evidence.Kernel> kernels = new ArrayList<>();
    List<Evidence.Range> ranges = new ArrayList<>();
    List<Evidence.FlightRecord> flight = new ArrayList<>();
    List<Evidence.FlightDump> dumps = new ArrayList<>();
    List<Evidence.Distributed> distributed = new ArrayList<>();
    List<Evidence.Copy> copies = new ArrayList<>();
    List<Evidence.TraceClock> clocks = new ArrayList<>();
    long emulationLines = 0;
    Source emulationFirst = null;
    for (FileFacts ff : files) {
      reads.add(new Evidence.FileRead(ff.file, ff.kind, ff.rank, ff.bytes, ff.facts));
      problems.addAll(ff.allProblems());
      findings.addAll(ff.findings);
      kernels.addAll(ff.kernels);
      ranges.addAll(ff.ranges);
      flight.addAll(ff.flight);
      dumps.addAll(ff.flightDumps);
      distributed.addAll(ff.distributed);
      copies.addAll(ff.copies);
      if (ff.traceBaseNs != null) {
        clocks.add(new Evidence.TraceClock(ff.rank, ff.traceBaseNs, ff.traceBaseSource));
      }
      if (ff.emulationLines > 0 && emulationFirst == null) {
        emulationFirst = ff.emulationFirst;
      }
      emulationLines += ff.emulationLines;
      missingNcclKernels(ff, findings);
    }
    Evidence.Nccl nccl = nccl(files, findings);
    crossRankKernels(kernels, findings);

    Evidence.Ddp ddp = null;
    List<Evidence.Step> steps = new ArrayList<>();
    Evidence.Replicas replicas = null;
    List<Evidence.PeerAccess> peer = new ArrayList<>();
    JsonNode manifest = null;
    Source manifestSource = null;
    for (HarnessFacts h : harness) {
      if (h.ddp() != null) {
        if (ddp == null) {
          ddp = new Evidence.Ddp(new ArrayList<>(), new LinkedHashMap<>());
        }
        if (h.ddp().buckets() != null) {
          ddp.buckets().addAll(h.ddp().buckets());
        }
        if (h.ddp().logging() != null) {
          h.ddp().logging().forEach(ddp.logging()::putIfAbsent);
        }
      }
      if (h.steps() != null) {
        steps.addAll(h.steps());
      }
      if (replicas == null) {
        replicas = h.replicas();
      }
      if (h.peerAccess() != null) {
        peer.addAll(h.peerAccess());
      }
      if (manifest == null) {
        manifest = h.manifest();
        manifestSource = runDir == null ? null : Source.file(java.nio.file.Path.of(runDir, "manifest.json").toString());
      }
      if (h.problems() != null) {
        problems.addAll(h.problems());
      }
    }
    ddp = ddpLoggingDumps(ddp, files, problems);
    ddp = ddpLog(ddp, files);
    JsonNode emulated = manifest != null && manifest.path("emulation").isObject() ? manifest.get("emulation") : null;
    Evidence.Emulation emulation =
        emulated == null && emulationLines == 0
            ? null
            : new Evidence.Emulation(emulated, emulated == null ? null : manifestSource, emulationLines, emulationFirst);
    Evidence.NcclProfiler profiler = NcclProfilerReader.assemble(files, manifest, nccl.version());
    NcclProfilerReader.disagreements(nccl, profiler, findings);
    NcclProfilerReader.crossRank(profiler, findings);
    return new Evidence(
        runDir, reads, nccl, kernels, ranges, ddp, steps, replicas, peer, flight, manifest, merge(findings), problems,
        distributed, copies, dumps, emulation, profiler, clocks, integrity);
  }

  /**
   * The dumps of {@code _get_ddp_logging_data()} read by their content join the DDP logging the run's own files gave,
   * one per rank (the data's rank), in rank order. A second dump of a rank is not used, and said so: which one is
   * right is not the reader's to guess.
   */
  private static Evidence.Ddp ddpLoggingDumps(Evidence.Ddp ddp, List<FileFacts> files, List<Problem> problems) {
    Map<Integer, JsonNode> dumps = new TreeMap<>();
    for (FileFacts ff : files) {
      if (ff.ddpLogging == null) {
        continue;
      }
      String rank = Integer.toString(ff.rank);
      if (dumps.containsKey(ff.rank) || ddp != null && ddp.logging().containsKey(rank)) {
        problems.add(new Problem(ff.file, 0, "rank " + rank + "'s DDP logging was read from another file already:"
            + " this dump is not used"));
      } else {
        dumps.put(ff.rank, ff.ddpLogging);
      }
    }
    if (dumps.isEmpty()) {
      return ddp;
    }
    Map<Integer, JsonNode> all = new TreeMap<>(dumps);
    if (ddp != null) {
      ddp.logging().forEach((r, n) -> all.put(Integer.valueOf(r), n));
    }
    Map<String, JsonNode> logging = new LinkedHashMap<>();
    all.forEach((r, n) -> logging.put(Integer.toString(r), n));
    return new Evidence.Ddp(ddp == null ? new ArrayList<>() : ddp.buckets(), logging);
  }

  /** The messages of DDP's debug log of every file, in file order, join the DDP evidence. */
  private static Evidence.Ddp ddpLog(Evidence.Ddp ddp, List<FileFacts> files) {
    List<Evidence.DdpLogMessage> log = new ArrayList<>();
    for (FileFacts ff : files) {
      log.addAll(ff.ddpLog);
    }
    if (log.isEmpty()) {
      return ddp;
    }
    return ddp == null ? new Evidence.Ddp(new ArrayList<>(), new LinkedHashMap<>(), List.copyOf(log))
        : new Evidence.Ddp(ddp.buckets(), ddp.logging(), List.copyOf(log));
  }

  private static final int SOURCES_PER_FINDING = 5;

  /**
   * The same finding (kind and message) drawn in many files — e.g. a version mismatch in each of 64 rank logs — is
   * listed once, with its count and its first few sources.
   */
  static List<Evidence.Finding> merge(List<Evidence.Finding> findings) {
    Map<String, Evidence.Finding> byKey = new LinkedHashMap<>();
    for (Evidence.Finding f : findings) {
      String key = f.kind() + "\u0000" + f.message();
      Evidence.Finding old = byKey.get(key);
      if (old == null) {
        byKey.put(key, f);
      } else {
        Set<Source> srcs = new LinkedHashSet<>(old.sources());
        for (Source s : f.sources()) {
          if (srcs.size() < SOURCES_PER_FINDING) {
            srcs.add(s);
          }
        }
        byKey.put(key, new Evidence.Finding(old.kind(), old.message(), List.copyOf(srcs), old.count() + f.count()));
      }
    }
    return new ArrayList<>(byKey.values());
  }

  /**
   * HTA issue #360: collectives recorded (nccl:* ranges, record_param_comms) but no NCCL kernel means the kernel
   * activity was lost, unless the communicator has one rank, where NCCL launches no kernel at all (the AllReduce of
   * one rank is a copy; seen in the H200 1-rank capture).
   */
  private static void missingNcclKernels(FileFacts ff, List<Evidence.Finding> findings) {
    if (!ff.kind.timeline()) {
      return;
    }
    if (ff.collectives() == 0 || ff.kernels.stream().anyMatch(Evidence.Kernel::nccl)
        || (ff.backend != null && !ff.backend.contains("nccl"))) {
      return;
    }
    List<Source> at = List.of(ff.firstCollectiveMarker != null ? ff.firstCollectiveMarker : Source.file(ff.file));
    if (ff.worldSize != null && ff.worldSize == 1) {
      findings.add(
          new Evidence.Finding(
              "no-nccl-kernel-single-rank",
              ff.collectives() + " collective(s) but no NCCL kernel: expected, the communicator has 1 rank and"
                  + " NCCL launches no kernel (the data moves by a copy), so this trace cannot show channels or"
                  + " threads",
              at));
    } else {
      findings.add(
          new Evidence.Finding(
              "missing-nccl-kernels",
              "LOUD: " + ff.collectives() + " collective(s) recorded but ZERO NCCL kernels (ncclKernel_*/"
                  + "ncclDevKernel_*) in this trace: GPU kernel activity was not captured (HTA #360); nothing about"
                  + " channels, threads or kernel time can be proven from it",
              at));
    }
  }

  private static Evidence.Nccl nccl(List<FileFacts> files, List<Evidence.Finding> findings) {
    String version = null;
    Source versionSource = null;
    // Logs first: the log's own "NCCL version" line is the strongest evidence of the version.
    for (int pass = 0; pass < 2; pass++) {
      for (FileFacts ff : files) {
        if ((pass == 0) != (ff.kind == FileKind.NCCL_LOG) || ff.ncclVersion == null) {
          continue;
        }
        if (version == null) {
          version = ff.ncclVersion;
          versionSource = ff.ncclVersionSource;
        } else if (!sameVersion(version, ff.ncclVersion)) {
          findings.add(
              new Evidence.Finding(
                  "nccl-version-mismatch",
                  "NCCL " + ff.ncclVersion + " in some files but " + version + " in " + versionSource.file(),
                  List.of(versionSource, ff.ncclVersionSource)));
        }
      }
    }
    Map<String, String> env = new TreeMap<>();
    Map<String, Source> envSources = new TreeMap<>();
    List<Evidence.Warning> warnings = new ArrayList<>();
    Map<String, List<CommRank>> groups = new LinkedHashMap<>();
    Map<CommRank, FileFacts> fileOf = new LinkedHashMap<>();
    Map<String, String> scoped = new java.util.HashMap<>();
    Map<String, Source> scopedSources = new java.util.HashMap<>();
    for (FileFacts ff : files) {
      String node = node(ff);
      ff.env.forEach(
          (k, v) -> {
            if (env.putIfAbsent(k, v) == null) {
              envSources.put(k, ff.envSources.get(k));
            }
            String key = NODE_ENV.contains(k) && node != null ? k + "\u0000" + node : k;
            String old = scoped.putIfAbsent(key, v);
            if (old == null) {
              scopedSources.put(key, ff.envSources.get(k));
            } else if (!old.equals(v)) {
              findings.add(
                  new Evidence.Finding(
                      "env-mismatch", k + " is " + old + " in " + scopedSources.get(key).file() + " and " + v
                          + " in some other files" + (key.equals(k) ? "" : " of node " + node),
                      List.of(scopedSources.get(key), ff.envSources.get(k))));
            }
          });
      warnings.addAll(ff.warnings);
      // Without a commId (NCCL < 2.10 prints none, excerpts lose it), a rank joins the one commId of the same size in
      // its file, else the communicators of that size in the same directory (one run), else stays on its own.
      Map<Integer, Set<String>> idsBySize = new LinkedHashMap<>();
      for (CommRank cr : ff.commRanks) {
        if (cr.commId != null && cr.nRanks != null) {
          idsBySize.computeIfAbsent(cr.nRanks, n -> new LinkedHashSet<>()).add(cr.commId);
        }
      }
      String dir = java.nio.file.Path.of(ff.file).getParent() == null ? "" : java.nio.file.Path.of(ff.file).getParent().toString();
      for (CommRank cr : ff.commRanks) {
        String key;
        if (cr.commId != null) {
          key = cr.commId;
        } else if (cr.nRanks != null && idsBySize.getOrDefault(cr.nRanks, Set.of()).size() == 1) {
          key = idsBySize.get(cr.nRanks).iterator().next();
        } else if (cr.nRanks != null) {
          key = "nranks:" + cr.nRanks + " in " + dir;
        } else {
          key = "file:" + ff.file;
        }
        groups.computeIfAbsent(key, k -> new ArrayList<>()).add(cr);
        fileOf.put(cr, ff);
      }
    }
    List<Evidence.Communicator> comms = new ArrayList<>();
    List<Evidence.Tuning> tuning = new ArrayList<>();
    List<Evidence.Coll> colls = new ArrayList<>();
    for (List<CommRank> g : groups.values()) {
      g.sort(
          Comparator.comparing(
              (CommRank cr) -> cr.effectiveRank(fileOf.get(cr).rank), Comparator.nullsLast(Comparator.naturalOrder())));
      comms.add(communicator(g, fileOf, findings, versionBefore222(g, fileOf)));
      String commId = g.stream().map(cr -> cr.commId).filter(java.util.Objects::nonNull).findFirst().orElse(null);
      for (CommRank cr : g) {
        Integer rank = cr.effectiveRank(fileOf.get(cr).rank);
        // Every TUNING format is printed on rank 0 of its communicator only (see NcclLogReader.rankZero).
        Integer tuneRank = 0;
        cr.tuning.forEach(
            (k, a) ->
                tuning.add(
                    new Evidence.Tuning(
                        tuneRank, k.op, k.bytes, k.algorithm, k.algorithmId < 0 ? null : k.algorithmId, k.protocol,
                        k.protocolId < 0 ? null : k.protocolId,
                        k.timeScale < 0 ? null : BigDecimal.valueOf(k.timeUnscaled, k.timeScale),
                        k.channelLo < 0 ? null : k.channelLo, k.channelHi < 0 ? null : k.channelHi, a.first, commId,
                        a.n)));
        cr.colls.forEach(
            (k, a) ->
                colls.add(
                    new Evidence.Coll(
                        rank, k.op, a.opCount, k.count, k.datatype, k.redOp, k.nRanks < 0 ? null : k.nRanks, a.first,
                        commId, a.n)));
      }
      crossRankTuning(g, fileOf, findings);
    }
    return new Evidence.Nccl(version, versionSource, comms, tuning, colls, env, envSources, warnings);
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
  private static String node(FileFacts ff) {
    String id = ff.env.get("NCCL_HOSTID");
    if (id != null) {
      return id;
    }
    for (CommRank cr : ff.commRanks) {
      if (cr.host != null) {
        return cr.host;
      }
    }
    return null;
  }

  /** "2.28.9" from a log and "2.28.9" from a trace agree; so do "2.19.3" and "2.19.3-1". */
  private static boolean sameVersion(String a, String b) {
    return a.equals(b) || a.startsWith(b + "-") || b.startsWith(a + "-") || a.startsWith(b + "+") || b.startsWith(a + "+");
  }

  /**
   * True when every file of this communicator names an NCCL version older than 2.22: only then are trees connected at
   * init (init.cc:1169@v2.22.3-1 and group.cc:147 show the lazy connection that came with NCCL_RUNTIME_CONNECT=1), so
   * that a missing "Connected all trees" means no trees were connected.
   */
  private static boolean versionBefore222(List<CommRank> g, Map<CommRank, FileFacts> fileOf) {
    for (CommRank cr : g) {
      String v = fileOf.get(cr).ncclVersion;
      if (v == null) {
        return false;
      }
      String[] p = v.split("[.+-]");
      try {
        if (p.length < 2 || Integer.parseInt(p[0]) > 2 || (Integer.parseInt(p[0]) == 2 && Integer.parseInt(p[1]) >= 22)) {
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
    List<String> trees = new ArrayList<>();
    List<Evidence.Connection> connections = new ArrayList<>();
    Set<String> transports = new LinkedHashSet<>();
    boolean connectedRings = false;
    boolean connectedTrees = false;
    for (CommRank cr : g) {
      Integer r = cr.effectiveRank(fileOf.get(cr).rank);
      if (r != null) {
        ranks.add(r);
        Evidence.EmulatedDevice emu =
            cr.emulatedSource == null
                ? null
                : new Evidence.EmulatedDevice(
                    cr.realBusId, cr.reportedBusId != null ? cr.reportedBusId : cr.busId, cr.realCompCap,
                    cr.reportedCompCap, cr.emulatedSource);
        inits.add(
            new Evidence.RankInit(
                r, cr.cudaDev, cr.busId, cr.host, cr.pid, cr.nvmlDev, cr.initTotal, cr.initPhases, cr.source, emu,
                cr.launcherLabel));
      }
      trees.addAll(cr.trees);
      connections.addAll(cr.connections);
      cr.connections.forEach(c -> transports.add(c.transport()));
      connectedRings |= cr.connectedRings;
      connectedTrees |= cr.connectedTrees;
    }
    String label = first.commId != null ? "communicator " + first.commId : "communicator of " + first.nRanks + " ranks";
    Integer nRanks = agree(g, fileOf, cr -> cr.nRanks, cr -> cr.source, "nRanks", label, findings);
    Integer coll = agree(g, fileOf, cr -> cr.collChannels, cr -> cr.channelsSource, "coll channels", label, findings);
    if (coll == null) {
      coll = agree(g, fileOf, cr -> cr.ringTotal, cr -> cr.ringTotalSource, "ring channels", label, findings);
    }
    Integer nvls = agree(g, fileOf, cr -> cr.nvlsChannels, cr -> cr.channelsSource, "nvls channels", label, findings);
    Integer p2p = agree(g, fileOf, cr -> cr.p2pChannels, cr -> cr.channelsSource, "p2p channels", label, findings);
    Integer perPeer =
        agree(g, fileOf, cr -> cr.p2pPerPeer, cr -> cr.channelsSource, "p2p channels per peer", label, findings);
    String thr =
        agree(g, fileOf, cr -> cr.threadThresholds, cr -> cr.thresholdsSource, "threadThresholds", label, findings);
    List<String> rings = new ArrayList<>();
    List<Evidence.Graph> graphs = new ArrayList<>();
    for (CommRank cr : g) {
      if (rings.isEmpty() && !cr.rings.isEmpty()) {
        rings.addAll(cr.rings.values());
      }
      // Every distinct search result: each rank searches its own node, so a cluster whose nodes differ (a slower NIC
      // on one) prints other graphs on that node's ranks before the exchange takes the minimum (init.cc@v2.28.9-1).
      for (Evidence.Graph x : cr.graphs) {
        if (graphs.size() < 64 && graphs.stream().noneMatch(x::sameShape)) {
          graphs.add(x);
        }
      }
    }
    Boolean trees3 = connectedTrees ? Boolean.TRUE : before222 && connectedRings ? Boolean.FALSE : null;
    List<String> labels = new ArrayList<>();
    for (CommRank cr : g) {
      if (cr.launcherLabel != null && !labels.contains(cr.launcherLabel)) {
        labels.add(cr.launcherLabel);
      }
    }
    return new Evidence.Communicator(
        first.commId, List.copyOf(ranks), nRanks, firstNonNull(g, cr -> cr.nNodes), firstNonNull(g, cr -> cr.localRanks),
        coll, p2p, perPeer, nvls, rings, trees, graphs, thr, List.copyOf(transports), connections, connectedRings,
        trees3, inits, first.source, labels);
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
      List<CommRank> g, Map<CommRank, FileFacts> fileOf, java.util.function.Function<CommRank, T> f,
      java.util.function.Function<CommRank, Source> src, String what, String label, List<Evidence.Finding> findings) {
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
        findings.add(
            new Evidence.Finding(
                "cross-rank-disagreement",
                label + ": rank " + holder.effectiveRank(fileOf.get(holder).rank) + " has " + what + " " + value
                    + " but rank " + cr.effectiveRank(fileOf.get(cr).rank) + " has " + v
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
        String choice = k.algorithm + "/" + k.protocol + (k.channelHi >= 0 ? " channels " + k.channelLo + ".." + k.channelHi : "");
        Object[] prev = seen.putIfAbsent(what, new Object[] {choice, cr, e.getValue().first});
        if (prev != null && !prev[0].equals(choice) && prev[1] != cr) {
          CommRank other = (CommRank) prev[1];
          findings.add(
              new Evidence.Finding(
                  "cross-rank-disagreement",
                  what + " bytes: rank " + other.effectiveRank(fileOf.get(other).rank) + " chose " + prev[0]
                      + " but rank " + cr.effectiveRank(fileOf.get(cr).rank) + " chose " + choice
                      + " (NVIDIA/nccl #1136)",
                  sources((Source) prev[2], e.getValue().first)));
        }
      }
    }
  }

  /**
   * The n-th NCCL kernel of each rank should have the same name, grid and block on every rank: grid.x is the channel
   * count, so a difference is ranks disagreeing on channels.
   */
  private static void crossRankKernels(List<Evidence.Kernel> kernels, List<Evidence.Finding> findings) {
    Map<Integer, List<Evidence.Kernel>> byRank = new TreeMap<>();
    for (Evidence.Kernel k : kernels) {
      if (k.nccl() && k.rank() != null && k.grid() != null) {
        byRank.computeIfAbsent(k.rank(), r -> new ArrayList<>()).add(k);
      }
    }
    if (byRank.size() < 2) {
      return;
    }
    byRank.values().forEach(l -> l.sort(Comparator.comparing(Evidence.Kernel::startNs, Comparator.nullsLast(Comparator.naturalOrder()))));
    List<List<Evidence.Kernel>> lists = new ArrayList<>(byRank.values());
    List<Evidence.Kernel> base = lists.get(0);
    int reported = 0;
    for (int i = 0; i < base.size() && reported < MAX_KERNEL_FINDINGS; i++) {
      Evidence.Kernel a = base.get(i);
      for (int j = 1; j < lists.size() && reported < MAX_KERNEL_FINDINGS; j++) {
        List<Evidence.Kernel> l = lists.get(j);
        if (i >= l.size()) {
          continue;
        }
        Evidence.Kernel b = l.get(i);
        if (Objects.equals(a.name(), b.name())
            && (!java.util.Arrays.equals(a.grid(), b.grid()) || !java.util.Arrays.equals(a.block(), b.block()))) {
          findings.add(
              new Evidence.Finding(
                  "cross-rank-disagreement",
                  "NCCL kernel #" + i + " " + shortName(a.name()) + ": rank " + a.rank() + " grid "
                      + java.util.Arrays.toString(a.grid()) + " block " + java.util.Arrays.toString(a.block())
                      + " but rank " + b.rank() + " grid " + java.util.Arrays.toString(b.grid()) + " block "
                      + java.util.Arrays.toString(b.block()) + " (NVIDIA/nccl #1136)",
                  List.of(a.source(), b.source())));
          reported++;
        }
      }
    }
  }

  static String shortName(String name) {
    int p = name.indexOf('(');
    return p > 0 ? name.substring(0, p) : name;
  }
}

package io.pathproof.evidence;

import java.math.BigDecimal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;

/**
 * The init lines of an NCCL log that describe a communicator (one family of {@link NcclLogReader}): Trees, the graph
 * search's Pattern lines, channel counts, environment echoes and Init timings.
 */
final class InitLines {
  private final NcclLogReader r;

  InitLines(NcclLogReader r) {
    this.r = r;
  }

  void trees(String msg) {
    CommRank cr = r.context();
    // The same Trees line again for this rank (a log concatenated or re-read) gives nothing new: skip the regex.
    if (cr.treeLines.size() < 4096 && !cr.treeLines.add(msg)) {
      r.counted();
      return;
    }
    Integer rank = cr.effectiveRank(r.fileRank);
    Matcher m = NcclLogReader.TREE_ITEM.matcher(msg);
    int n = 0;
    while (m.find()) {
      String tree = (rank == null ? "" : "rank " + rank + " ") + "[" + m.group(1) + "] " + m.group(2);
      if (cr.trees.size() < 4096 && !cr.trees.contains(tree)) {
        cr.trees.add(tree);
      }
      n++;
    }
    if (n == 0 && msg.length() > 5) {
      r.out.problem(r.lineNo, "Trees line not understood");
      return;
    }
    r.counted();
  }

  void graph(String msg) {
    Matcher m = NcclLogReader.GRAPH.matcher(msg);
    if (!m.find()) {
      r.out.problem(r.lineNo, "Pattern (graph) line not understood");
      return;
    }
    try {
      Evidence.Graph g =
          new Evidence.Graph(
              Integer.parseInt(m.group(1)),
              Integer.parseInt(m.group(3)),
              Double.parseDouble(m.group(4)),
              Double.parseDouble(m.group(5)),
              m.group(6),
              m.group(7),
              Integer.parseInt(m.group(8)),
              Source.line(r.file, r.lineNo));
      CommRank cr = r.context();
      boolean seen = false;
      for (Evidence.Graph o : cr.graphs) {
        seen |= o.pattern() == g.pattern() && o.nChannels() == g.nChannels() && o.bwIntra() == g.bwIntra()
            && o.bwInter() == g.bwInter() && o.typeIntra().equals(g.typeIntra()) && o.typeInter().equals(g.typeInter())
            && java.util.Objects.equals(o.sameChannels(), g.sameChannels());
      }
      if (!seen && cr.graphs.size() < 64) {
        cr.graphs.add(g);
      }
      r.counted();
    } catch (NumberFormatException ex) {
      r.out.problem(r.lineNo, "Pattern (graph) line has a number out of range");
    }
  }

  /**
   * "%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p channels per peer"
   * (init.cc:1234@v2.22.3-1, init.cc:1646@v2.30.7-1); 2.19 has no collnet field (init.cc:1151@v2.19.3-1) and 2.9
   * neither collnet nor nvls (paths.cc:531@v2.9.9-1).
   */
  void channels(String msg) {
    Matcher m = NcclLogReader.CHANNELS.matcher(msg);
    if (!m.find()) {
      r.out.problem(r.lineNo, "channel-count line not understood");
      return;
    }
    try {
      CommRank cr = r.context();
      Integer coll = Integer.valueOf(m.group(1));
      if (cr.collChannels != null && !cr.collChannels.equals(coll)) {
        r.out.findings.add(
            new Evidence.Finding(
                "channels-changed",
                "one rank's communicator printed " + cr.collChannels + " and then " + coll + " coll channels",
                java.util.List.of(cr.channelsSource, Source.line(r.file, r.lineNo))));
      }
      cr.collChannels = coll;
      cr.collnetChannels = m.group(2) == null ? null : Integer.valueOf(m.group(2));
      cr.nvlsChannels = m.group(3) == null ? null : Integer.valueOf(m.group(3));
      cr.p2pChannels = Integer.valueOf(m.group(4));
      cr.p2pPerPeer = Integer.valueOf(m.group(5));
      cr.channelsSource = Source.line(r.file, r.lineNo);
      cr.facts++;
      r.counted();
    } catch (NumberFormatException ex) {
      r.out.problem(r.lineNo, "channel-count line has a number out of range");
    }
  }

  /** "%s set by environment to %lld." (param.cc:75@v2.22.3-1, with the period) or "… to %s" (tuning.cc:273@v2.22.3-1). */
  private final java.util.Set<String> envLines = new java.util.HashSet<>();

  void env(String msg) {
    // Every rank echoes the same variables: an identical echo adds no fact and no finding.
    if (envLines.contains(msg)) {
      r.counted();
      return;
    }
    Matcher m = NcclLogReader.ENV.matcher(msg);
    if (!m.find()) {
      return;
    }
    if (envLines.size() < 4096) {
      envLines.add(msg);
    }
    String name = m.group(1);
    String value = m.group(2).strip();
    if (value.endsWith(".") && NcclLogReader.INTEGER.matcher(value.substring(0, value.length() - 1)).matches()) {
      value = value.substring(0, value.length() - 1);
    }
    Source src = Source.line(r.file, r.lineNo);
    String old = r.out.env.putIfAbsent(name, value);
    if (old == null) {
      r.out.envSources.put(name, src);
    } else if (!old.equals(value)) {
      r.out.findings.add(
          new Evidence.Finding(
              "env-mismatch", name + " is " + old + " on one rank and " + value + " on another",
              java.util.List.of(r.out.envSources.get(name), src)));
    }
    r.counted();
  }

  void initTimings(String msg) {
    Matcher m = NcclLogReader.INIT_TIMINGS.matcher(msg);
    if (!m.find()) {
      return;
    }
    CommRank cr = r.context();
    cr.initTotal = new BigDecimal(m.group(3));
    Map<String, BigDecimal> phases = new LinkedHashMap<>();
    Matcher p = NcclLogReader.PHASE.matcher(m.group(4));
    while (p.find()) {
      phases.put(p.group(1), new BigDecimal(p.group(2)));
    }
    cr.initPhases = phases;
    cr.initSource = Source.line(r.file, r.lineNo);
    r.counted();
  }
}

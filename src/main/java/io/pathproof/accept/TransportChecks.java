package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.Source;
import io.pathproof.nccl.CommunicatorPrediction;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Transport rows: the connector of each peer against the predicted transport.
 */
final class TransportChecks extends CheckFamily {
  TransportChecks(CheckFamily.Context ctx) {
    super(ctx);
  }

  /**
   * Transport per peer from the connector lines. A P2P connector (CUDA IPC / cuMem / direct pointer over NVLink or
   * PCIe) is GPU↔GPU inside a node; GPUDirect RDMA is GPU↔NIC for NET transports (seed common error 9): a P2P
   * connection is reported as P2P even where a reader flagged GDR on it.
   */
  void transport() {
    CommunicatorPrediction cp = p.communicator();
    String exp = cp == null ? null : cp.transport();
    if (glooReason != null) {
      rows.add(new Row("transport", "transport per peer").expected(exp == null ? "(none predicted)" : exp).na(glooReason).build());
      return;
    }
    if (nRanks() <= 1) {
      rows.add(new Row("transport", "transport per peer").expected("no peer (1 rank)")
          .na("not applicable (1 rank: no peer connection)").build());
      return;
    }
    TreeMap<String, Set<String>> perPeer = new TreeMap<>();
    TreeMap<String, List<Source>> sources = new TreeMap<>();
    Set<String> gdrOnP2p = new TreeSet<>();
    for (Evidence.Communicator c : ourCommunicators()) {
      for (Evidence.Connection cn : EvidenceView.list(c.connections())) {
        String key = String.format("%d->%d", cn.fromRank(), cn.toRank());
        String t = cn.transport() == null ? "?" : cn.transport();
        if ("P2P".equals(NcclNames.transportFamily(t)) && cn.gdr()) {
          gdrOnP2p.add(key);
        }
        perPeer.computeIfAbsent(key, k -> new TreeSet<>()).add(t);
        sources.computeIfAbsent(key, k -> new ArrayList<>()).add(cn.source());
      }
    }
    if (perPeer.isEmpty()) {
      Set<String> ts = new TreeSet<>();
      Row r = new Row("transport", "transport per peer").expected(exp == null ? "(none predicted)" : exp);
      for (Evidence.Communicator c : ourCommunicators()) {
        ts.addAll(EvidenceView.list(c.transports()));
        if (!EvidenceView.list(c.transports()).isEmpty()) {
          r.prov(EvidenceView.src(c.source()));
        }
      }
      if (ts.isEmpty()) {
        r.unproven("no connector lines (NCCL_DEBUG_SUBSYS without P2P/INIT, or connections made after the log ended)");
      } else {
        r.kind(NCCL_LOG);
        r.unproven("transports " + ts + " seen, but no per-peer connector line");
      }
      rows.add(r.build());
      return;
    }
    for (Map.Entry<String, Set<String>> en : perPeer.entrySet()) {
      Row r = new Row("transport/" + en.getKey(), "transport from rank " + en.getKey().replace("->", " to rank "))
          .expected(exp == null ? "(none predicted)" : exp).kind(NCCL_LOG);
      for (Source s : sources.get(en.getKey())) {
        if (r.provenanceSize() >= 2) {
          break;
        }
        r.prov(EvidenceView.src(s));
      }
      String obs = String.join(", ", en.getValue()) + describe(en.getValue());
      if (gdrOnP2p.contains(en.getKey())) {
        obs += " (a GDR flag on a P2P connector is ignored: P2P is GPU-to-GPU, never GPUDirect RDMA)";
      }
      if (exp == null) {
        r.unproven(obs + "; the prediction names no transport");
      } else if (matches(exp, en.getValue())) {
        r.pass(obs);
      } else if (sameKind(exp, en.getValue())) {
        // P2P/CUMEM vs P2P/IPC: the same GPU-to-GPU transport; only how the peer buffer is mapped differs (cuMem
        // support of the driver, NCCL_CUMEM_ENABLE), which the prediction can only assume. Not a path difference.
        r.pass(obs + "; predicted " + exp + ": same " + NcclNames.transportFamily(exp) + " transport, other buffer mapping");
      } else {
        r.fail(obs);
      }
      rows.add(r.build());
    }
  }

  private static String describe(Set<String> ts) {
    for (String t : ts) {
      if ("P2P".equals(NcclNames.transportFamily(t))) {
        return " (P2P: GPU-to-GPU peer access, not GPUDirect RDMA)";
      }
    }
    return "";
  }

  /** Every observed transport is P2P, as predicted, differing only in the mapping mechanism (CUMEM, IPC, direct pointer). */
  private static boolean sameKind(String expected, Set<String> observed) {
    if (!"P2P".equals(NcclNames.transportFamily(expected)) || expected.toUpperCase(Locale.ROOT).contains("GDR")) {
      return false;
    }
    for (String o : observed) {
      if (!"P2P".equals(NcclNames.transportFamily(o))) {
        return false;
      }
    }
    return true;
  }

  /** Every observed transport of a peer is of the predicted kind; a prediction may name just the family ("P2P"). */
  private static boolean matches(String expected, Set<String> observed) {
    String e = expected.trim().toUpperCase(Locale.ROOT);
    boolean expectsGdr = e.contains("GDR");
    for (String o : observed) {
      String u = o.toUpperCase(Locale.ROOT);
      if (!NcclNames.transportFamily(e).equals(NcclNames.transportFamily(u))) {
        return false;
      }
      if (expectsGdr && !u.contains("GDR")) {
        return false;
      }
      String eNoGdr = e.replace("/GDRDMA", "").replace("/GDR", "");
      if (!u.startsWith(eNoGdr)) {
        return false;
      }
    }
    return true;
  }
}

package io.pathproof.accept;

import io.pathproof.evidence.Evidence;
import io.pathproof.evidence.EvidenceKind;
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
     * Transport per peer from the connector lines, each rank pair against its own predicted transport where the
     * prediction has one ({@link CommunicatorPrediction#peerTransports}), else the communicator's. A P2P connector (CUDA IPC / cuMem / direct pointer over NVLink or
     * PCIe) is GPU↔GPU inside a node; GPUDirect RDMA is GPU↔NIC for NET transports (seed common error 9): a P2P
     * connection is reported as P2P even where a reader flagged GDR on it.
     */
    void transport() {
        CommunicatorPrediction cp = p.communicator();
        String exp = cp == null ? null : cp.transport();
        if (glooReason != null) {
            rows.add(new Row("transport", "transport per peer")
                    .expected(exp == null ? "(none predicted)" : exp)
                    .na(glooReason)
                    .build());
            return;
        }
        if (nRanks() <= 1) {
            rows.add(new Row("transport", "transport per peer")
                    .expected("no peer (1 rank)")
                    .na("not applicable (1 rank: no peer connection)")
                    .build());
            return;
        }
        if (voided("transport") != null) {
            rows.add(new Row("transport", "transport per peer")
                    .expected(exp == null ? "(none predicted)" : exp)
                    .unproven(disclaimed(voided("transport")))
                    .build());
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
                if ("P2P".equals(NcclNames.transportFamily(t)) && cn.read()) {
                    // "via P2P/CUMEM/read" (p2p.cc@v2.28.9-1:375, 393): the reader keeps /read apart from the
                    // mechanism; the prediction names it (P2P/CUMEM/read), so the observed mechanism carries it too
                    t += "/read";
                }
                if ("NET".equals(NcclNames.transportFamily(t)) && cn.gdr()) {
                    // "via NET/IB/0/GDRDMA" (transport/net.cc@v2.28.9-1:313, 359): GPUDirect RDMA is this connection's
                    // mechanism, what the prediction names as NET/<module>/GDRDMA
                    t += "/GDRDMA";
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
                r.unproven(
                        "no connector lines (NCCL_DEBUG_SUBSYS without P2P/INIT, or connections made after the log ended)");
            } else {
                r.kind(EvidenceKind.NCCL_LOG);
                r.unproven("transports " + ts + " seen, but no per-peer connector line");
            }
            rows.add(r.build());
            return;
        }
        for (Map.Entry<String, Set<String>> en : perPeer.entrySet()) {
            // NCCL picks the transport per connection (transport.cc@v2.28.9-1:23-42): where the prediction gives this
            // pair its own (a host whose pairs differ), the pair is judged against it, else against the
            // communicator's.
            String pairExp = exp == null ? null : cp.peerTransports().getOrDefault(en.getKey(), exp);
            Row r = new Row(
                            "transport/" + en.getKey(),
                            "transport from rank " + en.getKey().replace("->", " to rank "))
                    .expected(pairExp == null ? "(none predicted)" : pairExp)
                    .kind(EvidenceKind.NCCL_LOG);
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
                rows.add(r.unproven(obs + "; the prediction names no transport").build());
                continue;
            }
            judge(r, en.getKey(), sources.get(en.getKey()), Expected.parse(pairExp), en.getValue(), obs);
        }
    }

    /**
     * A predicted transport: kinds joined by " + " (one per peer kind, e.g. intra-node P2P + inter-node NET), each a
     * single mechanism or alternatives joined by " or " where the model cannot choose, and after ": " why it cannot.
     */
    record Expected(List<List<String>> kinds, String unknownReason) {
        static Expected parse(String text) {
            String body = text;
            String reason = null;
            int colon = text.indexOf(": ");
            if (colon >= 0) {
                body = text.substring(0, colon);
                reason = text.substring(colon + 2).trim();
            }
            List<List<String>> kinds = new ArrayList<>();
            for (String part : body.split(" \\+ ")) {
                List<String> alts = new ArrayList<>();
                for (String a : part.split(" or ")) {
                    if (!a.isBlank()) {
                        alts.add(a.trim());
                    }
                }
                if (!alts.isEmpty()) {
                    kinds.add(alts);
                }
            }
            return new Expected(kinds, reason);
        }

        /** The predicted kind of the observed transport's family (P2P, SHM, NET …), or null. */
        List<String> kindOf(String observed) {
            for (List<String> k : kinds) {
                for (String alt : k) {
                    if (NcclNames.transportFamily(alt).equals(NcclNames.transportFamily(observed))) {
                        return k;
                    }
                }
            }
            return null;
        }
    }

    /**
     * The mechanism, not the family: a definite prediction (P2P/CUMEM, P2P/IPC, SHM, NET/IB …) passes only on that
     * mechanism. Where the prediction names alternatives (cuMem support is not an input), the row is split: the family
     * row PASSes or FAILs, the mechanism row is UNPROVEN with the prediction's reason (FAIL if none of them was used).
     */
    private void judge(Row r, String peer, List<Source> srcs, Expected exp, Set<String> observed, String obs) {
        boolean familyOk = true;
        boolean mechanismOk = true;
        boolean undecided = false;
        List<String> predictedKinds = new ArrayList<>();
        for (String o : observed) {
            List<String> kind = exp.kindOf(o);
            if (kind == null) {
                familyOk = false;
                continue;
            }
            predictedKinds.add(String.join(" or ", kind));
            boolean any = false;
            for (String alt : kind) {
                any |= matches(alt, o);
            }
            mechanismOk &= any;
            undecided |= kind.size() > 1;
        }
        if (!undecided) {
            if (familyOk && mechanismOk) {
                r.pass(obs);
            } else {
                r.fail(obs
                        + (familyOk
                                ? "; predicted mechanism " + String.join(", ", predictedKinds) + ": another mechanism"
                                : ""));
            }
            rows.add(r.build());
            return;
        }
        r.check("transport family from rank " + peer.replace("->", " to rank "));
        if (familyOk) {
            r.pass(obs + "; family "
                    + NcclNames.transportFamily(observed.iterator().next()) + " as predicted");
        } else {
            r.fail(obs);
        }
        rows.add(r.build());
        Row m = new Row(
                        "transport-mechanism/" + peer,
                        "transport mechanism from rank " + peer.replace("->", " to rank "))
                .expected(String.join(", ", predictedKinds))
                .kind(EvidenceKind.NCCL_LOG);
        for (Source s : srcs) {
            if (m.provenanceSize() >= 2) {
                break;
            }
            m.prov(EvidenceView.src(s));
        }
        String seen = String.join(", ", observed);
        if (!mechanismOk) {
            m.fail(seen + ": none of the predicted mechanisms");
        } else {
            m.unproven(seen + "; not judged: the prediction could not choose the mechanism ("
                    + (exp.unknownReason() == null ? "alternatives predicted" : exp.unknownReason()) + ")");
        }
        rows.add(m.build());
    }

    private static String describe(Set<String> ts) {
        for (String t : ts) {
            if ("P2P".equals(NcclNames.transportFamily(t))) {
                return " (P2P: GPU-to-GPU peer access, not GPUDirect RDMA)";
            }
        }
        return "";
    }

    /** The observed transport is the predicted mechanism; a prediction may name just the family ("P2P"). */
    private static boolean matches(String expected, String observed) {
        String e = expected.trim().toUpperCase(Locale.ROOT);
        String u = observed.toUpperCase(Locale.ROOT);
        if (!NcclNames.transportFamily(e).equals(NcclNames.transportFamily(u))) {
            return false;
        }
        if (e.contains("GDR") != u.contains("GDR")) {
            return false; // GPUDirect RDMA predicted and not used, or used where the model said the GPU cannot
        }
        return u.startsWith(e.replace("/GDRDMA", "").replace("/GDR", ""));
    }
}

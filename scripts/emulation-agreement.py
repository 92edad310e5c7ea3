#!/usr/bin/env python3
"""pathproof's NCCL model against NCCL's own decisions on emulated machines (the table of docs/emulation.md).

    scripts/emulation-agreement.py SWEEP_DIR [--pathproof ./pathproof] [--markdown] [--nccl VERSION]

SWEEP_DIR is what samples/emulation-sweep/run.sh (or scripts/version-agreement.sh) wrote (one folder per case,
nccl-rank<R>.log per rank) and holds cases.json: [{"case", "topology" (a file relative to cases.json), "env": {...}}].
For every AllReduce NCCL's rank 0 logged, followed by the emulator's `EMULATOR launch: rank 0 grid G block B …`,
pathproof predicts a one-parameter float32 workload of B bytes on the same topology file (looked up in --topologies by
the name cases.json gives) with the same environment and the NCCL version the log names (`NCCL version X+cuda…`,
--nccl overrides), and the two are compared field by field. NCCL's TUNING line has three forms:
  2.24+:      `AllReduce: B Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={lo..hi}`  -> algorithm, protocol, channels
  2.23:       `AllReduce: B Bytes -> Algo 1 proto 2 time T`                              -> algorithm, protocol, tuner time
  2.22, 2.21: `B Bytes -> Algo 1 proto 2 time T`                                         -> algorithm, protocol, tuner time
and gridX, blockX come from the launch line; the tuning table's AllReduce row (latency/bandwidth per algorithm ×
protocol) is compared once per case. Nothing here feeds the model: the prediction never sees NCCL's answer.

    scripts/emulation-agreement.py --clusters SWEEP_DIR [--markdown] [--doc docs/emulation.md]

Emulated clusters (scripts/emulated-cluster-gpu.sh): SWEEP_DIR holds one pathproof run directory per cluster shape,
each with emulated-cluster.json (the cluster NCCL saw: each node's GPUs and its NICs) and every rank's NCCL log; a
folder without it but with nccl-topo-node0.xml (NCCL's own dump of node 0, e.g. native/nccl-net-emu/gpu-check.sh's)
is predicted as that many copies of node 0 as NCCL counted nodes.
Besides every AllReduce's fields above, the communicator is compared once per shape: nNodes, coll channels, p2p
channels (and per peer), the ring and tree graphs NCCL's search printed (channels, intra/inter bandwidth and path
types) and channel 0's ring order; NCCL's trees (`Trees [c] ...`) are listed beside the model's tree graph, since the
model does not predict each rank's tree parents. --doc replaces the part of that file between
`<!-- SECTION:begin -->` and `<!-- SECTION:end -->` with the tables (--section, default cluster-agreement).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

DECISION = re.compile(r"NCCL INFO AllReduce: (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}")
# enqueue.cc@v2.23.4-1:1855 "%s: %ld Bytes -> Algo %d proto %d time %f"; @v2.22.3-1:1613, @v2.21.5-1:1534 without "%s: "
DECISION_TIME = re.compile(r"NCCL INFO (?:AllReduce: )?(\d+) Bytes -> Algo (\d+) proto (\d+) time ([\d.]+)")
VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
LAUNCH = re.compile(r"NCCL INFO (?:EMULATOR|ORACLE) launch: (?:rank \d+ )?grid (\d+) block (\d+)")
TABLE_ROW = re.compile(r"NCCL INFO\s+AllReduce \|((?:\s*[\d.]+/\s*[\d.]+ \|)+)")
ALGOS = {"RING": "Ring", "TREE": "Tree", "COLLNET_DIRECT": "CollNetDirect", "COLLNET_CHAIN": "CollNetChain",
         "NVLS": "NVLS", "NVLS_TREE": "NVLSTree", "PAT": "PAT"}
ALGO_IDS = ["Tree", "Ring", "CollNetDirect", "CollNetChain", "NVLS", "NVLSTree", "PAT"]
PROTOS = {"LL": "LL", "LL128": "LL128", "SIMPLE": "Simple"}
PROTO_IDS = ["LL", "LL128", "Simple"]
# init.cc@v2.28.9-1 "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d"
NNODES = re.compile(r"NCCL INFO comm \S+ rank 0 nRanks (\d+) nNodes (\d+)")
# init.cc "%d coll channels, %d collnet channels, %d nvls channels, %d p2p channels, %d p2p channels per peer"
CHANNELS = re.compile(r"NCCL INFO (\d+) coll channels, \d+ collnet channels, \d+ nvls channels, (\d+) p2p channels,"
                      r" (\d+) p2p channels per peer")
# graph/search.cc ncclTopoPrintGraph "Pattern %d, crossNic %d, nChannels %d, bw %f/%f, type %s/%s, sameChannels %d"
GRAPH = re.compile(r"NCCL INFO Pattern (\d+), crossNic (?P<crossNic>\d+), nChannels (\d+), bw ([\d.]+)/([\d.]+), type (\w+)/(\w+),"
                   r" sameChannels (\d)")
RING0 = re.compile(r"NCCL INFO Channel 00/\d+ : ([\d ]+)$")
TREES = re.compile(r"NCCL INFO Trees (.*)$")


def nccl_version(log):
    with open(log, errors="replace") as f:
        for line in f:
            m = VERSION.search(line)
            if m:
                return m.group(1)
    return None


def nccl_decisions(log):
    out, pending, table = [], None, None
    with open(log, errors="replace") as f:
        for line in f:
            m = DECISION.search(line)
            if m:
                pending = {"bytes": int(m.group(1)), "algorithm": ALGOS.get(m.group(2), m.group(2)),
                           "protocol": PROTOS.get(m.group(3), m.group(3)),
                           "channels": int(m.group(5)) - int(m.group(4)) + 1}
                continue
            m = DECISION_TIME.search(line)
            if m:
                pending = {"bytes": int(m.group(1)), "algorithm": ALGO_IDS[int(m.group(2))],
                           "protocol": PROTO_IDS[int(m.group(3))], "time": "%.6f" % float(m.group(4))}
                continue
            m = LAUNCH.search(line)
            if m and pending is not None:
                pending.update({"gridX": int(m.group(1)), "blockX": int(m.group(2))})
                out.append(pending)
                pending = None
                continue
            m = TABLE_ROW.search(line)
            if m and table is None:
                cells = re.findall(r"([\d.]+)/\s*([\d.]+)", m.group(1))
                table = [(float(a), float(b)) for a, b in cells[:6]]  # Tree LL/LL128/Simple, Ring LL/LL128/Simple
    return out, table


def nccl_communicator(log):
    """What NCCL's rank 0 printed about its communicator: nodes, channels, the ring and tree graphs, ring 0, trees."""
    c = {}
    with open(log, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = NNODES.search(line)
            if m and "nNodes" not in c:
                c["nNodes"] = int(m.group(2))
            m = CHANNELS.search(line)
            if m and "collChannels" not in c:
                c.update({"collChannels": int(m.group(1)), "p2pChannels": int(m.group(2)),
                          "p2pChannelsPerPeer": int(m.group(3))})
            m = GRAPH.search(line)
            if m:
                g = {"nChannels": int(m.group(3)), "bwIntra": float(m.group(4)), "bwInter": float(m.group(5)),
                     "typeIntra": m.group(6), "typeInter": m.group(7), "crossNic": int(m.group("crossNic"))}
                # ring: pattern 4 (NCCL_TOPO_PATTERN_RING); tree: the first balanced/split/tree pattern (1, 2, 3)
                key = "ring" if m.group(1) == "4" else "tree" if m.group(1) in ("1", "2", "3") else None
                if key and key not in c:
                    c[key] = g
            m = RING0.search(line)
            if m and "ring0" not in c:
                c["ring0"] = " ".join(m.group(1).split())
            m = TREES.search(line)
            if m and "trees" not in c:
                c["trees"] = m.group(1).strip()
    return c


def predict(pathproof, topo, env, nbytes, nranks, nccl, nodes=None):
    with tempfile.TemporaryDirectory() as tmp:
        wl = os.path.join(tmp, "w.json")
        json.dump({"name": "allreduce-%d" % nbytes, "parameters": [
            {"name": "p", "shape": [nbytes // 4], "dtype": "float32", "requiresGrad": True}],
            "bucketCapMb": max(64, nbytes // (1 << 20) + 1), "findUnusedParameters": False,
            "staticGraph": False, "gradientAsBucketView": False}, open(wl, "w"))
        cmd = [pathproof, "predict", "--topology", topo] + (["--nodes", str(nodes)] if nodes else []) + [
               "--workload", wl, "--nccl", nccl, "--torch", "2.11.0",
               "--ranks", str(nranks), "--format", "json", "--env", "NCCL_NVLS_ENABLE=0"]
        for k, v in env.items():
            cmd += ["--env", "%s=%s" % (k, v)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            return {"error": (p.stderr or p.stdout).strip().splitlines()[-1:]}
        d = json.loads(p.stdout)
        c = d["collectives"][-1]
        return {k: c.get(k) for k in ("algorithm", "protocol", "channels", "gridX", "blockX")} | {
            "time": "%.6f" % c["tunerTimeUs"] if c.get("tunerTimeUs") is not None else None,
            "table": [(r["latencyUs"], r["bandwidthGBs"]) for r in c.get("tuningTable", [])][:6],
            "communicator": d.get("communicator", {})}


COMM_FIELDS = ("nNodes", "collChannels", "p2pChannels", "p2pChannelsPerPeer")
GRAPH_FIELDS = ("nChannels", "bwIntra", "bwInter", "typeIntra", "typeInter", "crossNic")


def same_cycle(a, b):
    """Two rank orders are one ring (accept's DecisionChecks.sameCycle): NCCL prints a ring from the printing rank."""
    x, y = a.split(), b.split()
    if len(x) == len(y):
        return any(x == y[k:] + y[:k] for k in range(len(y)))
    # NCCL before 2.23 prints at most 20 ranks of a ring (rings.cc:9, 18@v2.21.5-1 and @v2.22.3-1, MAXWIDTH): then its line is the
    # first 20 of the ring as rank 0 walks it, which must be the model's ring read from rank 0 on.
    if len(x) == 20 and len(y) > 20 and x[0] in y:
        k = y.index(x[0])
        return x == (y[k:] + y[:k])[:20]
    return False


def graph_diffs(theirs, ring, tree, prefix=""):
    """The Pattern lines a rank printed against the model's ring and tree search for that rank's node."""
    out = []
    for g, mine in (("ring", ring), ("tree", tree)):
        for f in GRAPH_FIELDS:
            if g in theirs:
                # the prediction's JSON leaves crossNic out when it is 0 (GraphSummary)
                v = (mine or {}).get(f, 0 if f == "crossNic" else None)
                v = round(v, 6) if isinstance(v, float) else v
                out.append(("%s%s.%s" % (prefix, g, f), theirs[g][f], v, theirs[g][f] == v))
    return out


def communicator_diffs(theirs, ours, d=None):
    """Field by field: (field, NCCL's, pathproof's, same) for every communicator field NCCL printed. A rank prints its
    own node's search (Pattern lines) before the ranks keep the minimum (init.cc@v2.28.9-1:1175-1192): where the nodes
    differ, the prediction lists each node's own search (nodeGraphs), and each node's first rank in the run directory d
    is held to its node's."""
    out = []
    for f in COMM_FIELDS:
        if f in theirs:
            out.append((f, theirs[f], ours.get(f), theirs[f] == ours.get(f)))
    nodes = ours.get("nodeGraphs") or []
    if nodes:
        out += graph_diffs(theirs, nodes[0].get("ring"), nodes[0].get("tree"))
        for k, n in enumerate(nodes[1:], start=1):
            log = os.path.join(d, "nccl-rank%d.log" % n["firstRank"]) if d else None
            if log and os.path.isfile(log):
                out += graph_diffs(nccl_communicator(log), n.get("ring"), n.get("tree"), "node%d." % k)
    else:
        out += graph_diffs(theirs, ours.get("ringGraph"), ours.get("treeGraph"))
    if "ring0" in theirs:
        orders = ours.get("ringOrders") or []
        mine = orders[0] if orders else None
        out.append(("ring0", theirs["ring0"], mine, mine is not None and same_cycle(theirs["ring0"], mine)))
    return out


def clusters(a):
    """--clusters: every shape of scripts/emulated-cluster-gpu.sh, its communicator and its AllReduces."""
    shapes = sorted(d for d in os.listdir(a.clusters) if any(
        os.path.isfile(os.path.join(a.clusters, d, f)) for f in ("emulated-cluster.json", "nccl-topo-node0.xml")))
    total = agree = 0
    summary, comm_rows, coll_rows = [], [], []
    versions = set()
    for shape in shapes:
        d = os.path.join(a.clusters, shape)
        logs = [f for f in os.listdir(d) if re.fullmatch(r"nccl-rank\d+\.log", f)]
        log0 = os.path.join(d, "nccl-rank0.log")
        if not os.path.isfile(log0):
            summary.append((shape, "-", "-", "-", "no NCCL log", ""))
            continue
        nranks = len(logs)
        nccl = a.nccl or nccl_version(log0) or "2.28.9"
        versions.add(nccl)
        env = {"NCCL_MNNVL_ENABLE": "0"}
        # A shape run with `run --inject K=V` (a network variable of the sweep): the run kept it in its fault file, and
        # the prediction is made with it too.
        injected = os.path.join(d, "fault.sealed.json")
        if os.path.isfile(injected):
            env.update(json.load(open(injected)).get("env", {}))
        decisions, _ = nccl_decisions(log0)
        theirs = nccl_communicator(log0)
        topo = os.path.join(d, "emulated-cluster.json")
        copies = None
        if os.path.isfile(topo):
            cluster = json.load(open(topo))
            nodes = len(cluster["nodes"])
            nic = dict(cluster["nodes"][0]["nics"][0]) if cluster["nodes"][0].get("nics") else {}
            # nodes that differ (one slowed with node_nic_mbps): name each other node's speed
            other = ["node %d: %s" % (k, n["nics"][0]["speedMbps"]) for k, n in enumerate(cluster["nodes"])
                     if n.get("nics") and n["nics"][0]["speedMbps"] != nic.get("speedMbps")]
            if other:
                nic["speedMbps"] = "%s (%s)" % (nic.get("speedMbps"), ", ".join(other))
        else:
            # A run made without pathproof (native/nccl-net-emu/gpu-check.sh): NCCL's own dump of node 0's topology,
            # as many identical nodes as NCCL counted.
            topo = os.path.join(d, "nccl-topo-node0.xml")
            nodes = copies = theirs.get("nNodes", 1)
            # one NIC per name: NCCL's dump may list a NIC again (its XML fusion), as the topology reader notes
            speeds = dict(re.findall(r'<net name="([^"]+)"[^>]*speed="(\d+)"', open(topo).read()))
            nic = {"speedMbps": "%s x %d" % (next(iter(speeds.values())), len(speeds))} if speeds else {}
        manifest = os.path.join(d, "manifest.json")
        transport = json.load(open(manifest)).get("emulation", {}).get("transport", "-") \
            if os.path.isfile(manifest) else "-"
        s_total = s_agree = 0
        first = True
        for dec in decisions:
            pred = predict(a.pathproof, topo, env, dec["bytes"], nranks, nccl, copies)
            if "error" in pred:
                coll_rows.append((shape, dec["bytes"], "predict failed: %s" % pred["error"], "", ""))
                continue
            if first:
                for f, x, y, same in communicator_diffs(theirs, pred["communicator"], d):
                    s_total += 1
                    s_agree += same
                    comm_rows.append((shape, f, x, y, "agree" if same else "DIFFERS"))
                first = False
            fields = ("algorithm", "protocol", "channels" if "channels" in dec else "time", "gridX", "blockX")
            diffs = [f for f in fields if pred[f] != dec[f]]
            s_total += len(fields)
            s_agree += len(fields) - len(diffs)
            shape_text = "%s/%s ch %s grid %s block %s"
            coll_rows.append((shape, dec["bytes"], shape_text % tuple(dec[f] for f in fields),
                              shape_text % tuple(pred[f] for f in fields), ", ".join(diffs) if diffs else "agree"))
        total += s_total
        agree += s_agree
        summary.append((shape, "%d x %d" % (nodes, nranks // max(1, nodes)), "%s Mb/s" % nic.get("speedMbps", "?"),
                        transport.split(":")[0].split(" (")[0], "%d/%d" % (s_agree, s_total),
                        theirs.get("trees", "")[:60]))
    lines = []
    if a.markdown or a.doc:
        v = ", ".join(sorted(versions))
        lines += ["NCCL %s, emulated clusters: **%d of %d fields agree**." % (v, agree, total), "",
                  "| shape | nodes x GPUs | NIC | between nodes | fields agree | NCCL's trees (rank 0, first ones) |",
                  "|---|---|---|---|---:|---|"]
        lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in summary]
        lines += ["", "| shape | communicator field | NCCL | pathproof | |", "|---|---|---|---|---|"]
        lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in comm_rows]
        lines += ["", "| shape | bytes | NCCL (emulated) | pathproof | fields |", "|---|---:|---|---|---|"]
        lines += ["| " + " | ".join(str(x) for x in r) + " |" for r in coll_rows]
    else:
        lines += ["\t".join(str(x) for x in r) for r in summary + comm_rows + coll_rows]
    text = "\n".join(lines)
    if a.doc:
        doc = open(a.doc).read()
        begin, end = "<!-- %s:begin -->" % a.section, "<!-- %s:end -->" % a.section
        if begin not in doc or end not in doc:
            sys.exit("%s: no %s ... %s section to replace" % (a.doc, begin, end))
        head, rest = doc.split(begin, 1)
        doc = head + begin + "\n" + text + "\n" + end + rest.split(end, 1)[1]
        open(a.doc, "w").write(doc)
    print(text)
    print("\n%d of %d fields agree" % (agree, total), file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sweep", nargs="?")
    ap.add_argument("--clusters", help="the sweep folder of scripts/emulated-cluster-gpu.sh (one run dir per shape)")
    ap.add_argument("--doc", help="with --clusters: the Markdown file whose section (--section) is replaced")
    ap.add_argument("--section", default="cluster-agreement",
                    help="the section of --doc between <!-- NAME:begin --> and <!-- NAME:end --> (default %(default)s)")
    ap.add_argument("--pathproof", default="./pathproof")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--topologies", default="samples/emulation-sweep/topologies")
    ap.add_argument("--nccl", help="the NCCL version to predict for (default: the one each log names)")
    a = ap.parse_args()
    if a.clusters:
        return clusters(a)
    if not a.sweep:
        ap.error("give SWEEP_DIR or --clusters DIR")
    cases = json.load(open(os.path.join(a.sweep, "cases.json")))
    total = agree = 0
    rows = []
    versions = set()
    for case in cases:
        d = os.path.join(a.sweep, case["case"])
        logs = sorted(f for f in os.listdir(d) if f.startswith("nccl-rank")) if os.path.isdir(d) else []
        if not logs:
            rows.append((case["case"], "-", "no NCCL log", "", ""))
            continue
        nranks = len(logs)
        decisions, table = nccl_decisions(os.path.join(d, "nccl-rank0.log"))
        nccl = a.nccl or nccl_version(os.path.join(d, "nccl-rank0.log")) or "2.28.9"
        versions.add(nccl)
        topo = os.path.join(a.topologies, case["topology"])
        first = True
        for dec in decisions:
            # The TUNING line of 2.24+ names the channels; before, it prints the tuner's time instead.
            fields = ("algorithm", "protocol", "channels" if "channels" in dec else "time", "gridX", "blockX")
            pred = predict(a.pathproof, topo, case.get("env", {}), dec["bytes"], nranks, nccl)
            if "error" in pred:
                rows.append((case["case"], dec["bytes"], "predict failed: %s" % pred["error"], "", ""))
                continue
            diffs = [f for f in fields if pred[f] != dec[f]]
            total += len(fields)
            agree += len(fields) - len(diffs)
            shape = "%s/%s " + ("ch" if fields[2] == "channels" else "time") + " %s grid %s block %s"
            theirs = shape % tuple(dec[f] for f in fields)
            ours = shape % tuple(pred[f] for f in fields)
            tdiff = ""
            if first and table and pred["table"]:
                bad = [i for i, (x, y) in enumerate(zip(table, pred["table"]))
                       if abs(x[0] - y[0]) > 0.05 or abs(x[1] - y[1]) > 0.05]
                tdiff = "table: agree" if not bad else "table differs at %s" % bad
                first = False
            rows.append((case["case"], dec["bytes"], theirs, ours, ", ".join(diffs) if diffs else "agree", tdiff))
    if a.markdown:
        print("| case | bytes | NCCL %s (emulated) | pathproof | fields | tuning table |" % ", ".join(sorted(versions)))
        print("|---|---:|---|---|---|---|")
        for r in rows:
            print("| " + " | ".join(str(x) for x in tuple(r) + ("",) * (6 - len(r))) + " |")
    else:
        for r in rows:
            print("\t".join(str(x) for x in r))
    print("\n%d of %d fields agree" % (agree, total), file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())

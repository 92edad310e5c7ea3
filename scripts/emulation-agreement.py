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


def predict(pathproof, topo, env, nbytes, nranks, nccl):
    with tempfile.TemporaryDirectory() as tmp:
        wl = os.path.join(tmp, "w.json")
        json.dump({"name": "allreduce-%d" % nbytes, "parameters": [
            {"name": "p", "shape": [nbytes // 4], "dtype": "float32", "requiresGrad": True}],
            "bucketCapMb": max(64, nbytes // (1 << 20) + 1), "findUnusedParameters": False,
            "staticGraph": False, "gradientAsBucketView": False}, open(wl, "w"))
        cmd = [pathproof, "predict", "--topology", topo, "--workload", wl, "--nccl", nccl, "--torch", "2.11.0",
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
            "table": [(r["latencyUs"], r["bandwidthGBs"]) for r in c.get("tuningTable", [])][:6]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sweep")
    ap.add_argument("--pathproof", default="./pathproof")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--topologies", default="samples/emulation-sweep/topologies")
    ap.add_argument("--nccl", help="the NCCL version to predict for (default: the one each log names)")
    a = ap.parse_args()
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

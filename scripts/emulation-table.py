#!/usr/bin/env python3
"""The agreement table of docs/emulation.md: pathproof's model against NCCL's own decisions (NCCL emulator).

  scripts/emulation-table.py predict  OUT [ENTRY ...]   pathproof's side, on any machine with Java: for every entry a
                                                        sealed prediction OUT/TAG/prediction.json and OUT/predict.tsv
  scripts/emulation-table.py commands OUT --nccl-lib DIR [ENTRY ...]
                                                        the `pathproof run --emulate` command per entry (GPU node)
  scripts/emulation-table.py compare  OUT [ENTRY ...]   NCCL's side from OUT/TAG/run/nccl-rank0.log against the
                                                        predictions: OUT/agreement.md (+ .tsv), one row per size

ENTRY is TAG=TOPOLOGY:RANKS[:COMPCAP]; COMPCAP is the capability the emulated GPUs report (--emulate-compcap), needed
when the topology's GPUs are not the real GPU's generation (NCCL's tuning tables follow comm->compCap, init.cc:449).
Without entries, the table's default set below. Nothing here knows NCCL's answers: the predictions come from
`pathproof predict`, NCCL's decisions from its own log lines (`AllReduce: N Bytes -> Algo A proto P
channel{Lo..Hi}={lo..hi}`, `EMULATOR launch: rank 0 grid G block B ...`, the TUNING table's AllReduce row).
Environment: PATHPROOF (default ./pathproof), NCCL_VERSION (2.28.9), TORCH_VERSION (2.11.0).
"""
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # paths below are relative to the repository
DOCS = os.path.join("docs", "emulation")
WORKLOAD = os.path.join(DOCS, "allreduce-sweep-fp32.json")

DEFAULT = [
    "h200x2=h200-sxm-x8-nvswitch:2",
    "h200x4=h200-sxm-x4-nvswitch:4",
    "h200x8=h200-sxm-x8-nvswitch:8",
    "h800x8=h800-sxm-x8-nvswitch:8",
    "h100pcie-nvl-pairs=" + os.path.join(DOCS, "h100-pcie-x4-nvlink-pairs.json") + ":4",
    "h100pcie-one-switch=" + os.path.join(DOCS, "h100-pcie-x4-one-switch.json") + ":4",
    "h100pcie-two-sockets=" + os.path.join(DOCS, "h100-pcie-x4-two-sockets.json") + ":4",
    "v100-hybrid-cube=" + os.path.join(DOCS, "v100-sxm2-x8-hybrid-cube.json") + ":8:70",
    "v100x4-seed=v100-sxm2-x4-nv2:4:70",
]

# The emulation always sets these (multicast must never be created on the shared GPU); the prediction must know it.
EMULATION_ENV = ["NCCL_NVLS_ENABLE=0", "NCCL_MNNVL_ENABLE=0"]
FIELDS = ["algorithm", "protocol", "channels", "gridX", "blockX"]


def entries(args):
    out = []
    for e in args or DEFAULT:
        tag, _, rest = e.partition("=")
        parts = rest.rsplit(":", 2) if rest.count(":") >= 2 else rest.rsplit(":", 1)
        if not tag or len(parts) < 2:
            sys.exit("emulation-table: bad entry '%s' (expected TAG=TOPOLOGY:RANKS[:COMPCAP])" % e)
        out.append({"tag": tag, "topology": parts[0], "ranks": int(parts[1]),
                    "compcap": int(parts[2]) if len(parts) > 2 else None})
    return out


def sizes():
    with open(WORKLOAD) as f:
        w = json.load(f)
    return [4 * p["shape"][0] for p in w["parameters"]]


def predict(out, ents):
    pp = os.environ.get("PATHPROOF", "./pathproof")
    want = set(sizes())
    rows = []
    for e in ents:
        d = os.path.join(out, e["tag"])
        os.makedirs(d, exist_ok=True)
        pred = os.path.join(d, "prediction.json")
        cmd = [pp, "predict", "--workload", WORKLOAD, "--topology", e["topology"], "--ranks", str(e["ranks"]),
               "--nccl", os.environ.get("NCCL_VERSION", "2.28.9"), "--torch", os.environ.get("TORCH_VERSION", "2.11.0"),
               "--format", "json", "-o", pred]
        for kv in EMULATION_ENV:
            cmd += ["--env", kv]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        with open(pred) as f:
            p = json.load(f)
        seen = set()
        for c in p["collectives"]:
            if c["bytes"] in want and c["bytes"] not in seen:
                seen.add(c["bytes"])
                rows.append([e["tag"], e["topology"], e["ranks"], c["bytes"]] + [c[k] for k in FIELDS])
    with open(os.path.join(out, "predict.tsv"), "w") as f:
        f.write("\t".join(["tag", "topology", "ranks", "bytes"] + FIELDS) + "\n")
        for r in rows:
            f.write("\t".join(str(x) for x in r) + "\n")
    print("emulation-table: %d rows -> %s" % (len(rows), os.path.join(out, "predict.tsv")))


def commands(out, lib, ents):
    for e in ents:
        d = os.path.join(out, e["tag"])
        cc = " --emulate-compcap %d" % e["compcap"] if e["compcap"] else ""
        # Two steps: DDP rebuilds its buckets after iteration 0, so step 1 runs one AllReduce per size.
        print("./pathproof run --backend nccl --emulate %s --nproc %d --nccl-lib %s%s --workload %s"
              " --warmup 1 --iters 1 --profile-iters 0 --timeout 900 --prediction %s/prediction.json --out %s/run"
              % (e["topology"], e["ranks"], lib, cc, WORKLOAD, d, d))


LINE = re.compile(r"AllReduce: (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}")
LAUNCH = re.compile(r"(?:EMULATOR launch: rank 0|ORACLE launch:) grid (\d+) block (\d+)")
ROW = re.compile(r"NCCL INFO\s+AllReduce \|(.*)$")


def nccl_side(log):
    """First decision per size from rank 0's log, its launch shape, and the TUNING table's Tree/Ring AllReduce row."""
    found, pending, table = {}, None, None
    with open(log, errors="replace") as f:
        for line in f:
            m = LINE.search(line)
            if m:
                b = int(m.group(1))
                pending = b if b not in found else None
                if pending is not None:
                    found[b] = {"algorithm": m.group(2), "protocol": m.group(3),
                                "channels": int(m.group(5)) - int(m.group(4)) + 1, "gridX": None, "blockX": None}
                continue
            m = LAUNCH.search(line)
            if m and pending is not None:
                found[pending]["gridX"], found[pending]["blockX"] = int(m.group(1)), int(m.group(2))
                pending = None
                continue
            m = ROW.search(line)
            if m and table is None:
                table = [c.strip() for c in m.group(1).split("|") if c.strip()][:6]  # Tree LL/LL128/Simple, Ring …
    return found, table


def model_table(pred):
    cells = {(t["algorithm"], t["protocol"]): t for t in pred["collectives"][0].get("tuningTable", [])}
    out = []
    for a in ("Tree", "Ring"):
        for p in ("LL", "LL128", "Simple"):
            t = cells.get((a, p))
            out.append("%.1f/%6.1f" % (t["latencyUs"], t["bandwidthGBs"]) if t else "0.0/   0.0")
    return out


def compare(out, ents):
    rows, agree, total, missing, tables = [], 0, 0, 0, []
    with open(os.path.join(out, "predict.tsv")) as f:
        pred_rows = [l.rstrip("\n").split("\t") for l in f][1:]
    for e in ents:
        log = os.path.join(out, e["tag"], "run", "nccl-rank0.log")
        if not os.path.exists(log):
            rows.append("| %s | (no run: %s missing) |" % (e["tag"], log))
            continue
        nccl, table = nccl_side(log)
        with open(os.path.join(out, e["tag"], "prediction.json")) as f:
            mt = model_table(json.load(f))
        if table:
            same = sum(1 for a, b in zip(mt, table) if a.split() == b.split())
            tables.append("| %s | %d/6 | %s | %s |" % (e["tag"], same, " ; ".join(mt), " ; ".join(table)))
        for r in (r for r in pred_rows if r[0] == e["tag"]):
            b = int(r[3])
            model = dict(zip(FIELDS, r[4:]))
            got = nccl.get(b)
            cells = []
            for k in FIELDS:
                n = None if got is None else got[k]
                ok = n is not None and str(n).lower() == str(model[k]).lower()
                missing += n is None
                total += n is not None
                agree += ok
                cells.append(("%s" % model[k]) if ok else "**%s ≠ %s**" % (model[k], "—" if n is None else n))
            rows.append("| %s | %d | %d | %s |" % (e["tag"], int(r[2]), b, " | ".join(cells)))
    md = ["| tag | ranks | bytes | " + " | ".join(FIELDS) + " |", "|---|---|---|" + "---|" * len(FIELDS)] + rows
    md += ["", "Agreement: %d of %d cells NCCL decided (model ≠ NCCL in bold); %d cells without an NCCL line (—)."
           % (agree, total, missing),
           "", "| tag | cells equal | model: Tree LL/LL128/Simple, Ring LL/LL128/Simple (lat/bw) | NCCL |",
           "|---|---|---|---|"] + tables
    with open(os.path.join(out, "agreement.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(md))


def main(argv):
    if len(argv) < 2 or argv[0] not in ("predict", "commands", "compare"):
        sys.exit(__doc__)
    verb, out, rest = argv[0], os.path.abspath(argv[1]), argv[2:]
    os.chdir(ROOT)
    if out.startswith(ROOT + os.sep):
        out = os.path.relpath(out)  # the printed commands then run in any copy of the repository
    if verb == "commands":
        if len(rest) < 2 or rest[0] != "--nccl-lib":
            sys.exit("emulation-table: commands OUT --nccl-lib DIR [ENTRY ...]")
        return commands(out, rest[1], entries(rest[2:]))
    os.makedirs(out, exist_ok=True)
    return predict(out, entries(rest)) if verb == "predict" else compare(out, entries(rest))


if __name__ == "__main__":
    main(sys.argv[1:])

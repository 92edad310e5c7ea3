#!/usr/bin/env python3
"""Builds the init-heavy corpus of real NCCL logs (issue 12) by concatenating real logs until it reaches SIZE MiB.

Sources: every *.log under the given folders (default: the repository's copies of the public logs, the H200 capture
and the emulated 4 × H200 run). Every line written is a real line of one of those files, unchanged.

  --mix verbatim  the logs one after the other, as they are (almost only init and connection lines);
  --mix issue     each round of the logs is followed by real COLL and TUNING lines taken in turn from the same
                  logs, so that about a third of the lines are COLL and a fifth TUNING, the mix issue 12 measured.

    python3 bench/real_corpus.py OUT_FILE [SIZE_MIB] [--mix issue|verbatim] [DIR...]
"""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RES = os.path.join(HERE, "..", "src", "test", "resources", "io", "pathproof", "evidence")
DEFAULT_DIRS = [os.path.join(RES, d) for d in ("public-nccl-logs", "h200-1rank", "emulated-h200-x4")]
COLL = re.compile(rb"NCCL INFO \w+: opCount ")
TUNING = re.compile(rb"NCCL INFO (?:\w+: )?\d+ Bytes -> Algo ")


def main(argv):
    args = [a for a in argv if not a.startswith("--mix")]
    mix = "issue"
    for i, a in enumerate(argv):
        if a.startswith("--mix"):
            mix = a.split("=", 1)[1] if "=" in a else argv[i + 1]
            if "=" not in a:
                args.remove(argv[i + 1])
    out = args[0]
    size = int(args[1]) if len(args) > 1 else 200
    dirs = args[2:] or DEFAULT_DIRS
    logs = sorted(p for d in dirs for p in glob.glob(os.path.join(d, "*.log")))
    texts = [open(p, "rb").read() for p in logs]
    lines = [l for t in texts for l in t.splitlines(keepends=True)]
    colls = [l for l in lines if COLL.search(l)]
    tunes = [l for l in lines if TUNING.search(l)]
    init = len(lines) - len(colls) - len(tunes)
    # init : coll : tuning = 7 : 5 : 3 (a third COLL, a fifth TUNING).
    n_coll = init * 5 // 7 if mix == "issue" else 0
    n_tune = init * 3 // 7 if mix == "issue" else 0
    target = size << 20
    written = 0
    counts = {"coll": 0, "tuning": 0, "other": 0}
    ci = ti = 0
    with open(out, "wb") as f:
        while written < target:
            for t in texts:
                f.write(t if t.endswith(b"\n") else t + b"\n")
                written += len(t) + (0 if t.endswith(b"\n") else 1)
            counts["other"] += init
            counts["coll"] += len(colls)
            counts["tuning"] += len(tunes)
            block = []
            for _ in range(n_coll):
                block.append(colls[ci % len(colls)])
                ci += 1
            for _ in range(n_tune):
                block.append(tunes[ti % len(tunes)])
                ti += 1
            data = b"".join(block)
            f.write(data)
            written += len(data)
            counts["coll"] += n_coll
            counts["tuning"] += n_tune
    total = sum(counts.values())
    print(f"{out}: {written / 2**20:.1f} MiB from {len(logs)} logs, {total} lines:"
          f" {100 * counts['coll'] / total:.0f}% COLL, {100 * counts['tuning'] / total:.0f}% TUNING,"
          f" {100 * counts['other'] / total:.0f}% init/connection/other")


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Pools several `run --overhead` run dirs (same flags, one after another) into one estimate: every run's measured
plain steps against its instrumented steps, the median ratio of the pooled steps with its 95 % bootstrap interval,
beside each run's own ratio. One 48-step run of a ~1 ms step cannot resolve 2 % (its own interval is about +-10 %);
twelve pooled can. Usage: scripts/overhead-pool.py RUN_DIR...   (prints JSON)"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src", "main", "resources", "io",
                                "pathproof", "run"))
import pathproof_instrumentation as pi  # noqa: E402


def measured(path):
    with open(path) as f:
        return [r for r in map(json.loads, f) if r["phase"] == "measured" and r["ms"] is not None]


def main(dirs):
    plain, inst, unhooked, runs = [], [], [], []
    for d in dirs:
        p = measured(os.path.join(d, "plain-steps-rank0.jsonl"))
        s = measured(os.path.join(d, "steps-rank0.jsonl"))
        plain += [r["ms"] for r in p]
        inst += [r["ms"] for r in s]
        unhooked += [r["ms"] for r in s if not r["hooked"] and not r["profiled"]]
        runs.append({"dir": os.path.basename(os.path.normpath(d)),
                     "ratio": pi.median([r["ms"] for r in s]) / pi.median([r["ms"] for r in p])})
    ratios = sorted(r["ratio"] for r in runs)
    print(json.dumps({"runs": len(runs), "stepsPerArm": len(plain),
                      "pooledRatio": pi.median(inst) / pi.median(plain),
                      "pooledRatioInterval95": pi.median_ratio_interval(inst, plain),
                      "pooledUnhookedRatio": pi.median(unhooked) / pi.median(plain),
                      "runRatios": ratios, "runsAtMost1.02": sum(1 for r in ratios if r <= 1.02),
                      "medianRunRatio": pi.median(ratios)}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])

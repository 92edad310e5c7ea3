#!/usr/bin/env python3
"""Shares of the NCCL log reader's CPU samples per log-line family and per phase, from a JFR recording.

    jfr print --stack-depth 30 --events jdk.ExecutionSample REC.jfr | python3 bench/jfr_families.py

Each sample is charged to the innermost frame that names a family (CollLines.coll = COLL lines, CommLines.read =
comm init lines, …) or a phase of every line (NcclLogReader.read = the newline split, LinePrefix.* = NCCL's prefix and
the torn-line search); samples outside the reader are counted apart.
"""
import collections
import re
import sys

FAMILIES = [
    ("CollLines.coll", "COLL lines"),
    ("CollLines.tuning", "TUNING lines"),
    ("CommLines.read", "comm init / summary lines (and attribution)"),
    ("ConnectorLines.fastConnection", "connector lines (bytes)"),
    ("ConnectorLines.fastRingOrder", "ring-order lines (bytes)"),
    ("ConnectorLines.channelLine", "Channel/Ring lines by regex"),
    ("InitLines.initTimings", "Init timings lines"),
    ("InitLines.graph", "Pattern (graph) lines"),
    ("InitLines.trees", "Trees lines"),
    ("InitLines.channels", "channel-count lines"),
    ("InitLines.threadThresholds", "threadThresholds lines"),
    ("InitLines.env", "env echo lines"),
    ("EmulatorLines.emulator", "emulator lines"),
    ("NcclLogReader.version", "version lines"),
    ("NcclLogReader.warn", "WARN lines"),
    ("NcclLogReader.other", "dispatch of init lines (no fact)"),
    ("LinePrefix.parse", "line prefix (host:pid:tid [dev])"),
    ("LinePrefix.nextFragment", "torn-line search"),
    ("LinePrefix.marker", "NCCL marker search"),
    ("NcclLogReader.line", "per-line dispatch"),
    ("NcclLogReader.fragment", "per-line dispatch"),
    ("CollLines.read", "COLL/TUNING recognition"),
    ("NcclLogReader.read", "newline split and buffer"),
    ("Assembly", "assembly of the evidence"),
]


def main():
    text = sys.stdin.read()
    counts = collections.Counter()
    total = 0
    for event in text.split("jdk.ExecutionSample")[1:]:
        frames = re.findall(r"^\s+([\w.$<>]+)\(", event, re.M)
        if not frames:
            continue
        total += 1
        name = "outside the reader"
        for f in frames:
            hit = next((label for key, label in FAMILIES if key in f), None)
            if hit:
                name = hit
                break
        counts[name] += 1
    print(f"{total} samples")
    for name, n in counts.most_common():
        print(f"{n:7d} {100 * n / max(total, 1):5.1f} %  {name}")


if __name__ == "__main__":
    main()

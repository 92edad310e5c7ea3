#!/usr/bin/env python3
"""A small NCCL debug-log parser with regular expressions, for comparison with pathproof's byte-level reader.

It extracts the same facts (version, comm init, channel counts, ring orders, connector transports, TUNING in the
three formats, COLL lines aggregated by signature, env echoes, WARN lines) with one regex pass per line, the way such
scripts are usually written. Plain python3, no third-party packages.

    python3 bench/nccl_regex_parser.py FILE...
"""
import collections
import json
import re
import sys

PREFIX = re.compile(r"^(?:\[(?:rank)?(\d+)\]:?\s*)?(?:(\S+):(\d+):(\d+) )?\[(\d+)\] NCCL (INFO|WARN) (.*)$")
VERSION = re.compile(r"NCCL version (\S+?)\+cuda")
INIT = re.compile(r"comm (0x[0-9a-f]+) rank (\d+) nranks (\d+) cudaDev (\d+)(?: nvmlDev \d+)? busId ([0-9a-f]+)"
                  r"(?: commId (0x[0-9a-f]+))? - Init (START|COMPLETE)")
CHANNELS = re.compile(r"^(\d+) coll channels, (?:(\d+) collnet channels, )?(?:(\d+) nvls channels, )?(\d+) p2p channels,"
                      r" (\d+) p2p channels per peer")
RING = re.compile(r"^Channel (\d+)/(\d+) :((?: +\d+)+)$")
CONN = re.compile(r"^Channel (\d+)(?:/\d+)? : (\d+)\[[^\]]*\] -> (\d+)\[[^\]]*\](?: \[(?:send|receive)\])? via (\S+)")
TUNE_NEW = re.compile(r"^(\w+): (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}")
TUNE_OLD = re.compile(r"^(?:(\w+): )?(\d+) Bytes -> Algo (\d+) proto (\d+) time ([0-9.]+)")
COLL = re.compile(r"^(\w+): opCount (\w+) sendbuff \S+ recvbuff \S+ count (\d+) datatype (\d+) op (\d+) root (\d+)"
                  r" comm (\S+) \[nranks=(\d+)\] stream \S+")
ENV = re.compile(r"^(NCCL_\w+) set by environment to (.*?)\.?$")


def parse(paths):
    facts = {"version": None, "comms": {}, "tuning": collections.Counter(), "colls": collections.Counter(),
             "env": {}, "warnings": 0, "transports": set(), "lines": 0}
    for path in paths:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            for line in f:
                facts["lines"] += 1
                m = PREFIX.match(line.rstrip("\n"))
                if not m:
                    v = VERSION.search(line)
                    if v and facts["version"] is None:
                        facts["version"] = v.group(1)
                    continue
                level, msg = m.group(6), m.group(7)
                if level == "WARN":
                    facts["warnings"] += 1
                    continue
                c = COLL.match(msg)
                if c:
                    facts["colls"][(path, c.group(1), c.group(3), c.group(4), c.group(5), c.group(7))] += 1
                    continue
                t = TUNE_NEW.match(msg) or TUNE_OLD.match(msg)
                if t:
                    facts["tuning"][(path,) + t.groups()] += 1
                    continue
                i = INIT.search(msg)
                if i:
                    facts["comms"].setdefault(i.group(6) or i.group(1), {})["rank%s" % i.group(2)] = i.group(3)
                    continue
                ch = CHANNELS.match(msg)
                if ch:
                    facts["comms"].setdefault(path, {})["coll"] = ch.group(1)
                    continue
                r = RING.match(msg)
                if r:
                    continue
                k = CONN.match(msg)
                if k:
                    facts["transports"].add(k.group(4).split("/read")[0])
                    continue
                e = ENV.match(msg)
                if e:
                    facts["env"][e.group(1)] = e.group(2)
                    continue
                v = VERSION.search(msg)
                if v and facts["version"] is None:
                    facts["version"] = v.group(1)
    return facts


def main():
    facts = parse(sys.argv[1:])
    print(json.dumps({"version": facts["version"], "lines": facts["lines"], "communicators": len(facts["comms"]),
                      "tuning": len(facts["tuning"]), "tuning_lines": sum(facts["tuning"].values()),
                      "coll_groups": len(facts["colls"]), "coll_calls": sum(facts["colls"].values()),
                      "env": facts["env"], "warnings": facts["warnings"],
                      "transports": sorted(facts["transports"])}, sort_keys=True))


if __name__ == "__main__":
    main()

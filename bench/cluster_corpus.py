#!/usr/bin/env python3
"""Makes the per-rank NCCL logs of a large job (default 1 024 ranks) from the real logs of a small emulated cluster.

The source is a folder of one real NCCL INFO log per rank (nccl-rankR.log, R = 0..P-1, P ranks on P/G nodes of G
GPUs, e.g. samples/emulated-clusters-net-emu/hgx-2x8-8nic-gdr: NCCL 2.28.9, 2 nodes x 8). The job of N ranks is N/P
copies of it: copy k holds global ranks P*k .. P*k+P-1 on nodes (P/G)*k .. (P/G)*k+P/G-1. Every line written is a line
of the source log of rank R mod P with only ids remapped.

Remapped (copy k, offset P*k):
  - global ranks: "rank R" (ncclCommInitRank, the comm summary, Init timings, Destroy, EMULATOR launch), the ring
    neighbours of "Ring cc : p -> r -> n", every rank of "Trees [c] d0/d1/d2->r->u" and "Tree c : u -> r -> d0/d1/d2"
    (-1 stays -1), both ends of the connection lines "Channel cc/x : R[dev] -> S[dev] ...", "GPU Direct RDMA ... for
    GPU R", the value of NCCL_TOPO_DUMP_FILE_RANK (the rank that dumps its node's topology);
  - the size: "nranks P", "nRanks P", "[nranks=P]" -> N; "nNodes P/G" -> N/G;
  - node names: every "nodeI" (NCCL_HOSTID, the emulator's NIC lines, per-node file names) -> node(P/G*k+I), and the
    host name of NCCL's line prefix "host:pid:tid" -> that node's name (the emulated logs all say one host).
Not remapped: cudaDev, nvmlDev, busIds, PCI paths, NIC names, pids and tids, comm handles (per-process pointers, equal
in different processes), commId (one communicator), "local rank"/"localRank" (a rank within its node), channel
numbers, times, buffer addresses.
Lines NCCL prints on rank 0 of the communicator only (the tuning table, "Bytes -> Algo" TUNING lines, the ring
listings "Channel cc/n : r r r ...", "CC Off", NCCL_GRAPH_DUMP_FILE) are kept in rank 0's file and dropped from the
other copies' rank 0 (global rank P*k is not rank 0 of the job).

What this is not: NCCL would build other rings and trees for N ranks (one ring through all N/G nodes, a double binary
tree over the nodes, other channel counts and tuning). Here the N/P copies keep the small job's rings and trees, so the
job's ring and tree neighbours form N/P disjoint groups of P ranks and rank 0's ring listings name P ranks. The
per-rank facts a reader must carry (init, channels, connections, collectives, launches) are real NCCL lines in the
real amount, which is what the corpus is for: reading N per-rank logs, and cross-rank consistency at that scale.

  --iterations I   after the source's last collective, I training iterations: the source's COLL lines again with
                   opCount counting on (every rank), each followed on rank 0 by its TUNING line, as NCCL prints them;
                   the emulator's launch lines are not repeated (a job on real GPUs prints none).
  --channels R:C   rank R's "N coll channels" line says C instead (a rank that disagrees on channels).
  --grid R:I:G     the I-th emulator launch line (from 0) of rank R says grid G (one collective on other channels).

    python3 bench/cluster_corpus.py SRC_DIR OUT_DIR [--ranks N] [--gpus-per-node G] [--iterations I]
                                    [--channels R:C] [--grid R:I:G]
"""
import argparse
import os
import re
import sys

PREFIX = re.compile(rb"^([^:\s]+)(:\d+:\d+ \[\d+\] NCCL (?:INFO|WARN) )(.*)$", re.S)
RANK = re.compile(rb"(?<!local )\brank (\d+)")
SIZE = re.compile(rb"(?<![A-Za-z])(nranks |nRanks |\[nranks=)(\d+)")
NNODES = re.compile(rb"\bnNodes (\d+)")
NODE = re.compile(rb"(?<![A-Za-z0-9])node(\d+)")
RING = re.compile(rb"^(Ring \d+ : )(\d+) -> (\d+) -> (\d+)")
TREE_BODY = re.compile(rb"(-?\d+)/(-?\d+)/(-?\d+)->(-?\d+)->(-?\d+)")
TREE_ONE = re.compile(rb"^(Tree \d+ : )(-?\d+) -> (-?\d+) -> (-?\d+)/(-?\d+)/(-?\d+)")
CONN = re.compile(rb"^(Channel \d+/\d+ : )(\d+)(\[\d+\] -> )(\d+)(\[\d+\])")
GDR = re.compile(rb"(GPU Direct RDMA \w+ for GPU )(\d+)")
DUMP_RANK = re.compile(rb"^(NCCL_TOPO_DUMP_FILE_RANK set by environment to )(\d+)")
COLL = re.compile(rb"^\w+: opCount ([0-9a-f]+) ")
TUNING = re.compile(rb"^\w+: \d+ Bytes -> Algo ")
LAUNCH = re.compile(rb"^EMULATOR launch: rank \d+ grid (\d+)")
CHANNELS = re.compile(rb"^(\d+)( coll channels,)")
# Printed by rank 0 of the communicator only (the tuning table, TUNING lines, ring listings, CC, the graph dump).
RANK0_ONLY = [re.compile(p) for p in (
    rb"^\s*[A-Za-z][A-Za-z ]*\|",            # tuning table rows: "  Algorithm   |", "     AllReduce |", ...
    rb"^\w+: \d+ Bytes -> Algo ",
    rb"^Channel \d+/\d+ :(?:\s+\d+)+\s*$",
    rb"^CC \w+, workFifoBytes",
    rb"^NCCL_GRAPH_DUMP_FILE set by",
)]


def shift(value, off):
    v = int(value)
    return value if v < 0 else str(v + off).encode()


def remap(msg, off, size, nodes, node_off):
    msg = RANK.sub(lambda m: b"rank " + shift(m.group(1), off), msg)
    msg = SIZE.sub(lambda m: m.group(1) + str(size).encode(), msg)
    msg = NNODES.sub(lambda m: b"nNodes " + str(nodes).encode(), msg)
    msg = NODE.sub(lambda m: b"node" + str(int(m.group(1)) + node_off).encode(), msg)
    msg = RING.sub(lambda m: m.group(1) + b" -> ".join(shift(m.group(i), off) for i in (2, 3, 4)), msg)
    if msg.startswith(b"Trees "):
        msg = TREE_BODY.sub(lambda m: b"%s/%s/%s->%s->%s" % tuple(shift(m.group(i), off) for i in range(1, 6)), msg)
    msg = TREE_ONE.sub(lambda m: m.group(1) + b"%s -> %s -> %s/%s/%s" % tuple(shift(m.group(i), off)
                                                                          for i in range(2, 7)), msg)
    msg = CONN.sub(lambda m: m.group(1) + shift(m.group(2), off) + m.group(3) + shift(m.group(4), off) + m.group(5),
                   msg)
    msg = GDR.sub(lambda m: m.group(1) + shift(m.group(2), off), msg)
    msg = DUMP_RANK.sub(lambda m: m.group(1) + shift(m.group(2), off), msg)
    return msg


def source_ranks(src):
    ranks = sorted(int(m.group(1)) for f in os.listdir(src) for m in [re.fullmatch(r"nccl-rank(\d+)\.log", f)] if m)
    if not ranks or ranks != list(range(len(ranks))):
        sys.exit(f"{src}: no nccl-rank0..P-1.log")
    return len(ranks)


def write_rank(src_lines, out, r, p, k, size, nodes, node_of, args):
    off = p * k
    node_off = (p // args.gpus_per_node) * k
    host = b"node" + str(node_of(r) + node_off).encode()
    gr = off + r
    body = []
    launches = 0
    colls = []          # (prefix, message) of the source's COLL lines, in order, each with its rank-0 TUNING line
    last_coll = 0
    for line in src_lines:
        m = PREFIX.match(line)
        if not m:
            body.append(line)
            continue
        msg = m.group(3)
        if k > 0 and r == 0 and any(p0.search(msg) for p0 in RANK0_ONLY):
            continue
        msg = remap(msg, off, size, nodes, node_off)
        if args.channels and args.channels[0] == gr:
            msg = CHANNELS.sub(lambda c: str(args.channels[1]).encode() + c.group(2), msg, count=1)
        lm = LAUNCH.match(msg)
        if lm:
            if args.grid and args.grid[0] == gr and args.grid[1] == launches:
                msg = msg[:lm.start(1)] + str(args.grid[2]).encode() + msg[lm.end(1):]
            launches += 1
        pre = host + m.group(2)
        if COLL.match(msg):
            colls.append([pre, msg, None])
        elif TUNING.match(msg) and colls and colls[-1][2] is None:
            colls[-1][2] = pre + msg
        body.append(pre + msg)
        if COLL.match(msg) or TUNING.match(msg) or lm:
            last_coll = len(body)
    if args.iterations and colls:
        op = max(int(COLL.match(c[1]).group(1), 16) for c in colls) + 1
        extra = []
        for _ in range(args.iterations):
            for pre, msg, tune in colls:
                c = COLL.match(msg)
                extra.append(pre + msg[:c.start(1)] + format(op, "x").encode() + msg[c.end(1):])
                op += 1
                if tune is not None and gr == 0:
                    extra.append(tune)
        body[last_coll:last_coll] = extra
    with open(os.path.join(out, f"nccl-rank{gr}.log"), "wb") as f:
        f.writelines(body)


def pair(s, n):
    v = [int(x) for x in s.split(":")]
    if len(v) != n:
        raise argparse.ArgumentTypeError(f"{s}: expected {n} numbers separated by ':'")
    return v


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src")
    ap.add_argument("out")
    ap.add_argument("--ranks", type=int, default=1024)
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--iterations", type=int, default=0)
    ap.add_argument("--channels", type=lambda s: pair(s, 2))
    ap.add_argument("--grid", type=lambda s: pair(s, 3))
    args = ap.parse_args(argv)
    p = source_ranks(args.src)
    g = args.gpus_per_node
    if p % g or args.ranks % p:
        sys.exit(f"{args.ranks} ranks are not copies of {p} ranks on nodes of {g} GPUs")
    os.makedirs(args.out, exist_ok=True)
    srcs = [open(os.path.join(args.src, f"nccl-rank{r}.log"), "rb").read().splitlines(keepends=True) for r in range(p)]
    total = 0
    for k in range(args.ranks // p):
        for r in range(p):
            write_rank(srcs[r], args.out, r, p, k, args.ranks, args.ranks // g, lambda x: x // g, args)
    for f in os.listdir(args.out):
        if f.startswith("nccl-rank"):
            total += os.path.getsize(os.path.join(args.out, f))
    print(f"{args.out}: {args.ranks} rank logs ({args.ranks // g} nodes x {g}) from {p} ranks of {args.src},"
          f" {total / 2**20:.1f} MiB")


if __name__ == "__main__":
    main(sys.argv[1:])

#!/usr/bin/env python3
"""Asks NCCL itself what it decides on an emulated machine: N rank processes on ONE GPU, each reporting the fake
busId that NCCL_TOPO_FILE gives its GPU, run AllReduce (Sum, float32) over a list of sizes and keep NCCL's own log.

    python3 sweep.py --lib OUT/libnccl.so.2 --topo machine.xml --out DIR [--nranks N] [--sizes 4096,...]
                     [--env K=V ...] [--timeout 300] [--program allreduce]

Runs on a GPU node with torch (torch loads its own libnccl through its RPATH, so the emulator library is put in
LD_PRELOAD). NVLS and MNNVL stay off. DIR gets nccl-rank<R>.log per rank and result-rank<R>.json (sizes, whether
each sum was right, wall seconds — which are NOT physical: the processes take turns on one GPU).

An emulated cluster is driven through pathproof itself, which writes each node's topology file and tells this
script every rank's node (PATHPROOF_EMULATE_NODES), the library (LD_PRELOAD) and the network (NCCL_NET=Socket over
lo) as it tells a user's job:

    pathproof run --emulate TOPOLOGY --nodes N [--nproc-per-node P] --nic-speed MBPS --nccl-lib LIB --out DIR \
        -- python3 sweep.py --pathproof-emulated --program LIB/allreduce [--sizes ...]

DIR is then pathproof's run directory: emulated-topo-node<K>.xml, emulated-cluster.json (the cluster the model is
asked about), manifest.json, and nccl-rank<R>.log / stdout-rank<R>.txt of every rank of every node.
"""
import argparse
import json
import os
import re
import socket
import subprocess
import sys
import time


def busids(topo_xml):
    """The busIds of the GPUs in the topology file, in the order of their gpu dev attribute."""
    text = open(topo_xml).read()
    found = []
    for m in re.finditer(r'<pci busid="([^"]+)"[^>]*>\s*<gpu dev="(\d+)"', text):
        found.append((int(m.group(2)), m.group(1)))
    return [b for _, b in sorted(found)]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def launch(args):
    ids = busids(args.topo)
    n = args.nranks or len(ids)
    if n > len(ids):
        sys.exit("sweep: %d ranks but the topology has %d GPUs" % (n, len(ids)))
    os.makedirs(args.out, exist_ok=True)
    port = free_port()
    procs = []
    for r in range(n):
        env = dict(os.environ)
        for kv in args.env:
            k, v = kv.split("=", 1)
            env[k] = v
        env.update({
            "LD_PRELOAD": os.path.abspath(args.lib),
            "NCCL_EMULATE_BUSID": ids[r],
            "NCCL_TOPO_FILE": os.path.abspath(args.topo),
            "NCCL_NVLS_ENABLE": "0",
            "NCCL_MNNVL_ENABLE": "0",
            "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1",
            "NCCL_DEBUG": "INFO",
            "NCCL_DEBUG_SUBSYS": "INIT,ENV,GRAPH,TUNING,COLL,P2P",
            "NCCL_DEBUG_FILE": os.path.join(os.path.abspath(args.out), "nccl-rank%d.log" % r),
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
            "RANK": str(r), "WORLD_SIZE": str(n), "LOCAL_RANK": str(r),
            "CUDA_VISIBLE_DEVICES": env.get("CUDA_VISIBLE_DEVICES", "0"),
        })
        if args.program:
            # A plain NCCL program (allreduce.c) instead of torch: for an NCCL torch does not load (e.g. 2.22.3).
            env["LD_LIBRARY_PATH"] = os.path.dirname(os.path.abspath(args.lib)) + ":" + env.get("LD_LIBRARY_PATH", "")
            cmd = [os.path.abspath(args.program), str(r), str(n), os.path.join(os.path.abspath(args.out), "nccl-id")] \
                + args.sizes.split(",")
            log = open(os.path.join(args.out, "stdout-rank%d.txt" % r), "w")
            procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT))
        else:
            cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--out", args.out, "--sizes", args.sizes]
            procs.append(subprocess.Popen(cmd, env=env))
    deadline = time.time() + args.timeout
    rc = 0
    for p in procs:
        try:
            p.wait(timeout=max(1, deadline - time.time()))
            rc = rc or p.returncode
        except subprocess.TimeoutExpired:
            rc = 124
    for p in procs:
        if p.poll() is None:
            p.kill()
    return rc


def cluster_launch(args):
    """Every rank of an emulated cluster as pathproof run --emulate ... --nodes N describes it: rank r on node
    r // ranksPerNode with that node's NCCL_HOSTID, NCCL_TOPO_FILE and busId (the mapping pathproof_torch's boot makes
    for a torch job), the program's log in the run directory."""
    spec = json.loads(os.environ["PATHPROOF_EMULATE_NODES"])
    out = os.environ["PATHPROOF_OUT"]
    lib = os.environ["LD_PRELOAD"].split(":")[0]
    per = int(spec["ranksPerNode"])
    n = per * len(spec["nodes"])
    port = free_port()
    procs = []
    for r in range(n):
        node = spec["nodes"][r // per]
        env = dict(os.environ)
        for kv in args.env:
            k, v = kv.split("=", 1)
            env[k] = v
        env.update({
            "NCCL_HOSTID": node["hostId"], "NCCL_TOPO_FILE": node["topoFile"],
            "NCCL_EMULATE_BUSID": node["busIds"][r % per],
            "NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,ENV,GRAPH,TUNING,COLL,P2P,NET",
            "NCCL_DEBUG_FILE": os.path.join(out, "nccl-rank%d.log" % r),
            "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port),
            "RANK": str(r), "WORLD_SIZE": str(n), "LOCAL_RANK": str(r),
            "CUDA_VISIBLE_DEVICES": env.get("CUDA_VISIBLE_DEVICES", "0"),
            "LD_LIBRARY_PATH": os.path.dirname(lib) + ":" + env.get("LD_LIBRARY_PATH", ""),
        })
        if node.get("nicsFile"):
            env["PATHPROOF_NET_EMU_NICS_FILE"] = node["nicsFile"]  # the node's NICs for pathproof's net plugin
        cmd = [os.path.abspath(args.program), str(r), str(n), os.path.join(out, "nccl-id")] + args.sizes.split(",")
        log = open(os.path.join(out, "stdout-rank%d.txt" % r), "w")
        procs.append(subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT))
    deadline = time.time() + args.timeout
    rc = 0
    for p in procs:
        try:
            p.wait(timeout=max(1, deadline - time.time()))
            rc = rc or p.returncode
        except subprocess.TimeoutExpired:
            rc = 124
    for p in procs:
        if p.poll() is None:
            p.kill()
    print("sweep: %d ranks on %d emulated nodes, rc=%d" % (n, len(spec["nodes"]), rc))
    return rc


def worker(args):
    import torch
    import torch.distributed as dist
    rank, n = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", rank=rank, world_size=n, device_id=torch.device("cuda:0"))
    results = []
    for size in [int(s) for s in args.sizes.split(",")]:
        x = torch.full((size // 4,), float(rank + 1), dtype=torch.float32, device="cuda:0")
        t0 = time.time()
        dist.all_reduce(x)
        torch.cuda.synchronize()
        wall = time.time() - t0
        want = n * (n + 1) / 2
        results.append({"bytes": size, "correct": bool((x == want).all().item()), "wallSeconds": wall})
        del x
    dist.destroy_process_group()
    with open(os.path.join(args.out, "result-rank%d.json" % rank), "w") as f:
        json.dump({"rank": rank, "worldSize": n, "torch": torch.__version__, "results": results,
                   "note": "emulated: NCCL decisions real, timings not physical"}, f, indent=1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib")
    ap.add_argument("--topo")
    ap.add_argument("--out", help="the output directory (not with --pathproof-emulated: pathproof's run directory)")
    ap.add_argument("--nranks", type=int, default=0)
    ap.add_argument("--sizes", default=",".join(str(4096 * 4 ** i) for i in range(10)))
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--program", help="a compiled allreduce.c to run instead of torch")
    ap.add_argument("--pathproof-emulated", action="store_true",
                    help="the ranks of the emulated cluster pathproof run --emulate ... --nodes N describes")
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return 0
    if args.pathproof_emulated:
        if not args.program or "PATHPROOF_EMULATE_NODES" not in os.environ:
            ap.error("--pathproof-emulated needs --program and runs under pathproof run --emulate ... --nodes N")
        return cluster_launch(args)
    if not args.lib or not args.topo or not args.out:
        ap.error("--lib, --topo and --out are required")
    return launch(args)


if __name__ == "__main__":
    sys.exit(main())

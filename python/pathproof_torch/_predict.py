"""The in-run prediction: rank 0 writes the workload DDP was given and the machine it found, and has pathproof
predict and seal it before the first gradient AllReduce (stage 1, at DDP construction); at the first backward, once
the forward has built the autograd graph, it predicts the gradient-ready order and seals an addendum (stage 2) that
predicts the rebuilt buckets from it. pathproof itself is run as PATHPROOF_CLI says (the launcher's own Java and jar)."""

import json
import os
import subprocess
import sys
import time

from . import _files

_NAMES = _files.vocabulary()["files"]
STAGE1 = _NAMES["prediction"]
ADDENDUM = _NAMES["predictionAddendum"]
WORKLOAD = _NAMES["workload"]
READY_ORDER = _NAMES["readyOrder"]


def workload(ddp, module, given, comm_hook):
    """The workload as the bucket model reads it (scenario/WorkloadReader): every parameter of the module in
    named_parameters() order; those DDP ignores count as not requiring a gradient (DDP never sees them); the DDP
    flags as the job passed them (bucketCapMb null = not passed, which changes torch >= 2's first-bucket rule)."""
    ignored = set(getattr(ddp, "parameters_to_ignore", ()) or ())
    params = []
    for name, p in module.named_parameters():
        params.append({"name": name, "shape": list(p.shape), "dtype": str(p.dtype).replace("torch.", ""),
                       "requiresGrad": bool(p.requires_grad) and name not in ignored})
    cap = given.get("bucket_cap_mb")
    return {"name": type(module).__name__, "parameters": params,
            "bucketCapMb": float(cap) if cap is not None else None,
            "findUnusedParameters": bool(given.get("find_unused_parameters", False)),
            "staticGraph": bool(given.get("static_graph", False)) or bool(getattr(ddp, "static_graph", False)),
            "gradientAsBucketView": bool(given.get("gradient_as_bucket_view", False)),
            "commHook": comm_hook}


def cpu_topology(run_dir, host, nodes):
    """A machine without GPUs (gloo on CPUs): the host as a node with one CPU, repeated for each node of the job."""
    node = {"hostname": host, "cpus": [{"id": "cpu0", "numaId": 0, "arch": os.uname().machine, "vendor": "unknown"}],
            "pciSwitches": [], "gpus": [], "nvlinks": [], "nics": []}
    topo = {"name": "%s (CPU%s)" % (host, ", %d nodes" % nodes if nodes > 1 else ""),
            "description": "written by the job's rank 0: no GPU visible", "nodes": [node] * max(1, nodes)}
    path = os.path.join(run_dir, "topology.json")
    _files.write_json(path, topo)
    return path


def topology_candidates(run_dir, cuda, host, nodes, gpu):
    """Where the topology comes from, in this order, each tried until pathproof can predict from one: what the launcher
    was told (PATHPROOF_TOPOLOGY, alone; PATHPROOF_TOPOLOGY_NODES = its --nodes), a CPU machine written here, NCCL's
    own dump of the machine (written at the communicator's init, before this point), nvidia-smi's matrix with the GPU
    model and compute capability torch reports. The last two describe this host only: a job of several nodes is
    predicted for that many such hosts (--nodes)."""
    given = os.environ.get("PATHPROOF_TOPOLOGY")
    emulated = bool(os.environ.get("PATHPROOF_EMULATE_BUSIDS"))
    # NVML's peer access per GPU pair: NCCL asks it before it uses P2P (graph/paths.cc:337-365@v2.28.9-1); neither
    # NCCL's dump nor `topo -m` says it. Not for an emulated machine: this host's one GPU is not its GPUs.
    peer = peer_access_args(run_dir) if cuda and not emulated else []
    if given:
        args = ["--topology", given]
        given_nodes = os.environ.get("PATHPROOF_TOPOLOGY_NODES")
        if given_nodes:
            args += ["--nodes", given_nodes]
        yield args + peer, "given to pathproof run"
        return
    if not cuda:
        yield ["--topology", cpu_topology(run_dir, host, nodes)], "no GPU: the host's CPUs"
        return
    from . import _facts
    per_host = (["--nodes", str(nodes)] if nodes > 1 else []) + peer
    dump = os.environ.get("NCCL_TOPO_DUMP_FILE")
    if dump and os.path.isfile(dump) and os.path.getsize(dump) > 0:
        yield ["--topology", dump] + per_host, "NCCL's topology dump" + (" (this host, x%d nodes)" % nodes if nodes > 1 else "")
    smi = _facts.run_quiet(["nvidia-smi", "topo", "-m"])
    if smi:
        path = os.path.join(run_dir, "nvidia-smi-topo.txt")
        with open(path, "w") as f:
            f.write(smi)
        args = ["--topology", path] + per_host
        if gpu:
            args += ["--gpu-model", gpu["name"], "--gpu-cc", gpu["computeCapability"].replace(".", "")]
        yield args, "nvidia-smi topo -m" + (" (this host, x%d nodes)" % nodes if nodes > 1 else "")


def peer_access_args(run_dir):
    """--peer-access with `nvidia-smi topo -p2p r` written into the run directory, or nothing without nvidia-smi."""
    from . import _facts
    p2p = _facts.run_quiet(["nvidia-smi", "topo", "-p2p", "r"])
    if not p2p or "GPU0" not in p2p:
        return []
    path = os.path.join(run_dir, "nvidia-smi-p2p.txt")
    with open(path, "w") as f:
        f.write(p2p)
    return ["--peer-access", path]


def cli():
    raw = os.environ.get("PATHPROOF_CLI")
    if not raw:
        return None
    try:
        argv = json.loads(raw)
        return argv if isinstance(argv, list) and argv else None
    except ValueError:
        return None


def run_predict(run_dir, args, out_name):
    """pathproof predict ... -o out_name, sealed; returns (seal dict or None, one line of why not, seconds)."""
    base = cli()
    if base is None:
        return None, "PATHPROOF_CLI is not set: no pathproof to predict with (accept --prediction FILE later)", 0.0
    out = os.path.join(run_dir, out_name)
    log = os.path.join(run_dir, out_name.replace(".json", ".log"))
    t0 = time.monotonic()
    with open(log, "w") as f:
        p = subprocess.run(base + ["predict"] + args + ["--format", "json", "-o", out], stdout=subprocess.DEVNULL,
                           stderr=f, timeout=600)
    seconds = time.monotonic() - t0
    if p.returncode != 0:
        with open(log) as f:
            last = (f.read().strip().splitlines() or ["(no message)"])[-1]
        return None, "pathproof predict exited %d: %s (%s)" % (p.returncode, last, log), seconds
    seal = (_files.read_json(out, {}) or {}).get("seal") or {}
    return {"file": out_name, "sha256": seal.get("sha256"), "createdAt": seal.get("createdAt")}, None, seconds


def versions_args(v, cuda):
    args = ["--torch", v["torch"]]
    if cuda and v.get("nccl"):
        args += ["--nccl", v["nccl"]]
    return args


# Variables that only say where NCCL writes its evidence or how torch handles errors: nothing the model predicts from.
EVIDENCE_ONLY = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_TOPO_DUMP_FILE", "NCCL_GRAPH_DUMP_FILE",
                 "NCCL_ASYNC_ERROR_HANDLING",
                 # a CUDA container image's record of the NCCL it ships, not a parameter NCCL reads
                 "NCCL_VERSION"}


def env_args(hidden, cuda):
    """The NCCL/DDP variables the model reads, as the job set them; never a sealed fault's (blind by construction).
    NCCL's variables only when NCCL runs."""
    args = []
    for k, v in sorted(os.environ.items()):
        if not (k.startswith("DDP_") or (cuda and k.startswith("NCCL_"))):
            continue
        if k not in hidden and k not in EVIDENCE_ONLY and "\n" not in v:
            args += ["--env", "%s=%s" % (k, v)]
    return args


def stage1(run_dir, wl, ranks, cuda, v, host, nodes, gpu, hidden):
    """Writes workload.json and predicts from it; returns the manifest's record of the stage (with each topology
    tried and why it was not used, when one was refused)."""
    _files.write_json(os.path.join(run_dir, WORKLOAD), wl)
    rec = {"stage": "construction", "workload": WORKLOAD}
    refused = []
    for topo, how in topology_candidates(run_dir, cuda, host, nodes, gpu):
        args = ["--workload", os.path.join(run_dir, WORKLOAD), "--ranks", str(ranks)] + topo + versions_args(v, cuda) \
            + env_args(hidden, cuda)
        seal, why, seconds = run_predict(run_dir, args, STAGE1)
        rec.update({"seconds": round(seconds, 3), "args": args, "topologyFrom": how})
        if seal is not None:
            rec.update(seal)
            rec.pop("error", None)
            break
        rec["error"] = why
        refused.append("%s: %s" % (how, why))
        if cli() is None:
            break
    else:
        if not refused:
            rec["error"] = "no topology: PATHPROOF_TOPOLOGY unset, no NCCL dump, no nvidia-smi"
    if refused and "error" not in rec:
        rec["refusedTopologies"] = refused
    return rec


def stage2(run_dir, base, order, comm_hook, static_graph=False):
    """The addendum: the same inputs as stage 1 plus the predicted gradient-ready order, and what the job changed on
    DDP after its construction (workload.json is rewritten with it): the comm hook it registered, a graph it made
    static with ddp._set_static_graph(); bound to stage 1's seal."""
    _files.write_json(os.path.join(run_dir, READY_ORDER), order)
    wl_path = os.path.join(run_dir, WORKLOAD)
    wl = _files.read_json(wl_path, {}) or {}
    changed = dict(wl)
    changed["commHook"] = comm_hook
    if static_graph and not wl.get("staticGraph"):
        changed.update({"staticGraph": True, "staticGraphAfterConstruction": True})
    if changed != wl:
        wl = changed
        _files.write_json(wl_path, wl)
    rec = {"stage": "ready-order", "readyOrder": READY_ORDER, "complete": order.get("complete")}
    if not base or base.get("sha256") is None:
        rec["error"] = "no stage-1 prediction to add to"
        return rec
    if not order.get("complete"):
        rec["error"] = "the ready order could not be predicted completely: " + "; ".join(order.get("notes", []))
        return rec
    args = list(base["args"]) + ["--ready-order", os.path.join(run_dir, READY_ORDER),
                                 "--addendum-of", os.path.join(run_dir, STAGE1)]
    seal, why, seconds = run_predict(run_dir, args, ADDENDUM)
    rec["seconds"] = round(seconds, 3)
    if seal is None:
        rec["error"] = why
    else:
        rec.update(seal)
    return rec


def warn(msg):
    print("pathproof: " + msg, file=sys.stderr, flush=True)

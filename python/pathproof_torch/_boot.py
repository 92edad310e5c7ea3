"""Start-up of an instrumented process (from sitecustomize, or from instrument()): hooks that act once torch is
imported, the per-rank NCCL log file, and the repair of a launcher bug that stops torchrun before any worker runs.

Importing torch here would cost every Python process of the job (torchrun's agent, data-loader workers, compilers)
a second or more; the hooks below run only in processes that import torch themselves.
"""

import importlib.abc
import os
import sys

_AFTER_IMPORT = {}


class _Loader(importlib.abc.Loader):
    """Delegates to the module's own loader, then runs pathproof's callbacks on the finished module."""

    def __init__(self, loader, callbacks):
        self._loader = loader
        self._callbacks = callbacks

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        for cb in self._callbacks:
            try:
                cb(module)
            except Exception as e:  # noqa: BLE001 - the user's import must succeed whatever pathproof does
                print("pathproof: after importing %s: %r" % (module.__name__, e), file=sys.stderr)


class _AfterImport(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        callbacks = _AFTER_IMPORT.get(name)
        if not callbacks:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader, callbacks)
                return spec
        return None


def after_import(name, callback):
    """Runs callback(module) once module `name` is imported (now, if it already is)."""
    if name in sys.modules:
        callback(sys.modules[name])
        return
    _AFTER_IMPORT.setdefault(name, []).append(callback)
    if not any(isinstance(f, _AfterImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport())


def repair_std_from_str(api):
    """torch 1.13's torchrun dies before starting workers on Python >= 3.11 (Debian bookworm's python3-torch):
    `Std.from_str("0")` returns None because 3.11's IntFlag no longer counts 0 as a member (elastic/multiprocessing/
    api.py:to_std@v1.13.1, `if s in Std`), and `to_map` then calls None.get. Every value it parses is one torch's own
    regex admitted, so the repair returns Std(int(v)) as torch >= 2.0 effectively does. Applied only when the bug is
    there; recorded in the run's manifest (instrumentation.launcherRepairs)."""
    std = getattr(api, "Std", None)
    if std is None or std.from_str("0") is not None:
        return
    original = std.from_str

    def from_str(vm):
        value = original(vm)
        if value is None and vm.strip().isdigit():
            return std(int(vm))
        if isinstance(value, dict):
            return {k: (v if v is not None else std(0)) for k, v in value.items()}
        return value

    std.from_str = staticmethod(from_str)
    os.environ["PATHPROOF_REPAIRED_STD_FROM_STR"] = "1"


def rank_from_env():
    """The global rank a launcher gave this process (torchrun, srun, mpirun), or None before one is known."""
    for name in ("RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"):
        v = os.environ.get(name)
        if v not in (None, "") and v.strip().isdigit():
            return int(v)
    return None


def set_rank_env(run_dir):
    """NCCL reads NCCL_DEBUG_FILE at its first communicator, after this point; a launcher gives every rank the same
    environment, so only the rank itself can name its own log. %h.%p (NCCL's own host.pid pattern) when the rank is
    not known yet; a user's own NCCL_DEBUG_FILE is kept (then the log is where they said)."""
    if "NCCL_DEBUG_FILE" in os.environ and not os.environ.get("PATHPROOF_SET_NCCL_DEBUG_FILE"):
        return
    rank = rank_from_env()
    name = "nccl-rank%d.log" % rank if rank is not None else "nccl-%h.%p.log"
    if rank is not None and os.path.exists(os.path.join(run_dir, name)):
        # An earlier DDP session of this command (a restarted worker group) wrote this rank's log: NCCL opens its
        # file with "w" (debug.cc:260@v2.28.9-1), so a name of this process's own keeps that log; the session moves
        # it into its directory under the rank's own name (_sessions.move_open_files).
        name = "nccl-rank%d.%%p.log" % rank
    os.environ["NCCL_DEBUG_FILE"] = os.path.join(run_dir, name)
    os.environ["PATHPROOF_SET_NCCL_DEBUG_FILE"] = "1"  # ours: a child of this process may rename it for its rank


def emulated_node(local, nodes_json):
    """An emulated cluster (PATHPROOF_EMULATE_NODES): the variables of the node local rank `local` is on, node by
    node (node = local // ranksPerNode), as NCCL must see them before its first communicator: the node's name as
    NCCL_HOSTID (NCCL's host hash, so ranks of one node are one host and the others are reached over the network),
    the node's own NCCL_TOPO_FILE and this rank's busId in it. None when the local rank has no place in the cluster
    (the command started more ranks than it holds)."""
    import json
    spec = json.loads(nodes_json)
    per = int(spec["ranksPerNode"])
    node, i = divmod(local, per)
    if node >= len(spec["nodes"]):
        return None
    n = spec["nodes"][node]
    env = {"NCCL_HOSTID": n["hostId"], "NCCL_TOPO_FILE": n["topoFile"], "NCCL_EMULATE_BUSID": n["busIds"][i],
           "PATHPROOF_EMULATED_NODE": str(node)}
    if n.get("nicsFile"):
        env["PATHPROOF_NET_EMU_NICS_FILE"] = n["nicsFile"]  # the node's NICs for pathproof's net plugin
    return env


def emulate_device():
    """run --emulate: N ranks share this machine's one GPU while NCCL believes each sits on its own GPU of the
    emulated machine. The rank's emulated busId comes from its local rank (NCCL_EMULATE_BUSID, read by pathproof's
    NCCL patch at the communicator's init), on an emulated cluster with its node's host id and topology file; the
    job then sees local rank 0, so whatever device it picks from LOCAL_RANK is the real GPU, and
    torch.cuda.set_device is held to it once torch is imported."""
    ids = os.environ.get("PATHPROOF_EMULATE_BUSIDS")
    local = os.environ.get("LOCAL_RANK")
    if not ids or local in (None, "") or "PATHPROOF_LOCAL_RANK" in os.environ:
        return
    nodes = os.environ.get("PATHPROOF_EMULATE_NODES")
    if nodes:
        env = emulated_node(int(local), nodes)
        if env is None:
            sys.stderr.write("pathproof: local rank %s has no place in the emulated cluster (%s); start exactly as many"
                             " ranks as it has GPUs\n" % (local, nodes))
            sys.stderr.flush()
            os._exit(3)
        os.environ.update(env)
    else:
        ids = ids.split(",")
        if int(local) < len(ids):
            os.environ["NCCL_EMULATE_BUSID"] = ids[int(local)]
    os.environ["PATHPROOF_LOCAL_RANK"] = local
    os.environ["LOCAL_RANK"] = os.environ.get("PATHPROOF_CUDA_DEVICE", "0")

    def hold_device(torch):
        real = int(os.environ.get("PATHPROOF_CUDA_DEVICE", "0"))
        set_device = torch.cuda.set_device

        def pathproof_set_device(device):
            return set_device(real)

        torch.cuda.set_device = pathproof_set_device

    after_import("torch", hold_device)


def boot():
    run_dir = os.environ.get("PATHPROOF_OUT")
    if not run_dir:
        return
    after_import("torch.distributed.elastic.multiprocessing.api", repair_std_from_str)
    set_rank_env(run_dir)
    emulate_device()

    def install(torch):
        from . import _run
        _run.install(torch, run_dir)

    after_import("torch", install)

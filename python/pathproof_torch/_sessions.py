"""DDP sessions of one run: a command may build its DDP job more than once, one job after another, with the same
ranks: two mp.spawn calls (pytorch/examples distributed/ddp/example.py runs demo_basic, then demo_checkpoint), or
torchrun restarting a failed worker group (--max-restarts). Their files share names, so a later session would
overwrite the first one's prediction, status and NCCL log and append to its records. The first session keeps the
run directory's top level; session N >= 2 writes a run directory of its own, session-N/ (docs/run-directory.md),
which the launcher completes with its own manifest turns when the command ends.

Which session a process is in is decided once, at its first DDP object, by rank 0 of its process group and
published in the group's store (the store of a restarted torchrun worker group is prefixed by its attempt,
rendezvous.py:_env_rendezvous_handler@v1.13.1), so every rank of one session writes into one directory even when a
rank of an earlier session died before writing anything. Without a store each rank decides from its own files."""

import datetime
import os
import re

SESSION_DIR = "session-%d"
STORE_KEY = "pathproof/ddp-session"
# The other ranks wait this long for rank 0's choice; DDP's constructor broadcast rank 0's parameters just before,
# so rank 0 is at most one step of pathproof's own behind.
WAIT = datetime.timedelta(seconds=120)
_STATUS = re.compile(r"rank\d+\.json$")


def directory(run_dir, n):
    return run_dir if n == 1 else os.path.join(run_dir, SESSION_DIR % n)


def _taken(d):
    """A session's directory is taken once any rank of it wrote its status (at its first DDP object)."""
    try:
        return any(_STATUS.match(name) for name in os.listdir(d))
    except OSError:
        return False


def _first(run_dir, taken):
    n = 1
    while taken(directory(run_dir, n)):
        n += 1
    return n


def choose(run_dir, rank, store):
    """The session number of this process's first DDP object (1 = the run directory itself)."""
    if store is not None:
        try:
            if rank == 0:
                n = _first(run_dir, _taken)
                store.set(STORE_KEY, str(n))
                return n
            store.wait([STORE_KEY], WAIT)
            return int(store.get(STORE_KEY))
        except Exception:  # noqa: BLE001 - a store without wait/get, or rank 0 never said: decide alone
            pass
    return _first(run_dir, lambda d: os.path.exists(os.path.join(d, "rank%d.json" % rank)))


def default_store(torch):
    try:
        return torch.distributed.distributed_c10d._get_default_store()
    except Exception:  # noqa: BLE001 - older torch, or a process group without a store
        return None


def move_open_files(run_dir, target):
    """Files this process holds open directly in the run directory's top level (NCCL's log, opened at the
    communicator's init, before DDP existed; the NCCL profiler plugin's files) move into the session's directory:
    renaming keeps the open descriptor, so NCCL goes on writing into the moved file. A log named with this process's
    pid (chosen at start because an earlier session's log held the rank's own name) gets the rank's own name back."""
    top = os.path.realpath(run_dir)
    moved = []
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return moved  # not Linux: the files stay where they are
    for fd in fds:
        try:
            path = os.readlink(os.path.join("/proc/self/fd", fd))
        except OSError:
            continue
        if os.path.dirname(path) != top or not os.path.isfile(path):
            continue
        name = os.path.basename(path)
        if not name.startswith("nccl-"):
            continue
        own = re.sub(r"^(nccl-rank\d+)\.%d(\.log)$" % os.getpid(), r"\1\2", name)
        try:
            os.replace(path, os.path.join(target, own))
            moved.append(own)
        except OSError:
            continue
    return moved


def redirect_env(run_dir, target):
    """Paths in the environment that NCCL reads later (a communicator not made yet) point into the session's
    directory: its log, its topology dump and the profiler plugin's folder."""
    top = os.path.realpath(run_dir)
    for name in ("NCCL_DEBUG_FILE", "NCCL_TOPO_DUMP_FILE", "PATHPROOF_NCCL_PROFILER_DIR"):
        v = os.environ.get(name)
        if not v:
            continue
        real = os.path.realpath(v)
        if real == top:
            os.environ[name] = target
        elif os.path.dirname(real) == top:
            os.environ[name] = os.path.join(target, re.sub(r"^(nccl-rank\d+)\.%p(\.log)$", r"\1\2", os.path.basename(v)))

"""What a rank finds about its machine and software: versions, GPUs, nvidia-smi's topology, machine load."""

import os
import socket
import subprocess
import sys
import threading
import time


def run_quiet(argv):
    """Output of a diagnostic tool (nvidia-smi), or None when it is absent or fails; never fatal."""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        return p.stdout.decode("utf-8", "replace") if p.returncode == 0 else None
    except Exception:  # noqa: BLE001 - a missing tool is a fact, not an error
        return None


def versions(torch):
    """torch, Python, CUDA (torch's build), NCCL (the library this process loaded, see loaded_nccl_version; else the one
    torch was built with) and ncclBuild (torch.cuda.nccl.version(): a compile-time constant, NCCL_MAJOR/MINOR/PATCH of
    the headers torch was built against, torch/csrc/cuda/nccl.cpp version()), the GPU driver (filled by gpus)."""
    v = {"torch": torch.__version__, "python": sys.version.split()[0], "cuda": getattr(torch.version, "cuda", None),
         "nccl": None, "ncclBuild": None, "driver": None}
    try:
        n = torch.cuda.nccl.version()
        v["ncclBuild"] = ".".join(str(x) for x in n) if isinstance(n, tuple) else str(n)
    except Exception:  # noqa: BLE001 - CPU builds have no NCCL
        pass
    v["nccl"] = loaded_nccl_version() or v["ncclBuild"]
    return v


def nccl_version_text(code):
    """NCCL_VERSION_CODE as ncclGetVersion returns it: X*10000+Y*100+Z since 2.9, X*1000+Y*100+Z before (nccl.h.in's
    NCCL_VERSION macro)."""
    if code is None or code < 100:
        return None
    if code >= 10000:
        return "%d.%d.%d" % (code // 10000, code % 10000 // 100, code % 100)
    return "%d.%d.%d" % (code // 1000, code % 1000 // 100, code % 100)


def loaded_nccl_version(maps="/proc/self/maps"):
    """The version of the NCCL library mapped into this process, by its own ncclGetVersion; None where none is mapped
    (a CPU build, or NCCL linked statically into libtorch_cuda, whose version is then torch's build version).

    torch.cuda.nccl.version() is what torch was compiled against, not what runs: a pip-upgraded nvidia-nccl package,
    LD_LIBRARY_PATH or LD_PRELOAD load another libnccl.so.2 under the same torch, and NCCL's decisions are that
    library's. The library asked is the one whose ncclGetVersion torch's own calls bind to
    (an emulator's NCCL is LD_PRELOADed beside the wheel's, both mapped); dlopen of a path already loaded returns that
    same library, and runs nothing."""
    try:
        import ctypes
    except ImportError:
        return None

    def version(fn):
        code = ctypes.c_int(0)
        return nccl_version_text(code.value) if fn(ctypes.byref(code)) == 0 else None

    # 1. The global scope (LD_PRELOAD, the program's own libraries, anything loaded RTLD_GLOBAL): the dynamic linker
    # binds every reference there first, libtorch_cuda's included.
    try:
        return version(ctypes.CDLL(None).ncclGetVersion)
    except (OSError, AttributeError):
        pass
    try:
        with open(maps) as f:
            paths = [line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6]
    except OSError:
        return None
    # 2. The library torch's CUDA part links, searched as dlsym searches a handle: itself (a static NCCL), then its
    # dependencies (the nvidia-nccl wheel's libnccl.so.2, or whichever LD_LIBRARY_PATH found).
    # 3. Else the one libnccl mapped. /proc/self/maps lists by address, not by load order, so it cannot choose between
    # several.
    for mine in (lambda name: name == "libtorch_cuda.so", lambda name: name.startswith("libnccl.so")):
        found = sorted({p for p in paths if mine(os.path.basename(p))})
        if len(found) != 1:
            continue
        try:
            return version(ctypes.CDLL(found[0]).ncclGetVersion)
        except (OSError, AttributeError):
            continue
    return None


def gpus(torch, v):
    """Every GPU torch sees, with nvidia-smi's bus id; fills v["driver"]."""
    out = []
    if not torch.cuda.is_available():
        return out
    smi = run_quiet(["nvidia-smi", "--query-gpu=index,name,pci.bus_id,driver_version", "--format=csv,noheader"])
    bus = {}
    for line in (smi or "").strip().splitlines():
        cols = [c.strip() for c in line.split(",")]
        if len(cols) >= 4:
            bus[cols[0]] = cols[2]
            v["driver"] = cols[3]
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        out.append({"index": i, "name": p.name, "computeCapability": "%d.%d" % (p.major, p.minor),
                    "memoryBytes": p.total_memory, "multiProcessors": p.multi_processor_count,
                    "busId": bus.get(str(i))})
    return out


def evidence_env(hidden):
    """The job's NCCL_*, TORCH_* and DDP_* variables, without the ones a sealed fault set (blind by construction)."""
    return {k: v for k, v in sorted(os.environ.items())
            if k.startswith(("NCCL_", "TORCH_", "DDP_")) and k not in hidden}


def host():
    return socket.gethostname()


def load_sample():
    """Process CPU time, this thread's run-queue wait (its schedstat), the 1-minute load average."""
    return time.process_time(), run_queue_ns(), os.getloadavg()[0] if hasattr(os, "getloadavg") else None


_SCHEDSTAT = {}


def run_queue_ns():
    """This thread's time runnable but not running so far (/proc/self/task/TID/schedstat, field 2), or None.

    The file stays open per thread and is read with pread: an open/read/close of /proc took about 165 us on the
    loaded 2-core machine, a pread about 10 us, and each step reads it five times on CPU ranks."""
    tid = threading.get_native_id()
    try:
        fd = _SCHEDSTAT.get(tid)
        if fd is None:
            fd = _SCHEDSTAT[tid] = os.open("/proc/self/task/%d/schedstat" % tid, os.O_RDONLY)
        return int(os.pread(fd, 128, 0).split()[1])
    except (OSError, ValueError, IndexError):
        return None


def phase_wait_ms(a, b):
    """The run-queue wait between two run_queue_ns() samples, in ms, or None."""
    return None if a is None or b is None else (b - a) / 1e6


def load_delta(a, b):
    """Load beside a step's wall time: CPU time, time runnable but not running (the machine busy), load average."""
    out = {"cpuMs": (b[0] - a[0]) * 1e3, "loadavg1": b[2]}
    if a[1] is not None and b[1] is not None:
        out["runQueueMs"] = (b[1] - a[1]) / 1e6
    return out

"""pathproof run harness, the cost of its own instrumentation: which iterations run the recording comm
hook, the switch of pathproof's NCCL profiler plugin, step times read from CUDA events afterwards, and the summary of
`run --overhead`. Imported by harness.py from the same directory; needs no torch at import."""

import json
import os

def hooked_iterations(warmup, iters, every, window):
    """Iterations that run the recording comm hook: 0 (construction buckets), 1 (the first after DDP's rebuild), the
    profiler window (its kernels are matched to that iteration's buckets) and every `every`-th measured iteration.
    register_comm_hook can be called only once per DDP object, so the other iterations run a second DDP wrapper of the
    same module without a hook: DDP's own C++ allreduce (the reducer divides while copying into the bucket, no Python
    per bucket). A wrapper that did not run forward ignores its autograd hooks (Reducer::autograd_hook returns while
    expect_autograd_hooks_ is false; reducer.cpp), so each iteration is reduced exactly once."""
    total = warmup + iters
    if every <= 1:
        return set(range(total))
    hooked = {it for it in (0, 1) if it < total}
    if window:
        hooked.update(range(window[0], window[1]))
    hooked.update(it for it in range(warmup, total) if (it - warmup) % every == every - 1)
    return hooked


PROFILER_STATE = {"requested": None, "active": None}


_PROFILER_LIB = []


def nccl_profiler_switch(on):
    """pathproof's NCCL profiler plugin (NCCL_PROFILER_PLUGIN) on or off for this process, through the switch it
    exports; ctypes maps the same file NCCL opened, so it is the same library (opened once: run --overhead switches it
    before every step). Without the plugin: nothing."""
    path = os.environ.get("NCCL_PROFILER_PLUGIN")
    PROFILER_STATE["requested"] = path
    if not path or not os.path.isabs(path) or not os.path.exists(path) or "error" in PROFILER_STATE:
        return
    try:
        if not _PROFILER_LIB:
            import ctypes
            _PROFILER_LIB.append(ctypes.CDLL(path))
        PROFILER_STATE["active"] = bool(_PROFILER_LIB[0].pathproof_profiler_enable(1 if on else 0))
        PROFILER_STATE["on"] = bool(on)
    except (OSError, AttributeError) as e:
        PROFILER_STATE["error"] = repr(e)


def write_steps(pending, out, steps, wait):
    """Writes the rows of finished steps, in order. A CUDA step's time is read from its two events once the GPU has
    passed the second one (event.query), so no step has to synchronize for its own time; wait=True synchronizes."""
    while pending:
        row, e0, e1 = pending[0]
        if e1 is not None:
            if wait:
                e1.synchronize()
            elif not e1.query():
                return
            row["ms"] = e0.elapsed_time(e1)
        pending.pop(0)
        out.write(json.dumps(row, sort_keys=True) + "\n")
        steps.append(row)
    out.flush()


def median(xs):
    s = sorted(xs)
    n = len(s)
    if not n:
        return None
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def median_ratio_interval(inst, plain, draws=2000, seed=13):
    """95 % percentile-bootstrap interval of median(inst) / median(plain), each arm resampled on its own (seeded, so
    a run's file is reproducible): how far one run's ratio can be trusted at this step-time spread."""
    import random
    if len(inst) < 2 or len(plain) < 2:
        return None
    rnd = random.Random(seed)
    rs = []
    for _ in range(draws):
        a = median([inst[rnd.randrange(len(inst))] for _ in inst])
        b = median([plain[rnd.randrange(len(plain))] for _ in plain])
        if b:
            rs.append(a / b)
    rs.sort()
    return [rs[int(0.025 * (len(rs) - 1))], rs[int(0.975 * (len(rs) - 1))]] if rs else None


def overhead_summary(steps, plain, window, hook_every=None, profiler=None):
    """run --overhead's figures. `ratio` is the issue's measure (median instrumented / median plain, measured steps);
    `pairedRatio` is the median of step-by-step ratios of the two interleaved arms (same iteration, same data), which
    a drifting machine moves least; the unhooked and unprofiled medians say what the sampled iterations cost."""
    inst = [s["ms"] for s in steps if s["phase"] == "measured"]
    inst_np = [s["ms"] for s in steps if s["phase"] == "measured" and not s["profiled"]]
    inst_plain = [s["ms"] for s in steps if s["phase"] == "measured" and not s["profiled"] and not s.get("hooked")]
    pl = [s["ms"] for s in plain if s["phase"] == "measured"]
    mi, mp, mnp, mu = median(inst), median(pl), median(inst_np), median(inst_plain)
    by_it = {s["iteration"]: s["ms"] for s in plain if s["phase"] == "measured" and s["ms"]}
    paired = [s["ms"] / by_it[s["iteration"]] for s in steps
              if s["phase"] == "measured" and s["iteration"] in by_it and s["ms"] is not None]
    paired_unhooked = [s["ms"] / by_it[s["iteration"]] for s in steps
                       if s["phase"] == "measured" and s["iteration"] in by_it and s["ms"] is not None
                       and not s["profiled"] and not s.get("hooked")]
    return {"rank": 0, "measured": len(inst), "plainMedianMs": mp, "instrumentedMedianMs": mi,
            "instrumentedUnprofiledMedianMs": mnp,
            "instrumentedUnhookedMedianMs": mu,
            "hookedMeasured": sum(1 for s in steps if s["phase"] == "measured" and s.get("hooked")),
            "hookEvery": hook_every,
            "overheadPct": (mi - mp) / mp * 100.0 if mp else None,
            "overheadUnprofiledPct": (mnp - mp) / mp * 100.0 if mp and mnp is not None else None,
            "overheadUnhookedPct": (mu - mp) / mp * 100.0 if mp and mu is not None else None,
            "ratio": mi / mp if mp else None,
            "ratioInterval95": median_ratio_interval(inst, pl),
            "pairedRatio": median(paired), "pairedUnhookedRatio": median(paired_unhooked), "pairs": len(paired),
            "profiledIterations": list(window) if window else None,
            "ncclProfilerPlugin": dict(profiler) if profiler else None,
            "load": os.getloadavg() if hasattr(os, "getloadavg") else None,
            "order": "interleaved: plain step i, then instrumented step i, same process, same data (the plain arm "
                     "pauses in the profiler window and makes its steps up after); step time by CUDA events read "
                     "afterwards (GPU) or perf_counter (CPU) in both arms"}

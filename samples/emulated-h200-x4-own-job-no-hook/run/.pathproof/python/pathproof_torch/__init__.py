"""pathproof's instrumentation of a PyTorch DDP job, in the job's own processes.

`pathproof run --out DIR -- COMMAND...` puts this package and a `sitecustomize.py` first on every rank's PYTHONPATH;
frameworks that start their own processes call `pathproof_torch.instrument(out=DIR)` before they wrap the model in
DistributedDataParallel. Either way each rank writes the run directory's files (docs/run-directory.md).
"""

import os as _os

__version__ = "0.1.0"


def instrument(out, hook_every=None, warmup=5, profile_iters=3, predict=True):
    """Instrument this process's DDP job in code, for frameworks that start their own processes: call it in every
    rank before the model is wrapped in DistributedDataParallel (best before init_process_group, so that NCCL's log
    goes to `out` too). Writes the same files as `pathproof run --out DIR -- COMMAND`. `predict` seals an in-run
    prediction when pathproof itself can be run (PATHPROOF_CLI; else accept it later with --prediction)."""
    import torch
    from . import _boot, _files, _run
    out = _os.path.abspath(out)
    _os.makedirs(out, exist_ok=True)
    _os.environ["PATHPROOF_OUT"] = out  # processes this one starts are instrumented too (sitecustomize, if present)
    for k, v in _files.vocabulary()["rankEnv"].items():
        _os.environ.setdefault(k, v)
    _boot.set_rank_env(out)
    options = _run.options_from_env()
    if hook_every is not None:
        options["hook_every"] = int(hook_every)
    options.update(warmup=int(warmup), profile_iters=int(profile_iters), predict=bool(predict))
    return _run.install(torch, out, mode="in-code", options=options)

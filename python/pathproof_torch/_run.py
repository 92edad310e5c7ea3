"""The instrumentation of one process of a DDP job: the patches into torch, and what they record (files in
docs/run-directory.md). Nothing here may fail the job: a failure of pathproof's own becomes one line on stderr and a
note in the rank's status file, and the job goes on uninstrumented where it must."""

import atexit
import functools
import hashlib
import inspect
import os
import sys
import time
import traceback
import weakref

from . import _facts, _files, _predict
from ._watch import Watch

_RUN = None


class Faults:
    """The knobs of a sealed fault (fault.sealed.json, schema pathproof.fault/1): the launcher writes the file, the
    ranks read it; the manifest never names them (blind by construction)."""

    def __init__(self, sealed):
        knobs = (sealed or {}).get("knobs") or {}
        known = set(_files.vocabulary()["knobs"])
        unknown = sorted(set(knobs) - known)
        if unknown:
            raise ValueError("fault.sealed.json: unknown knob(s) %s (known: %s)" % (unknown, sorted(known)))
        self.env = sorted(((sealed or {}).get("env") or {}).keys())
        self.bucket_cap_mb = float(knobs["bucket_cap_mb"]) if "bucket_cap_mb" in knobs else None
        fu = knobs.get("find_unused_parameters")
        self.find_unused = None if fu is None else str(fu).lower() in ("1", "true", "yes")
        self.compute_delay_ms = float(knobs.get("compute_delay_ms", 0) or 0)
        self.corrupt_rank = int(knobs["corrupt_grad_rank"]) if "corrupt_grad_rank" in knobs else None
        # "node_nic_mbps" is the launcher's: it slowed an emulated node's NICs before this rank started; nothing here.
        self.exit_at = None
        if "exit_rank" in knobs:
            r, _, i = str(knobs["exit_rank"]).partition("@")
            self.exit_at = (int(r), int(i or 0))

    def ddp_kwargs(self, bound):
        """The DDP constructor's arguments with the fault's flags applied (bucket_cap_mb, find_unused_parameters)."""
        if self.bucket_cap_mb is not None:
            bound.arguments["bucket_cap_mb"] = self.bucket_cap_mb
        if self.find_unused is not None:
            bound.arguments["find_unused_parameters"] = self.find_unused


def options_from_env():
    v = _files.vocabulary()

    def num(name, default):
        raw = os.environ.get(name)
        return int(raw) if raw not in (None, "") else default

    raw = os.environ.get("PATHPROOF_HOOK_EVERY")
    hook_every = None if raw in (None, "", "auto") else int(raw)  # None: chosen by the backend at DDP's construction
    return {"hook_every": hook_every, "warmup": num("PATHPROOF_WARMUP", 5),
            "profile_iters": num("PATHPROOF_PROFILE_ITERS", 3), "predict": os.environ.get("PATHPROOF_PREDICT") != "0"}


class Run:
    def __init__(self, torch, run_dir, options, mode):
        self.torch, self.dir, self.options, self.mode = torch, os.path.abspath(run_dir), options, mode
        os.makedirs(self.dir, exist_ok=True)
        # Each launcher seals its own node's fault file (PATHPROOF_FAULT); in code, the run directory holds it.
        self.faults = Faults(_files.read_json(os.environ.get("PATHPROOF_FAULT") or
                                              os.path.join(self.dir, _files.vocabulary()["files"]["faultSealed"])))
        self.started = _files.now_iso()
        self.watch = None
        self.others = []
        self.session = None
        self.optimizers = weakref.WeakSet()  # every optimizer made in this process
        self.rank = None
        self.notes = []
        self.predictions = []
        self.finished = False
        self.status = None

    # -- status and notes -------------------------------------------------------------------------------------------
    def note(self, msg):
        self.notes.append(msg)
        print("pathproof: " + msg, file=sys.stderr, flush=True)

    def write_status(self, **kw):
        if self.rank is None:
            return
        if self.status is None:
            self.status = {"rank": self.rank, "pid": os.getpid(), "host": _facts.host(), "start": self.started,
                           "node": _int_env("PATHPROOF_NODE") or 0}
        self.status.update(kw)
        self.status["notes"] = list(self.notes)
        _files.write_json(os.path.join(self.dir, "rank%d.json" % self.rank), self.status)

    def leave(self, code, why):
        """A fault that kills this rank (exit_rank): every file it wrote stays, the process ends at once."""
        print("pathproof: " + why, file=sys.stderr, flush=True)
        try:
            if self.watch is not None:
                self.watch.finish()
            self.write_status(end=_files.now_iso(), status="exited", exitCode=code, reason=why)
        finally:
            os._exit(code)

    # -- DDP construction -------------------------------------------------------------------------------------------
    def on_ddp(self, ddp, module, given, register):
        dist = self.torch.distributed
        if self.watch is not None:
            self.other_ddp(module, given={k: repr(v) for k, v in given.items() if k != "module"})
            return
        self.rank = dist.get_rank()
        self.enter_session()
        self.ddp_arguments = {k: _plain(v) for k, v in given.items() if k != "module"}
        if self.options["hook_every"] is None:
            self.options["hook_every"], self.hook_every_why = choose_hook_every(self.torch, str(dist.get_backend()))
        w = Watch(self, ddp, module, self.rank)
        self.watch = w
        self.register = register  # DDP's own register_comm_hook, for a hook added later (other_ddp)
        w.register_recording_hook(register)
        self.write_status(status="running", localRank=_int_env("LOCAL_RANK", "SLURM_LOCALID"),
                          worldSize=dist.get_world_size(), device=str(next(module.parameters()).device),
                          backend=str(dist.get_backend()))
        if self.rank == 0:
            self.rank0_facts(ddp, module, given)

    def enter_session(self):
        """A later DDP session of the command (a second mp.spawn, a restarted worker group) writes into session-N/."""
        from . import _sessions
        n = _sessions.choose(self.dir, self.rank, _sessions.default_store(self.torch))
        self.session = n
        if n == 1:
            return
        target = _sessions.directory(self.dir, n)
        os.makedirs(target, exist_ok=True)
        moved = _sessions.move_open_files(self.dir, target)
        _sessions.redirect_env(self.dir, target)
        top, self.dir = self.dir, target
        self.note("DDP session %d of this command (an earlier one wrote %s): this session's files are in %s%s"
                  % (n, top, target, " (moved there: %s)" % ", ".join(sorted(moved)) if moved else ""))

    def other_ddp(self, module, **how):
        """A DDP object besides the watched one (listed in the manifest; its buckets are not recorded). Its AllReduces
        share the watched one's process group, so the flight recorder can no longer tell the watched model's buckets
        (accept sets those records aside): where the backend's own choice left the recording hook out (NCCL), and the
        watched DDP has run no forward and has no hook of the job's yet, the hook records its buckets after all."""
        self.others.append(dict({"module": type(module).__name__,
                                 "parameters": sum(1 for _ in module.parameters())}, **how))
        w = self.watch
        if (w is None or w.hook_state is not None or w.comm_hook is not None or w.iteration >= 0
                or self.options["hook_every"] != 0 or not getattr(self, "hook_every_why", "").startswith("auto")):
            return
        self.options["hook_every"] = _files.vocabulary()["hookEvery"]
        self.hook_every_why = ("auto: another DDP object (%s) shares the process group, so the flight recorder cannot"
                               " tell the watched model's AllReduces from its own" % type(module).__name__)
        w.register_recording_hook(self.register)

    def rank0_facts(self, ddp, module, given):
        torch, dist = self.torch, self.torch.distributed
        v = _facts.versions(torch)
        gpus = _facts.gpus(torch, v)
        world = dist.get_world_size()
        local_world = _int_env("LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE") or world
        backend = str(dist.get_backend())
        wl = _predict.workload(ddp, module, given, None)
        self.workload = wl
        facts = {"harnessStart": self.started, "harnessFinished": False, "backend": backend, "worldSize": world,
                 "localWorldSize": local_world, "argv": [sys.executable] + sys.argv, "workload": wl, "versions": v,
                 "hostname": _facts.host(), "env": _facts.evidence_env(set(self.faults.env)), "gpus": gpus,
                 "nvidiaSmiTopoM": _facts.run_quiet(["nvidia-smi", "topo", "-m"]) if gpus else None,
                 "parameterOrder": [n for n, _ in module.named_parameters()], "hookEvery": self.options["hook_every"]}
        if self.options["predict"]:
            rec = _predict.stage1(self.dir, wl, world, backend == "nccl", v, _facts.host(),
                                  max(1, world // max(1, local_world)), gpus[0] if gpus else None, set(self.faults.env))
            self.predictions.append(rec)
            if "error" in rec:
                self.note("no prediction at DDP construction: " + rec["error"])
        facts["instrumentation"] = self.instrumentation_facts()
        _files.merge_manifest(self.dir, facts)

    def instrumentation_facts(self):
        from . import __version__
        w = self.watch
        return {"mode": self.mode, "package": __version__, "hookEvery": self.options["hook_every"],
                "hookEveryWhy": getattr(self, "hook_every_why", "given"),
                "ddpArguments": getattr(self, "ddp_arguments", None),
                "warmup": self.options["warmup"], "profileIters": self.options["profile_iters"],
                "commHook": w.comm_hook if w else None, "otherDdpObjects": self.others,
                "ddpSession": self.session,
                "predictions": self.predictions, "firstBackwardNs": w.first_backward_ns if w else None,
                "launcherRepairs": ["torch.distributed.elastic Std.from_str under Python >= 3.11"]
                if os.environ.get("PATHPROOF_REPAIRED_STD_FROM_STR") else [], "notes": self.notes}

    # -- the first backward: the gradient-ready order ---------------------------------------------------------------
    def before_backward(self, tensors):
        w = self.watch
        if w is None:
            return
        try:
            if self.awaits_ready_order(w) and not w.reaches(tensors):
                # Another model's backward (a GAN's discriminator step between the generator's forward and its own
                # backward): the numbering of the first forward and the order wait for the watched DDP's backward.
                return
            w.close_creation()
            self.predict_ready_order(w, tensors)
        finally:
            # The backward starts after the addendum is sealed: its time is the job's, and the first gradient
            # AllReduce (which the seal must precede) comes later still.
            w.before_backward()

    def awaits_ready_order(self, w):
        """Rank 0 predicts the ready order at the first backward of iteration 0 that reaches the watched DDP."""
        return (w.iteration == 0 and not w.order_predicted and w.step is not None and w.step.get("iteration") == 0
                and self.rank == 0 and self.options["predict"] and bool(self.predictions))

    def predict_ready_order(self, w, tensors):
        if w.iteration != 0 or w.order_predicted or w.step is None or w.step.get("iteration") != 0:
            return
        w.order_predicted = True
        if self.rank != 0 or not self.options["predict"] or not self.predictions:
            return
        try:
            from . import ready_order
            params = ready_order.ddp_params(w.module)
            ignored = set(getattr(w.ddp, "parameters_to_ignore", ()) or ())
            if ignored:
                keep = {id(p) for n, p in w.module.named_parameters() if n not in ignored}
                params = [p for p in params if id(p) in keep]
            order = ready_order.predict(tensors, params, creation=w.creation)
            order["names"] = [w.names.get(id(params[i]), "?") for i in order.get("order", [])]
        except Exception as e:  # noqa: BLE001 - the job must go on; the addendum is then missing, and says why
            order = {"order": [], "complete": False, "notes": ["the ready-order prediction failed: %r" % (e,)]}
        w.creation = None  # it holds the first forward's autograd graph: let it go with the graph
        rec = _predict.stage2(self.dir, self.predictions[0], order, w.comm_hook,
                              static_graph=bool(getattr(w.ddp, "static_graph", False)))
        self.predictions.append(rec)
        if "error" in rec:
            self.note("no ready-order addendum: " + rec["error"])

    def after_backward(self):
        if self.watch is not None:
            self.watch.after_backward()

    # -- the end ----------------------------------------------------------------------------------------------------
    def finish(self, why):
        if self.finished or self.watch is None:
            return
        self.finished = True
        w = self.watch
        try:
            w.finish()
            self.write_logging()
            self.write_flight_recorder()
            self.write_replica()
            self.write_status(end=_files.now_iso(), status=self.status.get("status") if why == "exception" else "finished",
                              finishedAt=why, iterations=w.iteration + 1)
            if self.rank == 0:
                _files.merge_manifest(self.dir, {
                    "harnessEnd": _files.now_iso(), "harnessFinished": True, "hookedIterations": sorted(w.hooked),
                    "hookEvery": self.options["hook_every"],
                    "profiledIterations": list(w.profiled) if w.profiled else None,
                    # Each step row carries its rank's load; the machine's size is said once.
                    "machineLoad": {"cpuCount": os.cpu_count()},
                    "instrumentation": self.instrumentation_facts()})
        except Exception as e:  # noqa: BLE001
            print("pathproof: finishing the evidence failed: %r" % (e,), file=sys.stderr, flush=True)
            traceback.print_exc()
        finally:
            # Never keep the job's DDP object (its reducer holds the process group) alive longer than the job does:
            # torch 1.13's gloo process group must not be torn down in the interpreter's last moments.
            w.ddp = w.module = None

    def write_logging(self):
        try:
            data = dict(self.watch.ddp._get_ddp_logging_data())
        except Exception as e:  # noqa: BLE001
            data = {"_error": repr(e)}
        _files.write_json(os.path.join(self.dir, "ddp-logging-rank%d.json" % self.rank), data)

    def write_flight_recorder(self):
        """NCCL's flight recorder, dumped by this rank at the job's end: every collective's sizes, element type, creation
        time and (TORCH_NCCL_ENABLE_TIMING) GPU time; the per-iteration bucket evidence when no comm hook records."""
        c10d = getattr(self.torch._C, "_distributed_c10d", None)
        dump = getattr(c10d, "_dump_nccl_trace_json", None)
        if dump is None or str(self.torch.distributed.get_backend()) != "nccl":
            return
        try:
            js = dump(includeCollectives=True, onlyActive=False)
        except Exception as e:  # noqa: BLE001 - a build without the recorder: no dump, not an error
            self.note("no flight-recorder dump: %r" % (e,))
            return
        with open(os.path.join(self.dir, "flight-recorder-rank%d.json" % self.rank), "wb") as f:
            f.write(js if isinstance(js, (bytes, bytearray)) else js.encode())

    def write_replica(self):
        """This rank's parameters, hashed: equal on every rank when DDP kept the replicas equal (the reader compares
        the ranks' files; no collective runs at exit, so a rank that died cannot hang the others here)."""
        torch = self.torch
        h = hashlib.sha256()
        first = last = None
        total, count = 0.0, 0
        with torch.no_grad():
            for _, p in self.watch.module.named_parameters():
                t = p.detach().reshape(-1).cpu().contiguous()
                h.update(memoryview(t.view(torch.uint8).numpy()))  # no copy of the bytes
                if t.numel():
                    f = t.double()
                    first = float(f[0]) if first is None else first
                    last = float(f[-1])
                    total += float(f.sum())
                    count += t.numel()
        _files.write_json(os.path.join(self.dir, "replica-rank%d.json" % self.rank),
                          {"rank": self.rank, "sha256": h.hexdigest(), "samples": [first, last,
                                                                                   total / count if count else None],
                           "gradients": self.gradient_digest()})

    def gradient_digest(self):
        """The gradients the job holds at its end, hashed, with the iteration of the backward that made them and
        whether DDP averaged them there: after an averaged backward every rank holds the same gradients (DDP's
        contract, whatever the optimizer did with them), so ranks that differ there found a synchronization fault
        that equal parameters cannot show (a job that ends before its optimizer steps). Parameters DDP ignores are
        left out; a parameter without a gradient counts as one."""
        w = self.watch
        if w.last_backward is None:
            return None
        torch = self.torch
        ignored = set(getattr(w.ddp, "parameters_to_ignore", ()) or ()) if w.ddp is not None else set()
        h = hashlib.sha256()
        held = 0
        with torch.no_grad():
            for name, p in w.module.named_parameters():
                if name in ignored:
                    continue
                g = p.grad
                if g is None or getattr(g, "is_sparse", False):
                    h.update(b"\0none" if g is None else b"\0sparse")
                    continue
                held += 1
                h.update(memoryview(g.detach().reshape(-1).cpu().contiguous().view(torch.uint8).numpy()))
        return {"sha256": h.hexdigest(), "iteration": w.last_backward[0], "averaged": bool(w.last_backward[1]),
                "held": held}


def choose_hook_every(torch, backend):
    """The recording comm hook's period when the user gave none. DDP keeps a registered hook for every iteration, and
    a Python hook costs on each one (a Python call and a separate divide per bucket, a future callback) even when it
    records nothing. On NCCL the flight recorder holds every bucket's AllReduce of every iteration (sizes, element
    type, creation time, GPU time), so the hook is left out; gloo has no flight recorder, so the hook records."""
    v = _files.vocabulary()
    c10d = getattr(torch._C, "_distributed_c10d", None)
    if backend == "nccl" and getattr(c10d, "_dump_nccl_trace_json", None) is not None:
        return v["hookEveryNccl"], "auto: nccl, the flight recorder witnesses every bucket"
    return v["hookEvery"], "auto: %s, no flight recorder" % backend


def _plain(v):
    """A DDP constructor argument as JSON can hold it: plain values as they are, anything else by its repr."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (list, tuple)) and all(x is None or isinstance(x, (bool, int, float, str)) for x in v):
        return list(v)
    return repr(v)


def _int_env(*names):
    for n in names:
        v = os.environ.get(n)
        if v not in (None, "") and v.strip().isdigit():
            return int(v)
    return None


def current():
    return _RUN


def install(torch, run_dir, mode="command", options=None):
    """Patches torch for this process (once): DDP's constructor, forward and hook registration, autograd's backward,
    the optimizers' step, the process group's destruction and the process's exit."""
    global _RUN
    if _RUN is not None:
        return _RUN
    run = Run(torch, run_dir, options or options_from_env(), mode)
    _RUN = run
    _patch_ddp(torch, run)  # without it nothing is recorded: let its failure be seen
    for patch in (_patch_backward, _patch_optimizer, _patch_exit):
        try:
            patch(torch, run)
        except Exception as e:  # noqa: BLE001 - one missing boundary costs its evidence, not the others
            run.note("%s did not apply: %r" % (patch.__name__, e))
    return run


def _patch_ddp(torch, run):
    from torch.nn.parallel import DistributedDataParallel as DDP
    init, forward = DDP.__init__, DDP.forward
    register, builtin = DDP.register_comm_hook, getattr(DDP, "_register_builtin_comm_hook", None)
    signature = inspect.signature(init)

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError:
            return init(self, *args, **kwargs)  # DDP's own error, unchanged
        given = {k: v for k, v in bound.arguments.items() if k != "self"}
        run.faults.ddp_kwargs(bound)
        init(*bound.args, **bound.kwargs)
        try:
            run.on_ddp(self, bound.arguments["module"], given, register)
        except Exception as e:  # noqa: BLE001
            print("pathproof: could not watch this DDP object: %r" % (e,), file=sys.stderr, flush=True)
            traceback.print_exc()

    @functools.wraps(forward)
    def pathproof_forward(self, *args, **kwargs):
        w = run.watch
        if w is None or w.ddp is not self:
            return forward(self, *args, **kwargs)
        w.close_creation()
        counted = w.before_forward()
        if counted and w.iteration == 0 and run.rank == 0 and run.options["predict"]:
            # torch 1.13 numbers nothing itself: number the nodes from the first forward until its backward starts,
            # so that the loss's nodes, made by the job after the forward, are numbered too (READY_ORDER.md).
            from . import ready_order
            w.creation = ready_order.CreationOrder()
            w.creation.__enter__()
        out = forward(self, *args, **kwargs)
        if counted:
            w.after_forward()
        return out

    @functools.wraps(register)
    def register_comm_hook(self, state, hook):
        w = run.watch
        name = getattr(hook, "__qualname__", repr(hook))
        if w is not None and w.ddp is self and w.wrap_user_hook(state, hook, name):
            return None
        if w is not None and w.ddp is self:
            w.comm_hook = name
        return register(self, state, hook)

    def register_builtin(self, comm_hook_type):
        w = run.watch
        if w is None or w.ddp is not self or w.hook_state is None:
            return builtin(self, comm_hook_type)
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        kind = getattr(comm_hook_type, "name", str(comm_hook_type))
        hook = {"ALLREDUCE": default_hooks.allreduce_hook, "FP16_COMPRESS": default_hooks.fp16_compress_hook}.get(kind)
        if hook is None:
            return builtin(self, comm_hook_type)
        w.wrap_user_hook(self.process_group, hook, "builtin " + kind)
        return None

    setstate = getattr(DDP, "__setstate__", None)

    def __setstate__(self, state):
        setstate(self, state)
        try:
            # copy.deepcopy(ddp) or unpickling builds a DDP object, with its own reducer, without __init__
            # (distributed.py:__setstate__@v1.13.1 calls _ddp_init_helper): it is listed like any other.
            run.other_ddp(self.module, made="DDP.__setstate__ (copy.deepcopy or unpickling)")
        except Exception as e:  # noqa: BLE001
            print("pathproof: could not list a copied DDP object: %r" % (e,), file=sys.stderr, flush=True)

    DDP.__init__ = __init__
    if setstate is not None:
        DDP.__setstate__ = __setstate__
    DDP.forward = pathproof_forward
    DDP.register_comm_hook = register_comm_hook
    if builtin is not None:
        DDP._register_builtin_comm_hook = register_builtin


def _patch_backward(torch, run):
    backward = torch.autograd.backward

    @functools.wraps(backward)
    def pathproof_backward(tensors, *args, **kwargs):
        try:
            run.before_backward(tensors)
        except Exception as e:  # noqa: BLE001
            print("pathproof: before backward: %r" % (e,), file=sys.stderr, flush=True)
        try:
            return backward(tensors, *args, **kwargs)
        finally:
            run.after_backward()

    torch.autograd.backward = pathproof_backward


def _patch_optimizer(torch, run):
    """The optimizer's step bounds the watched DDP's step: only the step of an optimizer that updates the watched
    model's parameters (a GAN steps the discriminator's optimizer first), or of any optimizer when none of those
    made so far does (an optimizer over master copies of the parameters)."""

    def pre(optimizer=None, *_):
        if run.watch is not None and run.watch.steps_with(optimizer, run.optimizers):
            run.watch.before_optimizer()

    def post(optimizer=None, *_):
        if run.watch is not None and run.watch.steps_with(optimizer, run.optimizers):
            run.watch.after_optimizer()

    import importlib
    opt = importlib.import_module("torch.optim.optimizer")  # torch 1.13's torch.optim deletes its submodule names
    hooks = hasattr(opt, "register_optimizer_step_pre_hook")  # torch >= 2.0: global hooks, no step wrapped
    if hooks:
        opt.register_optimizer_step_pre_hook(pre)
        opt.register_optimizer_step_post_hook(post)
    init = torch.optim.Optimizer.__init__

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        run.optimizers.add(self)
        if hooks:
            return
        step = self.step  # torch 1.13 has wrapped the class's step for its profiler by now

        @functools.wraps(step)
        def pathproof_step(*a, **k):
            pre(self)
            try:
                return step(*a, **k)
            finally:
                post(self)

        self.step = pathproof_step

    torch.optim.Optimizer.__init__ = __init__


def _patch_exit(torch, run):
    dist = torch.distributed
    destroy = dist.destroy_process_group

    @functools.wraps(destroy)
    def destroy_process_group(*args, **kwargs):
        run.finish("destroy_process_group")
        return destroy(*args, **kwargs)

    dist.destroy_process_group = destroy_process_group
    atexit.register(run.finish, "exit")
    hook = sys.excepthook

    def excepthook(kind, value, tb):
        try:
            run.write_status(status="exception", exception="%s: %s" % (kind.__name__, value))
            run.finish("exception")
        finally:
            hook(kind, value, tb)

    sys.excepthook = excepthook

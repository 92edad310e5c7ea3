"""One DistributedDataParallel object of the job, watched: its iterations, the steps they make, the recording comm
hook that wraps the job's own (or DDP's default allreduce), the profiler window and the faults acting on it.

An iteration is one forward with autograd on and gradient sync requested, as DDP counts them itself
(distributed.py: num_iterations, the reducer's rebuild after the first); a step runs from the first forward after the
previous step (gradient-accumulation micro-batches included) to the optimizer's step, or to the next step's start."""

import os
import sys
import time
import weakref

from . import _facts
from ._files import JsonLines


def hooked_iterations_rule(it, warmup, every, window):
    """Iterations that record their buckets: 0 (construction buckets), 1 (the first after DDP's rebuild), the
    profiler window, and every `every`-th measured one; every == 1 records all."""
    if every <= 0:
        return False
    if every == 1 or it in (0, 1):
        return True
    if window and window[0] <= it < window[1]:
        return True
    return it >= warmup and (it - warmup) % every == every - 1


class HookState:
    """The state DDP hands the recording hook: the watch, and the hook it wraps (None = DDP's default allreduce)."""

    def __init__(self, watch):
        self.watch = watch
        self.inner = None
        self.inner_state = None
        self.name = None

    def call_inner(self, bucket):
        if self.inner is None:
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
            return default_hooks.allreduce_hook(self.watch.ddp.process_group, bucket)
        return self.inner(self.inner_state, bucket)


def pathproof_recording_hook(state, bucket):
    """Records, on sampled iterations, one bucket's three time boundaries: ready (hook entry, host), future done (host;
    on NCCL the future completes at enqueue) and GPU done (an event on the stream that waits for the collective)."""
    w = state.watch
    rec = w.recording
    if rec is None:
        return state.call_inner(bucket)
    ready = time.time_ns()
    buf = bucket.buffer()
    params = bucket.parameters()
    row = {"rank": w.rank, "iteration": w.iteration, "index": bucket.index(), "isLast": bool(bucket.is_last()),
           "bytes": buf.numel() * buf.element_size(), "numel": buf.numel(),
           "dtype": str(buf.dtype).replace("torch.", ""), "paramCount": len(params),
           "params": [w.names.get(id(p), "?") for p in params], "readyNs": ready, "futureDoneNs": None,
           "gpuDoneNs": None}
    slot = [row, None]
    rec["buckets"].append(slot)
    fut = state.call_inner(bucket)

    def done(f):
        row["futureDoneNs"] = time.time_ns()
        if w.cuda:
            ev = w.torch.cuda.Event(enable_timing=True)
            ev.record()  # the callback's stream already waits for the collective's completion
            slot[1] = ev
        return f.value()

    return fut.then(done)


class Watch:
    """The job's first DDP object (the model being trained, in every framework seen): the one whose buckets are
    recorded and whose iterations make the steps. Later DDP objects are listed in the manifest only."""

    def __init__(self, run, ddp, module, rank):
        torch = run.torch
        self.run, self.torch, self.ddp, self.module, self.rank = run, torch, ddp, module, rank
        self.cuda = next((p.is_cuda for p in module.parameters()), False)
        self.names = {id(p): n for n, p in module.named_parameters()}
        self.param_ids = set(self.names)
        self.owners = weakref.WeakKeyDictionary()  # optimizer -> whether it updates the watched parameters
        self.ddp_params = None
        self.hook_file = JsonLines(os.path.join(run.dir, "hook-rank%d.jsonl" % rank))
        self.steps_file = JsonLines(os.path.join(run.dir, "steps-rank%d.jsonl" % rank))
        self.hook_state = None
        self.comm_hook = None
        self.iteration = -1
        self.recording = None
        self.step = None
        self.pending = []
        self.hooked = []
        self.prof = None
        self.profiled = None
        self.creation = None
        self.order_predicted = False
        self.first_backward_ns = None
        self.forward_synced = False
        self.last_backward = None  # (iteration, whether DDP averaged its gradients) of the latest backward
        o = run.options
        first = o["warmup"] + 2
        self.window = (first, first + o["profile_iters"]) if o["profile_iters"] > 0 else None

    # -- comm hook --------------------------------------------------------------------------------------------------
    def register_recording_hook(self, original_register):
        if self.run.options["hook_every"] <= 0:
            return
        self.hook_state = HookState(self)
        original_register(self.ddp, self.hook_state, pathproof_recording_hook)

    def wrap_user_hook(self, state, hook, name):
        """The job registers its own hook: the recording hook calls it instead of the default allreduce."""
        self.comm_hook = name
        if self.hook_state is None:
            return False
        self.hook_state.inner, self.hook_state.inner_state, self.hook_state.name = hook, state, name
        try:
            self.ddp.logger._set_comm_hook_name(name)  # DDP's logging names the job's hook, not pathproof's
        except Exception:  # noqa: BLE001 - older torch has no such setter
            pass
        return True

    def close_creation(self):
        """Ends the numbering of the first forward's nodes (at its backward, or at the next forward if none came)."""
        if self.creation is not None and self.creation.numbering:
            self.creation.__exit__(None, None, None)

    # -- whose backward, whose optimizer ----------------------------------------------------------------------------
    def reaches(self, tensors):
        """Whether a backward from `tensors` reaches the watched DDP's parameters (True when that cannot be told)."""
        try:
            from . import ready_order
            if self.ddp_params is None:
                self.ddp_params = ready_order.ddp_params(self.module)
            return ready_order.reaches(tensors, self.ddp_params)
        except Exception:  # noqa: BLE001 - as before: every backward counts
            return True

    def owns(self, optimizer):
        known = self.owners.get(optimizer)
        if known is None:
            known = any(id(p) in self.param_ids for g in optimizer.param_groups for p in g["params"])
            self.owners[optimizer] = known
        return known

    def steps_with(self, optimizer, made):
        """Whether `optimizer`'s step is the watched model's optimizer step."""
        if optimizer is None:
            return True
        try:
            return self.owns(optimizer) or not any(self.owns(o) for o in list(made))
        except Exception:  # noqa: BLE001 - an optimizer without param_groups: as before, every step counts
            return True

    # -- the step ---------------------------------------------------------------------------------------------------
    def before_forward(self):
        """Returns True when this forward is an iteration (autograd on, gradient sync requested)."""
        torch = self.torch
        counted = torch.is_grad_enabled() and bool(getattr(self.ddp, "require_backward_grad_sync", True))
        if torch.is_grad_enabled():
            self.forward_synced = counted  # whether the backward from this forward averages the gradients
        if counted and self.step is not None and self.step.get("iteration") is not None:
            self.close_step()  # the previous iteration had no optimizer step: it ends where this one starts
        if self.step is None and torch.is_grad_enabled():
            self.open_step()
        if not counted:
            return False
        self.iteration += 1
        it = self.iteration
        faults = self.run.faults
        if faults.exit_at is not None and faults.exit_at[0] == self.rank and faults.exit_at[1] == it:
            # The status file (and so the manifest) says what happened, never that a fault did it: blind by construction.
            self.run.leave(3, "exited with status 3 at iteration %d" % it)
        if self.step is not None:
            self.step["iteration"] = it
        if hooked_iterations_rule(it, self.run.options["warmup"], self.run.options["hook_every"], self.window):
            self.hooked.append(it)
            self.recording = {"iteration": it, "buckets": []}
            if self.cuda and self.step is not None:
                torch.cuda.synchronize()  # host clock and GPU clock meet here: GPU times map onto the host's
                self.step["anchorNs"] = time.time_ns()
                self.step["anchor"].record()
        else:
            self.recording = None
        if self.window and it == self.window[0] and self.prof is None:
            self.start_profiler()
        return True

    def after_forward(self):
        delay = self.run.faults.compute_delay_ms
        if delay:
            extra_compute(self.torch, self.cuda, delay)

    def before_backward(self):
        self.last_backward = (self.iteration, self.forward_synced)
        if self.step is not None and self.step.get("iteration") is not None:
            # A phase's wait is read inside its clock readings (start: clock then wait; end: wait then clock), so a
            # preemption between the two readings never counts as wait outside the phase's wall time.
            self.step["wait_bwd0"] = None if self.cuda else _facts.run_queue_ns()
            self.step["bwd0"] = time.time_ns()
            if self.first_backward_ns is None:
                self.first_backward_ns = self.step["bwd0"]

    def after_backward(self):
        if self.step is not None and "bwd0" in self.step:
            self.step["bwd1"] = time.time_ns()

    def before_optimizer(self):
        if self.step is None or self.step.get("iteration") is None:
            return
        if "opt0" not in self.step:
            self.step["opt0"] = time.time_ns()
            self.step["wait_opt0"] = None if self.cuda else _facts.run_queue_ns()
            if self.run.faults.corrupt_rank == self.rank:
                with self.torch.no_grad():
                    for p in self.module.parameters():
                        if p.grad is not None:
                            p.grad.add_(1e-3)  # after the AllReduce: this rank's replica drifts from the others

    def after_optimizer(self):
        if self.step is None or "opt0" not in self.step:
            return
        self.step["wait_opt1"] = None if self.cuda else _facts.run_queue_ns()
        self.step["opt1"] = time.time_ns()
        self.close_step()

    def open_step(self):
        torch = self.torch
        s = {"iteration": None, "fwd0": time.time_ns(), "t0": time.perf_counter(), "load0": _facts.load_sample(),
             "anchorNs": None, "anchor": None, "end": None}
        if self.cuda:
            s["anchor"] = torch.cuda.Event(enable_timing=True)
            s["anchor"].record()
            s["anchorNs"] = s["fwd0"]
        self.step = s

    def close_step(self):
        """The step ends (optimizer done, or the next step starts): its row waits for its GPU events, if any."""
        s, self.step = self.step, None
        if s is None or s.get("iteration") is None:
            return
        it = s["iteration"]
        if self.recording is not None and self.recording["iteration"] == it and not self.recording["buckets"] \
                and it in self.hooked:
            # DDP counted the forward, but no backward reached its buckets before the next one (a GAN's sample from
            # fixed noise with autograd on; another model's backward may have run): the hook file owes nothing here.
            self.hooked.remove(it)
            self.recording = None
        row = {"rank": self.rank, "iteration": it, "phase": "warmup" if it < self.run.options["warmup"] else "measured",
               "ms": None, "clock": "cuda-event" if self.cuda else "perf_counter",
               "profiled": self.prof is not None,
               "hooked": self.recording is not None and self.recording["iteration"] == it, "hostStartNs": s["fwd0"]}
        if all(k in s for k in ("bwd0", "bwd1", "opt0", "opt1")):
            row.update({"hostPhases": "issue" if self.cuda else "work", "hostForwardStartNs": s["fwd0"],
                        "hostBackwardStartNs": s["bwd0"], "hostBackwardEndNs": s["bwd1"],
                        "hostOptimizerStartNs": s["opt0"], "hostOptimizerEndNs": s["opt1"]})
            # The main thread's wait for a core inside the forward and optimizer phases: on CPU ranks what the machine
            # took from the job's own work there, so diagnose can tell that work from the machine's load.
            waits = (_facts.phase_wait_ms(s["load0"][1], s.get("wait_bwd0")),
                     _facts.phase_wait_ms(s.get("wait_opt0"), s.get("wait_opt1")))
            if None not in waits:
                row.update({"hostForwardRunQueueMs": waits[0], "hostOptimizerRunQueueMs": waits[1]})
        row.update(_facts.load_delta(s["load0"], _facts.load_sample()))
        rec = self.recording if self.recording is not None and self.recording["iteration"] == it else None
        end = None
        if self.cuda:
            end = self.torch.cuda.Event(enable_timing=True)
            end.record()
            if rec is not None:
                self.torch.cuda.synchronize()
        else:
            row["ms"] = (time.perf_counter() - s["t0"]) * 1e3
        if rec is not None:
            for r, ev in rec["buckets"]:
                if ev is not None and s["anchor"] is not None:
                    r["gpuDoneNs"] = s["anchorNs"] + int(round(s["anchor"].elapsed_time(ev) * 1e6))
                self.hook_file.write(r)
            self.recording = None
        self.pending.append((row, s["anchor"], end))
        self.flush_steps(wait=rec is not None or not self.cuda)
        if self.prof is not None and self.profiled is None and it >= self.window[1] - 1:
            self.stop_profiler(it)

    def flush_steps(self, wait):
        """Writes finished steps in order; a CUDA step's time is read from its events once the GPU passed them."""
        while self.pending:
            row, e0, e1 = self.pending[0]
            if e1 is not None:
                if wait:
                    e1.synchronize()
                elif not e1.query():
                    return
                row["ms"] = e0.elapsed_time(e1)
            self.pending.pop(0)
            self.steps_file.write(row)

    # -- profiler ---------------------------------------------------------------------------------------------------
    def start_profiler(self):
        torch = self.torch
        acts = [torch.profiler.ProfilerActivity.CPU]
        if self.cuda:
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        try:
            self.prof = torch.profiler.profile(activities=acts)
            self.prof.start()
            self.profile_from = self.iteration
        except Exception as e:  # noqa: BLE001 - a profiler that cannot start costs the trace, not the job
            self.prof = None
            self.run.note("torch.profiler did not start: %r" % (e,))

    def stop_profiler(self, last):
        """Ends the window; the trace is written at the job's end (export_chrome_trace takes a few hundred ms, which
        the job's own training loop should not pay for)."""
        prof, self.prof = self.prof, None
        try:
            prof.stop()
            self.profiled = (self.profile_from, last + 1)
            self.stopped = prof
        except Exception as e:  # noqa: BLE001
            self.run.note("torch.profiler did not stop: %r" % (e,))

    def export_trace(self):
        prof, self.stopped = getattr(self, "stopped", None), None
        if prof is None:
            return
        try:
            prof.export_chrome_trace(os.path.join(self.run.dir, "trace-rank%d.json" % self.rank))
        except Exception as e:  # noqa: BLE001
            self.run.note("torch.profiler did not write its trace: %r" % (e,))

    # -- the end ----------------------------------------------------------------------------------------------------
    def finish(self):
        self.close_creation()
        if self.step is not None:
            self.close_step()
        if self.prof is not None:
            self.stop_profiler(self.iteration)
        self.flush_steps(wait=True)
        self.export_trace()
        self.hook_file.close()
        self.steps_file.close()


def extra_compute(torch, cuda, ms):
    """compute_delay_ms: extra work per iteration. On a GPU, real kernels until the time has passed; on CPU a sleep,
    because there the host is the device and a busy loop would only take cores from the other ranks."""
    if not cuda:
        time.sleep(ms / 1000.0)
        return
    busy_kernels(torch, "cuda", ms)


def busy_kernels(torch, device, ms):
    """Matrix products on `device` until `ms` have passed. The operand is a constant, never drawn from torch's random
    generator: the job's own draws (dropout masks, sampled data) must be the same with and without the fault, or the
    variant's parameters differ from the baseline's and a timing fault reads as a correctness one."""
    a = torch.full((1024, 1024), 1.0 / 1024, device=device)
    sync = torch.cuda.synchronize if torch.device(device).type == "cuda" else (lambda: None)
    end = time.perf_counter() + ms / 1000.0
    while time.perf_counter() < end:
        a = torch.tanh(a @ a)
        sync()


def warn(msg):
    print("pathproof: " + msg, file=sys.stderr, flush=True)

"""pathproof run harness: one rank of an instrumented DDP job whose every layer leaves evidence.

Started by `pathproof run` (one process per rank, or under torchrun / srun); reads RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT from the environment. Public torch API only; checked against torch 1.13
(Debian, CPU, gloo, no Kineto) and torch 2.11 (CUDA 13, NCCL 2.28.9).

Files written into --run-dir (rank r):
  hook-rank{r}.jsonl        one line per comm-hook call: rank x iteration x bucket, three time boundaries (ns); only
                            on the sampled iterations (--hook-every): the others run DDP's built-in C++ allreduce
  steps-rank{r}.jsonl       one line per training step (warm-up and measured), with its phase boundaries on the
                            host clock (step_phases: the work on CPU, only its issue on CUDA)
  plain-steps-rank{r}.jsonl with --overhead: the same steps on a DDP model without hook or profiler, interleaved
                            step by step with the instrumented ones
  ddp-logging-rank{r}.json  ddp._get_ddp_logging_data() after training
  trace-rank{r}.json        torch.profiler chrome trace of a few measured iterations
  flight-recorder-rank{r}.json  NCCL flight recorder JSON dump (torch builds that have it)
  nccl-rank{r}.log          NCCL_DEBUG_FILE
  nccl-topo.xml, nccl-graph.xml  NCCL topology / graph dumps (NCCL writes them on rank 0)
  peer-access-rank{r}.json  on GPUs, by each node's local rank 0: peer access + 256 MiB copy bandwidth per GPU pair
  replicas.json             rank 0: SHA-256 of all parameters per rank + first/last/mean samples, all-gathered
  overhead.json             rank 0, with --overhead: median instrumented vs plain step time
  manifest.json             rank 0: versions, GPUs, topology, hosts, NCCL_*/TORCH_* variables, workload, knobs
  nccl-profiler-rank{r}-*.jsonl  pathproof's NCCL profiler plugin, when NCCL_PROFILER_PLUGIN names it (written by NCCL)
"""

import argparse
import datetime
import hashlib
import json
import os
import socket
import subprocess
import sys
import threading
import time

from pathproof_facts import versions
from pathproof_instrumentation import (PROFILER_STATE, hooked_iterations, nccl_profiler_switch, overhead_summary,
                                       write_steps)

SCHEMA = "pathproof.run.manifest/1"


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="harness.py")
    ap.add_argument("--run-dir", required=True)
    ap.add_argument("--workload", required=True, help="workload JSON (written by the launcher into the run dir)")
    ap.add_argument("--backend", default="auto", choices=["nccl", "gloo", "auto"])
    ap.add_argument("--iters", type=int, default=48)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--profile-iters", type=int, default=3)
    ap.add_argument("--knob", action="append", default=[], help="harness fault knob K=V")
    ap.add_argument("--overhead", action="store_true", help="also time a plain model without hook and profiler, alternating")
    ap.add_argument("--pg-timeout", type=float, default=300.0, help="process-group timeout, seconds")
    ap.add_argument("--hook-every", type=int, default=HOOK_EVERY,
                    help="record buckets with the Python comm hook on every K-th measured iteration (1 = all)")
    return ap.parse_args(argv)


def _vocabulary():
    """vocabulary.json, copied beside this file by the launcher: what the Java side and the ranks agree on."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "vocabulary.json")) as f:
        return json.load(f)


VOCABULARY = _vocabulary()

# Measured iterations between two that run the recording comm hook (iterations 0 and 1 and the profiler window always
# do). The rest run DDP's own C++ allreduce: see docs/PERFORMANCE.md ("Instrumentation overhead") for the choice.
HOOK_EVERY = VOCABULARY["hookEvery"]

KNOBS = set(VOCABULARY["knobs"])


def parse_knobs(items):
    knobs = {}
    for item in items:
        if "=" not in item:
            raise SystemExit("harness: knob '%s' is not K=V" % item)
        k, v = item.split("=", 1)
        if k not in KNOBS:
            raise SystemExit("harness: unknown knob '%s' (known: %s)" % (k, ", ".join(sorted(KNOBS))))
        if k == "bucket_cap_mb":
            knobs[k] = float(v)
        elif k == "find_unused_parameters":
            knobs[k] = v.lower() in ("1", "true", "yes")
        elif k in ("compute_delay_ms",):
            knobs[k] = float(v)
        elif k == "corrupt_grad_rank":
            knobs[k] = int(v)
        elif k == "exit_rank":
            r, _, i = v.partition("@")
            knobs[k] = [int(r), int(i or 0)]
        elif k == "node_nic_mbps":
            pass  # the launcher's: it slowed an emulated node's NICs before any rank started
    return knobs


def env_int(name, default):
    v = os.environ.get(name)
    return int(v) if v not in (None, "") else default


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=True, default=str)
        f.write("\n")
    os.replace(tmp, path)


def run_quiet(argv):
    """Output of a diagnostic tool (nvidia-smi), or None when it is absent or fails; never fatal."""
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
        return p.stdout.decode("utf-8", "replace") if p.returncode == 0 else None
    except Exception:  # noqa: BLE001 - a missing tool is a fact, not an error
        return None


_KEEP_ALIVE = []


def main(argv):
    args = parse_args(argv)
    knobs = parse_knobs(args.knob)
    run_dir = os.path.abspath(args.run_dir)
    # torchrun / pathproof set RANK...; under srun only Slurm's variables exist: derive torch's from them.
    rank = env_int("RANK", env_int("SLURM_PROCID", 0))
    local_rank = env_int("LOCAL_RANK", env_int("SLURM_LOCALID", rank))
    world = env_int("WORLD_SIZE", env_int("SLURM_NTASKS", 1))
    local_world = env_int("LOCAL_WORLD_SIZE", env_int("SLURM_NTASKS_PER_NODE", world))
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(local_rank), WORLD_SIZE=str(world))
    os.environ.setdefault("MASTER_ADDR", os.environ.get("SLURM_LAUNCH_NODE_IPADDR", "127.0.0.1"))
    os.environ.setdefault("MASTER_PORT", "29500")
    os.makedirs(run_dir, exist_ok=True)

    # NCCL reads these at its first communicator init, i.e. after this point; per-rank log files need the rank,
    # which only this process knows when a launcher (torchrun, srun) gives every rank the same environment.
    for name, value in VOCABULARY["rankEnv"].items():  # NCCL's log and the flight recorder, unless the user set them
        os.environ.setdefault(name, value)
    os.environ["NCCL_DEBUG_FILE"] = os.path.join(run_dir, "nccl-rank%d.log" % rank)
    os.environ.setdefault("NCCL_TOPO_DUMP_FILE", os.path.join(run_dir, "nccl-topo.xml"))

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks

    with open(args.workload) as f:
        workload = json.load(f)

    backend = args.backend
    if backend == "auto":
        backend = "nccl" if torch.cuda.is_available() and dist.is_nccl_available() else "gloo"
    cuda = backend == "nccl"
    if cuda:
        if not torch.cuda.is_available():
            print("harness: backend nccl but no CUDA GPU is visible", file=sys.stderr)
            return 7
        # PATHPROOF_CUDA_DEVICE (run --emulate): every rank on that one real GPU, each reporting an emulated busId.
        device = torch.device("cuda", env_int("PATHPROOF_CUDA_DEVICE", local_rank % torch.cuda.device_count()))
        torch.cuda.set_device(device)
    else:
        device = torch.device("cpu")

    started = now_iso()
    manifest_path = os.path.join(run_dir, "manifest.json")
    manifest = {}
    if rank == 0 and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            manifest = json.load(f)  # the launcher's part (command line, inject, seal); the harness adds its facts
    manifest.update({"schema": SCHEMA, "harnessStart": started, "harnessFinished": False, "backend": backend,
                "worldSize": world, "localWorldSize": local_world, "argv": [sys.executable] + blind_argv(sys.argv),
                "workload": workload})
    if rank == 0:
        manifest.update(host_facts(torch, cuda))
        for name in sealed_fault_env(run_dir):  # blind by construction: the injected variables are in the sealed file
            manifest.get("env", {}).pop(name, None)
        write_json(manifest_path, manifest)

    if cuda and local_rank == 0 and "PATHPROOF_CUDA_DEVICE" not in os.environ:  # emulated: no real peers to copy to
        peer_access(torch, run_dir, rank, local_world)

    dist.init_process_group(backend, timeout=datetime.timedelta(seconds=args.pg_timeout))
    hosts = [None] * world
    dist.all_gather_object(hosts, {"rank": rank, "localRank": local_rank, "host": socket.gethostname(),
                                   "pid": os.getpid(), "device": str(device)})

    params = build_params(torch, workload, device)
    bucket_cap = knobs.get("bucket_cap_mb", workload.get("bucketCapMb"))
    ddp_kwargs = {"find_unused_parameters": bool(knobs.get("find_unused_parameters",
                                                          workload.get("findUnusedParameters", False))),
                  "gradient_as_bucket_view": bool(workload.get("gradientAsBucketView", False))}
    if workload.get("staticGraph"):
        ddp_kwargs["static_graph"] = True
    if bucket_cap is not None:
        ddp_kwargs["bucket_cap_mb"] = bucket_cap  # only when given: torch 2.x changes the first-bucket rule on it
    if cuda:
        ddp_kwargs["device_ids"] = [device.index]

    total_iters = args.warmup + args.iters
    plain = None
    if args.overhead:
        # Same shapes, same data, no hook, no profiler: the reference for the instrumentation's cost, built first so
        # that both models see the same allocator history as before.
        plain = DDP(make_module(torch, params_copy(torch, params)), **ddp_kwargs)

    module = make_module(torch, params)
    model = DDP(module, **ddp_kwargs)
    _KEEP_ALIVE.append(model)  # never freed before os._exit: see the note at the end of main()
    names = {id(p): model.module.original_names[n] for n, p in model.module.named_parameters()}
    recorder = HookRecorder(torch, rank, names, cuda, os.path.join(run_dir, "hook-rank%d.jsonl" % rank))
    model.register_comm_hook(recorder, pathproof_recording_allreduce_hook)
    p_first = args.warmup + min(2, max(args.iters - 1, 0))
    p_last = min(p_first + args.profile_iters, total_iters)
    window = (p_first, p_last) if args.profile_iters > 0 and p_last > p_first else None
    hooked = hooked_iterations(args.warmup, args.iters, args.hook_every, window)
    fast = None
    if len(hooked) < total_iters:
        fast = DDP(module, **ddp_kwargs)  # the same parameters, DDP's own C++ allreduce: see hooked_iterations
        _KEEP_ALIVE.append(fast)
    plain_steps = None
    if plain is not None:
        plain_arm = TrainingArm(torch, plain, rank, args.warmup, cuda, device, knobs, recorder=None,
                                profiler_window=None, run_dir=run_dir, file_stem="plain-steps", profiler=False)
        inst_arm = TrainingArm(torch, model, rank, args.warmup, cuda, device, knobs, recorder=recorder,
                               profiler_window=window, run_dir=run_dir, file_stem="steps", fast=fast, hooked=hooked,
                               profiler=True)
        plain_steps, steps = train_interleaved(plain_arm, inst_arm, total_iters)
        _KEEP_ALIVE.append(plain)
    else:
        nccl_profiler_switch(True)
        steps = train(torch, dist, model, rank, args.warmup, args.iters, cuda, device, knobs,
                      recorder=recorder, profiler_window=window, run_dir=run_dir, file_stem="steps",
                      fast=fast, hooked=hooked)
    recorder.close()

    logging = {}
    try:
        logging = {k: v for k, v in model._get_ddp_logging_data().items()}
    except Exception as e:  # noqa: BLE001
        logging = {"_error": repr(e)}
    write_json(os.path.join(run_dir, "ddp-logging-rank%d.json" % rank), logging)

    loads = [None] * world
    dist.all_gather_object(loads, machine_load_summary(steps, rank))

    digest = replica_digest(torch, model.module)
    digests = [None] * world
    dist.all_gather_object(digests, digest)
    if rank == 0:
        shas = {d["sha256"] for d in digests}
        write_json(os.path.join(run_dir, "replicas.json"), {"equal": len(shas) == 1, "digests": digests})
        if plain_steps is not None:
            write_json(os.path.join(run_dir, "overhead.json"),
                       overhead_summary(steps, plain_steps, window, args.hook_every, PROFILER_STATE))

    if cuda:
        torch.cuda.synchronize()
    flight_recorder(torch, run_dir, rank)
    dist.barrier()
    # On torch 1.13 + gloo one rank of four was seen spinning forever inside destroy_process_group after the barrier
    # (twice, on a loaded 2-core VM). Every file is written by now: give the teardown a bounded time, then leave.
    closer = threading.Thread(target=dist.destroy_process_group, name="pathproof-destroy-pg", daemon=True)
    closer.start()
    closer.join(15.0)
    if closer.is_alive():
        print("harness: destroy_process_group did not return in 15 s; exiting without it", file=sys.stderr, flush=True)

    if rank == 0:
        manifest.update({"harnessEnd": now_iso(), "harnessFinished": True, "hosts": hosts,
                         "parameterOrder": [model.module.original_names[n] for n, _ in model.module.named_parameters()],
                         "profiledIterations": list(window) if window else None,
                         "hookedIterations": sorted(hooked), "hookEvery": args.hook_every,
                         "ncclProfilerPlugin": PROFILER_STATE})
        manifest["machineLoad"] = {"cpuCount": os.cpu_count(), "ranks": loads}
        write_json(manifest_path, manifest)
    # The DDP model (its Reducer holds the process group) stays alive until os._exit below. Freeing it when main()
    # returns runs ~ProcessGroupGloo with the GIL held, which joins a gloo worker thread that is itself waiting for the
    # GIL to free a tensor: a deadlock seen on torch 1.13 (gdb: Reducer::~Reducer -> ~ProcessGroupGloo ->
    # std::thread::join, worker in TensorImpl::destroy_pyobj_if_needed -> PyEval_AcquireThread).
    return 0


def make_module(torch, params):
    return _param_module_class(torch)(params)


_PM = None  # the module class, defined on first use so that reading this file needs no torch


def _param_module_class(torch):
    global _PM
    if _PM is None:
        class Params(torch.nn.Module):
            """The workload's parameters under their dotted names; forward computes the loss over every parameter."""

            def __init__(self, params):
                # All parameters live on this one module, in the workload's order, so that named_parameters() (the
                # order DDP buckets by) is exactly that order; dotted names would otherwise need submodules, whose
                # parameters named_parameters() lists after the root's. '.' is not allowed in a parameter's own name,
                # so it is stored as '__' and the original names are kept for every record.
                super().__init__()
                self.original_names = {}
                for name, p in params:
                    safe = name.replace(".", "__")
                    while safe in self.original_names:
                        safe += "_"
                    self.original_names[safe] = name
                    self.register_parameter(safe, p)

            def forward(self, scales):
                # Every parameter that takes a gradient enters the scalar loss: s * sum(p) + 1e-4 * p.p, so its
                # gradient (s + 2e-4 p) depends on the rank's data and on the parameter itself. Written with sum and
                # dot, it makes fewer parameter-sized temporaries than (p * s).sum() (about 30 % less time per step
                # on CPU, where each fresh large tensor costs page faults).
                loss = None
                for (_, p), s in zip(self.named_parameters(), scales):
                    if not p.requires_grad:
                        continue
                    q = p.float().reshape(-1)
                    term = q.sum() * s + 1e-4 * torch.dot(q, q)
                    loss = term if loss is None else loss + term
                return loss

        _PM = Params
    return _PM


DTYPES = {"float32": "float32", "float": "float32", "fp32": "float32", "float16": "float16", "half": "float16",
          "fp16": "float16", "bfloat16": "bfloat16", "bf16": "bfloat16", "float64": "float64", "double": "float64",
          "int32": "int32", "int64": "int64", "int8": "int8", "uint8": "uint8"}


def torch_dtype(torch, name):
    key = str(name).lower().replace("torch.", "")
    if key not in DTYPES:
        raise SystemExit("harness: workload dtype '%s' is not supported" % name)
    return getattr(torch, DTYPES[key])


def build_params(torch, workload, device):
    torch.manual_seed(0)  # same initial values on every rank (DDP broadcasts rank 0's anyway)
    out = []
    for i, spec in enumerate(workload["parameters"]):
        dt = torch_dtype(torch, spec.get("dtype", "float32"))
        shape = [int(d) for d in spec["shape"]]
        grad = bool(spec.get("requiresGrad", True))
        if dt.is_floating_point:
            t = torch.randn(shape, device=device, dtype=torch.float32).mul_(0.02).to(dt)
        else:
            t = torch.zeros(shape, device=device, dtype=dt)
            grad = False
        out.append((spec.get("name") or ("p%d" % i), torch.nn.Parameter(t, requires_grad=grad)))
    return out


def params_copy(torch, params):
    return [(n, torch.nn.Parameter(p.detach().clone(), requires_grad=p.requires_grad)) for n, p in params]


class HookRecorder:
    """State of the comm hook: the current iteration, and one JSON line per bucket per iteration."""

    def __init__(self, torch, rank, names, cuda, path):
        self.torch = torch
        self.rank = rank
        self.names = names
        self.cuda = cuda
        self.iteration = -1
        self.pending = []
        self.out = open(path, "w")

    def begin(self, iteration, anchor_ns, anchor_event):
        self.iteration = iteration
        self.anchor_ns = anchor_ns
        self.anchor_event = anchor_event

    def end(self):
        """After the step's synchronize: GPU done events are final; map them onto this host's clock."""
        for rec, ev in self.pending:
            if ev is not None:
                rec["gpuDoneNs"] = self.anchor_ns + int(round(self.anchor_event.elapsed_time(ev) * 1e6))
            self.out.write(json.dumps(rec, sort_keys=True) + "\n")
        self.out.flush()
        self.pending = []

    def close(self):
        self.out.close()


def pathproof_recording_allreduce_hook(state, bucket):
    """Wraps default_hooks.allreduce_hook; records three different boundaries of one bucket's allreduce:
    ready (hook entry, host), future done (host; on NCCL the future completes at enqueue, not at GPU completion),
    and GPU done (a CUDA event recorded on a stream that waits for the allreduce; null on CPU)."""
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    ready = time.time_ns()
    buf = bucket.buffer()
    params = bucket.parameters()
    rec = {"rank": state.rank, "iteration": state.iteration, "index": bucket.index(), "isLast": bool(bucket.is_last()),
           "bytes": buf.numel() * buf.element_size(), "numel": buf.numel(), "dtype": str(buf.dtype).replace("torch.", ""),
           "paramCount": len(params), "params": [state.names.get(id(p), "?") for p in params],
           "readyNs": ready, "futureDoneNs": None, "gpuDoneNs": None}
    slot = [rec, None]
    state.pending.append(slot)
    fut = default_hooks.allreduce_hook(None, bucket)

    def done(f):
        rec["futureDoneNs"] = time.time_ns()
        if state.cuda:
            ev = state.torch.cuda.Event(enable_timing=True)
            ev.record()  # the callback's current stream already waits for the allreduce's completion event
            slot[1] = ev
        return f.value()

    return fut.then(done)


def train(torch, dist, model, rank, warmup, iters, cuda, device, knobs, recorder, profiler_window, run_dir, file_stem,
          fast=None, hooked=None):
    """Runs warmup + iters steps of one arm (see TrainingArm) and returns its step rows."""
    arm = TrainingArm(torch, model, rank, warmup, cuda, device, knobs, recorder, profiler_window, run_dir, file_stem,
                      fast=fast, hooked=hooked)
    for it in range(warmup + iters):
        arm.step(it)
    return arm.finish()


def train_interleaved(plain, instrumented, total):
    """run --overhead: plain step i, then instrumented step i, in one loop, so that both arms see the same machine (a
    busy host's or a GPU's clock drifts over seconds; phase after phase measured that drift, not the instrumentation:
    docs/PERFORMANCE.md, "Instrumentation overhead"). The plain arm pauses inside the profiler window, so that the
    trace holds the instrumented arm's kernels only, and makes its missing steps up after the loop. NCCL's profiler
    plugin records the instrumented arm's collectives only (switched per step)."""
    window = instrumented.profiler_window
    done = 0
    for it in range(total):
        if done < total and not (window and window[0] <= it < window[1]):
            plain.step(done)
            done += 1
        instrumented.step(it)
    while done < total:
        plain.step(done)
        done += 1
    return plain.finish(), instrumented.finish()


class TrainingArm:
    """One DDP model's training steps. `model` carries the recording hook when `recorder` is given; on iterations
    outside `hooked` the hook-less wrapper `fast` of the same module runs instead (see hooked_iterations). Only hooked
    iterations synchronize the GPU (their hook events are mapped onto the host clock); the others record two CUDA
    events and are read afterwards. `profiler` (True/False/None) switches pathproof's NCCL profiler plugin before
    each step when two arms alternate."""

    def __init__(self, torch, model, rank, warmup, cuda, device, knobs, recorder, profiler_window, run_dir, file_stem,
                 fast=None, hooked=None, profiler=None):
        self.torch, self.model, self.rank, self.warmup = torch, model, rank, warmup
        self.cuda, self.device, self.knobs = cuda, device, knobs
        self.recorder, self.profiler_window, self.fast, self.hooked = recorder, profiler_window, fast, hooked
        self.profiler = profiler
        self.run_dir = run_dir
        self.opt = torch.optim.SGD(model.parameters(), lr=1e-3)
        self.n_params = len(list(model.module.parameters()))
        self.exit_at = knobs.get("exit_rank")
        self.corrupt = knobs.get("corrupt_grad_rank")
        self.delay_ms = knobs.get("compute_delay_ms", 0.0)
        self.prof = None
        self.out = open(os.path.join(run_dir, "%s-rank%d.jsonl" % (file_stem, rank)), "w")
        self.steps = []
        self.pending = []
        if fast is not None:
            # The hook-less wrapper's own first two iterations (its construction buckets, then DDP's rebuild) are
            # slow; run them here, untimed and without an optimizer step (the parameters do not change), so that
            # they fall in no step time whatever --warmup is.
            for _ in range(2):
                self.opt.zero_grad(set_to_none=True)
                fast([1.0] * self.n_params).backward()
            self.opt.zero_grad(set_to_none=True)

    def step(self, it):
        torch, cuda, rank, pending, out, steps = self.torch, self.cuda, self.rank, self.pending, self.out, self.steps
        window = self.profiler_window
        if self.exit_at is not None and self.exit_at[0] == rank and self.exit_at[1] == it:
            write_steps(pending, out, steps, wait=True)
            print("harness: rank %d exits at iteration %d (knob exit_rank)" % (rank, it), file=sys.stderr, flush=True)
            out.flush()
            os._exit(3)
        if self.profiler is not None:
            nccl_profiler_switch(self.profiler)
        if window and it == window[0]:
            self.prof = start_profiler(torch, cuda)
        gen = torch.Generator().manual_seed(1000003 * (rank + 1) + it)  # deterministic data per rank and iteration
        scales = torch.randn(self.n_params, generator=gen).tolist()
        rec = self.recorder if self.recorder is not None and (self.hooked is None or it in self.hooked) else None
        ddp = self.model if self.fast is None or rec is not None else self.fast
        if cuda:
            if rec is not None:
                write_steps(pending, out, steps, wait=True)
                torch.cuda.synchronize()
            anchor_ns = time.time_ns()
            e0 = torch.cuda.Event(enable_timing=True)
            e1 = torch.cuda.Event(enable_timing=True)
            e0.record()
        else:
            anchor_ns, e0, e1 = time.time_ns(), None, None
        t0 = time.perf_counter()
        load0 = machine_load_sample()
        if rec is not None:
            rec.begin(it, anchor_ns, e0)
        self.opt.zero_grad(set_to_none=True)
        # Phase boundaries on the host clock (the hook records' clock), five time_ns calls and no synchronize. See
        # step_phases: on CPU they bound the work itself, on CUDA only when the host issued it.
        fwd0 = time.time_ns()
        w_fwd0 = None if cuda else run_queue_ns()
        loss = ddp(scales)
        if self.delay_ms:
            extra_compute(torch, cuda, self.device, self.delay_ms)
        # a phase's wait is read inside its clock readings (start: clock, wait; end: wait, clock): a preemption
        # between the two never counts as wait outside the phase's wall time
        w_bwd0 = None if cuda else run_queue_ns()
        bwd0 = time.time_ns()
        loss.backward()
        bwd1 = time.time_ns()
        if self.corrupt is not None and self.corrupt == rank:
            with torch.no_grad():
                for p in self.model.parameters():
                    if p.grad is not None:
                        p.grad.add_(1e-3)  # after the allreduce: this rank's replica drifts from the others
        opt0 = time.time_ns()
        w_opt0 = None if cuda else run_queue_ns()
        self.opt.step()
        w_opt1 = None if cuda else run_queue_ns()
        opt1 = time.time_ns()
        phase = "warmup" if it < self.warmup else "measured"
        profiled = bool(window and window[0] <= it < window[1])
        row = {"rank": rank, "iteration": it, "phase": phase, "ms": None,
               "clock": "cuda-event" if cuda else "perf_counter", "profiled": profiled, "hooked": rec is not None,
               "hostStartNs": anchor_ns}
        row.update(step_phases(cuda, fwd0, bwd0, bwd1, opt0, opt1))
        if None not in (w_fwd0, w_bwd0, w_opt0, w_opt1):
            # the main thread's wait for a core inside forward and optimizer: what the machine took from that work
            row.update({"hostForwardRunQueueMs": (w_bwd0 - w_fwd0) / 1e6, "hostOptimizerRunQueueMs": (w_opt1 - w_opt0) / 1e6})
        row.update(machine_load_delta(load0, machine_load_sample()))
        if cuda:
            e1.record()
            pending.append((row, e0, e1))
            if rec is not None:
                torch.cuda.synchronize()
                rec.end()
            write_steps(pending, out, steps, wait=rec is not None)
        else:
            row["ms"] = (time.perf_counter() - t0) * 1e3
            if rec is not None:
                rec.end()
            pending.append((row, None, None))
            write_steps(pending, out, steps, wait=True)
        if self.prof is not None and it == window[1] - 1:
            stop_profiler(self.prof, os.path.join(self.run_dir, "trace-rank%d.json" % rank))
            self.prof = None

    def finish(self):
        write_steps(self.pending, self.out, self.steps, wait=True)
        self.out.close()
        return self.steps


def step_phases(cuda, forward_start, backward_start, backward_end, optimizer_start, optimizer_end):
    """The step row's phase boundaries, time.time_ns() of this host (the clock of hostStartNs and the hook records).

    hostForwardStartNs: the forward call (after zero_grad; it includes the compute_delay_ms knob's extra work);
    hostBackwardStartNs / hostBackwardEndNs: loss.backward() called / returned; hostOptimizerStartNs /
    hostOptimizerEndNs: opt.step() called / returned. On CPU (gloo) the work runs in these calls, so the boundaries
    bound the work itself, and backward's end includes DDP's wait for the last bucket's allreduce. On CUDA the calls
    only enqueue kernels and return: the boundaries say when the host issued each phase, not when the GPU ran it
    (hostPhases says which), so they are never GPU time."""
    return {"hostPhases": "issue" if cuda else "work",
            "hostForwardStartNs": forward_start, "hostBackwardStartNs": backward_start,
            "hostBackwardEndNs": backward_end, "hostOptimizerStartNs": optimizer_start,
            "hostOptimizerEndNs": optimizer_end}


def blind_argv(argv):
    """argv without --knob K=V: the manifest names no fault (it is in fault.sealed.json, which diagnose never reads)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a == "--knob":
            skip = True
        elif not a.startswith("--knob="):
            out.append(a)
    return out


def sealed_fault_env(run_dir):
    """The variable names the launcher injected (fault.sealed.json, schema pathproof.fault/1), to keep out of the manifest."""
    try:
        with open(os.path.join(run_dir, "fault.sealed.json")) as f:
            return list(json.load(f).get("env", {}))
    except (OSError, ValueError):
        return []


_SCHEDSTAT = {}


def run_queue_ns():
    """This thread's time runnable but not running so far (/proc/self/task/TID/schedstat, field 2), or None; the
    file stays open per thread and is read with pread (an open/read/close of /proc cost about 165 us, a pread 10 us)."""
    tid = threading.get_native_id()
    try:
        fd = _SCHEDSTAT.get(tid)
        if fd is None:
            fd = _SCHEDSTAT[tid] = os.open("/proc/self/task/%d/schedstat" % tid, os.O_RDONLY)
        return int(os.pread(fd, 128, 0).split()[1])
    except (OSError, ValueError, IndexError):
        return None


def machine_load_sample():
    """Process CPU time, this (main) thread's run-queue wait (run_queue_ns), the 1-min load."""
    return time.process_time(), run_queue_ns(), os.getloadavg()[0] if hasattr(os, "getloadavg") else None


def machine_load_delta(a, b):
    """Load beside the wall time of one step: CPU time, time runnable but not running (the machine busy), load."""
    out = {"cpuMs": (b[0] - a[0]) * 1e3, "loadavg1": b[2]}
    if a[1] is not None and b[1] is not None:
        out["runQueueMs"] = (b[1] - a[1]) / 1e6
    return out


def machine_load_summary(steps, rank):
    """The measured steps' machine load, gathered into the manifest (diagnose reads the manifest, not step files)."""
    m = [s for s in steps if s["phase"] == "measured"]
    return {"rank": rank, "iterations": [s["iteration"] for s in m], "wallMs": [s["ms"] for s in m],
            "cpuMs": [s.get("cpuMs") for s in m], "runQueueMs": [s.get("runQueueMs") for s in m],
            "loadavg1": [s.get("loadavg1") for s in m]}


def extra_compute(torch, cuda, device, ms):
    """compute_delay_ms: extra work per step. On a GPU, real kernels until the time has passed; on CPU a sleep,
    because there the host is the device and a busy loop would only take cores from the other ranks."""
    if not cuda:
        time.sleep(ms / 1000.0)
        return
    busy_kernels(torch, device, ms)


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


def start_profiler(torch, cuda):
    acts = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    prof = torch.profiler.profile(activities=acts)
    prof.start()
    return prof


def stop_profiler(prof, path):
    prof.stop()
    prof.export_chrome_trace(path)  # torch without Kineto (Debian 1.13) writes the legacy bare-array format


def replica_digest(torch, module):
    h = hashlib.sha256()
    first = last = None
    total = 0.0
    count = 0
    for _, p in module.named_parameters():
        t = p.detach().reshape(-1).cpu().contiguous()
        h.update(t.view(torch.uint8).numpy().tobytes())
        if t.numel():
            f = t.double()
            first = float(f[0]) if first is None else first
            last = float(f[-1])
            total += float(f.sum())
            count += t.numel()
    rank = int(os.environ.get("RANK", "0"))
    return {"rank": rank, "sha256": h.hexdigest(), "samples": [first, last, total / count if count else None]}


def flight_recorder(torch, run_dir, rank):
    fn = getattr(getattr(torch._C, "_distributed_c10d", None), "_dump_nccl_trace_json", None)
    if fn is None:
        return
    try:
        js = fn(includeCollectives=True, onlyActive=False)
    except Exception as e:  # noqa: BLE001 - gloo runs or builds without NCCL: no recorder, not an error
        print("harness: no flight-recorder dump: %r" % (e,), file=sys.stderr)
        return
    with open(os.path.join(run_dir, "flight-recorder-rank%d.json" % rank), "wb") as f:
        f.write(js if isinstance(js, (bytes, bytearray)) else js.encode())


def peer_access(torch, run_dir, rank, local_world):
    """Before training, on this node's GPUs: can GPU i access GPU j (every ordered pair), and one-direction
    256 MiB copy bandwidth i -> j (the seed's transport evidence). GPU k serves global rank rank + k."""
    n = min(torch.cuda.device_count(), local_world)
    pairs = []
    size = 256 << 20
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            can = bool(torch.cuda.can_device_access_peer(i, j))
            gbs = None
            try:
                src = torch.empty(size, dtype=torch.uint8, device="cuda:%d" % i)
                dst = torch.empty(size, dtype=torch.uint8, device="cuda:%d" % j)
                dst.copy_(src)
                torch.cuda.synchronize(i)
                torch.cuda.synchronize(j)
                reps = 5
                with torch.cuda.device(i):
                    s = torch.cuda.Event(enable_timing=True)
                    e = torch.cuda.Event(enable_timing=True)
                    s.record()
                    for _ in range(reps):
                        dst.copy_(src, non_blocking=True)
                    e.record()
                    e.synchronize()
                gbs = size * reps / (s.elapsed_time(e) / 1e3) / 1e9
                del src, dst
            except Exception as ex:  # noqa: BLE001
                print("harness: copy %d->%d failed: %r" % (i, j, ex), file=sys.stderr)
            pairs.append({"fromRank": rank + i, "toRank": rank + j, "fromDevice": i, "toDevice": j,
                          "canAccess": can, "copyGBs": gbs, "bytes": size})
    torch.cuda.empty_cache()
    write_json(os.path.join(run_dir, "peer-access-rank%d.json" % rank),
               {"devices": n, "pairs": pairs, "method": "tensor.copy_ of 256 MiB, 5 timed after 1 warm-up, CUDA events"})


def host_facts(torch, cuda):
    facts = {"versions": versions(torch),
             "hostname": socket.gethostname(),
             "env": {k: v for k, v in sorted(os.environ.items()) if k.startswith(("NCCL_", "TORCH_", "DDP_"))},
             "gpus": [], "nvidiaSmiTopoM": None}
    if cuda:
        smi = run_quiet(["nvidia-smi", "--query-gpu=index,name,pci.bus_id,driver_version", "--format=csv,noheader"])
        bus = {}
        if smi:
            for line in smi.strip().splitlines():
                cols = [c.strip() for c in line.split(",")]
                if len(cols) >= 4:
                    bus[cols[0]] = cols[2]
                    facts["versions"]["driver"] = cols[3]
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            facts["gpus"].append({"index": i, "name": p.name, "computeCapability": "%d.%d" % (p.major, p.minor),
                                  "memoryBytes": p.total_memory, "multiProcessors": p.multi_processor_count,
                                  "busId": bus.get(str(i))})
        facts["nvidiaSmiTopoM"] = run_quiet(["nvidia-smi", "topo", "-m"])
    return facts


if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
    except SystemExit as e:
        if isinstance(e.code, str):
            print(e.code, file=sys.stderr)
        code = e.code if isinstance(e.code, int) else 2
    except BaseException:  # noqa: BLE001 - report, then leave without the teardown (below)
        import traceback
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # Every file is closed by now. Skip interpreter teardown: after a bounded destroy_process_group (see main) threads
    # of the process group may still run, and they must not keep the rank alive.
    os._exit(code)

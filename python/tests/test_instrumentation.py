"""The instrumentation in real processes: a 2-rank gloo DDP job started by torch's own launcher with pathproof's
sitecustomize first on PYTHONPATH (as `pathproof run -- COMMAND` starts it), and the in-code way. No Java here: the
in-run prediction is switched off (PATHPROOF_PREDICT=0); the Java tests cover it."""

import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap

import pytest

from pathproof_torch import _boot, _files, _run, _watch

PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
torch = pytest.importorskip("torch")

JOB = textwrap.dedent("""
    import os, sys, torch, torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    ddp = DDP(model, bucket_cap_mb=1)
    if os.environ.get("JOB_HOOK") == "fp16":
        from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
        ddp.register_comm_hook(dist.group.WORLD, default_hooks.fp16_compress_hook)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1)
    g = torch.Generator().manual_seed(dist.get_rank())
    for step in range(int(os.environ.get("JOB_STEPS", "6"))):
        opt.zero_grad()
        ddp(torch.randn(4, 8, generator=g)).pow(2).mean().backward()
        opt.step()
    dist.barrier()  # as training scripts do: torch 1.13's gloo can abort a rank whose peer tore down first
    dist.destroy_process_group()
    print("job done", dist.is_initialized() if hasattr(dist, "is_initialized") else "")
""")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(tmp_path, knobs=None, env=None, ranks=2, job=JOB):
    """The job under torch.distributed.run, instrumented through the environment only; returns (process, run dir)."""
    boot = tmp_path / "boot"
    boot.mkdir()
    shutil.copytree(os.path.join(PACKAGE_ROOT, "pathproof_torch"), boot / "pathproof_torch",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(os.path.join(PACKAGE_ROOT, "pathproof_torch", "_sitecustomize.py"), boot / "sitecustomize.py")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "fault.sealed.json").write_text(json.dumps({"schema": "pathproof.fault/1", "env": {},
                                                           "knobs": knobs or {}}))
    (tmp_path / "job.py").write_text(job)
    e = dict(os.environ)
    e.update({"PYTHONPATH": str(boot), "PATHPROOF_OUT": str(run_dir), "PATHPROOF_PREDICT": "0",
              "PATHPROOF_WARMUP": "2", "PATHPROOF_HOOK_EVERY": "2", "PATHPROOF_PROFILE_ITERS": "0",
              "OMP_NUM_THREADS": "1"})
    e.update(env or {})
    argv = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(ranks), "--master_addr",
            "127.0.0.1", "--master_port", str(free_port()), str(tmp_path / "job.py")]
    p = subprocess.run(argv, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    return p, run_dir


def lines(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.strip()]


def test_a_plain_torchrun_job_leaves_every_ranks_evidence(tmp_path):
    p, d = launch(tmp_path)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    for r in (0, 1):
        status = json.loads((d / ("rank%d.json" % r)).read_text())
        assert status["status"] == "finished" and status["finishedAt"] == "destroy_process_group", status
        steps = lines(d / ("steps-rank%d.jsonl" % r))
        assert [s["iteration"] for s in steps] == list(range(6))
        assert [s["phase"] for s in steps] == ["warmup"] * 2 + ["measured"] * 4
        assert all(s["ms"] > 0 and s["hostBackwardStartNs"] <= s["hostBackwardEndNs"] <= s["hostOptimizerStartNs"]
                   for s in steps)
        hooks = lines(d / ("hook-rank%d.jsonl" % r))
        # iterations 0 and 1 always, then every 2nd measured one: 3 and 5
        assert sorted({h["iteration"] for h in hooks}) == [0, 1, 3, 5]
        assert all(h["readyNs"] <= h["futureDoneNs"] for h in hooks)
        logging = json.loads((d / ("ddp-logging-rank%d.json" % r)).read_text())
        assert logging["world_size"] == 2 and logging["bucket_cap_bytes"] == 1 << 20
        assert "prev_iteration_grad_ready_order_indices" in logging
    digests = {json.loads((d / ("replica-rank%d.json" % r)).read_text())["sha256"] for r in (0, 1)}
    assert len(digests) == 1
    m = json.loads((d / "manifest.json").read_text())
    assert m["harnessFinished"] is True and m["worldSize"] == 2 and m["backend"] == "gloo"
    assert m["workload"]["bucketCapMb"] == 1.0 and len(m["workload"]["parameters"]) == 4
    assert m["hookedIterations"] == [0, 1, 3, 5]
    assert m["instrumentation"]["mode"] == "command"


NO_SYNC_UNUSED = textwrap.dedent("""
    import contextlib, torch, torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    dist.init_process_group("gloo")
    torch.manual_seed(0)

    class TwoBranches(torch.nn.Module):  # the first branch on one micro-batch, the second on the next
        def __init__(self):
            super().__init__()
            self.a, self.b, self.flip = torch.nn.Linear(1, 1), torch.nn.Linear(1, 1), False
        def forward(self, x):
            self.flip = not self.flip
            return self.a(x) if self.flip else self.b(x)

    ddp = DDP(TwoBranches(), find_unused_parameters=True)
    g = torch.Generator().manual_seed(dist.get_rank())
    for micro in range(2):
        with (ddp.no_sync() if micro == 0 else contextlib.nullcontext()):
            (ddp(torch.rand(1, generator=g)) - torch.rand(1, generator=g)).pow(2).sum().backward()
    dist.barrier()
    dist.destroy_process_group()
""")


def test_gradients_left_unaveraged_by_ddp_are_seen_though_the_parameters_are_equal(tmp_path):
    # pytorch issue 69031's shape: the no_sync micro-batch's gradient of the branch the synced one did not use is
    # never averaged; no optimizer step follows, so the parameters stay equal.
    p, d = launch(tmp_path, job=NO_SYNC_UNUSED)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    files = [json.loads((d / ("replica-rank%d.json" % r)).read_text()) for r in (0, 1)]
    assert files[0]["sha256"] == files[1]["sha256"]
    grads = [f["gradients"] for f in files]
    assert [(x["iteration"], x["averaged"], x["held"]) for x in grads] == [(0, True, 4)] * 2
    assert grads[0]["sha256"] != grads[1]["sha256"]


TWO_MODELS_ON_NCCL_RULES = textwrap.dedent("""
    import torch, torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    from pathproof_torch import _run
    # the backend's own choice on NCCL (the flight recorder witnesses every bucket: no hook), on gloo's processes
    _run.choose_hook_every = lambda torch, backend: (0, "auto: nccl (as chosen there)")
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    G = DDP(torch.nn.Linear(4, 8))
    D = DDP(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(list(G.parameters()) + list(D.parameters()), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        D(G(torch.randn(2, 4))).sum().backward()
        opt.step()
    dist.barrier()
    dist.destroy_process_group()
""")


def test_a_second_ddp_object_brings_the_recording_hook_back(tmp_path):
    # Both models' AllReduces share one process group: the flight recorder cannot tell the watched model's apart.
    p, d = launch(tmp_path, env={"PATHPROOF_HOOK_EVERY": "auto"}, job=TWO_MODELS_ON_NCCL_RULES)
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    m = json.loads((d / "manifest.json").read_text())
    assert m["hookEvery"] == _files.vocabulary()["hookEvery"]
    assert m["instrumentation"]["hookEveryWhy"].startswith("auto: another DDP object (Linear)")
    hooks = lines(d / "hook-rank0.jsonl")
    assert {h["iteration"] for h in hooks} == {0, 1}
    assert {h["bytes"] for h in hooks} == {(4 * 8 + 8) * 4}  # the watched model's one bucket, not the other's


def test_the_jobs_own_comm_hook_is_wrapped_not_replaced(tmp_path):
    p, d = launch(tmp_path, env={"JOB_HOOK": "fp16"})
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    m = json.loads((d / "manifest.json").read_text())
    assert m["instrumentation"]["commHook"] == "fp16_compress_hook"
    logging = json.loads((d / "ddp-logging-rank0.json").read_text())
    assert logging["comm_hook"] == "fp16_compress_hook"  # DDP's own record names the job's hook
    assert lines(d / "hook-rank0.jsonl"), "the recording hook ran around the job's hook"


def test_faults_reach_the_job_through_the_sealed_file_only(tmp_path):
    p, d = launch(tmp_path, knobs={"corrupt_grad_rank": "1", "bucket_cap_mb": "2"})
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    digests = {json.loads((d / ("replica-rank%d.json" % r)).read_text())["sha256"] for r in (0, 1)}
    assert len(digests) == 2, "rank 1's corrupted gradient made its replica drift"
    logging = json.loads((d / "ddp-logging-rank0.json").read_text())
    assert logging["bucket_cap_bytes"] == 2 << 20
    m = json.loads((d / "manifest.json").read_text())
    assert m["workload"]["bucketCapMb"] == 1.0, "the workload is the job's own, not the fault's"
    assert "corrupt" not in json.dumps(m)


def test_a_rank_that_dies_says_so_and_keeps_its_files(tmp_path):
    p, d = launch(tmp_path, knobs={"exit_rank": "1@3"})
    assert p.returncode != 0
    status = json.loads((d / "rank1.json").read_text())
    assert status["status"] == "exited" and status["exitCode"] == 3
    assert [s["iteration"] for s in lines(d / "steps-rank1.jsonl")] == [0, 1, 2]


def test_instrument_in_code_writes_the_same_files(tmp_path):
    job = "import pathproof_torch, os\npathproof_torch.instrument(out=os.environ['OUT'], warmup=1, hook_every=1,"\
          " profile_iters=0, predict=False)\n" + JOB
    run_dir = tmp_path / "in-code"
    e = dict(os.environ, PYTHONPATH=PACKAGE_ROOT, OUT=str(run_dir), MASTER_ADDR="127.0.0.1",
             MASTER_PORT=str(free_port()), WORLD_SIZE="2", OMP_NUM_THREADS="1", JOB_STEPS="3")
    e.pop("PATHPROOF_OUT", None)
    (tmp_path / "job.py").write_text(job)
    procs = [subprocess.Popen([sys.executable, str(tmp_path / "job.py")], env=dict(e, RANK=str(r), LOCAL_RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for r in (0, 1)]
    outs = [pr.communicate(timeout=240) for pr in procs]
    assert all(pr.returncode == 0 for pr in procs), [o[1].decode()[-1500:] for o in outs]
    assert sorted({h["iteration"] for h in lines(run_dir / "hook-rank1.jsonl")}) == [0, 1, 2]
    m = json.loads((run_dir / "manifest.json").read_text())
    assert m["instrumentation"]["mode"] == "in-code"
    assert (run_dir / "nccl-rank0.log").exists() is False  # gloo: NCCL never ran, its log file never opened


def test_the_sealed_fault_file_with_an_unknown_knob_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown knob"):
        _run.Faults({"knobs": {"gpu_on_fire": "1"}})
    f = _run.Faults({"knobs": {"exit_rank": "2@7", "compute_delay_ms": "40"}})
    assert f.exit_at == (2, 7) and f.compute_delay_ms == 40.0 and f.corrupt_rank is None


def test_the_recorded_iterations():
    rule = [i for i in range(12) if _watch.hooked_iterations_rule(i, warmup=2, every=4, window=(4, 6))]
    assert rule == [0, 1, 4, 5, 9]
    assert [i for i in range(5) if _watch.hooked_iterations_rule(i, 2, 0, None)] == []
    assert [i for i in range(5) if _watch.hooked_iterations_rule(i, 2, 1, None)] == [0, 1, 2, 3, 4]


def test_the_hook_period_is_chosen_by_the_backend_unless_given(monkeypatch):
    import torch
    v = _files.vocabulary()
    monkeypatch.setenv("PATHPROOF_HOOK_EVERY", "auto")
    assert _run.options_from_env()["hook_every"] is None
    monkeypatch.setenv("PATHPROOF_HOOK_EVERY", "3")
    assert _run.options_from_env()["hook_every"] == 3
    # gloo has no flight recorder: the hook records
    assert _run.choose_hook_every(torch, "gloo")[0] == v["hookEvery"]
    # NCCL's flight recorder witnesses every bucket where the build has it; without it the hook records
    c10d = getattr(torch._C, "_distributed_c10d", None)
    has_recorder = getattr(c10d, "_dump_nccl_trace_json", None) is not None
    assert _run.choose_hook_every(torch, "nccl")[0] == (v["hookEveryNccl"] if has_recorder else v["hookEvery"])


def test_the_vocabulary_is_the_one_the_java_side_reads():
    v = _files.vocabulary()
    assert v["schema"] == "pathproof.vocabulary/1"
    assert set(v["knobs"]) == {"bucket_cap_mb", "find_unused_parameters", "compute_delay_ms", "corrupt_grad_rank",
                               "exit_rank", "node_nic_mbps"}


def test_torchruns_parser_is_repaired_only_where_it_is_broken():
    from torch.distributed.elastic.multiprocessing import api
    broken = api.Std.from_str("0") is None
    _boot.repair_std_from_str(api)
    assert api.Std.from_str("0") == api.Std(0)
    assert api.Std.from_str("0:1,1:2") == {0: api.Std(1), 1: api.Std(2)}
    assert (os.environ.get("PATHPROOF_REPAIRED_STD_FROM_STR") == "1") == broken


def test_the_shadowed_sitecustomize_still_runs(tmp_path):
    boot = tmp_path / "boot"
    boot.mkdir()
    shutil.copy(os.path.join(PACKAGE_ROOT, "pathproof_torch", "_sitecustomize.py"), boot / "sitecustomize.py")
    other = tmp_path / "other"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import os\nopen(os.environ['MARK'], 'w').write('ran')\n")
    mark = tmp_path / "mark"
    e = dict(os.environ, PYTHONPATH=os.pathsep.join([str(boot), str(other), PACKAGE_ROOT]), MARK=str(mark))
    e.pop("PATHPROOF_OUT", None)
    p = subprocess.run([sys.executable, "-c", "import sitecustomize, os; print(os.path.dirname(sitecustomize.__file__))"],
                       env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert p.returncode == 0, p.stderr.decode()
    assert p.stdout.decode().strip() == str(boot)
    assert mark.read_text() == "ran"


def test_the_ready_order_is_predicted_from_the_first_forward_and_its_loss(tmp_path):
    """The in-run addendum needs the whole order; on torch 1.13 that needs the numbering held from the first forward
    until its backward (the loss's nodes included). Without pathproof itself (no Java here) the stage is skipped, so
    the order is checked in the file rank 0 writes and against DDP's own record of it."""
    p, d = launch(tmp_path, env={"PATHPROOF_PREDICT": "1", "PATHPROOF_CLI": ""})
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    order = json.loads((d / "ready-order.json").read_text())
    assert order["complete"] is True, order["notes"]
    logged = json.loads((d / "ddp-logging-rank0.json").read_text())["prev_iteration_grad_ready_order_indices"]
    assert order["order"] == [int(x) for x in logged.split(",")]


def test_pip_install_carries_every_file_the_package_reads():
    """`pip install ./python` installs what pyproject names: the .py files and the package data listed there."""
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        pytest.skip("tomllib needs Python 3.11")
    with open(os.path.join(PACKAGE_ROOT, "pyproject.toml"), "rb") as f:
        data = tomllib.load(f)["tool"]["setuptools"]["package-data"]["pathproof_torch"]
    shipped = {n for n in os.listdir(os.path.join(PACKAGE_ROOT, "pathproof_torch")) if not n.endswith((".py", ".pyc"))
               and not n.startswith("__")}
    assert shipped <= set(data), shipped - set(data)

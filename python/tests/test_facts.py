"""The machine-load facts each step row carries."""

import os
import time

from pathproof_torch import _facts


def test_a_sleep_is_the_jobs_own_time_not_a_wait_for_a_core():
    # The forward and optimizer phases' run-queue wait is taken out of the job's own time (diagnose's compute on CPU
    # ranks): a sleep must stay in it, so it may not read as a wait for a core.
    w0 = _facts.run_queue_ns()
    time.sleep(0.05)
    w1 = _facts.run_queue_ns()
    if w0 is None:  # a kernel without schedstat: no wait recorded, and none made up
        assert _facts.phase_wait_ms(w0, w1) is None
        return
    assert 0 <= _facts.phase_wait_ms(w0, w1) < 50


def test_the_wait_is_the_difference_of_two_readings_in_ms():
    assert _facts.phase_wait_ms(1_000_000, 3_500_000) == 2.5
    assert _facts.phase_wait_ms(None, 3_500_000) is None
    assert _facts.phase_wait_ms(1_000_000, None) is None


def _nccl_like_library(tmp_path, code, name="libnccl.so.2"):
    """A shared library named as NCCL's, whose ncclGetVersion is NCCL's own body (src/init.cc: *version =
    NCCL_VERSION_CODE; return ncclSuccess) with the code given."""
    import shutil
    import subprocess

    import pytest

    if shutil.which("gcc") is None:
        pytest.skip("no gcc to build a library")
    d = tmp_path / str(code)
    d.mkdir()
    c = d / "v.c"
    c.write_text("int ncclGetVersion(int *v) { *v = %d; return 0; }\n" % code)
    lib = d / name
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libnccl.so.2", "-o", str(lib), str(c)], check=True)
    return lib


def _loaded_version_in_a_process_that_loaded(lib, module, preload=None):
    """What `module`.loaded_nccl_version() says in a fresh process that mapped `lib` locally (as libtorch_cuda's
    loader does; `preload` LD_PRELOADed), and before it did."""
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.dirname(here), os.path.join(os.path.dirname(os.path.dirname(here)),
                                                 "src", "main", "resources", "io", "pathproof", "run")]
    code = ("import sys, ctypes; sys.path[:0] = %r; import %s as m; before = m.loaded_nccl_version(); "
            "ctypes.CDLL(%r); print(before, m.loaded_nccl_version())" % (paths, module, str(lib)))
    env = dict(os.environ)
    if preload:
        env["LD_PRELOAD"] = str(preload)
    return subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE, env=env,
                          text=True).stdout.split()


def test_the_nccl_version_is_the_loaded_librarys_not_torchs_build(tmp_path):
    # torch.cuda.nccl.version() is a compile-time constant (torch/csrc/cuda/nccl.cpp): a run that loads another
    # libnccl.so.2 must say that library's version, read from its own ncclGetVersion.
    lib = _nccl_like_library(tmp_path, 23007)
    assert _loaded_version_in_a_process_that_loaded(lib, "pathproof_torch._facts") == ["None", "2.30.7"]


def test_codes_before_2_9_have_the_old_layout(tmp_path):
    lib = _nccl_like_library(tmp_path, 2804)  # NCCL_VERSION(2,8,4) = 2*1000 + 8*100 + 4
    assert _loaded_version_in_a_process_that_loaded(lib, "pathproof_torch._facts") == ["None", "2.8.4"]
    assert _facts.nccl_version_text(22105) == "2.21.5"
    assert _facts.nccl_version_text(None) is None


def test_a_preloaded_nccl_is_the_one_torchs_calls_bind_to(tmp_path):
    # The emulator's NCCL is LD_PRELOADed while the wheel's libnccl.so.2 is mapped too, as a dependency of
    # libtorch_cuda (5 Dec 2026 on the H200: the log said 2.30.7, the first reading said 2.28.9). /proc/self/maps lists
    # by address, so the reading asks the dynamic linker's global scope, where the preload comes first.
    preloaded = _nccl_like_library(tmp_path, 23007)
    wheels = _nccl_like_library(tmp_path, 22809)
    assert _loaded_version_in_a_process_that_loaded(
        wheels, "pathproof_torch._facts", preload=preloaded) == ["2.30.7", "2.30.7"]


def test_without_a_preload_it_is_the_libnccl_libtorch_cuda_links(tmp_path):
    # Two libnccl mapped locally (the wheel's, through libtorch_cuda.so, and another one a plugin opened): the one
    # torch's calls reach is libtorch_cuda's dependency, as dlsym on its handle finds it.
    import subprocess
    import sys

    wheels = _nccl_like_library(tmp_path, 22703)
    other = _nccl_like_library(tmp_path, 23007)
    t = tmp_path / "torch"
    t.mkdir()
    (t / "t.c").write_text("int ncclGetVersion(int *v);\nint torch_nccl(int *v) { return ncclGetVersion(v); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(t / "libtorch_cuda.so"), str(t / "t.c"),
                    "-L", str(wheels.parent), "-l:libnccl.so.2", "-Wl,-rpath," + str(wheels.parent)], check=True)
    here = os.path.dirname(os.path.abspath(__file__))
    code = ("import sys, ctypes; sys.path[:0] = %r; from pathproof_torch import _facts as m; ctypes.CDLL(%r); "
            "ctypes.CDLL(%r); print(m.loaded_nccl_version())"
            % ([os.path.dirname(here)], str(t / "libtorch_cuda.so"), str(other)))
    out = subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE, text=True).stdout.split()
    assert out == ["2.27.3"]

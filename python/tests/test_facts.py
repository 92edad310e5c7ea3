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


def _nccl_like_library(tmp_path, code):
    """A shared library named as NCCL's, whose ncclGetVersion is NCCL's own body (src/init.cc: *version =
    NCCL_VERSION_CODE; return ncclSuccess) with the code given."""
    import shutil
    import subprocess

    import pytest

    if shutil.which("gcc") is None:
        pytest.skip("no gcc to build a library")
    c = tmp_path / "v.c"
    c.write_text("int ncclGetVersion(int *v) { *v = %d; return 0; }\n" % code)
    lib = tmp_path / "libnccl.so.2"
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(lib), str(c)], check=True)
    return lib


def _loaded_version_in_a_process_that_loaded(lib, module):
    """What `module`.loaded_nccl_version() says in a fresh process that mapped `lib` (as libtorch_cuda's loader
    does), and before it did."""
    import subprocess
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    paths = [os.path.dirname(here), os.path.join(os.path.dirname(os.path.dirname(here)),
                                                 "src", "main", "resources", "io", "pathproof", "run")]
    code = ("import sys, ctypes; sys.path[:0] = %r; import %s as m; before = m.loaded_nccl_version(); "
            "ctypes.CDLL(%r); print(before, m.loaded_nccl_version())" % (paths, module, str(lib)))
    return subprocess.run([sys.executable, "-c", code], check=True, stdout=subprocess.PIPE,
                          text=True).stdout.split()


def test_the_nccl_version_is_the_loaded_librarys_not_torchs_build(tmp_path):
    # torch.cuda.nccl.version() is a compile-time constant (torch/csrc/cuda/nccl.cpp): a run that loads another
    # libnccl.so.2 must say that library's version, read from its own ncclGetVersion.
    lib = _nccl_like_library(tmp_path, 23007)
    for module in ("pathproof_torch._facts", "pathproof_instrumentation"):
        assert _loaded_version_in_a_process_that_loaded(lib, module) == ["None", "2.30.7"], module


def test_codes_before_2_9_have_the_old_layout(tmp_path):
    lib = _nccl_like_library(tmp_path, 2804)  # NCCL_VERSION(2,8,4) = 2*1000 + 8*100 + 4
    assert _loaded_version_in_a_process_that_loaded(lib, "pathproof_torch._facts") == ["None", "2.8.4"]
    assert _facts.nccl_version_text(22105) == "2.21.5"
    assert _facts.nccl_version_text(None) is None

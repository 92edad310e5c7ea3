"""The faults pathproof lays into a user's job change only what they name."""

import time

import pytest

from pathproof_torch import _watch

torch = pytest.importorskip("torch")


def test_compute_delay_draws_nothing_from_the_jobs_random_generator():
    # On a GPU the delay is real kernels; had their operand come from torch's generator, every later dropout mask
    # of the job would change and the variant's parameters would differ from the baseline's (a compute fault
    # diagnosed as a correctness one). The same kernels on the CPU show it without a GPU.
    torch.manual_seed(7)
    undisturbed = torch.rand(4)
    torch.manual_seed(7)
    started = time.perf_counter()
    _watch.busy_kernels(torch, "cpu", 20)
    assert time.perf_counter() - started >= 0.020
    assert torch.equal(torch.rand(4), undisturbed)

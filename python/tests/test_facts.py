"""The machine-load facts each step row carries."""

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

"""The `late_first_worth` extension: a phase's late tasks get their copies ahead of waiting originals only
when the copies are expected to bring the phase's end forward by at least w x the slot-seconds they hold
(policies/late.py `phase_gain`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyscheduler.core.clock import ManualClock
from pyscheduler.estimate.pareto import fit_pareto
from pyscheduler.policies import get_policy
from pyscheduler.policies.base import Snapshot
from pyscheduler.policies.late import phase_gain

from .helpers import cluster, job
from .test_late_progress import _attempts, _running_job


@pytest.mark.parametrize(
    ("left", "theta", "sigma", "startup"),
    [(17.0, 10.0, 10.0, 0.0), (45.0, 20.0, 6.0, 0.0), (60.0, 20.0, 60.0, 3.0), (14.0, 10.0, 3.0, 2.0)],
)
def test_a_task_alone_in_its_phase_gains_its_time_left_less_the_value_models_expectation(
    left: float, theta: float, sigma: float, startup: float
) -> None:
    """No other task running: the phase ends at min(L, startup + X), so the gain is L - G(L) and the copy
    holds G(L) = E[min(L, startup + X)], drawn from the same fit (`_monte_carlo`: the phase's end)."""
    held = _monte_carlo([left], 0.0, theta, sigma, startup)
    gain, got_held = phase_gain(np.array([left]), 0.0, theta, sigma, startup)
    assert got_held == pytest.approx(held, rel=5e-3)
    assert gain == pytest.approx(left - held, rel=2e-2)


def _monte_carlo(left: list[float], rest: float, theta: float, sigma: float, startup: float) -> float:
    """E[phase end] with one fresh copy per late task, from 200,000 draws per task."""
    x_m, alpha = fit_pareto(theta, sigma)
    rng = np.random.default_rng(7)
    ends = [np.minimum(v, startup + x_m * rng.random(200_000) ** (-1.0 / alpha)) for v in left]
    return float(np.maximum(rest, np.max(ends, axis=0)).mean())


@pytest.mark.parametrize(
    ("left", "rest", "theta", "sigma", "startup"),
    [
        ([60.0], 55.0, 20.0, 20.0, 1.0),  # its sibling ends 5 s sooner: at most 5 s to gain
        ([40.0] * 10, 20.0, 20.0, 6.0, 0.0),  # ten similar late tasks: the slowest of ten fresh copies
        (list(np.linspace(30.0, 200.0, 10)), 20.0, 20.0, 40.0, 0.0),  # a heavy tail: a long way to gain
    ],
)
def test_the_gain_is_how_much_sooner_the_phase_ends(
    left: list[float], rest: float, theta: float, sigma: float, startup: float
) -> None:
    gain, _ = phase_gain(np.array(left), rest, theta, sigma, startup)
    assert gain == pytest.approx(
        max(left) - _monte_carlo(left, rest, theta, sigma, startup), rel=0.02, abs=0.05
    )


def test_ten_similar_late_tasks_gain_little_for_what_they_hold_and_a_heavy_tail_gains_much() -> None:
    gain, held = phase_gain(np.full(10, 40.0), 20.0, 20.0, 6.0, 0.0)
    assert gain < 0.1 * held  # about 10 s sooner for about 200 slot-seconds
    gain, held = phase_gain(np.linspace(30.0, 200.0, 10), 20.0, 20.0, 40.0, 0.0)
    assert gain > 0.8 * held


def test_no_estimate_goes_first_and_a_sibling_that_never_ends_leaves_nothing_to_gain() -> None:
    assert phase_gain(np.array([math.inf, 10.0]), 0.0, 10.0, 10.0, 0.0)[0] == math.inf
    assert phase_gain(np.array([math.nan]), 0.0, 10.0, 10.0, 0.0)[0] == math.inf
    assert phase_gain(np.array([15.0]), 0.0, math.nan, 10.0, 0.0)[0] == math.inf
    assert phase_gain(np.array([15.0]), math.inf, 10.0, 10.0, 0.0)[0] == 0.0
    gain, held = phase_gain(np.array([15.0]), 0.0, 10.0, 0.0, 0.0)  # no spread: a copy takes theta
    assert (gain, held) == pytest.approx((5.0, 10.0), rel=0.02)


def _placements(ends: list[float], **options: object) -> list[tuple[str, int, bool]]:
    clock = ManualClock()
    small = _running_job(2)  # declared theta 10 s, sigma 10 s
    big = job("big", 0.0, ("m", 400, (1, 1), 100.0, 10.0, ()))
    atts = _attempts(small, ends, clock)
    clock.set(12.0)
    pol = get_policy("dollymp-ext", clone_rule="none", late_first=True, **options)
    d = pol.decide(Snapshot(12.0, cluster((4, 4), free=[(2, 2)]), [small, big], atts))
    return sorted((p.job_id, p.task_index, p.is_clone) for p in d.placements)


def test_a_barely_late_task_waits_for_idle_room_and_a_straggler_still_goes_first() -> None:
    """Room for two tasks, a big job's originals waiting. Task 1 ends at 29 s: 17 s left against a fresh
    copy's 15 s (its sibling's projection), so it is late; its sibling has 3 s left, and a fresh copy
    would hold its slot about 9.1 s to end the phase about 7.9 s sooner, so with w = 1 the originals keep
    the room. A task with 488 s left goes first."""
    assert _placements([15.0, 29.0]) == [("big", 0, False), ("j", 1, True)]
    assert _placements([15.0, 29.0], late_first_worth=1.0) == [("big", 0, False), ("big", 1, False)]
    assert _placements([15.0, 500.0], late_first_worth=1.0) == [("big", 0, False), ("j", 1, True)]


def test_bad_late_first_worth_names_the_option() -> None:
    for val in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="late_first_worth"):
            get_policy("dollymp-ext", clone_rule="none", late_first_worth=val)
    with pytest.raises(ValueError, match="late_first_worth"):
        get_policy("dollymp-ext", clone_rule="none", late_first=False, late_first_worth=1.0)

"""The ordering scenario's checks (pyscheduler/sim/ordering.py) on hand-made runs: each can fail."""

from __future__ import annotations

from typing import Any

import numpy as np

from pyscheduler.sim import ordering
from pyscheduler.sim.metrics import RunMetrics
from pyscheduler.sim.runner import Comparison

SIZES = np.array([1, 5, 40, 600])  # two jobs of 1-10 tasks, one of 11-50, one of > 500


def _run(pol: str, flowtimes: list[float]) -> RunMetrics:
    f = np.array(flowtimes, dtype=float)
    return RunMetrics(pol, f, SIZES, np.zeros(4), f, 1.0, 0.0, 0, 0, 4, 0, 0.1, 10, 0.9, 0.8)


def _comparison(load: float, per_policy: dict[str, list[float]]) -> Comparison:
    settings: dict[str, Any] = {"jobs": 4, "nodes": 2, "straggler": "empirical"}
    results = {p: _run(p, f) for p, f in per_policy.items()}
    return Comparison(results, None, load, settings)  # type: ignore[arg-type]


def _explained(scale: float) -> dict[str, list[float]]:
    """DollyMP2 loses to Tetris on its small jobs; SVF matches Tetris; SRPT is worse on small jobs."""
    return {
        "tetris": [10, 10, 50, 500],
        "svf": [10, 11, 50, 500],
        "srpt": [60 * scale, 60 * scale, 50, 400],
        "dollymp0": [40 * scale, 30 * scale, 50, 480],
        "dollymp2": [40 * scale, 30 * scale, 52, 480],
        ordering.VOLUME: [11, 10, 52, 500],
    }


def test_small_gap_share_counts_jobs_of_1_to_10_tasks() -> None:
    c = _comparison(1.0, _explained(1.0))
    # excess over Tetris: small jobs 30 + 20 = 50, the 40-task job 2, the 600-task job -20: total 32
    assert abs(ordering.small_gap_share(c) - 50 / 32) < 1e-9
    even = _comparison(1.0, {**_explained(1.0), "dollymp2": [10, 10, 50, 500]})
    assert np.isnan(ordering.small_gap_share(even))  # no loss to explain


def test_checks_hold_when_the_explanation_fits() -> None:
    res = {
        f"FB-2010 offered {load:g} seed{k}": _comparison(load, _explained(load))
        for load in (0.9, 1.2)
        for k in (1, 2)
    }
    out = ordering.checks(res)
    assert len(out) == 9 and all(c.holds for c in out), [c.text for c in out if not c.holds]
    assert "offered 0.90" in out[-1].text and "offered 1.20" in out[-1].text
    assert any("#### FB-2010 offered 1.2: 2 seeds" in line for line in ordering.table(res))


def test_checks_fail_when_it_does_not() -> None:
    wrong = {
        "tetris": [10, 10, 50, 500],
        "svf": [30, 30, 90, 900],  # volume order slower than Tetris
        "srpt": [20, 20, 50, 400],  # time order faster than DollyMP0 on small jobs
        "dollymp0": [40, 30, 50, 480],
        "dollymp2": [10, 10, 150, 700],  # the loss is in large jobs
        ordering.VOLUME: [30, 30, 90, 900],  # and volume order does not help
    }
    flat = {**wrong, "dollymp2": [10, 10, 100, 600]}  # and smaller at the higher load
    res = {
        "FB-2010 offered 0.9 seed1": _comparison(0.9, wrong),
        "FB-2010 offered 1.2 seed1": _comparison(1.2, flat),
    }
    out = ordering.checks(res)
    assert not any(c.holds for c in out), [c.text for c in out if c.holds]

"""The floors scenario (pyscheduler/sim/floors.py): its arithmetic on hand-made runs, its check both ways,
and its floors on a real simulation."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pyscheduler.sim import floors
from pyscheduler.sim.engine import SimConfig
from pyscheduler.sim.lowerbound import LowerBound
from pyscheduler.sim.metrics import RunMetrics
from pyscheduler.sim.reproduce import SCENARIOS
from pyscheduler.sim.runner import Comparison, compare
from pyscheduler.sim.straggler import parse_straggler

from .test_owntime import CLUSTER, spaced_jobs


def _run(pol: str, avg: float, wait: float) -> RunMetrics:
    f = np.full(4, avg)
    m = RunMetrics(pol, f, np.ones(4), np.zeros(4), f, 1.0, 0.0, 0, 0, 4, 0, 0.1, 10)
    m.extra["flowtime_split"] = {"own": 90.0, "waiting": wait, "saved": 0.0, "top_share": 0.5}
    return m


def _comparison(waits: dict[str, float], tetris: float = 110.0, two: float = 75.0) -> Comparison:
    settings: dict[str, Any] = {"own_time_avg": 90.0, "own_time_2_clones_avg": two}
    results = {p: _run(p, tetris if p == floors.TETRIS else 100.0, w) for p, w in waits.items()}
    return Comparison(results, LowerBound(400.0, 4 * 60.0, 10.0, 4), 1.0, settings)


def test_floors_are_the_bar_less_what_jobs_alone_take() -> None:
    f = floors.floors(_comparison({floors.TETRIS: 20.0}))
    assert f["bar"] == pytest.approx(0.7 * 110.0)
    assert f["own"] == 90.0 and f["two"] == 75.0 and f["any"] == pytest.approx(60.0)
    assert f["room"] == pytest.approx(0.7 * 110.0 - 75.0)


def test_check_holds_when_every_policy_waits_more_than_the_room() -> None:
    # room = 77 - 75 = 2 s; the least waiting is 11.7 s
    res = {f"Alibaba empirical seed{k}": _comparison({floors.TETRIS: 19.9, "x": 11.7}) for k in (1, 2, 3)}
    (check,) = floors.checks(res)
    assert check.holds and check.value == pytest.approx(11.7 - 2.0)
    assert "3 seeds" in check.text and "`x`" in check.text


def test_check_fails_when_a_policy_waits_less_than_the_room() -> None:
    # room = 0.7 x 200 - 92.6 = 47.4 s; one policy waits 30 s: the bar is within that order's reach
    res = {
        f"FB-2010 empirical seed{k}": _comparison({floors.TETRIS: 91.0, "y": 30.0}, tetris=200.0, two=92.6)
        for k in (1, 2)
    }
    (check,) = floors.checks(res)
    assert not check.holds and check.value == pytest.approx(30.0 - 47.4)


def test_floors_of_a_real_run_are_ordered_and_the_table_has_every_policy() -> None:
    """A loaded run (jobs arriving faster than they finish): own time >= two clones >= any copy, every
    policy waits, and the table has one row per policy."""
    jobs = spaced_jobs(12, gap=2.0)
    config = SimConfig(straggler=parse_straggler("pareto:alpha=1.5,cap=20"), seed=3, tick=1.0)
    c = compare(jobs, CLUSTER, floors.POLICIES, config)
    f = floors.floors(c)
    assert f["own"] >= f["two"] >= f["any"] > 0
    assert all(math.isfinite(floors.waiting(c, p)) for p in floors.POLICIES)
    assert floors.waiting(c, floors.TETRIS) > 0
    rows = floors.table({"tiny pareto seed3": c})
    assert sum(f"`{p}`" in r for r in rows for p in floors.POLICIES) == len(floors.POLICIES)


def test_scenario_runs_the_headline_commands_with_fewer_policies() -> None:
    sc = {s.key: s for s in SCENARIOS}
    headline = {r.label: r for r in sc["headline"].runs}
    for run in sc["floors"].runs:
        twin = headline[run.label]
        assert run.policies == floors.POLICIES
        assert run.command(False).replace(",".join(run.policies), "") == twin.command(False).replace(
            ",".join(twin.policies), ""
        )

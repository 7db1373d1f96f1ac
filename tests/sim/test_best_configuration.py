"""The ablation's best configuration (sim/ablation.best) and issue 25's bars for it
(sim/reproduce_checks.bars), on hand-made runs: a row earns only by beating the paper by more than its
spread in every group, and each bar can fail."""

from __future__ import annotations

from typing import Any

import numpy as np

from pyscheduler.sim import ablation
from pyscheduler.sim.metrics import RunMetrics
from pyscheduler.sim.reproduce_checks import bars
from pyscheduler.sim.runner import Comparison

SIZES = np.array([1, 5, 40, 600])  # two jobs of 1-10 tasks
VOLUME = "dollymp(order=volume)"
CLASS = "dollymp(order=size_class_volume)"


def _run(pol: str, scale: float, resource_s: float = 100.0) -> RunMetrics:
    f = np.array([10.0, 20.0, 50.0, 300.0]) * scale
    return RunMetrics(pol, f, SIZES, np.zeros(4), f, resource_s, 0.0, 0, 0, 4, 0, 0.1, 10, 0.9, 0.8)


def _comparison(scales: dict[str, float], resources: dict[str, float] | None = None) -> Comparison:
    base = {pol: 1.0 for _, pol in ablation.ROWS}
    use = resources or {}
    results = {p: _run(p, s, use.get(p, 100.0)) for p, s in {**base, **scales}.items()}
    settings: dict[str, Any] = {"jobs": 4, "nodes": 2, "straggler": "empirical"}
    return Comparison(results, None, 1.2, settings)  # type: ignore[arg-type]


def _res(
    per_seed: list[dict[str, float]], groups: tuple[str, ...] = ("FB-2010 empirical", "Alibaba empirical")
):
    return {f"{g} seed{k}": _comparison(s) for g in groups for k, s in enumerate(per_seed, 1)}


def test_best_is_the_earned_row_whose_slowest_group_is_fastest() -> None:
    seeds = [{VOLUME: 0.50, CLASS: 0.80, "tetris": 2.0, "capacity": 3.0} for _ in range(3)]
    res = _res(seeds)
    assert ablation.earned(res)[VOLUME] and ablation.earned(res)[CLASS]
    assert ablation.best(res) == VOLUME


def test_a_row_that_loses_in_one_group_or_wins_inside_its_spread_is_not_best() -> None:
    res = _res([{VOLUME: 0.5, CLASS: 0.8} for _ in range(3)], ("FB-2010 empirical",))
    res.update(_res([{VOLUME: 1.1, CLASS: 0.8} for _ in range(3)], ("Alibaba empirical",)))
    assert ablation.best(res) == CLASS  # VOLUME loses on Alibaba
    noisy = _res([{CLASS: 0.9}, {CLASS: 0.7}, {CLASS: 1.0}])  # median 0.9: 0.1 faster, spread 0.3
    assert not ablation.earned(noisy)[CLASS] and ablation.best(noisy) == ablation.PAPER


def test_bars_hold_for_a_configuration_that_meets_them() -> None:
    seeds = [{VOLUME: 0.6, "tetris": 1.0, "capacity": 2.0} for _ in range(3)]
    out = bars(_res(seeds), VOLUME, "v")
    assert len(out) == 8 and all(c.holds for c in out), [c.text for c in out if not c.holds]
    assert out[0].text.startswith("Alibaba empirical, 3 seeds: v / Tetris average flowtime, median")


def test_each_bar_can_fail() -> None:
    slow = bars(_res([{VOLUME: 0.8, "tetris": 1.0, "capacity": 2.0}]), VOLUME, "v")
    assert [c.holds for c in slow[:4]] == [False, True, True, True]  # 0.8x Tetris > 0.7
    vs_cap = bars(_res([{VOLUME: 0.6, "tetris": 1.0, "capacity": 1.0}]), VOLUME, "v")
    assert [c.holds for c in vs_cap[:4]] == [True, False, True, True]  # 0.6x Capacity+LATE > 0.5
    res = {"T seed1": _comparison({VOLUME: 0.6, "tetris": 1.0, "capacity": 2.0}, {VOLUME: 110.0})}
    costly = bars(res, VOLUME, "v")
    assert [c.holds for c in costly] == [True, True, True, False]  # 10% extra resources > 5%
    small = {"T seed1": _comparison({VOLUME: 0.6, "tetris": 1.0, "capacity": 2.0})}
    small["T seed1"].results[VOLUME].flowtimes[:2] *= 5  # its 1-10-task jobs slower than Tetris's
    assert [c.holds for c in bars(small, VOLUME, "v")][2] is False

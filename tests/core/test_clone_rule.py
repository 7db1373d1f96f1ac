"""DollyMP's clone rules: "paper" (the default: Corollary 4.1 with its packing condition, policies/model.py),
"idle", "none", and the late extension (clones of late tasks by the Pareto mean residual life,
policies/residual.py) that `dollymp-ext` turns on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyscheduler.estimate.pareto import fit_pareto, speedup
from pyscheduler.objects import Job
from pyscheduler.policies import get_policy
from pyscheduler.policies.base import Snapshot
from pyscheduler.policies.model import corollary_grants
from pyscheduler.policies.residual import StartTimes, residual_threshold, residual_thresholds

from .helpers import cluster, job


def test_threshold_is_where_mean_residual_life_reaches_theta() -> None:
    theta, sigma = 20.0, 20.0
    xm, alpha = fit_pareto(theta, sigma)
    s = residual_threshold(theta, sigma)
    assert s == pytest.approx((alpha - 1) * theta)
    rng = np.random.default_rng(3)
    draws = xm * (1 - rng.random(2_000_000)) ** (-1 / alpha)
    tail = draws[draws > s]
    assert (tail - s).mean() == pytest.approx(theta, rel=0.05)  # E[Theta - s | Theta > s] = theta there
    assert residual_threshold(theta, 0.0) == math.inf  # no variation: a clone never finishes first
    assert residual_threshold(math.nan, 1.0) == math.inf


def test_start_times_restart_when_a_copy_is_added() -> None:
    j = job("j", 0.0, ("m", 3, (1, 1), 10, 5, ()))
    p = j.phases[0]
    starts = StartTimes()
    p.start_copy(0)
    assert starts.observe("j", 0, p, 1.0).tolist() == [1.0, math.inf, math.inf]
    assert starts.observe("j", 0, p, 7.0).tolist()[0] == 1.0  # still the first copy
    p.start_copy(0)
    assert starts.observe("j", 0, p, 9.0).tolist()[0] == 9.0  # a clone: the clock restarts
    starts.keep_only(set())
    assert len(starts) == 0


def test_corollary_grants_fade_as_the_backlog_of_smaller_jobs_grows() -> None:
    alpha_stats = (10.0, 10.0)  # CV 1: alpha = 1 + sqrt 2, h(2) = 1.35
    h2 = speedup(fit_pareto(*alpha_stats)[1], 2)
    # a job in class 4 (e = 10 <= 16) that one more copy brings within 2^3 = 8 (8 * 1.35 >= 10)
    alone = corollary_grants(np.array([4]), np.array([1.0]), np.array([10.0]), [alpha_stats], max_copies=3)
    assert 8 * h2 >= 10 and alone.tolist() == [2]
    # twenty small jobs of class 3 fill the level-3 knapsack (20 x 0.39 = 7.8 of 8): no room for 2 x 1.0
    n = 21
    classes = np.array([4] + [3] * (n - 1))
    volumes = np.array([1.0] + [0.39] * (n - 1))
    times = np.array([10.0] + [5.0] * (n - 1))
    crowded = corollary_grants(classes, volumes, times, [alpha_stats] + [None] * (n - 1), max_copies=3)
    assert crowded.tolist() == [1] * n
    # a job that already meets 2^(l-1) is in its class for its volume: clones would not move it
    assert corollary_grants(np.array([4]), np.array([1.0]), np.array([7.0]), [alpha_stats], 3).tolist() == [1]


def _running(job_tasks: int, pending: int = 0, size: float = 64) -> tuple[Snapshot, Job]:
    j = job("j", 0.0, ("m", job_tasks + pending, (1, 1), 10.0, 10.0, ()))
    for t in range(job_tasks):
        j.phases[0].start_copy(t)
    c = cluster((size, size), free=[(64 - job_tasks, 64 - job_tasks)])
    return Snapshot(0.0, c, [j]), j


def test_late_tasks_get_one_copy_per_round() -> None:
    snap, _ = _running(4)
    pol = get_policy("dollymp-ext", clone_rule="none", residual_factor=1.0, small_job_clones=0, tail_tasks=0)
    thr = residual_threshold(10.0, 10.0, 1.0)
    first = pol.decide(snap)  # sees the copies start at t = 0
    assert not any(p.is_clone for p in first.placements)
    early = pol.decide(Snapshot(thr * 0.9, snap.cluster, snap.jobs))
    assert not any(p.is_clone for p in early.placements)
    late = pol.decide(Snapshot(thr * 1.1, snap.cluster, snap.jobs))
    clones = [p for p in late.placements if p.is_clone]
    assert sorted(p.task_index for p in clones) == [0, 1, 2, 3]  # one copy each, not two at once
    assert {(g.clones, g.reason) for g in late.clone_grants} == {(2, "eq2_residual_life")}


def test_default_factor_two_waits_twice_as_long() -> None:
    snap, _ = _running(2)
    pol = get_policy(
        "dollymp-ext", clone_rule="none", small_job_clones=0, tail_tasks=0
    )  # residual_factor 2: resource-neutral clones
    pol.decide(snap)
    thr = residual_threshold(10.0, 10.0, 2.0)
    assert thr == pytest.approx(2 * residual_threshold(10.0, 10.0))
    assert not any(p.is_clone for p in pol.decide(Snapshot(thr * 0.9, snap.cluster, snap.jobs)).placements)
    assert sum(p.is_clone for p in pol.decide(Snapshot(thr * 1.1, snap.cluster, snap.jobs)).placements) == 2


def test_clones_only_take_what_the_originals_left() -> None:
    # 100 tasks wait and the node has room for 60 of them; a large capacity keeps the job's volume small,
    # so Corollary 4.1 grants it a clone (class 5, 2^4 h(2) >= e = 20, r = 1.5 sigma on top)
    snap, _ = _running(4, pending=100, size=6400)
    pol = get_policy("dollymp", sigma_factor=1.0)  # the paper: Corollary 4.1, clones in passes 2-3
    first = pol.decide(snap)
    assert first.num_placements == 60 and not any(p.is_clone for p in first.placements)
    assert {g.reason for g in first.clone_grants} == {"corollary_4_1"}
    later = pol.decide(Snapshot(1000.0, snap.cluster, snap.jobs))
    assert not any(p.is_clone for p in later.placements)  # pass 1 used every free core again


def test_paper_rule_clones_at_launch_when_nothing_waits() -> None:
    j = job("j", 0.0, ("m", 4, (1, 1), 10.0, 10.0, ()))  # e = 20: class 5; 2^4 h(2) >= 20 (h(2) = 1.35)
    d = get_policy("dollymp", sigma_factor=1.0).decide(Snapshot(0.0, cluster((64, 64)), [j]))
    assert sum(p.is_clone for p in d.placements) == 4  # r_j = 2 copies of each task
    none = get_policy("dollymp-ext", clone_rule="none", small_job_clones=0, tail_tasks=0)
    assert not any(p.is_clone for p in none.decide(Snapshot(0.0, cluster((64, 64)), [j])).placements)
    assert {(g.clones, g.reason) for g in d.clone_grants} == {(1, "corollary_4_1")}


def test_idle_rule_is_still_available_and_differs() -> None:
    snap, _ = _running(4)
    idle = get_policy("dollymp", clone_rule="idle").decide(snap)
    assert sum(p.is_clone for p in idle.placements) == 8  # two clones of every running task at once
    residual = get_policy("dollymp-ext", clone_rule="none", small_job_clones=0, tail_tasks=0).decide(snap)
    assert not any(p.is_clone for p in residual.placements)


def _downstream_running() -> Job:
    j = job("j", 0.0, ("map", 2, (1, 1), 10.0, 10.0, ()), ("red", 2, (1, 1), 10.0, 10.0, ("map",)))
    m, r = j.phase("map"), j.phase("red")
    for t in (0, 1):
        m.start_copy(t)
        m.end_copy(t, succeeded=True)  # one copy per map task
        r.start_copy(t)
    return j


def test_late_downstream_tasks_respect_the_upstream_copies_limit_when_asked() -> None:
    j = _downstream_running()
    c = cluster((64, 64), free=[(62, 62)])
    pol = get_policy(
        "dollymp-ext", clone_rule="none", late_upstream_cap=True, small_job_clones=0, tail_tasks=0
    )
    pol.decide(Snapshot(0.0, c, [j]))
    late = pol.decide(Snapshot(1e6, c, [j]))
    assert not any(p.is_clone for p in late.placements)  # Dolly 3.2: no more copies than upstream had
    assert [(g.phase_id, g.clones, g.reason) for g in late.clone_grants] == [
        ("red", 0, "upstream_copies_limit")
    ]


def test_late_downstream_tasks_get_copies_by_default() -> None:
    # Dolly 3.2's limit is for clones launched with the phase; a late copy reads after the original did
    j = _downstream_running()
    c = cluster((64, 64), free=[(62, 62)])
    pol = get_policy("dollymp-ext", clone_rule="none", small_job_clones=0, tail_tasks=0)
    pol.decide(Snapshot(0.0, c, [j]))
    late = pol.decide(Snapshot(1e6, c, [j]))
    assert sorted(p.task_index for p in late.placements if p.is_clone) == [0, 1]
    assert [(g.phase_id, g.clones, g.reason) for g in late.clone_grants] == [("red", 2, "eq2_residual_life")]


def test_vectorised_thresholds_match_the_scalar_formula() -> None:
    theta = np.array([10.0, 10.0, 0.0, 5.0, math.nan, 30.0])
    sigma = np.array([10.0, 0.0, 1.0, 1.0, 1.0, 60.0])
    got = residual_thresholds(theta, sigma, 2.0)
    want = [residual_threshold(float(a), float(b), 2.0) for a, b in zip(theta, sigma, strict=True)]
    assert got.tolist() == want

"""Late tasks judged by their copies' own progress (policies/late.py, policies/residual.py): LATE's
time-left estimate, the fresh-copy time, the fallback to the elapsed-time rule, and late copies placed
with their job's priority."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyscheduler.core import ManualClock
from pyscheduler.objects import Attempt, Job
from pyscheduler.policies import get_policy
from pyscheduler.policies.base import Snapshot, SnapshotError
from pyscheduler.policies.late import late_first_by_time_left
from pyscheduler.policies.residual import (
    fresh_copy_time,
    late_copies,
    progress_remaining,
    residual_threshold,
)
from pyscheduler.sim.engine import SimAttempt

from .helpers import cluster, job


def test_time_left_is_lates_rate_estimate() -> None:
    p = np.array([0.25, 0.5, 0.0, math.nan, 1.0])
    e = np.array([10.0, 10.0, 10.0, 10.0, 10.0])
    assert progress_remaining(p, e).tolist() == [30.0, 10.0, math.inf, math.inf, 0.0]


def test_copies_are_judged_by_progress_else_by_elapsed_time() -> None:
    # theta 10, factor 1.5: late when time left >= 15 s; judged after 5 s; no progress: elapsed >= 40
    prog = np.array([0.1, 0.5, 0.1, math.nan, math.nan, 0.0, 0.0])
    ela = np.array([6.0, 6.0, 2.0, 50.0, 20.0, 4.0, 0.0])
    late, wait = late_copies(prog, ela, np.full(7, 10.0), np.full(7, 40.0), 1.5, 5.0)
    assert late.tolist() == [True, False, False, True, False, False, False]
    # the young copy may turn late once judged; the judged fast one never by waiting; no-progress ones
    # when they reach the elapsed threshold (progress 0 before min_elapsed is "nothing reported yet")
    assert wait.tolist() == [math.inf, math.inf, 3.0, math.inf, 20.0, 36.0, 40.0]


def test_a_copy_that_reports_no_progress_after_min_elapsed_is_stalled_and_late() -> None:
    """Progress 0 after `min_elapsed` seconds of work (the live AM's copies, whose work start it knows) is
    LATE's rate 0: late whatever a fresh copy takes, even with no elapsed threshold (inf); nan (no
    progress reported at all) still waits for the elapsed-time rule."""
    prog = np.array([0.0, 0.0, math.nan])
    ela = np.array([5.0, 30.0, 30.0])
    late, wait = late_copies(prog, ela, np.full(3, 1e6), np.full(3, math.inf), 1.0, 5.0)
    assert late.tolist() == [True, True, False]
    assert wait.tolist() == [math.inf, math.inf, math.inf]


def test_fresh_copy_time_counts_the_other_running_stragglers() -> None:
    # phase 0: 4 finished with mean 10; running copies projected at 40 and 100 s; one too young to count.
    # phase 1: nothing finished, one copy: nothing else to go on, its declared theta.
    theta = fresh_copy_time(
        np.array([10.0, 7.0]),
        np.array([4, 0]),
        np.array([0.25, 0.1, 0.9, 0.5]),
        np.array([10.0, 10.0, 1.0, 20.0]),
        np.array([0, 0, 0, 1]),
        5.0,
    )
    assert theta.tolist() == [
        pytest.approx((4 * 10 + 100) / 5),  # the 40 s copy is judged against the others
        pytest.approx((4 * 10 + 40) / 5),
        pytest.approx((4 * 10 + 40 + 100) / 6),  # not judged itself: every judged copy counts
        7.0,
    ]


def test_the_straggler_of_a_two_task_phase_is_late_once_its_sibling_finished() -> None:
    """One map finished in 20 s (sigma 0: no elapsed threshold); the other is 10% done after 10 s. Judged
    against the finished one alone it is late (90 s left >= 1.5 x 20 s); had its own projection (100 s)
    been counted, the bar (1.5 x 60 s) would have kept it from ever turning late."""
    theta = fresh_copy_time(
        np.array([20.0]), np.array([1]), np.array([0.1]), np.array([10.0]), np.array([0]), 10.0
    )
    late, _ = late_copies(np.array([0.1]), np.array([10.0]), theta, np.array([math.inf]), 1.5, 10.0)
    assert theta.tolist() == [20.0] and late.tolist() == [True]


def _running_job(n: int) -> Job:
    j = job("j", 0.0, ("m", n, (1, 1), 10.0, 10.0, ()))
    for t in range(n):
        j.phases[0].start_copy(t)
    return j


def _attempts(j: Job, ends: list[float], clock: ManualClock) -> list[Attempt]:
    return [
        SimAttempt(f"a{t}", j.job_id, "m", t, "n0", False, 0.0, expected_end=end, clock=clock)
        for t, end in enumerate(ends)
    ]


def test_slow_copy_gets_a_clone_once_judged_and_fast_ones_do_not() -> None:
    clock = ManualClock()
    j = _running_job(3)
    c = cluster((64, 64), free=[(61, 61)])
    atts = _attempts(j, [12.0, 200.0, 14.0], clock)  # task 1 straggles
    pol = get_policy("dollymp-ext", clone_rule="none", progress_after=10.0, small_job_clones=0, tail_tasks=0)
    clock.set(5.0)
    early = pol.decide(Snapshot(5.0, c, [j], atts))
    assert not any(p.is_clone for p in early.placements)
    assert early.wake_at == pytest.approx(10.0)  # wakes when the copies can be judged
    clock.set(10.0)
    d = pol.decide(Snapshot(10.0, c, [j], atts))
    assert [p.task_index for p in d.placements if p.is_clone] == [1]
    assert {g.reason for g in d.clone_grants} == {"late_progress_rate"}


def test_without_progress_the_elapsed_rule_applies() -> None:
    j = _running_job(2)
    c = cluster((64, 64), free=[(62, 62)])
    plain = [Attempt(f"a{t}", "j", "m", t, "n0", False, 0.0) for t in range(2)]  # live: no progress
    pol = get_policy("dollymp-ext", clone_rule="none", small_job_clones=0, tail_tasks=0)
    pol.decide(Snapshot(0.0, c, [j], plain))
    thr = residual_threshold(10.0, 10.0, 2.0)
    assert not any(p.is_clone for p in pol.decide(Snapshot(thr * 0.9, c, [j], plain)).placements)
    assert sum(p.is_clone for p in pol.decide(Snapshot(thr * 1.1, c, [j], plain)).placements) == 2
    # the same with late_by="elapsed" and progress reported: progress is ignored
    clock = ManualClock()
    clock.set(20.0)
    j2 = _running_job(2)
    pol2 = get_policy("dollymp-ext", clone_rule="none", late_by="elapsed", small_job_clones=0, tail_tasks=0)
    pol2.decide(Snapshot(0.0, c, [j2]))
    atts = _attempts(j2, [1000.0, 1000.0], clock)
    assert not any(p.is_clone for p in pol2.decide(Snapshot(20.0, c, [j2], atts)).placements)


def test_late_copy_runs_before_a_lower_class_jobs_originals() -> None:
    clock = ManualClock()
    small = _running_job(2)  # 2 tasks of 10 s: the higher class
    big = job("big", 0.0, ("m", 400, (1, 1), 100.0, 10.0, ()))
    c = cluster((4, 4), free=[(2, 2)])  # room for two tasks
    atts = _attempts(small, [15.0, 500.0], clock)
    clock.set(12.0)
    first = get_policy("dollymp-ext", clone_rule="none", late_first=True)
    d = first.decide(Snapshot(12.0, c, [small, big], atts))
    got = sorted((p.job_id, p.task_index, p.is_clone) for p in d.placements)
    assert got == [("big", 0, False), ("j", 1, True)]
    after = get_policy(
        "dollymp-ext", clone_rule="none", late_first=False
    )  # Algorithm 2 as printed: clones after every original
    d2 = after.decide(Snapshot(12.0, c, [small, big], atts))
    assert sorted((p.job_id, p.is_clone) for p in d2.placements) == [("big", False), ("big", False)]


def test_bad_options_name_the_option() -> None:
    for key, val in (("progress_factor", 0.0), ("progress_after", -1.0), ("late_by", "rate")):
        with pytest.raises(ValueError, match=key):
            get_policy("dollymp-ext", clone_rule="none", **{key: val})


def test_small_jobs_get_clones_from_idle_capacity_only() -> None:
    small = job("s", 0.0, ("m", 2, (1, 1), 10.0, 10.0, ()))
    big = job("b", 0.0, ("m", 11, (1, 1), 10.0, 10.0, ()))
    ext = {"clone_rule": "none", "small_job_clones": 10}
    roomy = get_policy("dollymp", **ext).decide(Snapshot(0.0, cluster((64, 64)), [small, big]))
    clones = sorted((p.job_id, p.task_index) for p in roomy.placements if p.is_clone)
    assert clones == [("s", 0), ("s", 0), ("s", 1), ("s", 1)]  # two clones each; the 11-task job none
    assert {(g.job_id, g.reason) for g in roomy.clone_grants} >= {("s", "small_job_idle_capacity")}
    # 13 slots: the 13 originals first, nothing left for clones
    full = get_policy("dollymp", **ext).decide(Snapshot(0.0, cluster((13, 13)), [small, big]))
    assert full.num_placements == 13 and not any(p.is_clone for p in full.placements)
    off = get_policy("dollymp-ext", clone_rule="none", small_job_clones=0, tail_tasks=0).decide(
        Snapshot(0.0, cluster((64, 64)), [small])
    )
    assert not any(p.is_clone for p in off.placements)
    with pytest.raises(ValueError, match="small_job_clones"):
        get_policy("dollymp-ext", clone_rule="none", small_job_clones=-1)


def test_tail_tasks_clones_a_lone_last_task_without_launch_clones_for_small_jobs() -> None:
    """tail_tasks=1 with small_job_clones=0 (the cluster bench's setting): a job's one-task phase (a single
    reduce) gets clones from idle capacity as its phase tail; the two-map phase of the same size of job
    gets none (not in its tail, and no small-job launch clones); tail_tasks defaults to small_job_clones."""
    one = job("r", 0.0, ("r", 1, (1, 1), 10.0, 10.0, ()))
    two = job("m", 0.0, ("m", 2, (1, 1), 10.0, 10.0, ()))
    pol = get_policy("dollymp-ext", clone_rule="none", small_job_clones=0, tail_tasks=1)
    d = pol.decide(Snapshot(0.0, cluster((64, 64)), [one, two]))
    clones = sorted((p.job_id, p.task_index) for p in d.placements if p.is_clone)
    assert clones == [("r", 0), ("r", 0)]
    assert {(g.job_id, g.reason) for g in d.clone_grants if g.clones} == {("r", "phase_tail_idle_capacity")}
    off = get_policy("dollymp-ext", clone_rule="none", small_job_clones=0, tail_tasks=0).decide(
        Snapshot(0.0, cluster((64, 64)), [one, two])
    )
    assert not any(p.is_clone for p in off.placements)
    with pytest.raises(ValueError, match="tail_tasks"):
        get_policy("dollymp-ext", clone_rule="none", tail_tasks=-1)


def test_a_clone_must_also_pay_for_its_start_up() -> None:
    """startup (the live AM's measured JVM start-up; 0 in the simulator): 25 s left against a fresh copy
    of 10 s is late (f = 1), but not when the fresh copy first spends 20 s starting; 35 s left is."""
    p, e = np.array([0.5, 0.5]), np.array([25.0, 35.0])
    theta, thr = np.full(2, 10.0), np.full(2, math.inf)
    assert late_copies(p, e, theta, thr, 1.0, 5.0)[0].tolist() == [True, True]
    assert late_copies(p, e, theta, thr, 1.0, 5.0, startup=20.0)[0].tolist() == [False, True]
    with pytest.raises(SnapshotError, match="startup_s"):
        Snapshot(0.0, cluster((4, 4)), [], startup_s=-1.0).validate()


def test_the_late_task_with_the_longest_time_left_gets_the_only_free_slot() -> None:
    """Two late tasks of one phase and room for one clone: the one farthest from finishing gets it (LATE
    Sec. 4.2; policies/late.py), not the first in task order. Eight tasks finish at 11 s; at 10 s task 8
    (ends at 100 s) has 90 s left and task 9 (ends at 400 s) 390 s, both late against a fresh copy."""
    clock = ManualClock()
    j = _running_job(10)
    atts = _attempts(j, [11.0] * 8 + [100.0, 400.0], clock)
    clock.set(10.0)
    pol = get_policy("dollymp-ext", clone_rule="none", progress_after=10.0, small_job_clones=0, tail_tasks=0)
    roomy = pol.decide(Snapshot(10.0, cluster((64, 64), free=[(2, 2)]), [j], atts))
    assert sorted(p.task_index for p in roomy.placements if p.is_clone) == [8, 9]  # both are late
    one = get_policy("dollymp-ext", clone_rule="none", progress_after=10.0, small_job_clones=0, tail_tasks=0)
    d = one.decide(Snapshot(10.0, cluster((64, 64), free=[(1, 1)]), [j], atts))
    assert [p.task_index for p in d.placements if p.is_clone] == [9]
    # the same tasks in the other order: still the one with more time left
    j2 = _running_job(10)
    atts2 = _attempts(j2, [11.0] * 8 + [400.0, 100.0], clock)
    d2 = get_policy(
        "dollymp-ext", clone_rule="none", progress_after=10.0, small_job_clones=0, tail_tasks=0
    ).decide(Snapshot(10.0, cluster((64, 64), free=[(1, 1)]), [j2], atts2))
    assert [p.task_index for p in d2.placements if p.is_clone] == [8]


def test_late_tasks_are_reordered_within_their_entry_only() -> None:
    """Entries [0..4) and [4..7): late tasks change places among late positions of their own entry,
    longest time left first, inf (no estimate) before finite, nan (copies not listed) last, ties in task
    order; the other tasks keep their positions."""
    tasks = np.array([10, 11, 12, 13, 20, 21, 22], np.int64)
    ptr = np.array([0, 4, 7], np.int64)
    late = np.zeros(30, bool)
    late[[11, 12, 13, 20, 22]] = True
    left = np.full(30, math.nan)
    left[[11, 12, 13, 20, 22]] = [5.0, math.inf, 5.0, math.nan, 1.0]
    late_first_by_time_left(tasks, ptr, late, left)
    assert tasks.tolist() == [10, 12, 11, 13, 22, 21, 20]


def test_late_copies_per_round_lets_a_late_task_take_two_copies_at_once() -> None:
    """late_copies_per_round=2 (the cluster bench's setting): a late task gets two fresh copies in the same
    round from idle capacity (the least of two draws); the default gives one and waits until the newest
    copy is late too. The copy cap (1 + max_clones) still holds."""
    clock = ManualClock()
    j = _running_job(3)
    atts = _attempts(j, [12.0, 200.0, 14.0], clock)  # task 1 straggles
    clock.set(10.0)
    snap = Snapshot(10.0, cluster((64, 64), free=[(61, 61)]), [j], atts)
    one = get_policy("dollymp-ext", clone_rule="none", progress_after=10.0, small_job_clones=0, tail_tasks=0)
    assert [p.task_index for p in one.decide(snap).placements if p.is_clone] == [1]
    two = get_policy(
        "dollymp-ext",
        clone_rule="none",
        progress_after=10.0,
        small_job_clones=0,
        tail_tasks=0,
        late_copies_per_round=2,
    )
    assert [p.task_index for p in two.decide(snap).placements if p.is_clone] == [1, 1]
    capped = get_policy(
        "dollymp-ext",
        clone_rule="none",
        progress_after=10.0,
        small_job_clones=0,
        tail_tasks=0,
        late_copies_per_round=3,
        max_clones=1,
    )
    assert [p.task_index for p in capped.decide(snap).placements if p.is_clone] == [1]
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError, match="late_copies_per_round"):
            get_policy("dollymp-ext", clone_rule="none", late_copies_per_round=bad)

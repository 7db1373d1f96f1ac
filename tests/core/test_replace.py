"""A late task at DollyMP's copy cap has its slowest copy replaced by a fresh one (policies/replace.py)."""

from __future__ import annotations

import pytest

from pyscheduler.core import ManualClock
from pyscheduler.objects import Job
from pyscheduler.policies import get_policy
from pyscheduler.policies.base import Decisions, Snapshot
from pyscheduler.policies.replace import REASON_REPLACE
from pyscheduler.sim.engine import SimAttempt

from .helpers import cluster, job


def _phase(copies: list[int]) -> Job:
    j = job("j", 0.0, ("m", len(copies), (1, 1), 10.0, 10.0, ()))
    for t, c in enumerate(copies):
        for _ in range(c):
            j.phases[0].start_copy(t)
    return j


def _copies(spec: list[tuple[int, float, float]], clock: ManualClock) -> list[SimAttempt]:
    """(task, start, expected end) per copy; progress is reported exactly."""
    return [
        SimAttempt(f"a{i}", "j", "m", t, "n0", i > 0, s, expected_end=e, clock=clock)
        for i, (t, s, e) in enumerate(spec)
    ]


def _round(copies: list[int], spec: list[tuple[int, float, float]], now: float, **opts: object) -> Decisions:
    clock = ManualClock()
    clock.set(now)
    j = _phase(copies)
    options: dict[str, object] = {
        "max_clones": 2,
        "small_job_clones": 0,
        "tail_tasks": 0,
        "progress_after": 10.0,
        **opts,
    }
    pol = get_policy("dollymp-ext", clone_rule="none", **options)
    return pol.decide(Snapshot(now, cluster((64, 64), free=[(50, 50)]), [j], _copies(spec, clock)))


# task 0 at the cap (3 copies, all far behind); tasks 1-6 run fast (end at 25 s): a fresh copy is expected
# to take far less than any copy of task 0 has left
FAST = [(t, 0.0, 25.0) for t in range(1, 7)]
SLOW = [(0, 0.0, 2000.0), (0, 1.0, 1500.0), (0, 2.0, 3000.0), *FAST]


def test_the_copy_with_most_time_left_is_killed_and_a_fresh_copy_placed() -> None:
    d = _round([3, 1, 1, 1, 1, 1, 1], SLOW, 20.0)
    assert [(k.attempt_id, k.reason) for k in d.kills] == [("a2", REASON_REPLACE)]  # ends at 3000 s
    assert [(p.task_index, p.is_clone) for p in d.placements] == [(0, True)]


def test_no_replacement_below_the_cap_or_while_a_copy_is_fast_or_unjudged() -> None:
    # room for a clone: the late rule adds one instead
    below = _round([2, 1, 1, 1, 1, 1, 1], SLOW[:2] + FAST, 20.0)
    assert not below.kills and [p.task_index for p in below.placements if p.is_clone] == [0]
    fast = [(0, 0.0, 2000.0), (0, 1.0, 40.0), (0, 2.0, 3000.0), *FAST]  # one copy nearly done
    assert not _round([3, 1, 1, 1, 1, 1, 1], fast, 20.0).kills
    young = [(0, 0.0, 2000.0), (0, 1.0, 1500.0), (0, 15.0, 3000.0), *FAST]  # 5 s old copy
    d = _round([3, 1, 1, 1, 1, 1, 1], young, 20.0)
    assert not d.kills and d.wake_at == pytest.approx(25.0)  # judged once it ran progress_after


def test_no_kill_when_the_fresh_copy_finds_no_room_and_the_option_turns_it_off() -> None:
    clock = ManualClock()
    clock.set(20.0)
    j = _phase([3, 1, 1, 1, 1, 1, 1])
    full = cluster((64, 64), free=[(0, 0)])
    pol = get_policy(
        "dollymp-ext", clone_rule="none", max_clones=2, small_job_clones=0, tail_tasks=0, progress_after=10.0
    )
    d = pol.decide(Snapshot(20.0, full, [j], _copies(SLOW, clock)))
    assert not d.kills and not d.placements
    assert not _round([3, 1, 1, 1, 1, 1, 1], SLOW, 20.0, replace=False).kills
    # DollyMP0 clones nothing, and replaces nothing either
    assert not _round([1, 1, 1, 1, 1, 1, 1], [(0, 0.0, 2000.0), *FAST], 20.0, max_clones=0).kills


def test_the_last_few_tasks_of_a_large_phase_get_clones_from_idle_capacity() -> None:
    """A 12-task job (not small): while 11 tasks are unfinished nothing is cloned at launch; once at most
    small_job_clones (10) are left, all running, each gets up to two clones (phase_tail)."""
    j = job("big", 0.0, ("m", 12, (1, 1), 100.0, 1.0, ()))
    c = cluster((64, 64), free=[(52, 52)])
    ph = j.phases[0]
    for t in range(12):
        ph.start_copy(t)
    ph.end_copy(0, True)
    d = get_policy("dollymp-ext", clone_rule="none", max_clones=2).decide(Snapshot(0.0, c, [j]))
    assert not d.placements  # 11 unfinished: no clones
    ph.end_copy(1, True)
    d = get_policy("dollymp-ext", clone_rule="none", max_clones=2).decide(Snapshot(0.0, c, [j]))
    clones = [p.task_index for p in d.placements if p.is_clone]
    assert sorted(clones) == sorted(list(range(2, 12)) * 2)
    assert {g.reason for g in d.clone_grants} == {"phase_tail_idle_capacity"}
    off = get_policy("dollymp-ext", clone_rule="none", max_clones=2, phase_tail=False).decide(
        Snapshot(0.0, c, [j])
    )
    assert not off.placements


def test_a_small_downstream_phase_of_a_large_job_is_cloned_when_it_launches() -> None:
    """Reduce of 2 tasks after a finished 30-task map: its originals and their clones in the same round,
    whatever copies the map had (as late copies, not capped by Dolly 3.2)."""
    j = job("big", 0.0, ("m", 30, (1, 1), 10.0, 1.0, ()), ("r", 2, (1, 1), 10.0, 1.0, ("m",)))
    for t in range(30):
        j.phases[0].start_copy(t)
        j.phases[0].end_copy(t, True)
    d = get_policy("dollymp-ext", clone_rule="none", max_clones=2).decide(
        Snapshot(0.0, cluster((64, 64)), [j])
    )
    got = sorted((p.task_index, p.is_clone) for p in d.placements)
    assert got == [(0, False), (0, True), (0, True), (1, False), (1, True), (1, True)]


def test_a_very_slow_sibling_does_not_raise_the_bar_for_its_own_task() -> None:
    """Task 0's copies end at 300, 310 and 20000 s; six other tasks at 25 s. Counting the 20000 s sibling in
    the fresh-copy estimate would put the bar above 2800 s and nothing would be late; without the task's
    own copies the estimate is the others' 25 s, every copy of task 0 is late and the 20000 s one goes."""
    slow = [(0, 0.0, 300.0), (0, 1.0, 310.0), (0, 2.0, 20000.0), *FAST]
    d = _round([3, 1, 1, 1, 1, 1, 1], slow, 20.0)
    assert [k.attempt_id for k in d.kills] == ["a2"]

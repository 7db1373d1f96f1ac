"""The simulated AM helper (pyscheduler/sim/live/appmaster.py) clones as the project's AM does."""

from __future__ import annotations

import dataclasses

import pytest

from pyscheduler.sim.live.appmaster import AppMaster
from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.workload import JobSpec, PhaseSpec, Workload
from pyscheduler.wire import pb

WL = Workload(
    "one-job",
    7,
    (JobSpec(1, "j", 0.0, (PhaseSpec("map", 3, 10.0, 20), PhaseSpec("reduce", 1, 5.0, 10, ("map",)))),),
)


def _am() -> tuple[AppMaster, LiveRecord]:
    rec = LiveRecord()
    am = AppMaster(WL, 0, rec)
    am.start_ready(0.0)
    return am, rec


def _plan(per_phase: int = 0, task: tuple[str, int] | None = None) -> object:
    plan = pb.ClonePlan(application_id=AppMaster(WL, 0, LiveRecord()).app_id)
    plan.clones_per_phase["map"] = per_phase
    plan.clones_per_phase["reduce"] = 0
    if task is not None:
        plan.task_clones.add(task_id=task[0], clones=task[1], reason=pb.REASON_CLONE_LATE_COPY)
    return plan


def _launch_waiting(am: AppMaster, now: float, priority: int = 20) -> None:
    for i, a in enumerate(am.waiting(priority)):
        am.launch(a, f"container_{now:g}_{i}", "node00.sim:8041", now)


def test_only_the_maps_start_and_only_running_tasks_get_clones_round_robin() -> None:
    am, rec = _am()
    assert len(am.waiting(20)) == 3 and am.waiting(10) == []  # the reduce waits for the maps
    first = am.waiting(20)[0]
    am.launch(first, "c1", "node00.sim:8041", 0.0)
    am.act(_plan(per_phase=2), 1.0)
    # one clone, of the one running task; its second clone waits for every task's first
    assert [(c[2], c[3]) for c in rec.clones] == [(first.attempt_id[:-1] + "1", "phase")]
    _launch_waiting(am, 2.0)
    am.act(_plan(per_phase=2), 3.0)

    def clones() -> list[int]:
        return [sum(1 for a in am.attempts.values() if a.task == t and a.is_clone) for t in range(3)]

    assert clones() == [1, 1, 1]  # the other tasks' first clones, not task 0's second
    am.act(_plan(per_phase=2), 4.0)
    assert clones() == [2, 2, 2]
    am.act(_plan(per_phase=2), 5.0)
    assert clones() == [2, 2, 2]  # at most 2


def test_first_copy_wins_and_the_others_are_killed() -> None:
    am, rec = _am()
    _launch_waiting(am, 0.0)
    am.act(_plan(per_phase=1), 1.0)
    _launch_waiting(am, 1.0)
    planned = {a.attempt_id: a.end_s for a in am.attempts.values()}
    released = am.finish_due(max(planned.values()))
    assert len(am.done) == 3
    assert sum(1 for _, kind, _ in released if kind == pb.CONTAINER_EXIT_SUCCESS) == 3
    assert sum(1 for _, kind, _ in released if kind == pb.CONTAINER_EXIT_KILLED) == 3
    assert {k[4] for k in rec.kills} == {"am"} and len(rec.kills) == 3
    for (p, t), winner in am.done.items():
        mine = [a for a in am.attempts.values() if (a.phase, a.task) == (p, t)]
        assert min(planned[a.attempt_id] for a in mine) == planned[winner]
    assert len(am.waiting(10)) == 0
    am.start_ready(max(planned.values()))
    assert len(am.waiting(10)) == 1  # the reduce, once the maps finished


def test_a_preempted_clone_is_launched_again_only_for_a_named_task() -> None:
    am, _ = _am()
    _launch_waiting(am, 0.0)
    am.act(_plan(per_phase=1), 1.0)
    _launch_waiting(am, 1.0)
    clones = [a for a in am.attempts.values() if a.is_clone]
    named = clones[0].task_id
    for c in clones:
        am.preempted(c.container_id, 2.0)
    am.act(_plan(per_phase=1, task=(named, 1)), 3.0)
    again = [a for a in am.attempts.values() if a.is_clone and a.state == pb.ATTEMPT_WAITING]
    assert [a.task_id for a in again] == [named]
    assert all(a.state == pb.ATTEMPT_KILLED for a in clones)
    report = am.report(3.0)
    states = {r.attempt_id: r.state for r in report.attempts}
    assert states[again[0].attempt_id] == pb.ATTEMPT_WAITING and all(
        states[c.attempt_id] == pb.ATTEMPT_KILLED for c in clones
    )


def test_reports_carry_changes_and_progress_every_few_seconds() -> None:
    am, _ = _am()
    assert list(am.report(0.0).attempts) == []  # originals waiting: their ask says it all
    _launch_waiting(am, 0.0)
    first = am.report(0.0)
    assert len(first.attempts) == 3 and all(r.state == pb.ATTEMPT_RUNNING for r in first.attempts)
    assert list(am.report(0.5).attempts) == []  # nothing changed
    begun = WL.startup_s
    times = sorted(a.work_s for a in am.attempts.values())
    # progress grew but within the same tenth, less than 3 s after the last report: not yet
    t = begun + min(0.05 * times[0], 2.0)
    assert list(am.report(t).attempts) == []
    later = am.report(t + 3.0)  # 3 s on: every running copy's progress again
    assert len(later.attempts) == 3 and all(r.progress > 0 for r in later.attempts)
    # a map of a job with reduces is scored to 0.667 at its input's end (Hadoop's MapTask)
    assert all(r.progress <= 0.667 for r in later.attempts)


def test_with_a_clone_wait_clones_follow_progress_or_the_wait() -> None:
    """clone_after_start_s (the AM helper's dollymp.am.clone.after-start-ms): no clone before a copy of
    the task reports progress or its first copy is that old."""

    def clones(am: AppMaster) -> int:
        return sum(1 for a in am.attempts.values() if a.is_clone)

    rec = LiveRecord()
    am = AppMaster(dataclasses.replace(WL, clone_after_start_s=10.0), 0, rec)  # start-up 2 s, then work
    am.start_ready(0.0)
    _launch_waiting(am, 0.0)
    am.act(_plan(per_phase=1), 1.0)
    assert clones(am) == 0  # the originals are still starting
    am.act(_plan(per_phase=1), 2.5)
    assert clones(am) == 3  # each reported progress
    slow = AppMaster(dataclasses.replace(WL, clone_after_start_s=10.0, startup_s=60.0), 0, LiveRecord())
    slow.start_ready(0.0)
    _launch_waiting(slow, 0.0)
    slow.act(_plan(per_phase=1), 9.5)
    assert clones(slow) == 0
    slow.act(_plan(per_phase=1), 10.0)
    assert clones(slow) == 3  # no progress yet, but launched 10 s ago


def test_a_negative_clone_wait_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="clone_after_start_s"):
        dataclasses.replace(WL, clone_after_start_s=-1.0)

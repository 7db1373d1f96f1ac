"""The AM's plan follows the job as it runs: the attempts reported so far are replayed onto the core Job,
so once the maps (cloned) finished, the reduce phase is runnable and gets its clones, bounded by the
maps' copies (Dolly 3.2), and a delay-assignment decision."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from rpc_harness import FORMER, am_session, app, ask, in_process_service, node

from pyscheduler import metrics
from pyscheduler.estimate.copies import (
    MAP_PHASE_SHARE,
    STALL_FRAC,
    STALL_MIN_S,
    StartupEstimate,
    finish_at_least,
    finish_at_rate,
    judge,
    slow_waiting,
    work_progress,
    work_start,
)
from pyscheduler.objects import DecisionKind, Job, Phase, Resources
from pyscheduler.rpc.amjob import copy_report, copy_reports, last_stages, replay
from pyscheduler.rpc.amplan import PlanBudget
from pyscheduler.rpc.service import DecisionService
from pyscheduler.wire import pb

APP = "application_1700000000000_0001"


# The copy estimator (estimate/copies.py) on AttemptReports as the AM sends them, times in ms.
def _finish_at_rate_ms(a: Any, first: tuple[float, float] | None) -> float | None:
    at = finish_at_rate(copy_report(a, first))
    return None if at is None else at * 1000.0


def _finish_at_least_ms(a: Any, first: tuple[float, float] | None) -> float | None:
    at = finish_at_least(copy_report(a, first))
    return None if at is None else at * 1000.0


def _judge(attempts: Any, first: Any, now_s: float, startup_s: float | None = None) -> Any:
    return judge(copy_reports(attempts, first), now_s, startup_s)


def _straggling(attempts: Any, first: Any, now_s: float, startup_s: float | None = None) -> set[str]:
    return _judge(attempts, first, now_s, startup_s)[0]


def _slow_waiting(attempts: Any, first: Any, now_s: float, skip: Any, startup_s: float | None = None) -> Any:
    return slow_waiting(copy_reports(attempts, first), now_s, skip, startup_s)


def _attempt(phase: str, task: int, copy: int, state: int, clone: bool = False) -> Any:
    kind = "m" if phase == "map" else "r"
    return pb.AttemptReport(
        task_id=f"task_1700000000000_0001_{kind}_{task:06d}",
        attempt_id=f"attempt_1700000000000_0001_{kind}_{task:06d}_{copy}",
        phase_id=phase,
        container_id=f"container_{task}_{copy}",
        is_clone=clone,
        state=state,
        duration_s=20.0 if state != pb.ATTEMPT_RUNNING else 0.0,
        time_ms=5,
    )


def _phase(phase_id: str, tasks: int, priority: int, parents: tuple[str, ...] = ()) -> Any:
    demand = pb.Resource(memory_mb=1024, vcores=1)
    return pb.PhaseProfile(
        phase_id=phase_id, tasks=tasks, demand=demand, parents=parents, yarn_priority=priority
    )


def _job() -> Job:
    return Job(
        APP,
        0.0,
        [
            Phase("map", 2, Resources((1.0, 1024.0)), 20.0, 5.0),
            Phase("reduce", 1, Resources((1.0, 1024.0)), 10.0, 2.0, ("map",)),
        ],
    )


def test_replay_finishes_tasks_and_keeps_the_copies_peak() -> None:
    job = _job()
    replay(
        job,
        [
            _attempt("map", 0, 0, pb.ATTEMPT_SUCCEEDED),
            _attempt("map", 0, 1, pb.ATTEMPT_KILLED, clone=True),
            _attempt("map", 1, 1, pb.ATTEMPT_RUNNING, clone=True),
            _attempt("map", 1, 0, pb.ATTEMPT_FAILED),
            _attempt("map", 7, 0, pb.ATTEMPT_RUNNING),  # no such task: ignored
        ],
    )
    m = job.phases[0]
    assert m.num_finished == 1 and list(m.peak) == [2, 2] and list(m.copies) == [0, 1]
    assert not job.phases[1].num_finished


def test_reduce_clones_and_omega_once_the_cloned_maps_finish(inproc: DecisionService) -> None:
    with am_session(
        inproc.port, nodes_upserted=[node(f"h{i}:1", 8192, 8) for i in range(4)], apps_upserted=[app(1)]
    ) as (_reg, _s, am):
        profile = pb.JobProfile(
            application_id=APP,
            job_name="straggler",
            submit_time_ms=1,
            phases=[
                _phase("map", 2, 20),
                _phase("reduce", 1, 10, ("map",)),
            ],
        )
        first = am.ReportJobProfile(profile, timeout=10)
        assert first.clones_per_phase["map"] >= 1  # small job, idle cluster: its maps are cloned
        assert first.clones_per_phase["reduce"] == 0  # not runnable before its maps finish
        running = [_attempt("map", i, 0, pb.ATTEMPT_RUNNING) for i in range(2)]
        now = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=running), timeout=10)
        assert now.clones_per_phase["map"] >= 1, now  # running originals in an idle cluster: still cloned
        maps = [
            _attempt("map", i, c, pb.ATTEMPT_SUCCEEDED if c == 0 else pb.ATTEMPT_KILLED, clone=c > 0)
            for i in range(2)
            for c in range(2)
        ]
        later = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=maps), timeout=10)
        assert later.clones_per_phase["reduce"] == 1, later  # Dolly 3.2: at most the maps' copies - 1
        # ω is the delay-assignment model's choice (policies/delay.py); with the default tiny map
        # outputs reading with contention costs nothing, so the model may answer 0 — but it answers.
        assert "delay_assignment" in later.detail and later.delay_assignment_wait_s >= 0, later


def test_no_clones_while_other_jobs_originals_wait(inproc: DecisionService) -> None:
    """The plan is decided among the jobs the application competes with: a busy cluster grants none."""
    with am_session(
        inproc.port,
        nodes_upserted=[node("h0:1", 8192, 8)],
        apps_upserted=[app(1), app(2, submit_ms=0)],
        asks=[ask(2, 20, 12)],
    ) as (reg, s, am):
        profile = pb.JobProfile(
            application_id=APP,
            job_name="small",
            submit_time_ms=1,
            phases=[
                _phase("map", 2, 20),
            ],
        )
        busy = am.ReportJobProfile(profile, timeout=10)
        assert busy.clones_per_phase["map"] == 0, busy
        # The other job is gone and an empty node joins (h0 is still held by the other job's placements
        # until the RM reports them): idle capacity, and the small job is cloned.
        s.send(
            pb.StateBatch(
                session_id=reg.session_id,
                seq=2,
                apps_removed=["application_1700000000000_0002"],
                nodes_upserted=[node("h1:1", 8192, 8)],
            )
        )
        idle = am.GetClonePlan(pb.ClonePlanRequest(application_id=APP), timeout=10)
        assert idle.clones_per_phase["map"] >= 1, idle


@contextmanager
def _late_rule_am(
    tmp_path: Path, small_job_clones: int = 0, full: bool = False
) -> Iterator[tuple[DecisionService, Any]]:
    """A real service whose DollyMP clones late copies (and, with `small_job_clones`, every task of a job
    of at most that many tasks at launch) and an AM stub on it, 4 nodes (idle; with `full`, every vcore
    taken), application 1 known."""
    options = {**FORMER, "small_job_clones": small_job_clones, "tail_tasks": small_job_clones}
    svc = in_process_service(tmp_path, **{"policy.name": "dollymp-ext", "policy.options": options})
    alloc = (8192, 8) if full else (0, 0)
    try:
        with am_session(
            svc.port,
            nodes_upserted=[node(f"h{i}:1", 8192, 8, alloc=alloc) for i in range(4)],
            apps_upserted=[app(1)],
        ) as (_reg, _s, am):
            yield svc, am
    finally:
        svc.stop()


def _map_report(i: int, state: int, now_ms: int, run_s: float, ago_s: float = 0.0, **more: Any) -> Any:
    """Map i's original: launched `run_s` before `now_ms`, reported `ago_s` before it."""
    return pb.AttemptReport(
        task_id=f"task_1700000000000_0001_m_{i:06d}",
        attempt_id=f"attempt_1700000000000_0001_m_{i:06d}_0",
        phase_id="map",
        container_id=f"container_{i}",
        state=state,
        time_ms=now_ms - int(ago_s * 1000),
        launch_time_ms=now_ms - int(run_s * 1000),
        **more,
    )


def _running_map(i: int, now_ms: int, ago_s: float, progress: float) -> Any:
    """Map i's original, launched 40 s ago, at `progress` when reported `ago_s` ago."""
    return _map_report(i, pb.ATTEMPT_RUNNING, now_ms, 40.0, ago_s, node_id=f"h{i % 2}:1", progress=progress)


def test_a_late_running_task_is_named_in_the_plan_with_its_clone(tmp_path: Path) -> None:
    """Late copies on the live path, judged by the progress the AM reports (policies/late.py): the maps
    whose copies crawl get a per-task clone in the plan; a map on pace and the finished ones do not; the
    phase itself gets no clones at launch (small-job launch clones switched off here)."""
    with _late_rule_am(tmp_path) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="late", submit_time_ms=1, phases=[_phase("map", 5, 20)]
        )
        first = am.ReportJobProfile(profile, timeout=10)
        assert first.clones_per_phase["map"] == 0 and not first.task_clones, first
        now_ms = int(time.time() * 1000)

        def running(i: int, ago_s: float, progress: float) -> Any:
            return _running_map(i, now_ms, ago_s, progress)

        done = [
            _map_report(i, pb.ATTEMPT_SUCCEEDED, now_ms, d, duration_s=d) for i, d in ((0, 20.0), (1, 24.0))
        ]
        # Two progress reports 10 s apart: maps 2 and 3 went from 2.5% to 5% (work began 20 s ago, 380 s
        # left), map 4 from 60% to 90% (3.3 s left); a fresh copy takes ~ 22-210 s.
        early = [running(2, 10, 0.025), running(3, 10, 0.025), running(4, 10, 0.6)]
        first = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[*done, *early]), timeout=10)
        assert not first.task_clones, first  # one progress report: not judged by progress yet
        now = [running(2, 0, 0.05), running(3, 0, 0.05), running(4, 0, 0.9)]
        plan = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)
        named = {t.task_id: t.clones for t in plan.task_clones}
        assert named == {
            "task_1700000000000_0001_m_000002": 1,
            "task_1700000000000_0001_m_000003": 1,
        }, plan
        assert plan.clones_per_phase["map"] == 0, plan
        # The decision log names each task once, with the rule and the figures it was judged on; the
        # same plan again logs nothing new (rpc/named.py).
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)
        svc.writer.flush(timeout=10)
        logged = svc.store.query(kinds=[DecisionKind.CLONE_GRANT], limit=100).items
        per_task = [d.decision for d in logged if d.decision.task_id]
        assert sorted((d.task_id, d.reason, d.inputs["rule"], d.inputs["clones"]) for d in per_task) == [
            ("task_1700000000000_0001_m_000002", "clone_late_copy", "core", 1),
            ("task_1700000000000_0001_m_000003", "clone_late_copy", "core", 1),
        ]
        copies = per_task[0].inputs["copies"]
        assert len(copies) == 1 and copies[0][2] == pytest.approx(0.05), copies  # [attempt, work s, progress]
        assert copies[0][1] == pytest.approx(20.0, abs=1.0), copies  # work began 20 s before the report
        assert per_task[0].inputs["t_new_s"] == pytest.approx(22.0), per_task[0].inputs
        # Each copy first showed progress 30 s after its launch: the start-up the service learned.
        assert svc.appmaster.am.startups.median() == pytest.approx(30.0), "start-ups learned from reports"
        bad = pb.AttemptReports(application_id=APP, attempts=[now[0]])
        bad.attempts[0].progress = 1.5
        with pytest.raises(grpc.RpcError) as err:
            am.ReportAttempts(bad, timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "attempts[0].progress" in (err.value.details() or "")


def test_a_maps_copy_is_timed_by_its_map_phase_when_its_job_has_reduces(tmp_path: Path) -> None:
    """Hadoop's MapTask score reaches 0.667 when its input is read (then its sort, 0.333), so the service
    times a map of a job with reduces by score / 0.667 (`work_progress`): a map that went from 0.0667 to
    0.1333 in 10 s is 20% through 100 s of work, not 13% through 150 s (on the cluster benchmark: maps that
    drew 40-140 s were timed at 132-176 s). A reduce's score, and a map's in a job without reduces, are
    kept."""
    with _late_rule_am(tmp_path) as (svc, am):
        phases = [_phase("map", 2, 20), _phase("reduce", 1, 10, ("map",))]
        am.ReportJobProfile(
            pb.JobProfile(application_id=APP, job_name="mr", submit_time_ms=1, phases=phases,
                          clones_preemptible=True),
            timeout=10,
        )  # fmt: skip
        now_ms = int(time.time() * 1000)
        early = _running_map(0, now_ms, 10, 0.0667)
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[early]), timeout=10)
        later = _running_map(0, now_ms, 0, 0.1333)
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[later]), timeout=10)
        (copy,) = svc.appmaster.running_copies()
        assert copy.progress == pytest.approx(0.1333 / MAP_PHASE_SHARE)
        assert copy.finish_est_ms == pytest.approx(now_ms - 20_000 + 100_000, abs=200)
        red = _attempt("reduce", 0, 0, pb.ATTEMPT_RUNNING)
        red.progress = 0.8
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[red]), timeout=10)
        assert {c.attempt_id: c.progress for c in svc.appmaster.running_copies()}[red.attempt_id] == 0.8
    assert work_progress(0.0) == 0.0 and work_progress(0.9) == 1.0
    assert work_progress(0.5, 1.0) == 0.5


def test_launch_clones_are_never_named_per_task_but_a_late_task_of_the_same_job_is(tmp_path: Path) -> None:
    """A small job (4 maps, small-job launch clones): the plan gives the phase its clones at launch, and
    the core places clones of its running maps, but names none of them per task (the AM would launch a
    named task's clone again after it yielded its container: on the cluster benchmark, 10 clones started for
    one map). Map 2, whose two launch clones yielded and whose original crawls, is late: it is named, with
    REASON_CLONE_LATE_COPY (two clones: its job is small), and its running clones are per-task ones."""
    with _late_rule_am(tmp_path, small_job_clones=7) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="small", submit_time_ms=1, phases=[_phase("map", 4, 20)],
            clones_preemptible=True,
        )  # fmt: skip
        first = am.ReportJobProfile(profile, timeout=10)
        assert first.clones_per_phase["map"] == 2, first
        now_ms = int(time.time() * 1000)
        done = [
            _map_report(i, pb.ATTEMPT_SUCCEEDED, now_ms, d, duration_s=d) for i, d in ((0, 20.0), (1, 24.0))
        ]
        yielded = [_attempt("map", 2, k, pb.ATTEMPT_KILLED, clone=True) for k in (1, 2)]
        early = [_running_map(2, now_ms, 10, 0.025), _running_map(3, now_ms, 10, 0.6)]
        launch = am.ReportAttempts(
            pb.AttemptReports(application_id=APP, attempts=[*done, *yielded, *early]), timeout=10
        )
        assert launch.clones_per_phase["map"] == 2 and not launch.task_clones, launch
        now = [_running_map(2, now_ms, 0, 0.05), _running_map(3, now_ms, 0, 0.9)]
        plan = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)
        named = {t.task_id: (t.clones, t.reason) for t in plan.task_clones}
        assert named == {"task_1700000000000_0001_m_000002": (2, pb.REASON_CLONE_LATE_COPY)}, plan
        clone = _attempt("map", 2, 3, pb.ATTEMPT_RUNNING, clone=True)
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[clone]), timeout=10)
        flags = {c.attempt_id: (c.per_task, c.last_stage) for c in svc.appmaster.running_copies()}
        assert flags[clone.attempt_id] == (True, False), flags
        assert flags["attempt_1700000000000_0001_m_000003_0"] == (False, False), flags


def test_a_straggler_whose_launch_clones_wait_is_named_and_its_clones_wait_alone(tmp_path: Path) -> None:
    """Every vcore taken, a small job's maps started with two clones at launch each, which wait for room.
    Map 0's original crawls: at its cap of copies (its waiting clones count) the core does not judge it
    late, but the servicer names it a late copy with the clones it has (`_slow_waiting`): no new clone,
    and its two waiting clones now count as alone, so clones at launch yield their containers to them."""
    with _late_rule_am(tmp_path, small_job_clones=7, full=True) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="wait-alone", submit_time_ms=1, phases=[_phase("map", 3, 20)],
            clones_preemptible=True,
        )  # fmt: skip
        am.ReportJobProfile(profile, timeout=10)
        now_ms = int(time.time() * 1000)
        clones = [_attempt("map", i, k, pb.ATTEMPT_WAITING, clone=True) for i in (0, 1) for k in (1, 2)]
        for c in clones:
            c.time_ms = now_ms - 10_000
        done = [_map_report(2, pb.ATTEMPT_SUCCEEDED, now_ms, 30.0, duration_s=30.0)]
        # map 0: 2.5% -> 5% in 10 s (380 s left); map 1: 60% -> 90% (3.3 s left)
        early = [_running_map(0, now_ms, 10, 0.025), _running_map(1, now_ms, 10, 0.6)]
        am.ReportAttempts(
            pb.AttemptReports(application_id=APP, attempts=[*done, *clones, *early]), timeout=10
        )
        assert svc.appmaster.hints(APP)[20].waiting_alone == 0
        now = [_running_map(0, now_ms, 0, 0.05), _running_map(1, now_ms, 0, 0.9)]
        plan = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)
        named = {t.task_id: (t.clones, t.reason) for t in plan.task_clones}
        assert named == {"task_1700000000000_0001_m_000000": (2, pb.REASON_CLONE_LATE_COPY)}, plan
        hint = svc.appmaster.hints(APP)[20]
        assert (hint.waiting_clones, hint.waiting_alone) == (4, 2), hint


def test_a_waiting_clone_of_the_last_stage_waits_alone_and_a_clone_of_a_map_does_not(tmp_path: Path) -> None:
    """The job's reduce is what its finish waits for: its waiting clones go before clones at launch, which
    yield their containers to them (`_waits_alone`); a waiting map clone at launch does not."""
    with _late_rule_am(tmp_path, small_job_clones=7, full=True) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="reduce-alone", submit_time_ms=1,
            phases=[_phase("map", 2, 20), _phase("reduce", 1, 10, parents=("map",))],
            clones_preemptible=True,
        )  # fmt: skip
        am.ReportJobProfile(profile, timeout=10)
        maps = [_attempt("map", 0, 1, pb.ATTEMPT_WAITING, clone=True)]
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=maps), timeout=10)
        hints = svc.appmaster.hints(APP)
        assert (hints[20].waiting_clones, hints[20].waiting_alone) == (1, 0), hints
        reduces = [_attempt("reduce", 0, k, pb.ATTEMPT_WAITING, clone=True) for k in (1, 2)]
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=reduces), timeout=10)
        hints = svc.appmaster.hints(APP)
        assert (hints[10].waiting_clones, hints[10].waiting_alone) == (2, 2), hints
        # once a reduce clone has its container it no longer waits, alone or not
        got = _attempt("reduce", 0, 1, pb.ATTEMPT_RUNNING, clone=True)
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[got]), timeout=10)
        hints = svc.appmaster.hints(APP)
        assert (hints[10].waiting_clones, hints[10].waiting_alone) == (1, 1), hints


def test_the_last_stage_is_the_phases_with_parents_that_no_phase_waits_for() -> None:
    two = pb.JobProfile(phases=[_phase("map", 2, 20), _phase("reduce", 1, 10, ("map",))])
    assert last_stages(two) == {"reduce"}
    three = pb.JobProfile(
        phases=[_phase("m", 2, 20), _phase("j", 2, 15, ("m",)), _phase("r", 1, 10, ("j",)), _phase("s", 1, 5)]
    )
    assert last_stages(three) == {"r"}  # "s" has no parents: a map-only job's tasks are not its last stage


def _late_plan(
    am: Any, name: str, tasks: int, done: dict[int, float], progress: dict[int, tuple[float, float]]
) -> Any:
    """Report a `tasks`-map job, the maps `done` (index -> run time s), then each running map's progress
    (index -> (10 s ago, now), launched 40 s ago) in two reports 10 s apart; the plan after the second."""
    am.ReportJobProfile(
        pb.JobProfile(application_id=APP, job_name=name, submit_time_ms=1, phases=[_phase("map", tasks, 20)]),
        timeout=10,
    )
    now_ms = int(time.time() * 1000)
    finished = [_map_report(i, pb.ATTEMPT_SUCCEEDED, now_ms, d, duration_s=d) for i, d in done.items()]
    early = [_running_map(i, now_ms, 10, p) for i, (p, _) in progress.items()]
    am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[*finished, *early]), timeout=10)
    now = [_running_map(i, now_ms, 0, p) for i, (_, p) in progress.items()]
    return am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)


def test_a_late_task_is_named_even_when_the_cluster_has_no_room_for_its_clone_now(tmp_path: Path) -> None:
    """Every vcore taken: the core places no clone, but the late maps are still named, one clone each, so
    the AM asks for it and clones at launch may yield their containers to it (rpc/yielding.py)."""
    with _late_rule_am(tmp_path, full=True) as (_svc, am):
        crawl = {2: (0.025, 0.05), 3: (0.025, 0.05), 4: (0.6, 0.9)}
        plan = _late_plan(am, "late-full", 5, {0: 20.0, 1: 24.0}, crawl)
        assert {t.task_id: (t.clones, t.reason) for t in plan.task_clones} == {
            "task_1700000000000_0001_m_000002": (1, pb.REASON_CLONE_LATE_COPY),
            "task_1700000000000_0001_m_000003": (1, pb.REASON_CLONE_LATE_COPY),
        }, plan


def test_a_late_first_task_gets_its_own_clone_not_clones_for_the_whole_phase(tmp_path: Path) -> None:
    """The progress rule names its grant `late_progress_rate` when the phase's first task is judged by
    progress. That grant is for the late tasks only: the plan names the late map, and no clones per phase
    (they would clone every map of the job twice: 53 clones for 34 tasks on the cluster benchmark)."""
    with _late_rule_am(tmp_path) as (_svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="late0", submit_time_ms=1, phases=[_phase("map", 4, 20)]
        )
        am.ReportJobProfile(profile, timeout=10)
        now_ms = int(time.time() * 1000)

        def running(i: int, ago_s: float, progress: float) -> Any:
            return _running_map(i, now_ms, ago_s, progress)

        done = [
            _map_report(i, pb.ATTEMPT_SUCCEEDED, now_ms, d, duration_s=d) for i, d in ((2, 20.0), (3, 22.0))
        ]
        # map 0 crawls (2.5% -> 5% in 10 s: 190 s left), map 1 is nearly done (60% -> 90%)
        early = [running(0, 10, 0.025), running(1, 10, 0.6)]
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[*done, *early]), timeout=10)
        now = [running(0, 0, 0.05), running(1, 0, 0.9)]
        plan = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)
        assert {t.task_id: t.clones for t in plan.task_clones} == {"task_1700000000000_0001_m_000000": 1}
        assert plan.clones_per_phase["map"] == 0, plan
        assert "late_progress_rate" in plan.detail, plan


def test_a_clone_waiting_for_its_container_holds_off_the_next_clone(tmp_path: Path) -> None:
    """The late map gets one clone; while that clone waits for a container (ATTEMPT_WAITING) the task
    is not late again (a late task's next clone waits until its newest copy is late too, as in the
    simulator, where a placed clone runs at once). Before: the waiting clone counted for nothing and the
    task got its second clone on the next plan (on the cluster benchmark)."""
    with _late_rule_am(tmp_path) as (_svc, am):
        plan = _late_plan(am, "wait", 4, {2: 20.0, 3: 22.0}, {0: (0.025, 0.05), 1: (0.6, 0.9)})
        assert {t.task_id: t.clones for t in plan.task_clones} == {"task_1700000000000_0001_m_000000": 1}
        waiting = _attempt("map", 0, 1, pb.ATTEMPT_WAITING, clone=True)  # asked for just now
        waiting.time_ms = int(time.time() * 1000)
        again = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[waiting]), timeout=10)
        assert not again.task_clones, again


def test_a_lone_copy_with_nothing_to_compare_against_is_not_late(tmp_path: Path) -> None:
    """A phase with no finished task and no history is judged against its own copies' projected run
    times (`amjob.no_data_means`), not the 1 s placeholder: a task crawling at 2.5%/10 s whose sibling has no
    rate yet gets no clone (against 1 s it would be late and get clones at once; a job's one reduce
    always would). Once the sibling finished in 20 s, the same crawl is late."""
    with _late_rule_am(tmp_path) as (_svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="lone", submit_time_ms=1, phases=[_phase("map", 2, 20)]
        )
        am.ReportJobProfile(profile, timeout=10)
        now_ms = int(time.time() * 1000)
        early = pb.AttemptReports(application_id=APP, attempts=[_running_map(0, now_ms, 10, 0.025)])
        am.ReportAttempts(early, timeout=10)
        # map 1 just reported for the first time: no rate yet, so nothing to compare map 0 against
        now = [_running_map(0, now_ms, 0, 0.05), _running_map(1, now_ms, 0, 0.3)]
        alone = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)
        assert not alone.task_clones and alone.clones_per_phase["map"] == 0, alone
        done = _map_report(1, pb.ATTEMPT_SUCCEEDED, now_ms, 20.0, duration_s=20.0)
        judged = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[done]), timeout=10)
        assert {t.task_id: t.clones for t in judged.task_clones} == {"task_1700000000000_0001_m_000000": 1}


def test_a_copy_still_at_progress_0_after_the_usual_start_up_is_stalled_and_gets_a_clone(
    tmp_path: Path,
) -> None:
    """Map 3 reports progress 0 sixty seconds after its launch while its siblings first showed progress
    30 s after theirs: 30 s past the usual start-up with no visible work, it is stalled (late) and named
    in the plan. Before any start-up was learned, the same copy is not judged."""
    with _late_rule_am(tmp_path) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="stall", submit_time_ms=1, phases=[_phase("map", 4, 20)]
        )
        am.ReportJobProfile(profile, timeout=10)
        now_ms = int(time.time() * 1000)
        stalled = _map_report(3, pb.ATTEMPT_RUNNING, now_ms, 60.0, node_id="h1:1", progress=0.0)
        first = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[stalled]), timeout=10)
        assert not first.task_clones, first  # no start-up learned yet: progress 0 says nothing
        siblings = [_running_map(i, now_ms, 10, 0.4) for i in range(3)]  # launched 40 s ago
        plan = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=siblings), timeout=10)
        assert svc.appmaster.am.startups.median() == pytest.approx(30.0)
        assert set({t.task_id: t.clones for t in plan.task_clones}) == {"task_1700000000000_0001_m_000003"}


def test_work_start_leaves_the_start_up_out_of_the_rate() -> None:
    launch = 100.0
    assert work_start(launch, None, (130.0, 0.5)) is None  # one report: no rate yet
    assert work_start(launch, (120.0, 0.2), (120.0, 0.2)) is None
    # 20% at 120 s, 60% at 130 s: 4%/s, so work began at 115 s (15 s of JVM start-up left out)
    assert work_start(launch, (120.0, 0.2), (130.0, 0.6)) == 115.0
    assert work_start(launch, (101.0, 0.5), (102.0, 0.6)) == launch  # never before the launch


def test_a_copys_finish_is_estimated_at_its_rate_since_its_work_began() -> None:
    a = pb.AttemptReport(state=pb.ATTEMPT_RUNNING, progress=0.6, time_ms=130_000, launch_time_ms=100_000)
    assert _finish_at_rate_ms(a, None) is None  # one report: no rate yet
    # work began at 115 s (20% at 120 s, 60% at 130 s): the rest, 40% at 4%/s, ends at 140 s; LATE's
    # estimate from the launch would say 150 s
    assert _finish_at_rate_ms(a, (120.0, 0.2)) == pytest.approx(140_000.0)


def test_a_copys_earliest_finish_grows_while_its_progress_shows_no_new_step() -> None:
    """`_finish_at_least_ms`: work of D s that reached p1 by t1 and is below p + p1 at t takes more than
    (t - t1) / p, and begins after the launch (on the cluster benchmark: a 752 s straggler's second step came
    75 s into its work, so it had no rate until then)."""
    a = pb.AttemptReport(state=pb.ATTEMPT_RUNNING, progress=0.05, time_ms=260_000, launch_time_ms=209_000)
    assert _finish_at_least_ms(a, None) is None
    # first step (5%) reported at 251 s, still 5% at 260 s: the work takes more than 9 / 0.05 = 180 s
    assert _finish_at_least_ms(a, (251.0, 0.05)) == pytest.approx(389_000.0)
    assert _finish_at_rate_ms(a, (251.0, 0.05)) is None  # no second step: no rate
    # a copy of 752 s drawn: true at every report of its first two steps (5% at 251 s, 10% at 288.6 s)
    for t_s, p in ((251.0, 0.05), (270.0, 0.05), (288.0, 0.05), (289.0, 0.1), (320.0, 0.1)):
        a.time_ms, a.progress = int(t_s * 1000), p
        got = _finish_at_least_ms(a, (251.0, 0.05))
        assert got is not None and got <= (213.4 + 752.0) * 1000  # work began at 213.4 s
    # it straggles at 260 s, and its waiting clones are named late: at least 129 s left > a fresh ~50 s
    a.time_ms, a.progress = 260_000, 0.05
    a.task_id, a.attempt_id, a.phase_id, a.container_id = (
        "task_1700000000000_0001_m_000000", "attempt_1700000000000_0001_m_000000_0", "map", "c0",
    )  # fmt: skip
    done = _attempt("map", 1, 0, pb.ATTEMPT_SUCCEEDED)
    done.duration_s = 50.0
    clones = [_attempt("map", 0, k, pb.ATTEMPT_WAITING, clone=True) for k in (1, 2)]
    first = {a.attempt_id: (251.0, 0.05)}
    assert _straggling([a, done, *clones], first, 260.0) == {a.task_id}
    assert _slow_waiting([a, done, *clones], first, 260.0, ()) == {a.task_id: 2}
    # at 252 s, 1 s after its first step, it may still be on pace: at least 20 s, not judged
    a.time_ms = 252_000
    assert _straggling([a, done, *clones], first, 252.0) == set()
    assert _slow_waiting([a, done, *clones], first, 252.0, ()) == {}


def test_a_task_whose_launch_clones_wait_while_its_copies_straggle_is_named_late() -> None:
    def running(task: int, progress: float, at_s: float) -> Any:
        a = _attempt("map", task, 0, pb.ATTEMPT_RUNNING)
        a.progress, a.time_ms, a.launch_time_ms = progress, int(at_s * 1000), 80_000
        return a

    def waiting(task: int) -> list[Any]:
        return [_attempt("map", task, k, pb.ATTEMPT_WAITING, clone=True) for k in (1, 2)]

    first = {  # the first report with progress of each running original, at 100 s
        "attempt_1700000000000_0001_m_000000_0": (100.0, 0.05),
        "attempt_1700000000000_0001_m_000002_0": (100.0, 0.3),
        "attempt_1700000000000_0001_m_000003_0": (100.0, 0.3),
    }
    reports = [
        running(0, 0.10, 110.0),  # 0.5%/s since 90 s: ends at 290 s, 180 s left
        *waiting(0),
        _attempt("map", 1, 0, pb.ATTEMPT_SUCCEEDED),  # 20 s
        running(2, 0.5, 110.0),  # 2%/s since 85 s: ends at 135 s, 55 s after its launch at 80 s
        running(3, 0.5, 110.0),  # on pace: 25 s left, less than a fresh copy's ~55 s
        *waiting(3),
        running(4, 0.02, 110.0),  # one report: no rate yet
        *waiting(4),
    ]
    assert _slow_waiting(reports, first, 110.0, ()) == {"task_1700000000000_0001_m_000000": 2}
    assert _slow_waiting(reports, first, 110.0, {"task_1700000000000_0001_m_000000"}) == {}
    # a running clone of map 0 with no rate yet may still win: not judged
    young = _attempt("map", 0, 3, pb.ATTEMPT_RUNNING, clone=True)
    assert _slow_waiting([*reports, young], first, 110.0, ()) == {}
    # ... but the task straggles, by the copies timed at their rates: its young clone does not yield
    # (rpc/yielding.py Copy.straggling); map 3, on pace, and map 4, untimed, do not straggle
    assert _straggling([*reports, young], first, 110.0) == {"task_1700000000000_0001_m_000000"}
    # a timed clone of map 0 on pace (2%/s since 100 s: ends at 150 s, 40 s left) ends the straggle
    quick = _attempt("map", 0, 4, pb.ATTEMPT_RUNNING, clone=True)
    quick.progress, quick.time_ms, quick.launch_time_ms = 0.2, 110_000, 95_000
    first_quick = {**first, quick.attempt_id: (105.0, 0.1)}
    assert _straggling([*reports, quick], first_quick, 110.0) == set()


def test_a_task_is_covered_when_a_copy_timed_at_its_rate_has_at_most_a_fresh_copys_time_left() -> None:
    """`_judge`: map 3's original, timed at its rate, ends 25 s from now, less than a fresh copy's run time
    (the phase's other copies, about 55 s): covered, and its clones yield first (rpc/yielding.py). Map 0's
    timed copy has 180 s left (it straggles, not covered); map 4 has one report, no rate: not covered."""

    def running(task: int, progress: float) -> Any:
        a = _attempt("map", task, 0, pb.ATTEMPT_RUNNING)
        a.progress, a.time_ms, a.launch_time_ms = progress, 110_000, 80_000
        return a

    first = {
        "attempt_1700000000000_0001_m_000000_0": (100.0, 0.05),
        "attempt_1700000000000_0001_m_000002_0": (100.0, 0.3),
        "attempt_1700000000000_0001_m_000003_0": (100.0, 0.3),
    }
    reports = [
        running(0, 0.10),
        _attempt("map", 1, 0, pb.ATTEMPT_SUCCEEDED),
        running(2, 0.5),
        running(3, 0.5),
        running(4, 0.02),
        _attempt("map", 3, 1, pb.ATTEMPT_RUNNING, clone=True),
    ]
    slow, covered = _judge(reports, first, 110.0)
    assert slow == {"task_1700000000000_0001_m_000000"}
    assert covered == {"task_1700000000000_0001_m_000002", "task_1700000000000_0001_m_000003"}
    assert slow == _straggling(reports, first, 110.0)


def test_a_copy_stalled_at_progress_0_past_a_fraction_of_a_fresh_copys_run_straggles() -> None:
    """On the cluster benchmark: a map whose original drew 752 s shows its first step after 37.6 s of work,
    and until then it had neither a rate nor an earliest finish. With the usual start-up known (5 s here), a
    copy at progress 0 that has worked more than STALL_MIN_S and STALL_FRAC of a fresh copy's run time
    (the phase's other maps: 100 s) straggles: its young clone does not yield, and its waiting clones are
    named late."""
    assert (STALL_MIN_S, STALL_FRAC) == (10.0, 0.15)

    def report(task: int, copy: int, progress: float, launch_s: float, clone: bool = False) -> Any:
        a = _attempt("map", task, copy, pb.ATTEMPT_RUNNING, clone=clone)
        a.progress, a.time_ms, a.launch_time_ms = progress, 200_000, int(launch_s * 1000)
        return a

    done = [_attempt("map", i, 0, pb.ATTEMPT_SUCCEEDED) for i in (1, 2, 3)]
    for a in done:
        a.duration_s = 100.0
    stuck = report(0, 0, 0.0, 180.0)  # launched 20 s ago: 15 s of work, the cut is max(10, 15) s
    young = report(0, 1, 0.0, 198.0, clone=True)  # 2 s ago: still starting
    waits = [_attempt("map", 0, 2, pb.ATTEMPT_WAITING, clone=True)]
    task = "task_1700000000000_0001_m_000000"
    assert _straggling([*done, stuck, young], {}, 200.0) == set()  # no start-up known: not judged
    assert _straggling([*done, stuck, young], {}, 200.0, startup_s=5.0) == set()  # 15 s: not past the cut
    assert _straggling([*done, stuck, young], {}, 201.0, startup_s=5.0) == {task}  # 16 s of work
    assert _slow_waiting([*done, stuck, *waits], {}, 201.0, (), startup_s=5.0) == {task: 1}
    stuck.progress = 0.05  # its first step: judged by its earliest finish from now on, not stalled
    assert (
        _straggling([*done, stuck, young], {stuck.attempt_id: (201.0, 0.05)}, 201.0, startup_s=5.0) == set()
    )


def test_startup_estimate_is_the_median_of_recent_start_ups_once_a_few_were_seen() -> None:
    e = StartupEstimate(keep=4, least=3)
    e.add(5.0)
    e.add(9.0)
    assert e.median() is None
    e.add(float("nan"))  # ignored
    e.add(-1.0)  # ignored
    e.add(6.0)
    assert e.median() == 6.0
    for x in (20.0, 21.0, 22.0):  # only the last 4 count
        e.add(x)
    assert e.median() == 20.5


def test_plan_budget_refills_at_its_rate_and_caps_bursts() -> None:
    t = [0.0]
    b = PlanBudget(2.0, burst=3, clock=lambda: t[0])
    assert [b.take() for _ in range(4)] == [True, True, True, False]  # the burst, then empty
    t[0] = 0.5  # one token back at 2 per second
    assert [b.take(), b.take()] == [True, False]
    t[0] = 100.0  # refills only up to the burst
    assert sum(b.take() for _ in range(10)) == 3
    with pytest.raises(ValueError, match=r"appmaster\.plans_per_s"):
        PlanBudget(0.0)


def _cached_plans() -> float:
    return metrics.REGISTRY.get_sample_value("dollymp_appmaster_plans_cached_total") or 0.0


def test_a_spent_plan_budget_answers_the_last_plan_and_keeps_the_reports(tmp_path: Path) -> None:
    """`appmaster.plans_per_s`: with the budget spent, a job gets its last plan again (counted in
    dollymp_appmaster_plans_cached); the reports are still recorded, so the next fresh plan sees them."""
    options = {**FORMER, "small_job_clones": 0, "tail_tasks": 0}
    svc = in_process_service(
        tmp_path, **{"policy.name": "dollymp-ext", "policy.options": options, "appmaster.plans_per_s": 0.001}
    )
    try:
        with am_session(
            svc.port, nodes_upserted=[node(f"h{i}:1", 8192, 8) for i in range(4)], apps_upserted=[app(1)]
        ) as (_reg, _s, am):
            profile = pb.JobProfile(
                application_id=APP, job_name="b", submit_time_ms=1, phases=[_phase("map", 2, 20)]
            )
            am.ReportJobProfile(profile, timeout=10)  # the first plan: always fresh
            before = _cached_plans()
            done = _attempt("map", 0, 0, pb.ATTEMPT_SUCCEEDED)
            fresh = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[done]), timeout=10)
            cached = am.GetClonePlan(pb.ClonePlanRequest(application_id=APP), timeout=10)
            assert cached == fresh
            assert _cached_plans() == before + 1
            st = svc.appmaster.am.apps[APP]
            assert done.attempt_id in st.attempts and st.durations["map"] == [20.0]  # the report was kept
    finally:
        svc.stop()


def test_a_waiting_clone_counts_as_a_tasks_first_only_without_a_running_clone_or_a_copy_about_to_finish(
    tmp_path: Path,
) -> None:
    """`PhaseHint.waiting_first`: the waiting clones at launch that would be their task's
    first running clone, of a task not covered, one per task. Map 0 has a clone running already (its
    waiting clone is a third copy); map 1's two clones wait (one counts); map 2's original is timed to
    finish within a fresh copy's run time (covered); map 3 succeeded in 20 s."""
    with _late_rule_am(tmp_path, small_job_clones=7) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="first", submit_time_ms=1, phases=[_phase("map", 4, 20)],
            clones_preemptible=True,
        )  # fmt: skip
        am.ReportJobProfile(profile, timeout=10)
        now_ms = int(time.time() * 1000)
        waiting = [
            _attempt("map", i, k, pb.ATTEMPT_WAITING, clone=True) for i, k in ((0, 2), (1, 1), (1, 2), (2, 1))
        ]
        running = [_running_map(i, now_ms, 0, 0.3) for i in (0, 1)]
        clone0 = _attempt("map", 0, 1, pb.ATTEMPT_RUNNING, clone=True)
        early, late = _running_map(2, now_ms, 10, 0.1), _running_map(2, now_ms, 0, 0.9)
        done = _map_report(3, pb.ATTEMPT_SUCCEEDED, now_ms, 20.0, duration_s=20.0)
        for batch in ([done, early], [*running, clone0, *waiting, late]):
            am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=batch), timeout=10)
        hint = svc.appmaster.hints(APP)[20]
        assert (hint.waiting_clones, hint.waiting_alone, hint.waiting_first) == (4, 0, 1), hint
        # map 1's clone runs now: no first clone waits
        up = _attempt("map", 1, 1, pb.ATTEMPT_RUNNING, clone=True)
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[up]), timeout=10)
        assert svc.appmaster.hints(APP)[20].waiting_first == 0

"""The AM plan's late-copy rule on a real service: a task whose copies run late (timed at their rate since
their work began) is named in the plan with its clone; launch clones and clones waiting for containers
hold off further clones."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from am_reports import (
    APP,
    attempt,
    late_rule_am,
    map_report,
    phase_profile,
    running_map,
)

from pyscheduler.estimate.copies import (
    MAP_PHASE_SHARE,
    reduce_work_progress,
    work_progress,
)
from pyscheduler.objects import DecisionKind
from pyscheduler.service.state.amreports import last_stages
from pyscheduler.wire import pb


def test_a_late_running_task_is_named_in_the_plan_with_its_clone(tmp_path: Path) -> None:
    """Late copies on the live path, judged by the progress the AM reports (policies/late.py): the maps
    whose copies crawl get a per-task clone in the plan; a map on pace and the finished ones do not; the
    phase itself gets no clones at launch (small-job launch clones switched off here)."""
    with late_rule_am(tmp_path) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="late", submit_time_ms=1, phases=[phase_profile("map", 5, 20)]
        )
        first = am.ReportJobProfile(profile, timeout=10)
        assert first.clones_per_phase["map"] == 0 and not first.task_clones, first
        now_ms = int(time.time() * 1000)

        def running(i: int, ago_s: float, progress: float) -> Any:
            return running_map(i, now_ms, ago_s, progress)

        done = [
            map_report(i, pb.ATTEMPT_SUCCEEDED, now_ms, d, duration_s=d) for i, d in ((0, 20.0), (1, 24.0))
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
        # same plan again logs nothing new (service/state/named_tasks.py).
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
        # Work began 20 s before the reports' time; the service reads its own clock, so a slow machine
        # adds the seconds the test took since then.
        since_s = time.time() - now_ms / 1000
        assert 19.0 <= copies[0][1] <= 21.0 + since_s, (copies, since_s)
        assert per_task[0].inputs["t_new_s"] == pytest.approx(22.0), per_task[0].inputs
        # Each copy first showed progress 30 s after its launch: the start-up the service learned.
        assert svc.appmaster.am.startups.median() == pytest.approx(30.0), "start-ups learned from reports"
        bad = pb.AttemptReports(application_id=APP, attempts=[now[0]])
        bad.attempts[0].progress = 1.5
        with pytest.raises(grpc.RpcError) as err:
            am.ReportAttempts(bad, timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "attempts[0].progress" in (err.value.details() or "")


def _map_reduce_profile(am: Any, maps: int) -> None:
    phases = [phase_profile("map", maps, 20), phase_profile("reduce", 1, 10, ("map",))]
    profile = pb.JobProfile(
        application_id=APP, job_name="mr", submit_time_ms=1, phases=phases, clones_preemptible=True
    )
    am.ReportJobProfile(profile, timeout=10)


def test_a_maps_copy_is_timed_by_its_map_phase_when_its_job_has_reduces(tmp_path: Path) -> None:
    """Hadoop's MapTask score reaches 0.667 when its input is read (then its sort, 0.333), so the service
    times a map of a job with reduces by score / 0.667 (`work_progress`): a map that went from 0.0667 to
    0.1333 in 10 s is 20% through 100 s of work, not 13% through 150 s (on the cluster benchmark: maps that
    drew 40-140 s were timed at 132-176 s). A reduce's score, and a map's in a job without reduces, are
    kept."""
    with late_rule_am(tmp_path) as (svc, am):
        _map_reduce_profile(am, 2)
        now_ms = int(time.time() * 1000)
        early = running_map(0, now_ms, 10, 0.0667)
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[early]), timeout=10)
        later = running_map(0, now_ms, 0, 0.1333)
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[later]), timeout=10)
        (copy,) = svc.appmaster.running_copies()
        assert copy.progress == pytest.approx(0.1333 / MAP_PHASE_SHARE)
        assert copy.finish_est_ms == pytest.approx(now_ms - 20_000 + 100_000, abs=200)
        red = attempt("reduce", 0, 0, pb.ATTEMPT_RUNNING)
        red.progress = 0.8
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[red]), timeout=10)
        assert {c.attempt_id: c.progress for c in svc.appmaster.running_copies()}[red.attempt_id] == 0.8
    assert work_progress(0.0) == 0.0 and work_progress(0.9) == 1.0
    assert work_progress(0.5, 1.0) == 0.5


def test_with_reduce_phase_progress_a_reduce_is_timed_by_its_reduce_phase(tmp_path: Path) -> None:
    """Hadoop's ReduceTask score is 2/3 once its copy and sort are done; with
    appmaster.reduce_phase_progress the service times a reduce by (score - 2/3) x 3
    (`reduce_work_progress`): from 0.75 to 0.8 in 10 s is 40% through about 67 s of reduce work, due in
    40 s, where the raw score (0.8 done at 0.005 a second) had it due at once."""
    keys = {"appmaster.reduce_phase_progress": True}
    with late_rule_am(tmp_path, **keys) as (svc, am):
        _map_reduce_profile(am, 1)
        now_ms = int(time.time() * 1000)
        for ago_s, score in ((10.0, 0.75), (0.0, 0.8)):
            red = attempt("reduce", 0, 0, pb.ATTEMPT_RUNNING)
            red.node_id, red.launch_time_ms = "h0:1", now_ms - 60_000
            red.time_ms, red.progress = now_ms - int(ago_s * 1000), score
            am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[red]), timeout=10)
        (copy,) = svc.appmaster.running_copies()
        assert copy.progress == pytest.approx(0.4)
        assert copy.finish_est_ms == pytest.approx(now_ms + 40_000, abs=300)
    assert reduce_work_progress(0.5) == 0.0 and reduce_work_progress(2 / 3) == 0.0
    assert reduce_work_progress(5 / 6) == pytest.approx(0.5) and reduce_work_progress(1.0) == 1.0


def test_launch_clones_are_never_named_per_task_but_a_late_task_of_the_same_job_is(tmp_path: Path) -> None:
    """A small job (4 maps, small-job launch clones): the plan gives the phase its clones at launch, and
    the core places clones of its running maps, but names none of them per task (the AM would launch a
    named task's clone again after it yielded its container: on the cluster benchmark, 10 clones started for
    one map). Map 2, whose two launch clones yielded and whose original crawls, is late: it is named, with
    REASON_CLONE_LATE_COPY (two clones: its job is small), and its running clones are per-task ones."""
    with late_rule_am(tmp_path, small_job_clones=7) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="small", submit_time_ms=1, phases=[phase_profile("map", 4, 20)],
            clones_preemptible=True,
        )  # fmt: skip
        first = am.ReportJobProfile(profile, timeout=10)
        assert first.clones_per_phase["map"] == 2, first
        now_ms = int(time.time() * 1000)
        done = [
            map_report(i, pb.ATTEMPT_SUCCEEDED, now_ms, d, duration_s=d) for i, d in ((0, 20.0), (1, 24.0))
        ]
        yielded = [attempt("map", 2, k, pb.ATTEMPT_KILLED, clone=True) for k in (1, 2)]
        early = [running_map(2, now_ms, 10, 0.025), running_map(3, now_ms, 10, 0.6)]
        launch = am.ReportAttempts(
            pb.AttemptReports(application_id=APP, attempts=[*done, *yielded, *early]), timeout=10
        )
        assert launch.clones_per_phase["map"] == 2 and not launch.task_clones, launch
        now = [running_map(2, now_ms, 0, 0.05), running_map(3, now_ms, 0, 0.9)]
        plan = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)
        named = {t.task_id: (t.clones, t.reason) for t in plan.task_clones}
        assert named == {"task_1700000000000_0001_m_000002": (2, pb.REASON_CLONE_LATE_COPY)}, plan
        clone = attempt("map", 2, 3, pb.ATTEMPT_RUNNING, clone=True)
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[clone]), timeout=10)
        flags = {c.attempt_id: (c.per_task, c.last_stage) for c in svc.appmaster.running_copies()}
        assert flags[clone.attempt_id] == (True, False), flags
        assert flags["attempt_1700000000000_0001_m_000003_0"] == (False, False), flags


def test_a_straggler_whose_launch_clones_wait_is_named_and_its_clones_wait_alone(tmp_path: Path) -> None:
    """Every vcore taken, a small job's maps started with two clones at launch each, which wait for room.
    Map 0's original crawls: at its cap of copies (its waiting clones count) the core does not judge it
    late, but the servicer names it a late copy with the clones it has (`slow_waiting`): no new clone,
    and its two waiting clones now count as alone, so clones at launch yield their containers to them."""
    with late_rule_am(tmp_path, small_job_clones=7, full=True) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="wait-alone", submit_time_ms=1, phases=[phase_profile("map", 3, 20)],
            clones_preemptible=True,
        )  # fmt: skip
        am.ReportJobProfile(profile, timeout=10)
        now_ms = int(time.time() * 1000)
        clones = [attempt("map", i, k, pb.ATTEMPT_WAITING, clone=True) for i in (0, 1) for k in (1, 2)]
        for c in clones:
            c.time_ms = now_ms - 10_000
        done = [map_report(2, pb.ATTEMPT_SUCCEEDED, now_ms, 30.0, duration_s=30.0)]
        # map 0: 2.5% -> 5% in 10 s (380 s left); map 1: 60% -> 90% (3.3 s left)
        early = [running_map(0, now_ms, 10, 0.025), running_map(1, now_ms, 10, 0.6)]
        am.ReportAttempts(
            pb.AttemptReports(application_id=APP, attempts=[*done, *clones, *early]), timeout=10
        )
        assert svc.appmaster.hints(APP)[20].waiting_alone == 0
        now = [running_map(0, now_ms, 0, 0.05), running_map(1, now_ms, 0, 0.9)]
        plan = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)
        named = {t.task_id: (t.clones, t.reason) for t in plan.task_clones}
        assert named == {"task_1700000000000_0001_m_000000": (2, pb.REASON_CLONE_LATE_COPY)}, plan
        hint = svc.appmaster.hints(APP)[20]
        assert (hint.waiting_clones, hint.waiting_alone) == (4, 2), hint


def test_a_waiting_clone_of_the_last_stage_waits_alone_and_a_clone_of_a_map_does_not(tmp_path: Path) -> None:
    """The job's reduce is what its finish waits for: its waiting clones go before clones at launch, which
    yield their containers to them (`_waits_alone`); a waiting map clone at launch does not."""
    with late_rule_am(tmp_path, small_job_clones=7, full=True) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="reduce-alone", submit_time_ms=1,
            phases=[phase_profile("map", 2, 20), phase_profile("reduce", 1, 10, parents=("map",))],
            clones_preemptible=True,
        )  # fmt: skip
        am.ReportJobProfile(profile, timeout=10)
        maps = [attempt("map", 0, 1, pb.ATTEMPT_WAITING, clone=True)]
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=maps), timeout=10)
        hints = svc.appmaster.hints(APP)
        assert (hints[20].waiting_clones, hints[20].waiting_alone) == (1, 0), hints
        reduces = [attempt("reduce", 0, k, pb.ATTEMPT_WAITING, clone=True) for k in (1, 2)]
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=reduces), timeout=10)
        hints = svc.appmaster.hints(APP)
        assert (hints[10].waiting_clones, hints[10].waiting_alone) == (2, 2), hints
        # once a reduce clone has its container it no longer waits, alone or not
        got = attempt("reduce", 0, 1, pb.ATTEMPT_RUNNING, clone=True)
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[got]), timeout=10)
        hints = svc.appmaster.hints(APP)
        assert (hints[10].waiting_clones, hints[10].waiting_alone) == (1, 1), hints


def test_the_last_stage_is_the_phases_with_parents_that_no_phase_waits_for() -> None:
    two = pb.JobProfile(phases=[phase_profile("map", 2, 20), phase_profile("reduce", 1, 10, ("map",))])
    assert last_stages(two) == {"reduce"}
    three = pb.JobProfile(
        phases=[
            phase_profile("m", 2, 20),
            phase_profile("j", 2, 15, ("m",)),
            phase_profile("r", 1, 10, ("j",)),
            phase_profile("s", 1, 5),
        ]
    )
    assert last_stages(three) == {"r"}  # "s" has no parents: a map-only job's tasks are not its last stage


def _late_plan(
    am: Any, name: str, tasks: int, done: dict[int, float], progress: dict[int, tuple[float, float]]
) -> Any:
    """Report a `tasks`-map job, the maps `done` (index -> run time s), then each running map's progress
    (index -> (10 s ago, now), launched 40 s ago) in two reports 10 s apart; the plan after the second."""
    am.ReportJobProfile(
        pb.JobProfile(
            application_id=APP, job_name=name, submit_time_ms=1, phases=[phase_profile("map", tasks, 20)]
        ),
        timeout=10,
    )
    now_ms = int(time.time() * 1000)
    finished = [map_report(i, pb.ATTEMPT_SUCCEEDED, now_ms, d, duration_s=d) for i, d in done.items()]
    early = [running_map(i, now_ms, 10, p) for i, (p, _) in progress.items()]
    am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[*finished, *early]), timeout=10)
    now = [running_map(i, now_ms, 0, p) for i, (_, p) in progress.items()]
    return am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)


def test_a_late_task_is_named_even_when_the_cluster_has_no_room_for_its_clone_now(tmp_path: Path) -> None:
    """Every vcore taken: the core places no clone, but the late maps are still named, one clone each, so
    the AM asks for it and clones at launch may yield their containers to it (service/round/yielding.py)."""
    with late_rule_am(tmp_path, full=True) as (_svc, am):
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
    with late_rule_am(tmp_path) as (_svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="late0", submit_time_ms=1, phases=[phase_profile("map", 4, 20)]
        )
        am.ReportJobProfile(profile, timeout=10)
        now_ms = int(time.time() * 1000)

        def running(i: int, ago_s: float, progress: float) -> Any:
            return running_map(i, now_ms, ago_s, progress)

        done = [
            map_report(i, pb.ATTEMPT_SUCCEEDED, now_ms, d, duration_s=d) for i, d in ((2, 20.0), (3, 22.0))
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
    with late_rule_am(tmp_path) as (_svc, am):
        plan = _late_plan(am, "wait", 4, {2: 20.0, 3: 22.0}, {0: (0.025, 0.05), 1: (0.6, 0.9)})
        assert {t.task_id: t.clones for t in plan.task_clones} == {"task_1700000000000_0001_m_000000": 1}
        waiting = attempt("map", 0, 1, pb.ATTEMPT_WAITING, clone=True)  # asked for just now
        waiting.time_ms = int(time.time() * 1000)
        again = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[waiting]), timeout=10)
        assert not again.task_clones, again


def test_a_lone_copy_with_nothing_to_compare_against_is_not_late(tmp_path: Path) -> None:
    """A phase with no finished task and no history is judged against its own copies' projected run
    times (`amjob.no_data_means`), not the 1 s placeholder: a task crawling at 2.5%/10 s whose sibling has no
    rate yet gets no clone (against 1 s it would be late and get clones at once; a job's one reduce
    always would). Once the sibling finished in 20 s, the same crawl is late."""
    with late_rule_am(tmp_path) as (_svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="lone", submit_time_ms=1, phases=[phase_profile("map", 2, 20)]
        )
        am.ReportJobProfile(profile, timeout=10)
        now_ms = int(time.time() * 1000)
        early = pb.AttemptReports(application_id=APP, attempts=[running_map(0, now_ms, 10, 0.025)])
        am.ReportAttempts(early, timeout=10)
        # map 1 just reported for the first time: no rate yet, so nothing to compare map 0 against
        now = [running_map(0, now_ms, 0, 0.05), running_map(1, now_ms, 0, 0.3)]
        alone = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=now), timeout=10)
        assert not alone.task_clones and alone.clones_per_phase["map"] == 0, alone
        done = map_report(1, pb.ATTEMPT_SUCCEEDED, now_ms, 20.0, duration_s=20.0)
        judged = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[done]), timeout=10)
        assert {t.task_id: t.clones for t in judged.task_clones} == {"task_1700000000000_0001_m_000000": 1}


def test_a_copy_still_at_progress_0_after_the_usual_start_up_is_stalled_and_gets_a_clone(
    tmp_path: Path,
) -> None:
    """Map 3 reports progress 0 sixty seconds after its launch while its siblings first showed progress
    30 s after theirs: 30 s past the usual start-up with no visible work, it is stalled (late) and named
    in the plan. Before any start-up was learned, the same copy is not judged."""
    with late_rule_am(tmp_path) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="stall", submit_time_ms=1, phases=[phase_profile("map", 4, 20)]
        )
        am.ReportJobProfile(profile, timeout=10)
        now_ms = int(time.time() * 1000)
        stalled = map_report(3, pb.ATTEMPT_RUNNING, now_ms, 60.0, node_id="h1:1", progress=0.0)
        first = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[stalled]), timeout=10)
        assert not first.task_clones, first  # no start-up learned yet: progress 0 says nothing
        siblings = [running_map(i, now_ms, 10, 0.4) for i in range(3)]  # launched 40 s ago
        plan = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=siblings), timeout=10)
        assert svc.appmaster.am.startups.median() == pytest.approx(30.0)
        assert set({t.task_id: t.clones for t in plan.task_clones}) == {"task_1700000000000_0001_m_000003"}


def test_a_waiting_clone_counts_as_a_tasks_first_only_without_a_running_clone_or_a_copy_about_to_finish(
    tmp_path: Path,
) -> None:
    """`PhaseHint.waiting_first`: the waiting clones at launch that would be their task's
    first running clone, of a task not covered, one per task. Map 0 has a clone running already (its
    waiting clone is a third copy); map 1's two clones wait (one counts); map 2's original is timed to
    finish within a fresh copy's run time (covered); map 3 succeeded in 20 s."""
    with late_rule_am(tmp_path, small_job_clones=7) as (svc, am):
        profile = pb.JobProfile(
            application_id=APP, job_name="first", submit_time_ms=1, phases=[phase_profile("map", 4, 20)],
            clones_preemptible=True,
        )  # fmt: skip
        am.ReportJobProfile(profile, timeout=10)
        now_ms = int(time.time() * 1000)
        waiting = [
            attempt("map", i, k, pb.ATTEMPT_WAITING, clone=True) for i, k in ((0, 2), (1, 1), (1, 2), (2, 1))
        ]
        running = [running_map(i, now_ms, 0, 0.3) for i in (0, 1)]
        clone0 = attempt("map", 0, 1, pb.ATTEMPT_RUNNING, clone=True)
        early, late = running_map(2, now_ms, 10, 0.1), running_map(2, now_ms, 0, 0.9)
        done = map_report(3, pb.ATTEMPT_SUCCEEDED, now_ms, 20.0, duration_s=20.0)
        for batch in ([done, early], [*running, clone0, *waiting, late]):
            am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=batch), timeout=10)
        hint = svc.appmaster.hints(APP)[20]
        assert (hint.waiting_clones, hint.waiting_alone, hint.waiting_first) == (4, 0, 1), hint
        # map 1's clone runs now: no first clone waits
        up = attempt("map", 1, 1, pb.ATTEMPT_RUNNING, clone=True)
        am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[up]), timeout=10)
        assert svc.appmaster.hints(APP)[20].waiting_first == 0

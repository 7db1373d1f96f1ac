"""The AM's plan follows the job as it runs: the attempts reported so far are replayed onto the core Job,
so once the maps (cloned) finished, the reduce phase is runnable and gets its clones, bounded by the
maps' copies (Dolly 3.2), and a delay-assignment decision; with the plan budget spent, a job gets its
last plan again."""

from __future__ import annotations

from pathlib import Path

import pytest
from am_reports import (
    APP,
    attempt,
    phase_profile,
)
from rpc_harness import FORMER, am_session, app, ask, in_process_service, node

from pyscheduler import metrics
from pyscheduler.objects import Job, Phase, Resources
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.service.round.amjob import replay
from pyscheduler.service.round.amplan import PlanBudget
from pyscheduler.wire import pb


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
            attempt("map", 0, 0, pb.ATTEMPT_SUCCEEDED),
            attempt("map", 0, 1, pb.ATTEMPT_KILLED, clone=True),
            attempt("map", 1, 1, pb.ATTEMPT_RUNNING, clone=True),
            attempt("map", 1, 0, pb.ATTEMPT_FAILED),
            attempt("map", 7, 0, pb.ATTEMPT_RUNNING),  # no such task: ignored
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
                phase_profile("map", 2, 20),
                phase_profile("reduce", 1, 10, ("map",)),
            ],
        )
        first = am.ReportJobProfile(profile, timeout=10)
        assert first.clones_per_phase["map"] >= 1  # small job, idle cluster: its maps are cloned
        assert first.clones_per_phase["reduce"] == 0  # not runnable before its maps finish
        running = [attempt("map", i, 0, pb.ATTEMPT_RUNNING) for i in range(2)]
        now = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=running), timeout=10)
        assert now.clones_per_phase["map"] >= 1, now  # running originals in an idle cluster: still cloned
        maps = [
            attempt("map", i, c, pb.ATTEMPT_SUCCEEDED if c == 0 else pb.ATTEMPT_KILLED, clone=c > 0)
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
                phase_profile("map", 2, 20),
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
                application_id=APP, job_name="b", submit_time_ms=1, phases=[phase_profile("map", 2, 20)]
            )
            am.ReportJobProfile(profile, timeout=10)  # the first plan: always fresh
            before = _cached_plans()
            done = attempt("map", 0, 0, pb.ATTEMPT_SUCCEEDED)
            fresh = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[done]), timeout=10)
            cached = am.GetClonePlan(pb.ClonePlanRequest(application_id=APP), timeout=10)
            assert cached == fresh
            assert _cached_plans() == before + 1
            st = svc.appmaster.am.apps[APP]
            assert done.attempt_id in st.attempts and st.durations["map"] == [20.0]  # the report was kept
    finally:
        svc.stop()

"""What the AM registry keeps of an application's reports as they arrive (service/state/amkept.py) is what
reading every attempt again gives: the copies' records in order, the replayed job (round/amjob.py
`replay_counted` against `replay`), the live attempts, the copies' times (`copy_times_of` against
`copy_times`) and the tasks won; over random reports through `AmRegistry.record`, attempts dropped for room
(`make_room`) included."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import numpy as np
import pytest

from pyscheduler.estimate.copies import copy_times, finish_at_rate
from pyscheduler.service.limits import DEFAULTS, Refusal
from pyscheduler.service.round.amjob import job_of, replay, replay_counted
from pyscheduler.service.state.amkept import LIVE
from pyscheduler.service.state.amregistry import AmRegistry
from pyscheduler.service.state.amreports import copy_reports
from pyscheduler.wire import pb

APP = "application_1700000000000_0001"
STATES = (pb.ATTEMPT_WAITING, pb.ATTEMPT_RUNNING, pb.ATTEMPT_SUCCEEDED, pb.ATTEMPT_FAILED, pb.ATTEMPT_KILLED)


def _profile() -> Any:
    demand = pb.Resource(memory_mb=1024, vcores=1)
    return pb.JobProfile(
        application_id=APP,
        job_name="kept",
        submit_time_ms=1,
        clones_preemptible=True,
        phases=[
            pb.PhaseProfile(phase_id="map", tasks=12, demand=demand, yarn_priority=20),
            pb.PhaseProfile(phase_id="reduce", tasks=3, demand=demand, parents=["map"], yarn_priority=10),
        ],
    )


def _report(rng: random.Random, now_ms: int) -> Any:
    out = pb.AttemptReports(application_id=APP)
    for _ in range(rng.randint(1, 8)):
        phase = rng.choice(("map", "map", "reduce"))
        kind = "m" if phase == "map" else "r"
        task = rng.choice((*range(14), 14)) if phase == "map" else rng.randrange(4)  # some past the profile
        tail = "x" if rng.random() < 0.03 else f"{task:06d}"  # a task id without an index now and then
        state = rng.choice(STATES)
        launch = now_ms - rng.randint(0, 40_000)
        out.attempts.add(
            task_id=f"task_1700000000000_0001_{kind}_{tail}",
            attempt_id=f"attempt_1700000000000_0001_{kind}_{tail}_{rng.randrange(3)}",
            phase_id=phase,
            container_id="" if rng.random() < 0.2 else f"container_{task}",
            is_clone=rng.random() < 0.4,
            state=state,
            duration_s=rng.choice((0.0, round(rng.uniform(1, 60), 3)))
            if state != pb.ATTEMPT_RUNNING
            else 0.0,
            progress=round(rng.random(), 3) if state == pb.ATTEMPT_RUNNING else 0.0,
            time_ms=now_ms,
            launch_time_ms=launch if rng.random() < 0.9 else 0,
        )
    return out


def _phase_state(job: Any) -> list[Any]:
    return [
        (
            p.phase_id,
            p.state.tolist(),
            p.copies.tolist(),
            p.peak.tolist(),
            p.num_pending,
            p.num_finished,
            p.num_losers,
            p.version,
        )
        for p in job.phases
    ]


@pytest.mark.parametrize("seed", range(6))
def test_what_is_kept_is_what_every_attempt_says(seed: int) -> None:
    rng = random.Random(seed)
    reg = AmRegistry()
    reg.put_profile(_profile())
    limits = dataclasses.replace(DEFAULTS, attempts_per_app=25)  # finished attempts are dropped for room
    now_ms = 1_700_000_000_000
    for _ in range(60):
        now_ms += rng.randint(100, 3000)
        try:
            reg.record(_report(rng, now_ms), limits)
        except Refusal:
            continue  # too many live attempts: nothing kept
        st = reg.apps[APP]
        attempts = list(st.attempts.values())
        reports = copy_reports(attempts, st.first_progress)
        assert list(st.kept.reports.values()) == reports
        assert st.kept.live_attempts(st.attempts) == [a for a in attempts if a.state in LIVE]
        assert set(st.kept.succeeded) == {a.task_id for a in attempts if a.state == pb.ATTEMPT_SUCCEEDED}
        every, counted = job_of(st.profile, {}), job_of(st.profile, {})
        replay(every, attempts)
        replay_counted(counted, st.kept.task_rows(), attempts)
        assert _phase_state(counted) == _phase_state(every)
        times, running = reg.copy_times(st)
        assert times == copy_times(reports)
        assert running == [
            (a, finish_at_rate(r)) for a, r in zip(attempts, reports, strict=True) if r.kind.name == "RUNNING"
        ]


def test_a_task_past_the_int8_counters_is_replayed_copy_by_copy_and_fails_as_replay_does() -> None:
    reg = AmRegistry()
    reg.put_profile(_profile())
    report = pb.AttemptReports(application_id=APP)
    for n in range(128):  # 128 copies of one task: more than a phase's int8 counters hold
        report.attempts.add(
            task_id="task_1700000000000_0001_m_000000",
            attempt_id=f"attempt_1700000000000_0001_m_000000_{n}",
            phase_id="map",
            container_id=f"container_{n}",
            state=pb.ATTEMPT_RUNNING,
            time_ms=1,
        )
    reg.record(report, DEFAULTS)
    st = reg.apps[APP]
    attempts = list(st.attempts.values())
    with pytest.raises(OverflowError) as every:
        replay(job_of(st.profile, {}), attempts)
    with pytest.raises(OverflowError) as counted:
        replay_counted(job_of(st.profile, {}), st.kept.task_rows(), attempts)
    assert str(counted.value) == str(every.value)
    assert np.array_equal(st.kept.task_rows()["map"], np.array([[0, 128, 0, 0]]))

"""Hostile tenant, bounds: huge asks, huge profiles, overflowing durations, floods of attempts.

Each attack runs through real sockets against the assembled service (DollyMP, a SQLite log) while a
well-behaved session (`hostile.GoodTenant`, its own connection and rm_id) keeps scheduling: the attack is
refused with an error naming the field and its limit (or, for a YARN ask, bounded), and the good tenant
still gets placements at its usual latency.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import hostile
import pytest
from rpc_harness import Stream, app, ask, attempt, full_batch, in_process_service, node, register

from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.wire import pb, pb_grpc

INVALID = (grpc.StatusCode.INVALID_ARGUMENT,)
INT32_MAX = 2**31 - 1
APP = "application_1700000000000_0777"


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[DecisionService]:
    # the AM budgets (test_hostile_fairness.py) raised: these tests are of the validation limits
    budgets = {"appmaster.app_cpu_ms_per_s": 100_000.0, "appmaster.queue_cpu_ms_per_s": 100_000.0}
    s = in_process_service(tmp_path, **{"policy.name": "dollymp", "appmaster.plans_per_s": 5.0, **budgets})
    try:
        yield s
    finally:
        s.stop()


def _profile(tasks: int = 4, phases: int = 1, app_id: str = APP) -> Any:
    return pb.JobProfile(
        application_id=app_id,
        job_name="evil",
        submit_time_ms=1,
        clones_preemptible=True,
        phases=[
            pb.PhaseProfile(
                phase_id=f"p{i}",
                tasks=tasks,
                demand=pb.Resource(memory_mb=1024, vcores=1),
                yarn_priority=i + 1,
            )
            for i in range(phases)
        ],
    )


def _attempt(i: int, state: int = pb.ATTEMPT_RUNNING, duration: float = 0.0) -> Any:
    return pb.AttemptReport(
        task_id=f"task_1700000000000_0777_m_{i:06d}",
        attempt_id=f"attempt_1700000000000_0777_m_{i:06d}_0",
        phase_id="p0",
        container_id=f"container_{i}",
        node_id="evil-h0:1",
        state=state,
        duration_s=duration,
        time_ms=1000 + i,
        progress=0.5 if state == pb.ATTEMPT_RUNNING else 1.0,
        launch_time_ms=1000,
    )


def test_huge_asks_are_bounded_by_the_cluster(svc: DecisionService) -> None:
    """An ask of 2^31-1 containers (reachable through the ordinary AM-RM protocol) in the attacker's own
    session and in the good tenant's: the round answers at once, places at most what the cluster holds,
    and the good tenant's applications keep being placed."""
    attack = "huge YARN ask (containers per ask)"
    good = hostile.GoodTenant(svc.port)
    try:
        base = good.median_ms()
        with hostile.connection(svc.port) as ch:
            reg = register(ch, "rm-evil")
            s = Stream(ch)
            plans: list[Any] = []

            def send() -> None:
                t0 = time.monotonic()
                plans.append(
                    s.send(
                        full_batch(
                            reg.session_id,
                            nodes_upserted=[node("evil-h0:1", 8192, 8)],
                            apps_upserted=[app(777)],
                            asks=[ask(777, p, INT32_MAX) for p in range(1, 51)],  # 50 keys of 2^31-1
                        )
                    )
                )
                assert time.monotonic() - t0 < 10

            assert hostile.attempt(attack, send, INVALID, "", accepted_ok=True) is None
            assert sum(p.count for p in plans[0].placements) <= 8  # 8 GB / 1 GB on the one node
            s.close()
        # the same ask from an application of the good tenant's own ResourceManager, beside a small one
        t0 = time.monotonic()
        plan = good.send(
            apps_upserted=[app(778, 2000), app(779, 1)], asks=[ask(778, 1, INT32_MAX), ask(779, 1, 2)]
        )
        hostile.row(attack).inputs += 1
        hostile.row(attack).bounded += 1
        assert plan.status == pb.BATCH_ACCEPTED and time.monotonic() - t0 < 10
        assert sum(p.count for p in plan.placements) <= 4 * 8
        assert any(p.attempt_id == attempt(779) for p in plan.placements), (plan.placements, plan.deferrals)
        good.send(asks=[ask(778, 1, 0)])  # withdrawn; its containers allocated
        good.send()  # and completed
        good.send(apps_removed=[app(778).application_id])
        assert good.unaffected(attack, base), good.why
    finally:
        good.close()
    assert hostile.row(attack).crashes == hostile.row(attack).hangs == hostile.row(attack).cross_tenant == 0


def test_am_profiles_and_reports_over_the_limits_are_refused(svc: DecisionService) -> None:
    good = hostile.GoodTenant(svc.port)
    try:
        base = good.median_ms()
        with hostile.connection(svc.port) as ch:
            am = pb_grpc.AppMasterServiceStub(ch)
            cases = [
                (
                    "profile: tasks per phase",
                    lambda: am.ReportJobProfile(_profile(tasks=INT32_MAX), timeout=10),
                    "phases[0].tasks: 2147483647 is above the limit 100000 (limits.tasks_per_phase)",
                ),
                (
                    "profile: phases per job",
                    lambda: am.ReportJobProfile(_profile(phases=1001), timeout=10),
                    "phases: 1001 is above the limit 1000 (limits.phases_per_job)",
                ),
            ]
            for attack, call, names in cases:
                err = hostile.attempt(attack, call, INVALID, names)
                assert err is not None and names in (err.details() or ""), err
            am.ReportJobProfile(_profile(), timeout=10)
            durations = [
                (
                    1e308,
                    "attempts[0].duration_s: 1e+308 is above the limit 31536000.0 (limits.max_duration_s)",
                ),
                (float("inf"), "attempts[0].duration_s"),
                (float("nan"), "attempts[0].duration_s"),
                (-1.0, "attempts[0].duration_s"),
            ]
            for d, names in durations:
                bad = pb.AttemptReports(
                    application_id=APP, attempts=[_attempt(0, pb.ATTEMPT_SUCCEEDED, d)] * 2
                )
                err = hostile.attempt(
                    "attempt durations (1e308, inf, nan)",
                    lambda b=bad: am.AttemptReports(b) if False else am.ReportAttempts(b, timeout=10),
                    INVALID,
                    names,
                )
                assert err is not None and names in (err.details() or ""), err
            many = pb.AttemptReports(application_id=APP, attempts=[_attempt(i) for i in range(10_001)])
            err = hostile.attempt(
                "attempts per report",
                lambda: am.ReportAttempts(many, timeout=30),
                INVALID,
                "attempts: 10001 is above the limit 10000 (limits.attempts_per_report)",
            )
            assert err is not None
            # the application still works: a sane report gets a plan, and means stay finite
            plan = am.ReportAttempts(
                pb.AttemptReports(application_id=APP, attempts=[_attempt(1, pb.ATTEMPT_SUCCEEDED, 30.0)]),
                timeout=10,
            )
            assert plan.application_id == APP
        for attack in ("profile: tasks per phase", "attempt durations (1e308, inf, nan)"):
            assert good.unaffected(attack, base), good.why
    finally:
        good.close()
    for r in hostile.TABLE.values():
        assert r.crashes == r.hangs == r.cross_tenant == 0, r


def test_fifty_thousand_attempts_do_not_slow_other_sessions(svc: DecisionService) -> None:
    """60,000 reported attempts of one application: the oldest finished ones are dropped past
    limits.attempts_per_app (20,000), live ones over it are refused naming the limit, and another
    session's rounds keep their latency (the per-task medians were quadratic in a phase's attempts:
    estimate/medians.py)."""
    attack = "attempt flood (attempts per application)"
    good = hostile.GoodTenant(svc.port)
    try:
        base = good.median_ms()
        with hostile.connection(svc.port) as ch:
            am = pb_grpc.AppMasterServiceStub(ch)
            am.ReportJobProfile(_profile(tasks=100_000), timeout=10)
            for k in range(3):  # 30,000 finished attempts: the oldest 10,000 are dropped
                batch = [_attempt(k * 10_000 + i, pb.ATTEMPT_SUCCEEDED, 30.0) for i in range(10_000)]
                hostile.attempt(
                    attack,
                    lambda b=batch: am.ReportAttempts(
                        pb.AttemptReports(application_id=APP, attempts=b), timeout=60
                    ),
                    (grpc.StatusCode.RESOURCE_EXHAUSTED,),
                    "limits.attempts_per_app",
                    accepted_ok=True,
                )
            refused = 0
            for k in range(3, 6):  # 30,000 running ones: the last 10,000 are over the limit
                batch = [_attempt(k * 10_000 + i) for i in range(10_000)]
                err = hostile.attempt(
                    attack,
                    lambda b=batch: am.ReportAttempts(
                        pb.AttemptReports(application_id=APP, attempts=b), timeout=60
                    ),
                    (grpc.StatusCode.RESOURCE_EXHAUSTED,),
                    "limit 20000 (limits.attempts_per_app)",
                    accepted_ok=True,
                )
                refused += err is not None
            assert refused == 1
            with svc.appmaster.am.lock:
                kept = len(svc.appmaster.am.apps[APP].attempts)
            assert kept <= 20_000
        assert good.unaffected(attack, base), good.why
        print(f"other session's rounds after 60,000 reported attempts: {good.why}")
    finally:
        good.close()
    r = hostile.row(attack)
    assert r.crashes == r.hangs == r.cross_tenant == 0, r
    assert r.clear_errors == 1 and r.bounded == 5


def test_am_reports_with_hostile_ids_get_clear_errors_or_plans(svc: DecisionService) -> None:
    """Ids an AM helper makes up: a 5,000-digit task index (Python refuses to parse it: the call crashed,
    and the stored attempt crashed every later round), huge, negative and out-of-range indexes, ids of
    a megabyte. Each gets a clear error or a plan; none crashes the call or a round."""
    attack = "AM attempt reports with hostile ids"
    good = hostile.GoodTenant(svc.port)
    try:
        base = good.median_ms()
        with hostile.connection(svc.port) as ch:
            am = pb_grpc.AppMasterServiceStub(ch)
            am.ReportJobProfile(_profile(), timeout=10)
            tails = ["9" * 5000, "99999999999999999", "000004", "-1", "x" * (1 << 20), ""]
            for tail in tails:
                for state in (pb.ATTEMPT_RUNNING, pb.ATTEMPT_WAITING, pb.ATTEMPT_SUCCEEDED):
                    a = _attempt(0, state, 1.0 if state == pb.ATTEMPT_SUCCEEDED else 0.0)
                    a.task_id, a.is_clone = f"task_1700000000000_0777_m_{tail}", state == pb.ATTEMPT_WAITING
                    hostile.attempt(
                        attack,
                        lambda a=a: am.ReportAttempts(
                            pb.AttemptReports(application_id=APP, attempts=[a]), timeout=10
                        ),
                        INVALID,
                        "attempts[0].task_id",
                        accepted_ok=True,
                    )
        assert good.unaffected(attack, base), good.why
    finally:
        good.close()
    r = hostile.row(attack)
    assert r.crashes == r.hangs == r.cross_tenant == 0, r
    assert r.clear_errors == 6 and r.bounded == 12, r  # the long ids refused, the others answered


def test_huge_ids_in_errors_are_echoed_bounded_naming_the_field(svc: DecisionService) -> None:
    """A 1 MB id repeated in a status message passed gRPC's metadata limit: the client saw
    RESOURCE_EXHAUSTED about metadata size, not the error naming the field. Echoes are cut to 64
    characters with their length."""
    attack = "huge ids echoed in errors"
    big = "a" * (1 << 20)
    echo = f"'{'a' * 64}'... (1048576 characters)"
    good = hostile.GoodTenant(svc.port)
    with hostile.connection(svc.port) as ch:
        try:
            base = good.median_ms()
            am = pb_grpc.AppMasterServiceStub(ch)
            twice = _profile(phases=2)
            for ph in twice.phases:
                ph.phase_id = big
            calls = [
                (lambda: am.GetClonePlan(pb.ClonePlanRequest(application_id=big), timeout=10), "NOT_FOUND"),
                (
                    lambda: am.ReportAttempts(pb.AttemptReports(application_id=big), timeout=10),
                    "FAILED_PRECONDITION",
                ),
                (lambda: am.ReportJobProfile(twice, timeout=10), "INVALID_ARGUMENT"),
            ]
            for call, code in calls:
                field = "phase_id" if code == "INVALID_ARGUMENT" else "application_id: "
                exc = hostile.attempt(attack, call, (getattr(grpc.StatusCode, code),), field)
                assert exc is not None and exc.code().name == code, exc
                assert echo in (exc.details() or "") and len(exc.details() or "") < 400, exc.details()
            reg = register(ch, "rm-huge-ids")
            stream = Stream(ch)
            exc = hostile.attempt(
                attack,
                lambda: stream.send(full_batch(reg.session_id, apps_removed=[big, big])),
                INVALID,
                "apps_removed[1]",
            )
            assert exc is not None and echo in (exc.details() or ""), exc
            assert good.unaffected(attack, base), good.why
        finally:
            good.close()

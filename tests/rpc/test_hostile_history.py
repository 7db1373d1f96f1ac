"""Hostile tenant, the recurring-job statistics history (issue 57 item 2): an application named "wordcount"
in queue adhoc reports 200 attempts of 3e7 s; a "wordcount" in queue prod must not read them.

Through real sockets to the assembled service: the RM's shim tells it of the applications (queue, user,
name), their AMs report profiles and attempts on AppMasterService. The history is keyed by the queue, user
and name of the RM's mirror, never by the AM's own words, so the poisoned durations stay in adhoc's
history (a second adhoc run reads them: the history works, the poison is kept where it was written) and
prod's θ comes from prod's own tasks. Recorded in the hostile-tenant table (tests/rpc/hostile.py): a
prod estimate moved by adhoc's durations counts as a cross-tenant effect.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import hostile
import pytest
from rpc_harness import Stream, app, full_batch, in_process_service, node, register

from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.store.history import JobKey
from pyscheduler.wire import pb, pb_grpc

ABSURD_S = 3e7  # under limits.max_duration_s (a year): accepted at the door, absurd as a task time
PRIO = 20  # the map phase's YARN priority
ATTACK = "history poisoning across queues (same job name)"


def _app(n: int, queue: str, user: str, name: str) -> Any:
    a = app(n)
    a.queue, a.user, a.name = queue, user, name
    return a


def _id(n: int) -> str:
    return app(n).application_id


def _profile(n: int, job_name: str = "wordcount") -> Any:
    return pb.JobProfile(
        application_id=_id(n),
        job_name=job_name,
        submit_time_ms=1,
        phases=[
            pb.PhaseProfile(
                phase_id="map", tasks=4, demand=pb.Resource(memory_mb=1024, vcores=1), yarn_priority=PRIO
            )
        ],
    )


def _done(n: int, count: int, duration: float) -> Any:
    return pb.AttemptReports(
        application_id=_id(n),
        attempts=[
            pb.AttemptReport(
                task_id=f"task_1700000000000_{n:04d}_m_{i:06d}",
                attempt_id=f"attempt_1700000000000_{n:04d}_m_{i:06d}_0",
                phase_id="map",
                state=pb.ATTEMPT_SUCCEEDED,
                duration_s=duration,
                progress=1.0,
                time_ms=1000 + i,
            )
            for i in range(count)
        ],
    )


def _service(tmp_path: Path, **overrides: Any) -> DecisionService:
    return in_process_service(tmp_path, **{"policy.name": "dollymp", **overrides})


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[DecisionService]:
    s = _service(tmp_path)
    try:
        yield s
    finally:
        s.stop()


class Cluster:
    """The RM's shim (one session) and the AMs' channel, against one service."""

    def __init__(self, port: int, apps: list[Any]) -> None:
        self.shim = hostile.connection(port)
        self.ams = hostile.connection(port)
        reg = register(self.shim, "rm-history")
        self.stream = Stream(self.shim)
        plan = self.stream.send(
            full_batch(reg.session_id, nodes_upserted=[node("h1:1", 8192, 8)], apps_upserted=apps)
        )
        assert plan.status == pb.BATCH_ACCEPTED, plan.detail
        self.am = pb_grpc.AppMasterServiceStub(self.ams)

    def close(self) -> None:
        self.stream.close()
        self.shim.close()
        self.ams.close()


def _theta(svc: DecisionService, n: int) -> float:
    """θ of app n's map phase as the service hands it to the RM rounds (and to its AM plan)."""
    return svc.appmaster.hints(_id(n))[PRIO].mean


def test_adhoc_wordcount_durations_never_reach_prod_wordcount(svc: DecisionService) -> None:
    # 1, 3: "wordcount" in adhoc (by the same user name as prod's, so the queue alone must separate them);
    # 2, 4: "wordcount" in prod
    apps = [
        _app(1, "root.adhoc", "alice", "wordcount"),
        _app(2, "root.prod", "alice", "wordcount"),
        _app(3, "root.adhoc", "alice", "wordcount"),
        _app(4, "root.prod", "alice", "wordcount"),
    ]
    cluster = Cluster(svc.port, apps)
    try:
        am = cluster.am
        am.ReportJobProfile(_profile(1), timeout=10)
        poisoned = hostile.attempt(
            ATTACK,
            lambda: am.ReportAttempts(_done(1, 200, ABSURD_S), timeout=10),
            (grpc.StatusCode.INVALID_ARGUMENT,),
            "duration_s",
            accepted_ok=True,  # accepted, kept in adhoc's own history
        )
        assert poisoned is None
        adhoc = svc.history.moments(JobKey("root.adhoc", "alice", "wordcount"), "map")
        assert adhoc is not None and adhoc.count == 200 and adhoc.mean == pytest.approx(ABSURD_S)

        # prod's wordcount, before any task of its own: no history of its tenant, the prior (1 s)
        am.ReportJobProfile(_profile(2), timeout=10)
        before = _theta(svc, 2)
        am.ReportAttempts(_done(2, 3, 30.0), timeout=10)
        own = _theta(svc, 2)
        # the next prod run reads prod's history: 30 s, not 3e7 s
        am.ReportJobProfile(_profile(4), timeout=10)
        later = _theta(svc, 4)
        moved = [t for t in (before, own, later) if t > 1e6]
        if moved:
            hostile.row(ATTACK).cross_tenant += 1
        assert before == pytest.approx(1.0)
        assert own == pytest.approx(30.0) and later == pytest.approx(30.0)
        prod = svc.history.moments(JobKey("root.prod", "alice", "wordcount"), "map")
        assert prod is not None and prod.count == 3 and prod.max == 30.0

        # the control: the next adhoc run does read adhoc's history (the poison stays where it was put)
        am.ReportJobProfile(_profile(3), timeout=10)
        assert _theta(svc, 3) == pytest.approx(ABSURD_S)
    finally:
        cluster.close()


def test_the_am_cannot_name_another_job_or_tenant(svc: DecisionService) -> None:
    """An AM whose application the RM knows as "adhoc-wc" reporting job name "wordcount", and an AM the RM
    does not know at all: nothing is written to any history, and prod's wordcount reads nothing."""
    cluster = Cluster(
        svc.port, [_app(1, "root.adhoc", "mallory", "adhoc-wc"), _app(2, "root.prod", "alice", "wordcount")]
    )
    try:
        am = cluster.am
        for n in (1, 9):  # 9: unknown to the RM (no shim authentication: its calls are answered)
            am.ReportJobProfile(_profile(n, "wordcount"), timeout=10)
            err = hostile.attempt(
                ATTACK,
                lambda n=n: am.ReportAttempts(_done(n, 200, ABSURD_S), timeout=10),
                (grpc.StatusCode.INVALID_ARGUMENT,),
                "duration_s",
                accepted_ok=True,
            )
            assert err is None
        assert svc.history.all_moments() == {}
        am.ReportJobProfile(_profile(2), timeout=10)
        if _theta(svc, 2) > 1e6:
            hostile.row(ATTACK).cross_tenant += 1
        assert _theta(svc, 2) == pytest.approx(1.0)
    finally:
        cluster.close()


def test_an_operator_may_share_the_history_across_queues(tmp_path: Path) -> None:
    """store.history_share_across_queues: one history per (user, job name) in every queue; still not
    across users. (The framework prior, every user's jobs of the queue, is off here: shared, it would be
    every queue's, the test below.)"""
    bounds = {"store.history_max_rows_per_queue": 40, "store.history_max_rows_per_user": 4}
    shared = {"store.history_share_across_queues": True, "appmaster.framework_prior": False}
    svc = _service(tmp_path, **{**shared, **bounds})
    assert (svc.history.max_rows_per_queue, svc.history.max_rows_per_user) == (40, 4)
    cluster = Cluster(
        svc.port,
        [
            _app(1, "root.adhoc", "alice", "wordcount"),
            _app(2, "root.prod", "alice", "wordcount"),
            _app(3, "root.prod", "bob", "wordcount"),
        ],
    )
    try:
        am = cluster.am
        am.ReportJobProfile(_profile(1), timeout=10)
        am.ReportAttempts(_done(1, 2, 50.0), timeout=10)
        for n in (2, 3):
            am.ReportJobProfile(_profile(n), timeout=10)
        assert _theta(svc, 2) == pytest.approx(50.0)  # alice's wordcount, another queue: shared
        assert _theta(svc, 3) == pytest.approx(1.0)  # bob's: never
    finally:
        cluster.close()
        svc.stop()


def test_a_new_job_takes_its_queues_framework_prior_and_never_another_queues(tmp_path: Path) -> None:
    """DollyMP Sec. 5.2's third source: a job with no history of its own and no finished task takes the
    moments of its queue's earlier jobs' phase of the same id (here prod's "sort" maps of 40 s), named as
    the framework-wide prior; a job of another queue never reads them, nor adhoc's poisoned 3e7 s; with
    appmaster.framework_prior off the same job starts at the 1 s prior."""
    apps = [
        _app(1, "root.adhoc", "mallory", "wordcount"),
        _app(2, "root.prod", "alice", "sort"),
        _app(3, "root.prod", "bob", "grep"),
        _app(5, "root.other", "bob", "grep"),
    ]
    for on in (True, False):
        (tmp_path / str(on)).mkdir()
        svc = _service(tmp_path / str(on), **{"appmaster.framework_prior": on})
        cluster = Cluster(svc.port, apps)
        try:
            am = cluster.am
            am.ReportJobProfile(_profile(1, "wordcount"), timeout=10)
            am.ReportAttempts(_done(1, 50, ABSURD_S), timeout=10)
            am.ReportJobProfile(_profile(2, "sort"), timeout=10)
            am.ReportAttempts(_done(2, 3, 40.0), timeout=10)
            am.ReportJobProfile(_profile(3, "grep"), timeout=10)
            am.ReportJobProfile(_profile(5, "grep"), timeout=10)
            hint, other = svc.appmaster.hints(_id(3))[PRIO], svc.appmaster.hints(_id(5))[PRIO]
            if on:
                assert (hint.mean, hint.source, hint.samples) == (pytest.approx(40.0), "framework", 3), hint
                assert "framework-wide prior (3 run times" in hint.describe()
            else:
                assert (hint.mean, hint.source) == (pytest.approx(1.0), "prior"), hint
            assert (other.mean, other.source) == (pytest.approx(1.0), "prior"), other
            if other.mean > 1e6 or hint.mean > 1e6:
                hostile.row(ATTACK).cross_tenant += 1
            # its own first task outranks the prior (written to its own history at once, which Sec. 5.2 reads
            # first)
            am.ReportAttempts(_done(3, 1, 12.0), timeout=10)
            assert (_theta(svc, 3), svc.appmaster.hints(_id(3))[PRIO].source) == (
                pytest.approx(12.0),
                "history",
            )
        finally:
            cluster.close()
            svc.stop()

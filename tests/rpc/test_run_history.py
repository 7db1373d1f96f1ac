"""Applications without an AM helper, ordered on their recurring-job history (issue 30 item 5) and their
framework's prior (DollyMP Sec. 5.2, issue 25): the
assembled service on a real loopback socket, driven by StateBatch streams as the shim sends them.

A first run of `etl` in queue root.a has two containers succeed (10 s and 20 s) and leaves the RM; a
second run of `etl` in root.a is then given θ 15 s from that history before any container of its own
ends, `etl` in root.b is not (the queue is part of the key), an application an AM helper described adds
nothing, and a restarted service on the same store still knows the history."""

from __future__ import annotations

import contextlib
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import numpy as np
import pytest
from round_memories import memory_of
from rpc_harness import Stream, app, ask, attempt, full_batch, in_process_service, node, register, res

from pyscheduler.estimate.runtimes import FIRST_TASKS, HISTORY, PRIOR_ESTIMATE, theta_sigma
from pyscheduler.estimate.stats import RunningStats
from pyscheduler.objects.decision import DecisionKind
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.service.round.translate import to_snapshot
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.store.runhistory import AppRunMoments
from pyscheduler.wire import pb, pb_grpc

PRIO = 20
SD = float(np.std([10.0, 20.0], ddof=1))


def _app(n: int, name: str, queue: str, kind: str = "MAPREDUCE") -> Any:
    a = app(n)
    a.name, a.queue, a.application_type = name, queue, kind
    return a


class _Shim:
    """One registered session's Sync stream, with a running seq."""

    def __init__(self, ch: grpc.Channel, first: dict[str, Any]) -> None:
        self.reg = register(ch)
        self.stream = Stream(ch)
        self.seq = 1
        self.first_plan = self.stream.send(full_batch(self.reg.session_id, **first))

    def send(self, **fields: Any) -> Any:
        self.seq += 1
        return self.stream.send(pb.StateBatch(session_id=self.reg.session_id, seq=self.seq, **fields))

    def run_containers(self, n: int, runs_s: list[float], am_first: bool = False) -> None:
        """Containers of application n at PRIO start at 2 s and succeed after `runs_s` (an AM container
        too, when asked: it says nothing of a task's run time)."""
        b = pb.StateBatch(session_id=self.reg.session_id)
        done = pb.StateBatch(session_id=self.reg.session_id)
        cids = [(f"c{n}_{i}", PRIO, False, r) for i, r in enumerate(runs_s)]
        if am_first:
            cids.insert(0, (f"am{n}", 0, True, 500.0))
        for cid, prio, am, run in cids:
            b.containers_allocated.add(
                container_id=cid, attempt_id=attempt(n), node_id="h1:1", priority=prio, am_container=am,
                allocation_request_id=-1, resource=res(512, 1), start_time_ms=2000,
            )  # fmt: skip
            done.containers_completed.add(
                container_id=cid, exit_kind=pb.CONTAINER_EXIT_SUCCESS, finish_time_ms=2000 + int(run * 1000)
            )
        self.send(containers_allocated=b.containers_allocated, asks=[ask(n, PRIO, 0)])
        self.send(containers_completed=done.containers_completed)

    def close(self) -> None:
        self.stream.close()


def _details(plan: Any, n: int) -> list[str]:
    return [p.detail for p in plan.placements if p.attempt_id == attempt(n)]


@contextlib.contextmanager
def _service(tmp_path: Path, **overrides: Any) -> Iterator[tuple[DecisionService, grpc.Channel]]:
    """The assembled service on its SQLite store in `tmp_path`, and a channel to it; stopped after."""
    svc = in_process_service(tmp_path, **overrides)
    try:
        with grpc.insecure_channel(f"127.0.0.1:{svc.port}") as ch:
            yield svc, ch
    finally:
        svc.stop()


def _cluster_with(a: Any) -> dict[str, Any]:
    return {"nodes_upserted": [node("h1:1", 65536, 64)], "apps_upserted": [a]}


def _first_run(ch: grpc.Channel, kind: str = "MAPREDUCE") -> _Shim:
    """`etl` (of type `kind`) in root.a runs two task containers (10 s, 20 s) and its AM's, then leaves
    the RM."""
    shim = _Shim(ch, _cluster_with(_app(1, "etl", "root.a", kind)))
    plan = shim.send(asks=[ask(1, PRIO, 2)])
    assert any("prior, nothing measured" in d for d in _details(plan, 1)), _details(plan, 1)
    shim.run_containers(1, [10.0, 20.0], am_first=True)
    shim.send(apps_removed=[app(1).application_id])
    return shim


def test_a_second_run_in_the_same_queue_is_ordered_on_the_first_runs_history(tmp_path: Path) -> None:
    with _service(tmp_path) as (svc, ch):
        shim = _first_run(ch)
        got = svc.run_history.moments("etl", "root.a", PRIO)
        assert got is not None and (got.runs, got.count) == (1, 2)
        assert got.mean == pytest.approx(15.0) and got.sd == pytest.approx(SD)
        assert svc.run_history.moments("etl", "root.a", 0) is None  # the AM container is no task
        # The next run of etl in root.a, and etl in root.b: neither has a container of its own yet.
        shim.send(apps_upserted=[_app(2, "etl", "root.a"), _app(3, "etl", "root.b")])
        plan = shim.send(asks=[ask(2, PRIO, 1), ask(3, PRIO, 1)])
        (same,) = _details(plan, 2)
        (other,) = _details(plan, 3)
        assert "θ 15 s, σ 7.07 s from the recurring-job history (2 run times)" in same
        assert "θ 1 s, σ 0 s: prior, nothing measured" in other
        # root.b's own first task then gives its θ; root.a's history still comes first for app 2.
        shim.run_containers(3, [40.0])
        plan = shim.send(asks=[ask(2, PRIO, 2), ask(3, PRIO, 1)])
        (same,) = _details(plan, 2)
        (other,) = _details(plan, 3)
        assert "θ 15 s, σ 7.07 s from the recurring-job history (2 run times)" in same
        assert "θ 40 s, σ 0 s from the phase's first tasks (1 run time)" in other
        shim.close()
        # The decision log says where each job's θ/σ came from.
        svc.writer.flush()
        prios = svc.store.query(application_id=app(2).application_id, kinds=[DecisionKind.PRIORITY]).items
        said = "priority 20: θ 15 s, σ 7.07 s from the recurring-job history (2 run times)"
        assert prios and said in prios[0].decision.detail


def test_a_new_application_of_a_known_type_is_ordered_on_its_frameworks_prior(tmp_path: Path) -> None:
    """Sec. 5.2's third source: `report` has no history of its own name, but a Spark application ran in its
    queue before; a Spark application in another queue, or a MapReduce one, has no prior; the
    application's own first task then comes before the prior."""
    with _service(tmp_path) as (svc, ch):
        shim = _first_run(ch, kind="SPARK")
        got = svc.framework_history.moments("SPARK", "root.a", PRIO)
        assert got is not None and (got.runs, got.count, got.mean) == (1, 2, pytest.approx(15.0))
        shim.send(
            apps_upserted=[
                _app(2, "report", "root.a", " spark"),  # YARN compares types without case
                _app(3, "report", "root.b", "SPARK"),
                _app(4, "report", "root.a", "MAPREDUCE"),
            ]
        )
        plan = shim.send(asks=[ask(2, PRIO, 1), ask(3, PRIO, 1), ask(4, PRIO, 1)])
        prior = "θ 15 s, σ 7.07 s from the framework-wide prior (2 run times of earlier applications of its"
        assert prior in _details(plan, 2)[0]
        assert "prior, nothing measured" in _details(plan, 3)[0]
        assert "prior, nothing measured" in _details(plan, 4)[0]
        shim.run_containers(2, [40.0])
        plan = shim.send(asks=[ask(2, PRIO, 2)])
        assert "θ 40 s, σ 0 s from the phase's first tasks (1 run time)" in _details(plan, 2)[0]
        shim.send(apps_removed=[app(2).application_id])
        folded = svc.framework_history.moments("SPARK", "root.a", PRIO)
        assert folded is not None and (folded.runs, folded.count) == (2, 3)
        assert folded.mean == pytest.approx(70.0 / 3)
        shim.close()


def test_an_application_with_an_am_helper_adds_nothing_and_a_restart_keeps_the_history(
    tmp_path: Path,
) -> None:
    with _service(tmp_path) as (svc, ch):
        shim = _first_run(ch)
        shim.send(apps_upserted=[_app(4, "wordcount", "root.a")])
        profile = pb.JobProfile(
            application_id=app(4).application_id,
            job_name="wordcount",
            phases=[pb.PhaseProfile(phase_id="map", tasks=1, demand=res(512, 1), yarn_priority=PRIO)],
            submit_time_ms=1,
        )
        pb_grpc.AppMasterServiceStub(ch).ReportJobProfile(profile, timeout=10)
        shim.send(asks=[ask(4, PRIO, 1)])
        shim.run_containers(4, [99.0])
        shim.send(apps_removed=[app(4).application_id])
        assert svc.run_history.moments("wordcount", "root.a", PRIO) is None
        mr = svc.framework_history.moments("MAPREDUCE", "root.a", PRIO)
        assert mr is not None and mr.count == 2  # etl's run times, not wordcount's
        shim.close()
    with _service(tmp_path) as (again, ch):  # the same store, a new process's worth of state
        assert again.run_history.moments("etl", "root.a", PRIO) == AppRunMoments(1, 2, 15.0, 50.0)
        shim = _Shim(ch, _cluster_with(_app(5, "etl", "root.a")))
        plan = shim.send(asks=[ask(5, PRIO, 1)])
        (detail,) = _details(plan, 5)
        assert "θ 15 s, σ 7.07 s from the recurring-job history (2 run times)" in detail
        shim.close()


def test_sources_in_sec_5_2_order() -> None:
    """History first, then the phase's first tasks, then the prior; and the translation of a mirror with
    both takes the history."""
    past = AppRunMoments(3, 30, 12.0, 29.0 * 4.0)
    own = [50.0, 70.0]
    m = Mirror()
    m.apply(full_batch("s", **_cluster_with(app(1)), asks=[ask(1, PRIO, 3)]))
    m.run_times[(app(1).application_id, PRIO)] = rs = RunningStats()
    for x in own:
        rs.add(x)
    assert theta_sigma(past, rs).source == HISTORY and theta_sigma(past, rs).mean == 12.0
    assert theta_sigma(None, rs).source == FIRST_TASKS and theta_sigma(None, rs).mean == statistics.fmean(own)
    assert theta_sigma(None, None) is PRIOR_ESTIMATE

    class _History:
        def moments(self, app_name: str, queue: str, priority: int) -> AppRunMoments | None:
            return past if (app_name, queue, priority) == ("job1", "default", PRIO) else None

        def framework(self, app_type: str, queue: str, priority: int) -> AppRunMoments | None:
            return None

    (job,) = to_snapshot(m, memory_of(m), 0.0, history=_History())[0].jobs
    assert (job.phases[0].mean, job.phases[0].sd) == (12.0, pytest.approx(2.0))
    (job,) = to_snapshot(m, memory_of(m), 0.0)[0].jobs
    assert job.phases[0].mean == statistics.fmean(own)


def test_the_services_bound_on_keys_forgets_the_least_recently_updated(tmp_path: Path) -> None:
    """`store.run_history_max_keys = 1`: the run of etl in root.b replaces root.a's key."""
    with _service(tmp_path, **{"store.run_history_max_keys": 1}) as (svc, ch):
        shim = _first_run(ch)
        shim.send(apps_upserted=[_app(6, "etl", "root.b")], asks=[ask(6, PRIO, 1)])
        shim.run_containers(6, [5.0])
        shim.send(apps_removed=[app(6).application_id])
        assert svc.run_history.moments("etl", "root.a", PRIO) is None
        assert svc.run_history.moments("etl", "root.b", PRIO) == AppRunMoments(1, 1, 5.0, 0.0)
        assert len(svc.run_history) == 1
        shim.close()


def test_a_tenant_in_another_queue_can_neither_poison_nor_push_out_a_queues_history(tmp_path: Path) -> None:
    """Applications in root.evil named like root.a's job, with 1000 s run times, and a flood of other
    names (more than the key bound): etl in root.a keeps its θ 15 s and its key."""
    with _service(tmp_path, **{"store.run_history_max_keys": 3}) as (svc, ch):
        shim = _first_run(ch)
        for n, name in enumerate(["etl", "f1", "f2", "f3", "f4"], start=10):
            shim.send(apps_upserted=[_app(n, name, "root.evil")], asks=[ask(n, PRIO, 1)])
            shim.run_containers(n, [1000.0])
            shim.send(apps_removed=[app(n).application_id])
        assert svc.run_history.moments("etl", "root.a", PRIO) == AppRunMoments(1, 2, 15.0, 50.0)
        assert svc.run_history.moments("etl", "root.evil", PRIO) is None  # its own queue's oldest, pushed out
        shim.send(apps_upserted=[_app(20, "etl", "root.a")])
        (detail,) = _details(shim.send(asks=[ask(20, PRIO, 1)]), 20)
        assert "θ 15 s, σ 7.07 s from the recurring-job history (2 run times)" in detail
        shim.close()

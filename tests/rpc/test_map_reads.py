"""Reduce copies' map reads (delay assignment) as the AM helper reports them, through the real service:
gRPC over loopback, the SQLite decision log, and its HTTP answer. Each read is logged once as a
`map_read` decision with its reason; reports over the bounds are refused naming the field and the
limit, and nothing of them is logged."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import httpx
import pytest
from rpc_harness import am_session, attempt_report, in_process_service, map_read, node, phase_profile

from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.service.state.mapreads import read_records
from pyscheduler.wire import pb

APP = "application_1700000000000_0001"
TOKEN = "map-reads-token"


def _reduce(copy: int, *reads: Any, clone: bool = False) -> Any:
    a = attempt_report("reduce", 0, copy, pb.ATTEMPT_RUNNING, clone=clone, progress=0.2)
    a.map_reads.extend(reads)
    return a


def _profile() -> Any:
    return pb.JobProfile(
        application_id=APP,
        job_name="delay-assignment",
        submit_time_ms=1,
        phases=[phase_profile("map", 2, 20), phase_profile("reduce", 1, 10, ("map",))],
    )


def _wait(what: str, check: Callable[[], Any], timeout: float = 15.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (got := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)
    return got


@pytest.fixture
def service(tmp_path: Path) -> Iterator[DecisionService]:
    svc = in_process_service(
        tmp_path, **{"http.port": 0, "http.token": TOKEN, "limits.map_reads_per_report": 4}
    )
    try:
        yield svc
    finally:
        svc.stop()


def _logged(service: DecisionService) -> list[dict[str, Any]]:
    """The application's `map_read` decisions as GET /v1/decisions answers them."""
    with httpx.Client(
        base_url=f"http://127.0.0.1:{service.http.port}",
        headers={"Authorization": f"Bearer {TOKEN}"},
        timeout=10,
    ) as http:
        r = http.get("/v1/decisions", params={"application": APP, "kind": "map_read", "limit": 100})
    assert r.status_code == 200, r.text
    items: list[dict[str, Any]] = r.json()["items"]
    return items


def test_reads_reach_the_log_once_each_with_their_reason(service: DecisionService) -> None:
    own = map_read(0, 1, pb.MAP_READ_OWN_COPY, 1.5, "own copy 1")
    late = map_read(1, 0, pb.MAP_READ_FIRST_COPY, 20.25, "omega elapsed")
    first = map_read(0, 0, pb.MAP_READ_OWN_COPY, 0.0, "own copy 0")
    with am_session(service.port, nodes_upserted=[node("h0:1", 4096, 4)]) as (_reg, _stream, am):
        am.ReportJobProfile(_profile(), timeout=10)
        am.ReportAttempts(
            pb.AttemptReports(
                application_id=APP, attempts=[_reduce(1, own, late, clone=True), _reduce(0, first)]
            ),
            timeout=10,
        )
        # sent again (a failed call, an AM that saw the service forget the job): logged once
        am.ReportAttempts(
            pb.AttemptReports(application_id=APP, attempts=[_reduce(1, own, clone=True)]), timeout=10
        )
        items = _wait("three map reads in the log", lambda: len(_logged(service)) >= 3 and _logged(service))
        time.sleep(0.3)
        assert len(_logged(service)) == 3, _logged(service)
        by = {(d["inputs"]["attempt_id"][-1], d["inputs"]["map_task_id"][-1]): d for d in items}
        clone_own = by[("1", "0")]
        assert (
            clone_own["reason"] == "own_copy" and clone_own["task_id"] == "task_1700000000000_0001_r_000000"
        )
        assert clone_own["inputs"]["map_attempt_id"] == "attempt_1700000000000_0001_m_000000_1"
        assert clone_own["inputs"]["is_clone"] is True and clone_own["inputs"]["waited_s"] == 1.5
        fell_back = by[("1", "1")]
        assert fell_back["reason"] == "first_copy" and fell_back["inputs"]["why"] == "omega elapsed"
        assert (
            fell_back["inputs"]["kind"] == "MAP_READ_FIRST_COPY" and fell_back["inputs"]["waited_s"] == 20.25
        )
        assert "omega elapsed" in fell_back["detail"] and "20.2 s" in fell_back["detail"]
        assert by[("0", "0")]["inputs"]["is_clone"] is False
        with httpx.Client(headers={"Authorization": f"Bearer {TOKEN}"}) as http:
            url = f"http://127.0.0.1:{service.http.port}/v1/applications/{APP}/timeline"
            timeline = http.get(url).json()["items"]
        assert sum(d["kind"] == "map_read" for d in timeline) == 3


def test_reports_over_the_bounds_are_refused_naming_field_and_limit(service: DecisionService) -> None:
    ok = map_read(0, 1, pb.MAP_READ_OWN_COPY, 1.0, "own copy 1")
    bad: list[tuple[Any, str]] = [
        ([ok] * 5, "attempts[].map_reads (all): 5 is above the limit 4 (limits.map_reads_per_report)"),
        ([pb.MapRead(**{**_fields(ok), "reason": "x" * 257})], "map_reads[0].reason (length): 257 is above"),
        ([pb.MapRead(**{**_fields(ok), "map_task_id": "t" * 1025})], "map_reads[0].map_task_id (length)"),
        ([pb.MapRead(**{**_fields(ok), "kind": 0})], "attempts[0].map_reads[0].kind: must be set"),
        ([pb.MapRead(**{**_fields(ok), "waited_s": float("nan")})], "attempts[0].map_reads[0].waited_s"),
        ([pb.MapRead(**{**_fields(ok), "waited_s": 1e308})], "waited_s: 1e+308 is above the limit"),
        (
            [pb.MapRead(**{**_fields(ok), "map_attempt_id": "attempt_1700000000000_0001_m_000009_1"})],
            "attempts[0].map_reads[0].map_attempt_id: 'attempt_1700000000000_0001_m_000009_1' is no copy",
        ),
        ([pb.MapRead(**{**_fields(ok), "map_task_id": ""})], "attempts[0].map_reads[0].map_task_id: must be"),
    ]
    with am_session(service.port, nodes_upserted=[node("h0:1", 4096, 4)]) as (_reg, _stream, am):
        am.ReportJobProfile(_profile(), timeout=10)
        for reads, names in bad:
            with pytest.raises(grpc.RpcError) as err:
                am.ReportAttempts(
                    pb.AttemptReports(application_id=APP, attempts=[_reduce(1, *reads)]), timeout=10
                )
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, err.value
            assert names in (err.value.details() or ""), (names, err.value.details())
        plan = am.ReportAttempts(pb.AttemptReports(application_id=APP, attempts=[_reduce(1, ok)]), timeout=10)
        assert plan.application_id == APP  # the application still works
    _wait("the sane report's read", lambda: _logged(service))
    time.sleep(0.3)
    assert [d["inputs"]["map_attempt_id"] for d in _logged(service)] == [ok.map_attempt_id]  # refused: none


def test_records_name_the_copy_read_and_how_long_it_waited() -> None:
    seen: dict[str, set[str]] = {}
    a = _reduce(2, map_read(1, 2, pb.MAP_READ_OWN_COPY, 3.0, "own copy 2"), clone=True)
    (d,) = read_records(APP, [a], seen, now=7.0)
    assert d.kind == "map_read" and d.reason == "own_copy" and d.time == 7.0
    assert d.detail == (
        "reduce clone attempt_1700000000000_0001_r_000000_2 read attempt_1700000000000_0001_m_000001_2 "
        "(own copy 2) after waiting 3.0 s"
    )
    assert read_records(APP, [a], seen) == []
    assert seen == {a.attempt_id: {"task_1700000000000_0001_m_000001"}}


def _fields(m: Any) -> dict[str, Any]:
    return {f.name: getattr(m, f.name) for f in m.DESCRIPTOR.fields}

"""Hypothesis: malformed protobuf thrown at a running service (real socket), and the placement invariant.

No INTERNAL/UNKNOWN status, no crash: every rejection is INVALID_ARGUMENT naming a field of the message,
and the service answers a fresh session after all of it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from round_memories import run_round
from rpc_harness import Stream, register

from pyscheduler import config
from pyscheduler.service.rmproxy import validate
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.service.round.policy import round_for
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.service.state.resources import fits_count
from pyscheduler.wire import pb

FIELD_PATH = re.compile(r"^([a-z_]+)(\[[0-9]+\])?(\.[a-z_]+(\[[^\]]+\])?)*: ")
BAD_STATUS = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DecisionService]:
    d: Path = tmp_path_factory.mktemp("fuzz")
    cfg = config.load(
        None,
        env={},
        overrides={"store.url": str(d / "d.db"), "policy.name": "fcfs", "grpc.port": 0, "http.port": -1},
    )
    svc = DecisionService(cfg)
    svc.start()
    yield svc
    svc.stop()


small = st.integers(min_value=-3, max_value=9000)
ids = st.sampled_from(["", "h1:1", "h2:1", "appattempt_1_0001_000001", "x"])
floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(1.0))
enums = st.integers(min_value=-2, max_value=9)


def resource(draw: Any) -> Any:
    return pb.Resource(
        memory_mb=draw(small), vcores=draw(small), others=draw(st.dictionaries(ids, small, max_size=2))
    )


@st.composite
def batches(draw: Any, session_id: str) -> Any:
    b = pb.StateBatch(
        session_id=draw(st.sampled_from([session_id, "", "nope"])),
        seq=draw(st.integers(min_value=-1, max_value=3)),
        full_resync=draw(st.booleans()),
        rm_time_ms=draw(small),
    )
    for _ in range(draw(st.integers(0, 3))):
        n = b.nodes_upserted.add(node_id=draw(ids), rack=draw(ids), state=draw(enums), speed=draw(floats))
        if draw(st.booleans()):
            n.capacity.CopyFrom(resource(draw))
        n.allocated.CopyFrom(resource(draw))
    for _ in range(draw(st.integers(0, 3))):
        a = b.asks.add(
            attempt_id=draw(ids),
            priority=draw(small),
            allocation_request_id=draw(small),
            num_containers=draw(small),
            locations=draw(st.lists(ids, max_size=2)),
        )
        if draw(st.booleans()):
            a.capability.CopyFrom(resource(draw))
    for _ in range(draw(st.integers(0, 2))):
        b.containers_completed.add(container_id=draw(ids), exit_kind=draw(enums), finish_time_ms=draw(small))
        b.outcomes.add(placement_id=draw(ids), kind=draw(enums), containers=draw(small))
    b.nodes_removed.extend(draw(st.lists(ids, max_size=2)))
    return b


def _send(
    svc: DecisionService, data: bytes, ch: grpc.Channel | None = None
) -> tuple[grpc.StatusCode | None, str, list[Any]]:
    """`data` as the one message of a Sync stream, on `ch` (a session is bound to the connection that
    registered it) or a fresh channel."""
    if ch is None:
        with grpc.insecure_channel(f"127.0.0.1:{svc.port}") as own:
            return _send(svc, data, own)
    call = ch.stream_stream("/dollymp.v1.SchedulerService/Sync", response_deserializer=pb.Plan.FromString)
    try:
        return None, "", list(call(iter([data]), timeout=10))
    except grpc.RpcError as exc:
        return exc.code(), exc.details() or "", []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=200))
def test_random_bytes(service: DecisionService, data: bytes) -> None:
    code, details, plans = _send(service, data)
    assert code not in BAD_STATUS
    if code is not None:
        assert code == grpc.StatusCode.INVALID_ARGUMENT
        assert details.startswith("StateBatch: not a valid protobuf message") or FIELD_PATH.match(details), (
            details
        )
    else:
        assert len(plans) == 1


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_malformed_fields_are_named(service: DecisionService, data: st.DataObject) -> None:
    with grpc.insecure_channel(
        f"127.0.0.1:{service.port}"
    ) as ch:  # a session's batches come on its connection
        sid = register(ch, "fuzz").session_id
        batch = data.draw(batches(sid))
        try:
            validate.state_batch(batch)
            expected = None
        except validate.InvalidMessage as exc:
            expected = str(exc)
            head = exc.path.split(".")[0].split("[")[0]
            assert head in pb.StateBatch.DESCRIPTOR.fields_by_name, exc.path
        code, details, plans = _send(service, batch.SerializeToString(), ch)
    if expected is None:
        assert code is None and len(plans) == 1
        assert plans[0].status in (pb.BATCH_ACCEPTED, pb.BATCH_RESYNC_REQUIRED)
    else:
        assert code == grpc.StatusCode.INVALID_ARGUMENT and details == expected


def test_service_still_serves_after_fuzzing(service: DecisionService) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{service.port}") as ch:
        reg = register(ch, "after")
        s = Stream(ch)
        p = s.send(pb.StateBatch(session_id=reg.session_id, seq=1, full_resync=True))
        assert p.status == pb.BATCH_ACCEPTED
        s.close()


@st.composite
def valid_state(draw: Any) -> Any:
    b = pb.StateBatch(session_id="s", seq=1, full_resync=True)
    for i in range(draw(st.integers(1, 6))):
        b.nodes_upserted.add(
            node_id=f"n{i}:1",
            rack=f"/r{i % 2}",
            state=draw(st.sampled_from([1, 1, 1, 2])),
            speed=1.0,
            capacity=pb.Resource(memory_mb=draw(st.integers(0, 8192)), vcores=draw(st.integers(0, 8))),
            allocated=pb.Resource(memory_mb=draw(st.integers(0, 4096)), vcores=draw(st.integers(0, 4))),
        )
    for j in range(draw(st.integers(0, 6))):
        b.asks.add(
            attempt_id=f"appattempt_1_{j % 3:04d}_000001",
            priority=j,
            allocation_request_id=-1,
            num_containers=draw(st.integers(0, 20)),
            am_container=draw(st.booleans()),
            capability=pb.Resource(memory_mb=draw(st.integers(0, 4096)), vcores=draw(st.integers(0, 4))),
            locations=draw(st.lists(st.sampled_from(["n0", "/r1", "*"]), max_size=2)),
            relax_locality=draw(st.booleans()),
        )
    return b


@settings(max_examples=150, deadline=None)
@given(state=valid_state(), policy=st.sampled_from(["fcfs", "yarn-fcfs", "dollymp"]))
def test_placements_never_exceed_free_room(state: Any, policy: str) -> None:
    validate.state_batch(state)
    m = Mirror()
    m.apply(state)
    free = {nid: n.free() for nid, n in m.nodes.items()}
    result = run_round(round_for(policy), m)
    per_ask: dict[Any, int] = {}
    for p in result.placements:
        node = m.nodes[p.node_id]
        assert node.state == pb.NODE_STATE_RUNNING
        assert fits_count(p.capability, free[p.node_id], p.count) == p.count, (p, free[p.node_id])
        r = free[p.node_id]
        free[p.node_id] = type(r)(
            r.memory_mb - p.capability.memory_mb * p.count, r.vcores - p.capability.vcores * p.count
        )
        per_ask[p.key] = per_ask.get(p.key, 0) + p.count
    for key, n in per_ask.items():
        assert n <= m.asks[key].num_containers
    deferred = {d.key for d in result.deferrals}
    for key, a in m.asks.items():
        if per_ask.get(key, 0) < a.num_containers:
            assert key in deferred, f"{key} neither placed in full nor deferred"
    assert all(math.isfinite(v.memory_mb) for v in free.values())

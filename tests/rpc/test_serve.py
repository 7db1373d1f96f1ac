"""`dollymp serve` as a real process, driven by a real gRPC client over a loopback socket."""

from __future__ import annotations

import math
import time

import grpc
import pytest
from rpc_harness import Service, Stream, app, ask, attempt, full_batch, node, placed_per_node, register

from pyscheduler.objects.decision import DecisionKind
from pyscheduler.store.log import open_store
from pyscheduler.wire import pb, pb_grpc


def test_full_resync_places_within_free_capacity_and_logs(service: Service) -> None:
    with service.channel() as ch:
        reg = register(ch)
        assert reg.policy == "fcfs" and reg.session_id
        s = Stream(ch)
        plan = s.send(
            full_batch(
                reg.session_id,
                nodes_upserted=[node("h1:8041", 4096, 4, alloc=(1024, 1)), node("h2:8041", 2048, 8)],
                apps_upserted=[app(1)],
                asks=[ask(1, 0, 1, mem=1024, cores=1, am=True), ask(1, 20, 10, mem=1024, cores=1)],
            )
        )
        assert plan.status == pb.BATCH_ACCEPTED and plan.in_reply_to_seq == 1
        assert plan.epoch >= reg.epoch
        used = placed_per_node(plan)
        assert used["h1:8041"][0] <= 4096 - 1024 and used["h1:8041"][1] <= 4 - 1
        assert used["h2:8041"][0] <= 2048
        am = [p for p in plan.placements if p.priority == 0]
        assert len(am) == 1 and am[0].count == 1 and am[0].reason == pb.REASON_AM_CONTAINER
        # 3 GB free on h1 + 2 GB on h2 = 5 containers of 1 GB, one of them the AM.
        assert sum(p.count for p in plan.placements) == 5
        assert [(d.priority, d.reason) for d in plan.deferrals] == [(20, pb.REASON_WAITING_FOR_RESOURCES)]
        assert len({p.placement_id for p in plan.placements}) == len(plan.placements)

        # Nothing confirmed yet: the same state again must not place on the reserved room.
        plan2 = s.send(pb.StateBatch(session_id=reg.session_id, seq=2, rm_time_ms=2))
        assert plan2.status == pb.BATCH_ACCEPTED and not plan2.placements and plan2.epoch > plan.epoch

        # The shim drops one placement: its room is free again and gets placed anew.
        dropped = next(p for p in plan.placements if p.node_id == "h2:8041")
        plan3 = s.send(
            pb.StateBatch(
                session_id=reg.session_id,
                seq=3,
                outcomes=[
                    pb.PlacementOutcome(
                        placement_id=dropped.placement_id,
                        kind=pb.PLACEMENT_DROPPED_EXPIRED,
                        containers=dropped.count,
                    )
                ],
            )
        )
        assert placed_per_node(plan3) == {"h2:8041": (1024 * dropped.count, dropped.count)}
        s.close()
    # The log is written by a background writer: the plan may reach the shim before the commit.
    sent = {p.placement_id for p in [*plan.placements, *plan3.placements]}
    log = open_store(service.db)
    try:
        deadline = time.monotonic() + 20
        while True:
            placed = log.query(kinds=[DecisionKind.PLACEMENT], limit=100).items
            ids = {d.decision.inputs["placement_id"] for d in placed}
            if ids == sent or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        assert ids == sent
        assert all(d.decision.application_id == "application_1700000000000_0001" for d in placed)
    finally:
        log.close()


def test_confirmed_containers_keep_room_used(service: Service) -> None:
    with service.channel() as ch:
        reg = register(ch)
        s = Stream(ch)
        plan = s.send(
            full_batch(
                reg.session_id,
                nodes_upserted=[node("h1:1", 2048, 2)],
                apps_upserted=[app(1)],
                asks=[ask(1, 20, 2)],
            )
        )
        p = plan.placements[0]
        assert p.count == 2
        # The shim commits both containers; the node upsert lags behind (allocated still 0), the
        # ask is now satisfied. A new ask must not be placed on the (still full) node.
        containers = [
            pb.ContainerInfo(
                container_id=f"c{i}",
                attempt_id=attempt(1),
                node_id="h1:1",
                priority=20,
                allocation_request_id=-1,
                resource=p.capability,
                placement_id=p.placement_id,
            )
            for i in range(2)
        ]
        plan2 = s.send(
            pb.StateBatch(
                session_id=reg.session_id,
                seq=2,
                containers_allocated=containers,
                asks=[ask(1, 20, 0), ask(1, 30, 1)],
            )
        )
        assert not plan2.placements
        assert [(d.priority, d.reason) for d in plan2.deferrals] == [(30, pb.REASON_WAITING_FOR_RESOURCES)]
        # One container completes: room for exactly one.
        plan3 = s.send(
            pb.StateBatch(
                session_id=reg.session_id,
                seq=3,
                containers_completed=[
                    pb.ContainerCompletion(
                        container_id="c0", exit_kind=pb.CONTAINER_EXIT_SUCCESS, finish_time_ms=5
                    )
                ],
            )
        )
        assert [(x.priority, x.count) for x in plan3.placements] == [(30, 1)]
        s.close()


def test_infeasible_and_locality(service: Service) -> None:
    with service.channel() as ch:
        reg = register(ch)
        s = Stream(ch)
        plan = s.send(
            full_batch(
                reg.session_id,
                nodes_upserted=[node("h1:1", 4096, 4), node("h2:1", 4096, 4, rack="/r2")],
                apps_upserted=[app(1), app(2, submit_ms=2000)],
                asks=[ask(1, 20, 1, mem=8192), ask(2, 20, 2, locations=["h2"], relax=False)],
            )
        )
        reasons = {d.attempt_id: d.reason for d in plan.deferrals}
        assert reasons == {attempt(1): pb.REASON_INFEASIBLE}
        assert {(p.attempt_id, p.node_id, p.count) for p in plan.placements} == {(attempt(2), "h2:1", 2)}
        s.close()


def test_resync_required_not_errors(service: Service) -> None:
    with service.channel() as ch:
        reg = register(ch)
        s = Stream(ch)
        # The first batch after Register must be a full resync.
        p = s.send(pb.StateBatch(session_id=reg.session_id, seq=1))
        assert p.status == pb.BATCH_RESYNC_REQUIRED and "full resync" in p.detail
        p = s.send(pb.StateBatch(session_id="no-such-session", seq=1, full_resync=True))
        assert p.status == pb.BATCH_RESYNC_REQUIRED and "unknown session" in p.detail
        assert p.epoch > reg.epoch  # never dropped by the shim as stale
        p = s.send(full_batch(reg.session_id, seq=1, nodes_upserted=[node("h1:1")]))
        assert p.status == pb.BATCH_ACCEPTED
        p = s.send(pb.StateBatch(session_id=reg.session_id, seq=3))
        assert p.status == pb.BATCH_RESYNC_REQUIRED and "seq gap" in p.detail
        p = s.send(pb.StateBatch(session_id=reg.session_id, seq=4))
        assert p.status == pb.BATCH_RESYNC_REQUIRED
        # Registering again supersedes the old session; the new one works.
        reg2 = register(ch)
        assert reg2.session_id != reg.session_id and reg2.epoch > p.epoch
        p = s.send(pb.StateBatch(session_id=reg.session_id, seq=5))
        assert p.status == pb.BATCH_RESYNC_REQUIRED
        p = s.send(
            full_batch(
                reg2.session_id,
                nodes_upserted=[node("h1:1")],
                apps_upserted=[app(1)],
                asks=[ask(1, 0, 1, am=True)],
            )
        )
        assert p.status == pb.BATCH_ACCEPTED and len(p.placements) == 1
        s.close()


BAD_BATCHES = [
    (
        "nodes_upserted[1].capacity.memory_mb",
        lambda sid: full_batch(sid, nodes_upserted=[node("a:1"), node("b:1", mem=-5)]),
    ),
    ("nodes_upserted[0].speed", lambda sid: full_batch(sid, nodes_upserted=[node("a:1", speed=math.nan)])),
    ("nodes_upserted[0].speed", lambda sid: full_batch(sid, nodes_upserted=[node("a:1", speed=-1.0)])),
    (
        "nodes_upserted[0].state",
        lambda sid: full_batch(sid, nodes_upserted=[node("a:1", state=pb.NODE_STATE_UNSPECIFIED)]),
    ),
    ("nodes_upserted[0].node_id", lambda sid: full_batch(sid, nodes_upserted=[node("")])),
    (
        "asks[0].capability",
        lambda sid: full_batch(sid, asks=[pb.Ask(attempt_id=attempt(1), num_containers=1)]),
    ),
    ("asks[0].num_containers", lambda sid: full_batch(sid, asks=[ask(1, 1, -2)])),
    (
        "containers_completed[0].exit_kind",
        lambda sid: full_batch(sid, containers_completed=[pb.ContainerCompletion(container_id="c1")]),
    ),
    (
        "outcomes[0].kind",
        lambda sid: full_batch(sid, outcomes=[pb.PlacementOutcome(placement_id="p", kind=99)]),
    ),
    ("session_id", lambda sid: pb.StateBatch(seq=1, full_resync=True)),
    ("seq", lambda sid: pb.StateBatch(session_id=sid, seq=0, full_resync=True)),
]


def test_malformed_batches_get_invalid_argument_naming_the_field(service: Service) -> None:
    with service.channel() as ch:
        for path, make in BAD_BATCHES:
            reg = register(ch)
            s = Stream(ch)
            with pytest.raises(grpc.RpcError) as err:
                s.send(make(reg.session_id))
            assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT, path
            assert err.value.details().startswith(f"{path}: "), (path, err.value.details())
        # A rejected batch changed nothing, and the service still answers a new session.
        reg = register(ch)
        s = Stream(ch)
        p = s.send(
            full_batch(
                reg.session_id, nodes_upserted=[node("a:1")], apps_upserted=[app(1)], asks=[ask(1, 1, 1)]
            )
        )
        assert p.status == pb.BATCH_ACCEPTED and [x.node_id for x in p.placements] == ["a:1"]
        s.close()


@pytest.mark.parametrize("garbage", [b"\xff\xff\xff\xff", b"\x0a\x02\xff\xfe", b"\x10"])
def test_garbage_bytes_get_invalid_argument(service: Service, garbage: bytes) -> None:
    with service.channel() as ch:
        raw_sync = ch.stream_stream("/dollymp.v1.SchedulerService/Sync")
        with pytest.raises(grpc.RpcError) as err:
            list(raw_sync(iter([garbage]), timeout=10))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert "StateBatch: not a valid protobuf message" in (err.value.details() or "")
        raw_register = ch.unary_unary("/dollymp.v1.SchedulerService/Register")
        with pytest.raises(grpc.RpcError) as err:
            raw_register(garbage, timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as err:
            pb_grpc.SchedulerServiceStub(ch).Register(pb.RegisterRequest(rm_id=""), timeout=10)
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT and err.value.details().startswith(
            "rm_id:"
        )
        assert register(ch).session_id

"""User limits and the AM share per queue through the real service over loopback gRPC: a StateBatch with
QueueShareInfo (user_limit_factor, maximum_am_resource_percent), two users in one queue, AMs of one queue
over its percent. The plan's deferrals name the reason, the user or queue and the limit; other queues and
users are unaffected."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from round_memories import run_round
from rpc_harness import Stream, app, ask, full_batch, in_process_service, node, register

from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.service.round.policy import round_for
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.wire import pb

NODES = [node(f"h{i}:1", 4096, 4) for i in range(2)]  # 8 slots of 1 GiB, 1 vcore


@pytest.fixture
def svc(tmp_path: Path) -> Iterator[DecisionService]:
    s = in_process_service(tmp_path)  # the default policy: dollymp
    try:
        yield s
    finally:
        s.stop()


def _app(n: int, queue: str, user: str) -> Any:
    a = app(n, submit_ms=1000 * n)
    a.queue, a.user = queue, user
    return a


def _plan(svc: DecisionService, queues: list[Any], apps: list[Any], asks: list[Any]) -> Any:
    with grpc.insecure_channel(f"127.0.0.1:{svc.port}") as ch:
        reg = register(ch)
        stream = Stream(ch)
        try:
            return stream.send(
                full_batch(
                    reg.session_id,
                    nodes_upserted=NODES,
                    apps_upserted=apps,
                    asks=asks,
                    queues=queues,
                    queues_set=True,
                )
            )
        finally:
            stream.close()


def _placed(plan: Any, n: int) -> int:
    return sum(p.count for p in plan.placements if p.attempt_id.endswith(f"_{n:04d}_000001"))


def _deferred(plan: Any, n: int, reason: int) -> list[str]:
    return [
        d.detail for d in plan.deferrals if d.attempt_id.endswith(f"_{n:04d}_000001") and d.reason == reason
    ]


def test_two_users_in_one_queue_each_stop_at_the_user_limit(svc: DecisionService) -> None:
    queues = [  # a: user limit 0.5 x 0.5 = 0.25 of the cluster (2 slots); b: one user may hold all of b
        pb.QueueShareInfo(path="root.a", guaranteed=0.5, maximum=1.0, user_limit_factor=0.5),
        pb.QueueShareInfo(path="root.b", guaranteed=0.5, maximum=1.0, user_limit_factor=1),
    ]
    apps = [_app(1, "a", "alice"), _app(2, "a", "bob"), _app(3, "b", "carol")]
    plan = _plan(svc, queues, apps, [ask(1, 20, 6), ask(2, 20, 6), ask(3, 20, 4)])
    assert (_placed(plan, 1), _placed(plan, 2), _placed(plan, 3)) == (2, 2, 4)
    for n, user in ((1, "alice"), (2, "bob")):
        details = _deferred(plan, n, pb.REASON_QUEUE_SHARE)
        assert details, f"{user}'s refused placements carry no REASON_QUEUE_SHARE deferral"
        assert any(
            d.startswith(f"queue_user_limit: user {user} in root.a would hold 0.375")
            and "user limit 0.250" in d
            for d in details
        ), details
    assert _deferred(plan, 3, pb.REASON_QUEUE_SHARE) == []  # carol's queue and limit are her own
    assert all("user " not in d.detail for d in plan.deferrals if d.attempt_id.endswith("_0003_000001"))


def test_the_ams_of_one_queue_stop_at_its_percent_and_other_queues_are_unaffected(
    svc: DecisionService,
) -> None:
    queues = [  # a's AMs: 0.25 of the cluster (its usable share is the whole idle cluster): 2 of 1 GiB
        pb.QueueShareInfo(
            path="root.a", guaranteed=0.5, maximum=1.0, user_limit_factor=-1, maximum_am_resource_percent=0.25
        ),
        pb.QueueShareInfo(path="root.b", guaranteed=0.5, maximum=1.0, user_limit_factor=-1),
    ]
    apps = [_app(n, "a" if n <= 3 else "b", "u") for n in range(1, 7)]
    plan = _plan(svc, queues, apps, [ask(n, 0, 1, am=True) for n in range(1, 7)])
    assert [_placed(plan, n) for n in range(1, 7)] == [1, 1, 0, 1, 1, 1]  # submit order: a's third AM waits
    details = _deferred(plan, 3, pb.REASON_AM_SHARE_CAP)
    assert details == [
        "queue_am_limit: root.a: its ApplicationMasters would hold 0.375 of the cluster, above the queue's "
        "AM limit 0.250 (maximum-am-resource-percent 0.25 of 1.000)"
    ]
    assert not any(
        d.reason == pb.REASON_AM_SHARE_CAP
        for d in plan.deferrals
        if not d.attempt_id.endswith("_0003_000001")
    )


@pytest.mark.parametrize("round_name", ["yarn-fcfs", "dollymp"])
def test_room_a_user_at_the_limit_leaves_goes_to_the_next_user_in_the_same_round(round_name: str) -> None:
    # FCFS gives alice (first) every slot; the user limit (2 slots) cuts her, and bob gets the room she left
    queues = [
        pb.QueueShareInfo(path="root.a", guaranteed=0.5, maximum=1.0, user_limit_factor=0.5),
        pb.QueueShareInfo(path="root.b", guaranteed=0.5, maximum=1.0, user_limit_factor=0.5),
    ]
    m = Mirror()
    apps = [_app(1, "a", "alice"), _app(2, "a", "bob"), _app(3, "a", "alice")]
    m.apply(
        full_batch(
            "s",
            nodes_upserted=NODES,
            apps_upserted=apps,
            asks=[ask(n, 20, 8) for n in (1, 2, 3)],
            queues=queues,
            queues_set=True,
        )
    )
    result = run_round(round_for(round_name), m)
    placed = {
        n: sum(p.count for p in result.placements if p.key[0].endswith(f"_{n:04d}_000001")) for n in (1, 2, 3)
    }
    assert placed[1] + placed[3] == 2 and placed[2] == 2  # alice's two jobs share her limit; bob gets his
    waiting = [d for d in result.deferrals if d.key[0].endswith("_0003_000001")]
    assert waiting and all(
        d.reason == pb.REASON_QUEUE_SHARE and "user alice in root.a" in d.detail for d in waiting
    )


def test_minimum_user_limit_percent_splits_a_queue_among_its_active_users(svc: DecisionService) -> None:
    """One queue with the whole cluster (8 slots), factor -1, minimum-user-limit-percent 25: with four users
    asking, each is held to max(1/4, 25%) of the queue, 2 slots; alone, alice would take all 8."""
    queues = [pb.QueueShareInfo(path="root.a", guaranteed=1.0, maximum=1.0, user_limit_factor=-1,
                                minimum_user_limit_percent=25)]  # fmt: skip
    users = ["alice", "bob", "carol", "dave"]
    plan = _plan(
        svc, queues, [_app(i + 1, "a", u) for i, u in enumerate(users)], [ask(i + 1, 20, 8) for i in range(4)]
    )
    assert [_placed(plan, i + 1) for i in range(4)] == [2, 2, 2, 2]
    details = _deferred(plan, 1, pb.REASON_QUEUE_SHARE)
    assert any(
        "above the user limit 0.250" in d and "4 active users, minimum-user-limit-percent 25" in d
        for d in details
    ), details
    plan = _plan(svc, queues, [_app(5, "a", "alice")], [ask(5, 20, 8)])
    assert _placed(plan, 5) == 8

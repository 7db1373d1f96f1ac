"""The live service's rounds under the RM's queue shares (service/round/queueshare.py), for the FCFS placer
and a core policy: two queues under contention each get their guarantee in one round; an idle queue's share is
lent; a maximum holds; a malformed queue list is refused naming its field."""

from __future__ import annotations

from typing import Any

import pytest
from round_memories import run_round
from rpc_harness import app, ask, full_batch, node

from pyscheduler.service.rmproxy.validate import InvalidMessage, state_batch
from pyscheduler.service.round.policy import round_for
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.wire import pb

NODES = [node(f"h{i}:1", 4096, 4) for i in range(2)]  # 8 GiB, 8 vcores in all


def _queues(b_max: float = 1.0, ulf: float = 1.0) -> list[Any]:
    return [
        pb.QueueShareInfo(path="root.a", guaranteed=0.5, maximum=1.0, user_limit_factor=ulf),
        pb.QueueShareInfo(path="root.b", guaranteed=0.5, maximum=b_max, user_limit_factor=ulf),
    ]


def _app(n: int, queue: str, submit_ms: int) -> Any:
    a = app(n, submit_ms=submit_ms)
    a.queue = queue
    return a


def _mirror(asks: list[Any], queues: list[Any] | None) -> Mirror:
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=NODES,
            apps_upserted=[_app(1, "root.a", 1000), _app(2, "b", 2000)],
            asks=asks,
            queues=queues or [],
            queues_set=queues is not None,
        )
    )
    return m


def _placed(result: Any, n: int) -> int:
    return sum(p.count for p in result.placements if p.key[0].endswith(f"_{n:04d}_000001"))


@pytest.mark.parametrize("round_name", ["yarn-fcfs", "dollymp"])
def test_two_queues_under_contention_each_get_their_guarantee_in_one_round(round_name: str) -> None:
    asks = [ask(1, 20, 8, mem=1024, cores=1), ask(2, 20, 8, mem=1024, cores=1)]
    without = run_round(round_for(round_name), _mirror(asks, None))
    assert _placed(without, 1) + _placed(without, 2) == 8
    result = run_round(round_for(round_name), _mirror(asks, _queues()))
    assert (_placed(result, 1), _placed(result, 2)) == (4, 4)
    refused = [d for d in result.deferrals if d.reason == pb.REASON_QUEUE_SHARE]
    assert refused and all("queue_" in d.detail for d in refused)


@pytest.mark.parametrize("round_name", ["yarn-fcfs", "dollymp"])
def test_an_idle_queues_share_is_lent(round_name: str) -> None:
    # one user borrows above the guarantee only with user-limit-factor > 1, as under CapacityScheduler
    result = run_round(round_for(round_name), _mirror([ask(1, 20, 8, mem=1024, cores=1)], _queues(ulf=2)))
    assert _placed(result, 1) == 8  # b has no demand: a borrows it all (work-conserving)
    capped = run_round(round_for(round_name), _mirror([ask(1, 20, 8, mem=1024, cores=1)], _queues(ulf=1)))
    assert _placed(capped, 1) == 4  # user-limit-factor 1: the user stops at the queue's guarantee
    assert any("user u in root.a" in d.detail for d in capped.deferrals if d.reason == pb.REASON_QUEUE_SHARE)


def test_a_queue_never_exceeds_its_maximum() -> None:
    result = run_round(
        round_for("yarn-fcfs"), _mirror([ask(2, 20, 8, mem=1024, cores=1)], _queues(b_max=0.5))
    )
    assert _placed(result, 2) == 4
    assert any("maximum share" in d.detail for d in result.deferrals if d.reason == pb.REASON_QUEUE_SHARE)


def test_queues_replace_on_queues_set_and_a_bad_list_is_refused_naming_the_field() -> None:
    m = _mirror([], _queues())
    assert m.queue_book is not None and set(m.queue_book.leaves) == {"root.a", "root.b"}
    m.apply(pb.StateBatch(session_id="s", seq=2, queues_set=True))
    assert m.queue_book is None  # an empty list: no tree, no shares
    bad = full_batch(
        "s", queues=[pb.QueueShareInfo(path="root.a", guaranteed=0.9, maximum=0.5)], queues_set=True
    )
    with pytest.raises(InvalidMessage, match=r"queues: queues\[0\]"):
        state_batch(bad)

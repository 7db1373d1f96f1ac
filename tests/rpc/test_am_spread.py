"""AM containers are spread over the nodes (service/round/coreround.py): the node with the fewest AM
containers that has room, live ones and those placed earlier in the round counted; other containers stay where
the core put them."""

from __future__ import annotations

from collections import Counter

from round_memories import memory_of
from rpc_harness import app, ask, attempt, full_batch, node

from pyscheduler import policies
from pyscheduler.service.round.coreround import core_round
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.wire import pb


def _mirror(apps: int, *, live_am_on: str | None = None, full: str | None = None) -> Mirror:
    nodes = [node(f"h{i}:1", 8192, 8, alloc=(8192, 8) if f"h{i}:1" == full else (0, 0)) for i in range(4)]
    batch = full_batch(
        "s",
        nodes_upserted=nodes,
        apps_upserted=[app(n, submit_ms=1000 + n) for n in range(1, apps + 1)],
        asks=[ask(n, 0, 1, mem=512, am=True) for n in range(1, apps + 1)] + [ask(1, 20, 6, mem=512)],
    )
    if live_am_on is not None:
        batch.apps_upserted.append(app(99))
        batch.containers_allocated.add(
            container_id="c-am-99",
            attempt_id=attempt(99),
            node_id=live_am_on,
            priority=0,
            allocation_request_id=-1,
            resource=pb.Resource(memory_mb=512, vcores=1),
            am_container=True,
        )
    m = Mirror()
    m.apply(batch)
    return m


def _round(m: Mirror) -> list[tuple[str, int, bool]]:
    result = core_round(policies.get_policy("dollymp"), clock=lambda: 10.0)(m, memory_of(m))
    return [(p.node_id, p.count, m.asks[p.key].am_container) for p in result.placements]


def test_am_containers_of_a_round_go_to_distinct_nodes() -> None:
    placed = _round(_mirror(4))
    ams = Counter(n for n, c, am in placed for _ in range(c) if am)
    assert sum(ams.values()) == 4 and set(ams.values()) == {1}, placed  # one AM per node
    assert sum(c for _, c, am in placed if not am) == 6, placed  # the tasks are all placed too


def test_a_node_with_a_live_am_is_passed_over_and_a_full_node_gets_none() -> None:
    placed = _round(_mirror(2, live_am_on="h0:1", full="h1:1"))
    ams = sorted(n for n, c, am in placed for _ in range(c) if am)
    assert ams == ["h2:1", "h3:1"], placed

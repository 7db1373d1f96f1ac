"""YARN application priority reaches the core over the wire and orders jobs of equal DollyMP class."""

from __future__ import annotations

import numpy as np
import pytest
from rpc_harness import app, ask, full_batch, node

from pyscheduler.objects import Job, Phase, Resources
from pyscheduler.policies import get_policy
from pyscheduler.policies.model import job_order
from pyscheduler.service.round.round_memory import RoundMemory
from pyscheduler.service.round.translate import to_snapshot
from pyscheduler.service.state.mirror import Mirror


def test_job_order_breaks_class_ties_by_application_priority_then_arrival() -> None:
    classes = np.array([1, 1, 1, 0])
    arrival = np.array([0.0, 1.0, 2.0, 3.0])
    order = job_order(classes, arrival, np.array([0, 5, 0, 0]))
    # class 0 first whatever its priority; within class 1 the priority-5 job, then by arrival
    assert order.tolist() == [3, 1, 0, 2]
    assert job_order(classes, arrival, np.zeros(4, np.int64)).tolist() == [3, 0, 1, 2]


def _mirror(priorities: tuple[int, int]) -> Mirror:
    m = Mirror()
    apps = [app(1, submit_ms=1000), app(2, submit_ms=2000)]
    for a, p in zip(apps, priorities, strict=True):
        a.priority = p
    m.apply(
        full_batch(
            "s", nodes_upserted=[node("h1:1")], apps_upserted=apps, asks=[ask(1, 20, 2), ask(2, 20, 2)]
        )
    )
    return m


@pytest.mark.parametrize(("priorities", "first"), [((0, 0), 1), ((0, 7), 2), ((3, 1), 1)])
def test_wire_priority_orders_equal_jobs(priorities: tuple[int, int], first: int) -> None:
    snap, _, _ = to_snapshot(_mirror(priorities), RoundMemory(), 5.0)
    assert [j.app_priority for j in snap.jobs] == list(priorities)
    decisions = get_policy("dollymp").decide(snap)
    ranked = sorted(decisions.priorities, key=lambda p: p.rank)
    assert ranked[0].priority == ranked[1].priority  # the same DollyMP class: the tie-break decides
    assert ranked[0].job_id == f"application_1700000000000_{first:04d}"


def test_job_refuses_a_non_integer_priority() -> None:
    with pytest.raises(ValueError, match="app_priority"):
        Job("j", 0.0, [Phase("p", 1, Resources((1.0,)), 1.0, 0.0)], app_priority=1.5)  # type: ignore[arg-type]

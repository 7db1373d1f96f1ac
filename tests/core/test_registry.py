"""The policy registry and the fcfs policy through the public interface."""

from __future__ import annotations

import pytest

from pyscheduler.objects import DecisionKind, Resources
from pyscheduler.objects.job import Attempt
from pyscheduler.policies import Snapshot, SnapshotError, get_policy, policy_names

from .helpers import cluster, job


def test_registry_lists_and_rejects_unknown() -> None:
    assert "fcfs" in policy_names()
    with pytest.raises(ValueError, match="unknown policy 'nope'"):
        get_policy("nope")
    with pytest.raises(ValueError, match="bad options"):
        get_policy("fcfs", bogus=1)


def test_fcfs_orders_by_arrival_and_first_fit() -> None:
    c = cluster((4, 4), (4, 4))
    late = job("late", 5.0, ("m", 4, (1, 1), 1, 0, ()))
    early = job("early", 1.0, ("m", 6, (1, 1), 1, 0, ()))
    d = get_policy("fcfs").decide(Snapshot(0.0, c, [late, early]))
    placed = d.placements
    assert [p.job_id for p in placed[:6]] == ["early"] * 6
    assert [p.node_id for p in placed[:6]] == ["n0"] * 4 + ["n1"] * 2  # first fit in node order
    assert sum(p.job_id == "late" for p in placed) == 2
    assert [(x.job_id, x.tasks, x.reason) for x in d.deferrals] == [("late", 2, "waiting_for_resources")]
    kinds = {r.kind for r in d.to_records()}
    assert {DecisionKind.PRIORITY, DecisionKind.PLACEMENT, DecisionKind.DEFERRAL} <= kinds


def test_fcfs_infeasible_and_kills_and_bad_dims() -> None:
    c = cluster((2, 2))
    big = job("big", 0.0, ("m", 1, (3, 1), 1, 0, ()))
    small = job("small", 1.0, ("m", 1, (1, 1), 1, 0, ()))
    p = small.phases[0]
    p.start_copy(0)
    p.start_copy(0)
    p.end_copy(0, succeeded=True)
    att = Attempt("a2", "small", "m", 0, "n0", True, 0.0)
    d = get_policy("fcfs").decide(Snapshot(0.0, c, [big, small], attempts=[att]))
    assert [(x.job_id, x.reason) for x in d.deferrals] == [("big", "infeasible")]
    assert [(k.attempt_id, k.reason) for k in d.kills] == [("a2", "first_copy_finished")]
    three = job("three", 0.0, ("m", 1, (1, 1, 1), 1, 0, ()))
    with pytest.raises(SnapshotError, match=r"Job\['three'\].*3 dims"):
        get_policy("fcfs").decide(Snapshot(0.0, c, [three]))
    assert Resources.of(1, 1).dims == 2


def test_removed_nodes_get_nothing_and_capacity_updates_count() -> None:
    c = cluster((4, 4), (4, 4), (2, 2))
    c.remove("n0")
    big = job("big", 0.0, ("m", 2, (4, 4), 1, 0, ()))
    small = job("small", 1.0, ("m", 3, (1, 1), 1, 0, ()))
    for name in ("dollymp", "fcfs", "dolly"):
        d = get_policy(name).decide(Snapshot(0.0, c, [big, small]))
        assert all(p.node_id != "n0" for p in d.placements)
        assert sum(p.job_id == "big" and not p.is_clone for p in d.placements) == 1  # only n1 holds one
    c.upsert("n2", Resources.of(8, 8))  # n2 grows: the second big task now fits there
    d = get_policy("dollymp").decide(Snapshot(0.0, c, [big, small]))
    assert sorted(p.node_id for p in d.placements if p.job_id == "big" and not p.is_clone) == ["n1", "n2"]

"""State objects: validation of bad input, DAG checks, task/copy bookkeeping, the array-native cluster."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyscheduler.objects import ClusterState, Job, Node, Phase, Resources, TaskState

from .helpers import job


def test_resources_reject_negative_and_nan() -> None:
    with pytest.raises(ValueError, match=r"values\[1\]"):
        Resources.of(1, -2)
    with pytest.raises(ValueError, match=r"values\[0\]"):
        Resources.of(math.nan, 2)
    assert Resources.of(1, 2, 3).dims == 3  # any number of dimensions
    assert (Resources.of(5, 5) - Resources.of(6, 1)).values == (0.0, 4.0)


def test_phase_rejects_bad_stats_and_zero_demand() -> None:
    with pytest.raises(ValueError, match="mean"):
        Phase("m", 1, Resources.of(1, 1), -1.0, 0.0)
    with pytest.raises(ValueError, match="sd"):
        Phase("m", 1, Resources.of(1, 1), 1.0, math.inf)
    with pytest.raises(ValueError, match="demand"):
        Phase("m", 1, Resources.of(0, 0), 1.0, 0.0)
    with pytest.raises(ValueError, match="num_tasks"):
        Phase("m", 0, Resources.of(1, 1), 1.0, 0.0)


def test_dag_cycle_and_unknown_parent_are_named() -> None:
    with pytest.raises(ValueError, match=r"cycle through \['a', 'b'\]"):
        job("j", 0, ("a", 1, (1, 1), 1, 0, ("b",)), ("b", 1, (1, 1), 1, 0, ("a",)))
    with pytest.raises(ValueError, match="unknown phase 'zz'"):
        job("j", 0, ("a", 1, (1, 1), 1, 0, ("zz",)))


def test_topological_order_and_readiness() -> None:
    j = job(
        "j", 0, ("r", 1, (1, 1), 1, 0, ("m1", "m2")), ("m1", 2, (1, 1), 1, 0, ()), ("m2", 1, (1, 1), 1, 0, ())
    )
    assert j.topo.index(0) > j.topo.index(1) and j.topo.index(0) > j.topo.index(2)
    assert not j.ready(0)
    for k in (1, 2):
        p = j.phases[k]
        for t in range(p.num_tasks):
            p.start_copy(t)
            p.end_copy(t, succeeded=True)
    assert j.ready(0)


def test_copies_and_clones_bookkeeping() -> None:
    p = Phase("m", 2, Resources.of(1, 1), 1.0, 0.0)
    assert p.start_copy(0) is False  # the original
    assert p.start_copy(0) is True  # a clone
    assert p.num_pending == 1 and p.copies[0] == 2 and p.peak[0] == 2
    p.end_copy(0, succeeded=False)
    assert p.state[0] == TaskState.RUNNING
    p.end_copy(0, succeeded=True)
    assert p.finished is False and p.num_finished == 1 and p.num_remaining == 1
    p.start_copy(1)
    p.end_copy(1, succeeded=False)
    assert p.state[1] == TaskState.PENDING and p.num_pending == 1
    with pytest.raises(ValueError, match="already finished"):
        p.start_copy(0)


def test_cluster_state_incremental_updates() -> None:
    c = ClusterState.from_nodes(
        [Node("a", Resources.of(4, 8)), Node("b", Resources.of(2, 2), Resources.of(1, 1))]
    )
    assert c.free.tolist() == [[4, 8], [1, 1]]
    c.allocate("a", Resources.of(3, 2))
    c.release("b", Resources.of(5, 5))
    assert c.free.tolist() == [[1, 6], [2, 2]]  # release never exceeds capacity
    for i in range(40):  # growth keeps indices stable
        c.upsert(f"x{i}", Resources.of(1, 1))
    assert c.index["b"] == 1 and c.size == 42
    c.remove("a")
    assert not c.active[0] and c.free[0].tolist() == [0, 0]
    np.testing.assert_allclose(c.total_capacity(), [2 + 40, 2 + 40])
    with pytest.raises(KeyError, match="unknown node 'zz'"):
        c.set_free("zz", Resources.of(1, 1))


def test_cluster_rejects_zero_capacity_and_bad_arrays() -> None:
    with pytest.raises(ValueError, match="capacity must be non-zero"):
        Node("z", Resources.of(0, 0))
    with pytest.raises(ValueError, match="node 'b' has zero capacity"):
        ClusterState.from_arrays(["a", "b"], np.array([[1.0, 1.0], [0.0, 0.0]]), np.zeros((2, 2)))
    with pytest.raises(ValueError, match="node 'a' free must be finite"):
        ClusterState.from_arrays(["a"], np.array([[1.0, 1.0]]), np.array([[np.nan, 1.0]]))
    j = Job("j", 0.0, [Phase("m", 1, Resources.of(1, 1, 1), 1.0, 0.0)])
    assert j.total_tasks() == 1


def test_distinct_capacities_follow_updates() -> None:
    c = ClusterState.from_nodes([Node("a", Resources.of(4, 8)), Node("b", Resources.of(4, 8))])
    assert c.distinct_capacities().tolist() == [[4, 8]]
    np.testing.assert_allclose(c.total_capacity(), [8, 16])
    c.upsert("b", Resources.of(16, 32))
    assert c.distinct_capacities().tolist() == [[4, 8], [16, 32]]
    np.testing.assert_allclose(c.total_capacity(), [20, 40])
    c.remove("a")
    assert c.distinct_capacities().tolist() == [[16, 32]]

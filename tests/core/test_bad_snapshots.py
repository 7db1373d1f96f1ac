"""Bad snapshots get a clear error naming the field, or an 'infeasible' decision; never a crash."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyscheduler.objects import ClusterState, Job, Node, Phase, Resources
from pyscheduler.policies import Snapshot, SnapshotError, get_policy

from .helpers import cluster, job

POLICIES = ["dollymp", "dolly", "fcfs"]


@pytest.mark.parametrize("values", [(1.0, -2.0), (math.nan, 1.0), (1.0, math.inf)])
def test_negative_or_nan_demand_is_rejected(values: tuple[float, float]) -> None:
    with pytest.raises(ValueError, match=r"Resources.values\[\d\] must be finite and >= 0"):
        Phase("m", 1, Resources(values), 1.0, 0.0)


def test_zero_capacity_node_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"Node\['z'\].capacity must be non-zero"):
        ClusterState.from_nodes([Node("z", Resources.of(0, 0))])
    with pytest.raises(ValueError, match="zero capacity"):
        ClusterState.from_arrays(["z"], np.zeros((1, 2)), np.zeros((1, 2)))


def test_dag_cycle_is_rejected() -> None:
    with pytest.raises(ValueError, match=r"Job\['loop'\].phases: the DAG has a cycle"):
        job(
            "loop",
            0.0,
            ("a", 1, (1, 1), 1, 0, ("c",)),
            ("b", 1, (1, 1), 1, 0, ("a",)),
            ("c", 1, (1, 1), 1, 0, ("b",)),
        )


@pytest.mark.parametrize("name", POLICIES)
def test_task_larger_than_every_node_is_infeasible(name: str) -> None:
    c = cluster((4, 8), (8, 4))
    big = job("big", 0.0, ("m", 3, (8, 8), 10, 1, ()))  # each node lacks one dimension
    ok = job("ok", 1.0, ("m", 2, (1, 1), 10, 1, ()))
    d = get_policy(name).decide(Snapshot(0.0, c, [big, ok]))
    assert [(x.job_id, x.tasks, x.reason) for x in d.deferrals] == [("big", 3, "infeasible")]
    assert {p.job_id for p in d.placements} == {"ok"}
    assert "exceeds every node" in d.deferrals[0].detail


@pytest.mark.parametrize("name", POLICIES)
def test_dimension_mismatch_names_the_job(name: str) -> None:
    c = cluster((4, 8))
    three = Job("three", 0.0, [Phase("m", 1, Resources.of(1, 1, 1), 1.0, 0.0)])
    with pytest.raises(SnapshotError, match=r"Job\['three'\].phases\['m'\].demand has 3 dims"):
        get_policy(name).decide(Snapshot(0.0, c, [three]))


@pytest.mark.parametrize("name", POLICIES)
def test_nan_time_and_duplicate_jobs(name: str) -> None:
    c = cluster((4, 8))
    a = job("a", 0.0, ("m", 1, (1, 1), 1, 0, ()))
    with pytest.raises(SnapshotError, match=r"Snapshot\.time must be finite"):
        get_policy(name).decide(Snapshot(math.nan, c, [a]))
    with pytest.raises(SnapshotError, match="duplicate job id 'a'"):
        get_policy(name).decide(Snapshot(0.0, c, [a, job("a", 1.0, ("m", 1, (1, 1), 1, 0, ()))]))


class NaNEstimator:
    def estimate(self, job: Job, phase: Phase) -> tuple[float, float]:
        return math.nan, 1.0


def test_nan_statistics_from_an_estimator_are_named() -> None:
    c = cluster((4, 8))
    a = job("a", 0.0, ("m", 1, (1, 1), 1, 0, ()))
    with pytest.raises(SnapshotError, match=r"estimate for Job\['a'\].phases\['m'\]"):
        get_policy("dollymp").decide(Snapshot(0.0, c, [a], estimator=NaNEstimator()))


def test_empty_snapshot_and_no_free_nodes() -> None:
    for name in POLICIES:
        assert get_policy(name).decide(Snapshot(0.0, cluster((4, 8)), [])).num_placements == 0
    full = cluster((4, 8), free=[(0, 0)])
    a = job("a", 0.0, ("m", 2, (1, 1), 1, 0, ()))
    d = get_policy("dollymp").decide(Snapshot(0.0, full, [a]))
    assert d.num_placements == 0 and [x.reason for x in d.deferrals] == ["waiting_for_resources"]


def test_bad_policy_options_are_named() -> None:
    with pytest.raises(ValueError, match="max_clones must be 0, 1, 2 or 3"):
        get_policy("dollymp", max_clones=5)
    with pytest.raises(ValueError, match="clone_rule"):
        get_policy("dollymp", clone_rule="always")
    with pytest.raises(ValueError, match="beta"):
        get_policy("dolly", beta=2.0)

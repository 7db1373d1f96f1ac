"""The placement engine's shortcuts (a demand no node has room for is not placed again in the round; a copy
rule skips its scan when no node has room for any running task's copy) change no decision: the FIFO
baselines decide the same with the shortcuts switched off."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyscheduler.objects import Attempt, ClusterState, Job, Phase, Resources
from pyscheduler.policies import Decisions, Snapshot, get_policy
from pyscheduler.policies.placement import PlacementEngine


@dataclass(frozen=True, slots=True)
class _Progressing(Attempt):
    progress: float = 0.0


def _queue(seed: int, n_nodes: int, n_jobs: int) -> Snapshot:
    """A FIFO queue longer than the cluster: jobs of one or two demands, some tasks running."""
    rng = np.random.default_rng(seed)
    cap = rng.integers(2, 9, size=(n_nodes, 2)).astype(float)
    free = np.floor(cap * rng.random((n_nodes, 2)))
    cluster = ClusterState.from_arrays([f"n{i}" for i in range(n_nodes)], cap, free, ("cpu", "mem"))
    shapes = [(1.0, 1.0), (2.0, 1.0), (1.0, 3.0), (9.0, 9.0)]  # the last fits no node
    jobs, attempts = [], []
    for j in range(n_jobs):
        phases = [
            Phase(
                f"p{k}", int(rng.integers(1, 6)), Resources(shapes[int(rng.integers(0, 4))]), 20.0, 5.0, par
            )
            for k, par in enumerate([(), ("p0",)][: int(rng.integers(1, 3))])
        ]
        job = Job(f"j{j}", float(j), phases)
        p = job.phases[0]
        for t in range(p.num_tasks):
            u = rng.random()
            if u < 0.5:
                p.start_copy(t)
                if u < 0.1:
                    p.end_copy(t, succeeded=True)
                else:
                    attempts.append(
                        _Progressing(
                            f"a{j}-{t}",
                            job.job_id,
                            "p0",
                            t,
                            f"n{int(rng.integers(0, n_nodes))}",
                            False,
                            float(rng.uniform(0, 9)),
                            float(rng.uniform(0.01, 0.99)),
                        )
                    )
        jobs.append(job)
    return Snapshot(100.0, cluster, jobs, attempts)


def _key(d: Decisions) -> tuple[object, ...]:
    return (list(d.iter_placements()), d.deferrals, d.priorities, d.kills)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 8), st.integers(1, 40))
@pytest.mark.parametrize(
    "policy", ["capacity", "capacity(min_runtime=0;speculative_cap=1)", "fifo", "mantri", "srpt"]
)
def test_shortcuts_change_no_decision(policy: str, seed: int, n_nodes: int, n_jobs: int) -> None:
    from pyscheduler.sim.runner import parse_policy

    _, name, opts = parse_policy(policy)
    fast = get_policy(name, **opts).decide(_queue(seed, n_nodes, n_jobs))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(PlacementEngine, "is_full", lambda self, demand: False)
        mp.setattr(PlacementEngine, "room_for_any", lambda self, demands: True)
        slow = get_policy(name, **opts).decide(_queue(seed, n_nodes, n_jobs))
    assert _key(fast) == _key(slow)


def test_full_demand_is_remembered_until_released() -> None:
    cap = np.array([[4.0, 4.0], [2.0, 2.0]])
    engine = PlacementEngine(cap, cap.copy(), np.array([True, True]))
    from pyscheduler.policies.placement import Entry

    got = engine.place_group([Entry(0, 0, np.array([2.0, 2.0]), np.arange(5))], best_fit=False)
    assert len(got[0].tasks) == 3  # two on the 4x4 node, one on the 2x2
    assert not engine.room_for_any([(2.0, 2.0)]) and engine.is_full((2.0, 2.0))
    again = engine.place_group([Entry(0, 0, np.array([2.0, 2.0]), np.arange(2))], best_fit=False)
    assert len(again[0].tasks) == 0
    engine.release(1, np.array([2.0, 2.0]))
    assert not engine.is_full((2.0, 2.0)) and engine.room_for_any([(2.0, 2.0)])
    back = engine.place_group([Entry(0, 0, np.array([2.0, 2.0]), np.arange(2))], best_fit=False)
    assert back[0].nodes.tolist() == [1]

"""Small builders for core tests."""

from __future__ import annotations

from pyscheduler.objects import ClusterState, Job, Node, Phase, Resources


def cluster(*caps: tuple[float, ...], free: list[tuple[float, ...]] | None = None) -> ClusterState:
    nodes = [
        Node(f"n{i}", Resources(c), None if free is None else Resources(free[i])) for i, c in enumerate(caps)
    ]
    return ClusterState.from_nodes(nodes, dims=tuple(f"r{d}" for d in range(len(caps[0]))))


def job(
    job_id: str,
    arrival: float,
    *phases: tuple[str, int, tuple[float, ...], float, float, tuple[str, ...]],
    name: str = "",
) -> Job:
    return Job(
        job_id, arrival, [Phase(p, n, Resources(d), m, s, par) for p, n, d, m, s, par in phases], name=name
    )

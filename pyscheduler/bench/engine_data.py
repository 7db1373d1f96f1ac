"""Random snapshots for the engine benchmark: heavy-tailed multi-phase jobs on heterogeneous nodes."""

from __future__ import annotations

import numpy as np

from pyscheduler.objects import ClusterState, Job, Phase, Resources
from pyscheduler.policies import Snapshot

_CPUS = np.array([8, 16, 24, 32, 48], dtype=np.float64)
_MB_PER_CPU = np.array([2048, 4096, 8192], dtype=np.float64)


def random_cluster(nodes: int, rng: np.random.Generator) -> ClusterState:
    """Heterogeneous nodes; each has a random part of its capacity free (a fifth are full)."""
    cpu = rng.choice(_CPUS, nodes)
    mem = cpu * rng.choice(_MB_PER_CPU, nodes)
    cap = np.stack([cpu, mem], axis=1)
    frac = rng.random(nodes)
    frac[rng.random(nodes) < 0.2] = 0.0
    free = np.stack([np.floor(cpu * frac), np.floor(mem * frac / 512.0) * 512.0], axis=1)
    return ClusterState.from_arrays([f"node{i:06d}" for i in range(nodes)], cap, free)


def random_jobs(jobs: int, rng: np.random.Generator) -> list[Job]:
    """Jobs with Pareto-distributed task counts (tail index 1.3, capped at 5000), 1-3 chained phases,
    part of the first phase already finished or running (some with clones)."""
    out: list[Job] = []
    sizes = np.minimum(5000, np.ceil((rng.pareto(1.3, jobs) + 1.0) * 3.0)).astype(int)
    for i in range(jobs):
        n_phases = int(rng.integers(1, 4))
        phases: list[Phase] = []
        n = int(sizes[i])
        for k in range(n_phases):
            mean = float(rng.lognormal(3.0, 0.8))
            demand = Resources.of(
                float(rng.choice([1, 1, 1, 2, 4])), float(rng.choice([1024, 2048, 4096, 8192]))
            )
            parents = (f"p{k - 1}",) if k else ()
            phases.append(Phase(f"p{k}", n, demand, mean, mean * float(rng.uniform(0.2, 1.5)), parents))
            n = max(1, n // 4)
        first = phases[0]
        done = int(first.num_tasks * rng.random() * 0.5)
        running = int((first.num_tasks - done) * rng.random() * 0.5)
        for t in range(done):
            first.start_copy(t)
            first.end_copy(t, succeeded=True)
        for t in range(done, done + running):
            first.start_copy(t)
            if rng.random() < 0.2:
                first.start_copy(t)
        out.append(Job(f"job{i:06d}", float(i), phases, name=f"recurring{i % 50}"))
    return out


def random_snapshot(jobs: int, nodes: int, seed: int = 0) -> Snapshot:
    rng = np.random.default_rng(seed)
    cluster = random_cluster(nodes, rng)
    return Snapshot(float(jobs), cluster, random_jobs(jobs, rng))

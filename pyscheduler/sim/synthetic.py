"""Synthetic workloads: the Master-Worker model of paper 003 (Sec. II) in the native format.

Jobs arrive as a Poisson process; each has k ~ Zipf(exponent 1, k_max = 10) tasks that all ask for r = 1 unit
of capacity (one core of a node with C = 10) and
share a minimum service time b ~ Pareto(b_min = 10, beta = 3).
The runtime slowdown S ~ Pareto(1, alpha) is the simulator's straggler model (`--straggler pareto:alpha=3`).
Arrival rate 1 job/s here; `--load` rescales it.
"""

from __future__ import annotations

import numpy as np

from pyscheduler.sim.workload import JobSpec, PhaseSpec


def master_worker_jobs(
    n: int, seed: int = 1, k_max: int = 10, b_min: float = 10.0, beta: float = 3.0
) -> list[JobSpec]:
    rng = np.random.default_rng(seed)
    ks = np.arange(1, k_max + 1)
    pk = (1.0 / ks) / (1.0 / ks).sum()
    arrivals = np.cumsum(rng.exponential(1.0, n))
    out: list[JobSpec] = []
    for i in range(n):
        k = int(rng.choice(ks, p=pk))
        b = float(b_min * (1.0 - rng.random()) ** (-1.0 / beta))  # Pareto(b_min, beta), inverse CDF
        out.append(
            JobSpec(
                f"mw{i}",
                float(arrivals[i]),
                (PhaseSpec("tasks", k, 1.0, 1024.0, b, 0.0, durations=(b,) * k),),
                name="mw",
            )
        )
    return out


SYNTHETIC_KINDS = ("dag", "mw")


def synthetic_workload(spec: str, seed: int = 1) -> tuple[list[JobSpec], str]:
    """`--format synthetic --workload SPEC`: `dag[:key=value,...]` (pyscheduler/sim/synthetic_dag.py, keys
    of `DagParams`) or `mw[:jobs=N]` (the Master-Worker model above). A `seed=S` key overrides `seed` (the
    run's `--seed` by default, so each seed of a sweep draws its own workload). Returns the jobs and a line
    saying what was generated."""
    from pyscheduler.sim.synthetic_dag import dag_jobs, parse_params

    kind, _, rest = spec.partition(":")
    kind = kind.strip().lower()
    items = [s.strip() for s in rest.split(",") if s.strip()]
    kept = []
    for item in items:
        key, _, val = item.partition("=")
        if key.strip() == "seed":
            try:
                seed = int(val)
            except ValueError:
                raise ValueError(f"synthetic {kind}: 'seed' must be an integer, got {val!r}") from None
        else:
            kept.append(item)
    if kind == "dag":
        params = parse_params(",".join(kept))
        jobs = dag_jobs(params, seed)
    elif kind == "mw":
        n = 3000
        for item in kept:
            key, _, val = item.partition("=")
            if key.strip() != "jobs" or not val.strip().isdigit() or int(val) < 1:
                raise ValueError(f"synthetic mw: only jobs=N (N >= 1) is settable, got {item!r}")
            n = int(val)
        jobs = master_worker_jobs(n, seed=seed)
    else:
        raise ValueError(
            f"--format synthetic: unknown generator {kind!r} (one of {', '.join(SYNTHETIC_KINDS)})"
        )
    tasks = sum(j.task_count for j in jobs)
    return jobs, f"synthetic {kind} (seed {seed}): generated {len(jobs)} jobs, {tasks} tasks"

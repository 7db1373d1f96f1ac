"""Each job's own time, and a run's average flowtime split into it, waiting, and what clones saved.

A job's own time is its critical path when it never waits for room and every task's original is its
winner: each phase lasts as long as its longest task's original (the run time the straggler model gives
copy 0 of that task, `StragglerModel.copy_time` with the run's common random numbers, so the same under
every policy), at the fastest node's speed, after its shuffle read at full bandwidth, from the end of its
parents. It is what a job gets on an empty cluster without clones; `lowerbound.py` is the floor below
which no schedule goes (there every task may be as short as a clone can be), this is the floor of a
schedule that neither waits nor clones.

Per job, flowtime = own time + waiting - saved, with waiting = max(0, flowtime - own) (time lost to
queueing, to slower nodes and to shuffle contention) and saved = max(0, own - flowtime) (time a winning
clone cut below its original's). Averaged over jobs, this says how much of a policy's average flowtime is
the workload's own and how much a scheduler can still move: waiting is the share an order or a placement
changes, saved what cloning bought. `top_share` is the part of all waiting carried by the 1% of jobs that
wait longest: near 1, a few jobs (in an overloaded run, the backlog) carry it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from pyscheduler.sim.lowerbound import _topo
from pyscheduler.sim.straggler import StragglerModel
from pyscheduler.sim.workload import ClusterSpec, JobSpec

TOP_FRACTION = 0.01


def own_times(
    jobs: Sequence[JobSpec],
    bases: Sequence[Sequence[Sequence[float]]],
    cluster: ClusterSpec,
    model: StragglerModel,
    bandwidth_mb_s: float,
    clones: int = 0,
) -> np.ndarray:
    """Per job (in `jobs`' order, as the engine indexes them), its own time (module docstring).
    `bases[j][k]` are job j's phase k base times as the run uses them; `model` is the run's straggler model
    (the engine's: same spec, same seed). With `clones` = c > 0, every task also runs copies 1..c from its
    start and ends with the first of them (`StragglerModel.copy_time` of each, the draws the engine gives
    the task's first c clones): a job's time alone under a policy that clones every task c times at once
    and never restarts a copy, the best DollyMP's cloning (at most two clones, Sec. 5) reaches."""
    if not bandwidth_mb_s > 0:
        raise ValueError(f"bandwidth_mb_s must be > 0, got {bandwidth_mb_s!r}")
    if isinstance(clones, bool) or not isinstance(clones, int) or not 0 <= clones <= 3:
        raise ValueError(f"clones must be an integer 0..3, got {clones!r}")
    fastest = max(n.speed for n in cluster.nodes)
    out = np.empty(len(jobs))
    for j, (job, jb) in enumerate(zip(jobs, bases, strict=True)):
        finish: dict[str, float] = {}
        for k in _topo(job):
            p = job.phases[k]
            n = len(jb[k])
            # copy_time of each original (copy 0): its base time x its own slowdown (1 unless Pareto)
            slow = model.slowdowns_of([j] * n, [k] * n, range(n), [0] * n)
            runs = [b * s for b, s in zip(jb[k], slow, strict=True)]
            for nth in range(1, clones + 1):
                runs = [
                    min(r, model.copy_time(b, jb[k], True, (j, k, t, nth)))
                    for t, (r, b) in enumerate(zip(runs, jb[k], strict=True))
                ]
            longest = max(runs)
            start = max((finish[q] for q in p.parents), default=0.0)
            read = p.read_mb / bandwidth_mb_s if (p.parents and p.read_mb > 0) else 0.0
            finish[p.id] = start + read + longest / fastest
        out[j] = max(finish.values())
    return out


@dataclass(frozen=True, slots=True)
class Decomposition:
    """A run's average flowtime = own + waiting - saved (module docstring), seconds per job."""

    own: float
    waiting: float
    saved: float
    top_share: float  # share of all waiting in the TOP_FRACTION of jobs that wait longest

    def as_dict(self) -> dict[str, float]:
        return {"own": self.own, "waiting": self.waiting, "saved": self.saved, "top_share": self.top_share}


def decompose(flowtimes: np.ndarray, own: np.ndarray) -> Decomposition:
    """Split flowtimes (per job, the engine's order) against the jobs' own times."""
    f = np.asarray(flowtimes, np.float64)
    o = np.asarray(own, np.float64)
    if f.shape != o.shape:
        raise ValueError(f"flowtimes and own times differ in length: {f.size} and {o.size}")
    if not f.size:
        return Decomposition(0.0, 0.0, 0.0, 0.0)
    diff = f - o
    wait = np.maximum(diff, 0.0)
    total = float(wait.sum())
    top = max(1, int(np.ceil(TOP_FRACTION * f.size)))
    top_share = float(np.sort(wait)[-top:].sum() / total) if total > 0 else 0.0
    return Decomposition(
        own=float(o.mean()),
        waiting=float(wait.mean()),
        saved=float(np.maximum(-diff, 0.0).mean()),
        top_share=top_share,
    )

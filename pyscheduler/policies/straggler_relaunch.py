"""Straggler-relaunch (paper 003, Sec. V): FIFO; a task still running b x w after its copy started is killed
and relaunched afresh (a new slowdown draw).

The relaunch time is the approximately optimal Delta* of Eq. (12), reconstructed from the garbled text as
Delta* = b sqrt(k! Gamma(1 - 1/alpha) / Gamma(k + 1 - 1/alpha)) = b sqrt(E[S_k:k]) for a phase of k tasks with
minimum service time b and slowdown tail index alpha (option, default 1.5 to match the default straggler
model); log-gamma keeps large k finite. b is the phase's declared mean base time (the paper assumes b known),
not the estimator's observed mean, which already contains slowdowns. A task is relaunched once, as in the
paper (a one-off timer per job); the policy remembers which tasks it relaunched.
"""

from __future__ import annotations

import math

import numpy as np

from pyscheduler.objects import TaskState
from pyscheduler.policies.base import Decisions, Kill, Snapshot, register_policy
from pyscheduler.policies.baseline_common import order_by, place_copies, place_in_classes
from pyscheduler.policies.common import engine_for

REASON_RELAUNCH = "straggler_relaunch"


def relaunch_factor(k: int, alpha: float) -> float:
    """w = Delta*/b = sqrt(k! Gamma(1-1/alpha) / Gamma(k+1-1/alpha)) (paper 003, Eq. 12)."""
    return math.sqrt(
        math.exp(math.lgamma(k + 1) + math.lgamma(1 - 1 / alpha) - math.lgamma(k + 1 - 1 / alpha))
    )


@register_policy("straggler-relaunch")
class StragglerRelaunchPolicy:
    name = "straggler-relaunch"

    def __init__(self, alpha: float = 1.5) -> None:
        if not alpha > 1:
            raise ValueError(f"alpha must be > 1, got {alpha!r}")
        self.alpha = alpha
        self._relaunched: set[tuple[str, str, int]] = set()

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        pos = {j.job_id: i for i, j in enumerate(jobs)}
        relaunch: list[tuple[int, int, int]] = []
        for a in snapshot.attempts:
            jp = pos.get(a.job_id)
            if jp is None:
                continue
            job = jobs[jp]
            k = job.phase_index[a.phase_id]
            p = job.phases[k]
            if p.state[a.task_index] != TaskState.RUNNING or p.copies[a.task_index] != 1:
                continue
            theta = p.mean
            key = (a.job_id, a.phase_id, a.task_index)
            if key in self._relaunched:
                continue
            if snapshot.time - a.start_time >= theta * relaunch_factor(p.num_tasks, self.alpha):
                self._relaunched.add(key)
                out.kills.append(
                    Kill(a.attempt_id, a.job_id, a.phase_id, a.task_index, a.node_id, REASON_RELAUNCH)
                )
                relaunch.append((jp, k, a.task_index))
        engine = engine_for(snapshot)
        c = snapshot.cluster
        for kd, (jp, k, t) in zip(out.kills, relaunch, strict=True):
            # the driver frees a killed copy before committing placements: count its resources as free
            row = c.index[kd.node_id]
            engine.release(row, jobs[jp].phases[k].demand.as_array())
            place_copies(out, engine, jobs[jp], jp, k, np.array([t], np.int64), REASON_RELAUNCH)
        order = order_by(jobs, [j.arrival for j in jobs])
        place_in_classes(snapshot, out, [[p] for p in order], best_fit=False, engine=engine)
        return out

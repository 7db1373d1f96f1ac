"""SREW+C(beta) (paper 002, Algorithm 2), non-preemptive as in its Sec. 5 evaluation, multi-resource nodes.

* jobs are ordered by remaining effective workload Upsilon_j(t) = sum_z n_z(t) (E_z + lambda sigma_z)
  (Eq. 25);
* beta-fraction sharing: job j gets g_j(t) of the cluster (the g_j cases after Eq. 25), i.e. the smallest
  beta |psi| jobs share it equally. Choice for multiple resources: "machines" become dominant-share units, so
  g_j = 1 / (beta |psi|) of the cluster in the job's dominant resource (the boundary job gets the fraction);
* a job below its share launches copies: spread over its unscheduled tasks (floor/ceil of (g - o) / u each)
  or, with none left unscheduled, clones of its running tasks (Algorithm 2 lines 11-14); at most
  `max_copies` copies of a task run at once (the paper has no cap; 4 keeps runs finite);
* non-preemptive (line 7 removed, as in the paper's evaluation); capacity the beta fraction cannot use is
  then offered to the remaining jobs in Upsilon order (work conservation, which only helps SREW+C).
"""

from __future__ import annotations

import math

import numpy as np

from pyscheduler.policies.base import Decisions, Snapshot, register_policy
from pyscheduler.policies.baseline_common import (
    dominant_share,
    order_by,
    place_copies,
    place_in_classes,
    remaining_workload,
    running_tasks,
)
from pyscheduler.policies.common import engine_for, pending_tasks, ready_pending_phases
from pyscheduler.policies.placement import PlacementEngine

REASON_SHARE = "srewc_share"


@register_policy("srewc")
class SrewcPolicy:
    name = "srewc"

    def __init__(self, beta: float = 0.7, lam: float = 1.0, max_copies: int = 4) -> None:
        if not 0 < beta <= 1:
            raise ValueError(f"beta must be in (0, 1], got {beta!r}")
        if lam < 0 or max_copies < 1:
            raise ValueError("lam must be >= 0 and max_copies >= 1")
        self.beta, self.lam, self.max_copies = beta, lam, max_copies

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        if not jobs:
            return out
        total = snapshot.cluster.total_capacity()
        ups = [remaining_workload(j, snapshot, self.lam) for j in jobs]
        order = order_by(jobs, ups)
        n = len(jobs)
        engine = engine_for(snapshot)
        for rank, pos in enumerate(order):
            larger_or_equal = n - rank  # |psi_j^s(t)|: jobs with workload >= this one's
            if larger_or_equal - 1 >= (1 - self.beta) * n:
                g = 1.0 / (self.beta * n)
            elif larger_or_equal < (1 - self.beta) * n:
                break
            else:
                g = (larger_or_equal - (1 - self.beta) * n) / (self.beta * n)
            if not engine.cand.size:
                break
            self._fill(out, engine, snapshot, pos, g, total)
        # work conservation over what the beta fraction could not use
        place_in_classes(snapshot, out, [[p] for p in order], best_fit=True, engine=engine)
        return out

    def _fill(
        self,
        out: Decisions,
        engine: PlacementEngine,
        snapshot: Snapshot,
        pos: int,
        g: float,
        total: np.ndarray,
    ) -> None:
        job = snapshot.jobs[pos]
        held = sum(float(p.copies.sum()) * dominant_share(job, k, total) for k, p in enumerate(job.phases))
        budget = g - held
        ready = ready_pending_phases(job)
        if ready:
            for k in ready:
                d = dominant_share(job, k, total)
                copies = int(budget / d) if d > 0 else 0
                if held == 0 and copies == 0:
                    copies = 1  # a job whose task exceeds its share still runs one task
                tasks = pending_tasks(job, k)
                if not copies or not len(tasks):
                    continue
                per = min(self.max_copies, max(1, math.ceil(copies / len(tasks))))
                first = tasks[: min(len(tasks), copies)]
                got = place_copies(out, engine, job, pos, k, first, REASON_SHARE)
                budget -= got * d
                for _ in range(per - 1):
                    extra = first[: max(0, int(budget / d))]
                    got = place_copies(out, engine, job, pos, k, extra, REASON_SHARE)
                    budget -= got * d
                    if not got:
                        break
            return
        for k in range(len(job.phases)):
            if budget <= 0:
                break
            d = dominant_share(job, k, total)
            tasks = running_tasks(job, k, self.max_copies)
            n = int(budget / d) if d > 0 else 0
            if n and len(tasks):
                budget -= place_copies(out, engine, job, pos, k, tasks[:n], REASON_SHARE) * d

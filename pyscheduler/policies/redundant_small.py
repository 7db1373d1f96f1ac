"""Redundant-small (paper 003, Sec. IV): FIFO, and a job gets redundancy at expansion rate r only if its
demand is below a threshold d.

Adaptation to this cluster model (documented choice): the paper's demand k x r x b (tasks x requested
capacity x minimum service time, with R = 1 in its experiments) becomes the job's remaining task-seconds
sum_k n_k(t) theta_k (so `demand_threshold` is in task-seconds, default 100: e.g. 10 tasks of 10 s); the
paper's coded redundancy (any k of ceil(k r) tasks) becomes replication: ceil(k r) - k extra copies, one per
task in task order, launched together with the originals. The threshold d* the paper computes from its
M/G/c approximation shrinks as the offered load grows and is 0 near load 1; we follow that regime rule
online: d = `demand_threshold` while the cluster's allocated dominant share is below `load_cap`, else 0.
"""

from __future__ import annotations

import math

import numpy as np

from pyscheduler.policies.base import Decisions, Snapshot, register_policy
from pyscheduler.policies.baseline_common import order_by, place_copies, place_in_classes, remaining_workload
from pyscheduler.policies.common import ready_pending_phases

REASON_REDUNDANT = "redundant_small"


@register_policy("redundant-small")
class RedundantSmallPolicy:
    name = "redundant-small"

    def __init__(self, rate: float = 2.0, demand_threshold: float = 100.0, load_cap: float = 0.8) -> None:
        if rate < 1:
            raise ValueError(f"rate must be >= 1, got {rate!r}")
        self.rate, self.demand_threshold, self.load_cap = rate, demand_threshold, load_cap

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        c = snapshot.cluster
        total = c.total_capacity()
        used = float(((c.capacity[c.active] - c.free[c.active]).sum(axis=0) / total).max())
        order = order_by(jobs, [j.arrival for j in jobs])
        pending = {pos: ready_pending_phases(jobs[pos]) for pos in order}
        engine = place_in_classes(snapshot, out, [[p] for p in order], best_fit=False)
        if used >= self.load_cap:
            return out
        placed: dict[tuple[int, int], list[int]] = {}
        for ch in out.chunks:
            for jp, k, t in zip(
                ch.job_pos.tolist(), ch.phase_k.tolist(), ch.task_index.tolist(), strict=True
            ):
                placed.setdefault((jp, k), []).append(t)
        for pos in order:
            job = jobs[pos]
            if remaining_workload(job, snapshot, 0.0) > self.demand_threshold:
                continue
            for k in pending[pos]:
                tasks = np.array(placed.get((pos, k), []), dtype=np.int64)
                extra = math.ceil(len(tasks) * self.rate) - len(tasks)
                if extra > 0:
                    reps = np.resize(tasks, extra)
                    for start in range(0, extra, len(tasks)):
                        place_copies(
                            out, engine, job, pos, k, reps[start : start + len(tasks)], REASON_REDUNDANT
                        )
            if not engine.cand.size:
                break
        return out

"""Mantri-style speculation (Ananthanarayanan et al., OSDI'10, as SREW+C Sec. 5 describes it): FIFO, then a
speculative copy of a running task when its remaining time t_rem exceeds (c+1)/c x t_new, the expected run
time of a new copy, with c the copies running (one here: a task gets at most `max_copies` copies).

t_rem = elapsed x (1 - progress) / progress from the progress the task reports; t_new = the phase's mean run
time as the estimator sees it (pyscheduler.estimate: observed durations once a few tasks finished). The
probabilistic test Pr(t_rem > (c+1)/c t_new) > delta is applied to point estimates (delta drops out).
Speculative copies only use capacity left after every waiting original is placed.
"""

from __future__ import annotations

import numpy as np

from pyscheduler.objects import TaskState
from pyscheduler.policies.base import Decisions, Snapshot, register_policy
from pyscheduler.policies.baseline_common import order_by, place_copies, place_in_classes, room_for_copies

REASON_MANTRI = "mantri_speculation"


@register_policy("mantri")
class MantriPolicy:
    name = "mantri"

    def __init__(self, max_copies: int = 2) -> None:
        if max_copies < 1:
            raise ValueError(f"max_copies must be >= 1, got {max_copies!r}")
        self.max_copies = max_copies

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        order = order_by(jobs, [j.arrival for j in jobs])
        engine = place_in_classes(snapshot, out, [[p] for p in order], best_fit=False)
        if not (engine.cand.size and room_for_copies(jobs, engine)):
            return out
        pos = {j.job_id: i for i, j in enumerate(jobs)}
        cands: list[tuple[float, int, int, int]] = []
        for a in snapshot.attempts:
            jp = pos.get(a.job_id)
            progress = float(getattr(a, "progress", 0.0))
            elapsed = snapshot.time - a.start_time
            if jp is None or progress <= 0 or elapsed <= 0:
                continue
            job = jobs[jp]
            k = job.phase_index[a.phase_id]
            p = job.phases[k]
            c = int(p.copies[a.task_index])
            if p.state[a.task_index] != TaskState.RUNNING or c >= self.max_copies:
                continue
            t_rem = elapsed * (1 - progress) / progress
            t_new = snapshot.theta_sigma(job, p)[0]
            if t_rem > (c + 1) / c * t_new:
                cands.append((-t_rem, jp, k, a.task_index))
        cands.sort()
        seen: set[tuple[int, int, int]] = set()
        for _, jp, k, t in cands:
            if (jp, k, t) in seen:
                continue
            seen.add((jp, k, t))
            place_copies(out, engine, jobs[jp], jp, k, np.array([t], np.int64), REASON_MANTRI)
            if not engine.cand.size:
                break
        return out

"""Tetris (Grandl et al., SIGCOMM'14) as described in DollyMP Sec. 2: score = alignment + epsilon x p.

Alignment a is the inner product of a task's demand and the node's free resources; p favours jobs with less
remaining work (SRTF). Choice made here: the epsilon-weighted sum is applied in two steps -- jobs are grouped
into classes whose remaining work (sum of remaining tasks x mean x dominant share) lies within a factor
`1 + 1/epsilon` of each other (the p term can only reorder jobs across classes of that spread), and inside a
class every node takes the task with the best alignment. No redundancy.
"""

from __future__ import annotations

import math

from pyscheduler.policies.base import Decisions, Snapshot, register_policy
from pyscheduler.policies.baseline_common import order_by, place_in_classes, remaining_volume


@register_policy("tetris")
class TetrisPolicy:
    name = "tetris"
    timer_driven = False  # acts on arrivals and ends of copies only

    def __init__(self, epsilon: float = 1.0) -> None:
        if not epsilon > 0:
            raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
        self.epsilon = epsilon

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        total = snapshot.cluster.total_capacity()
        work = [remaining_volume(j, total, snapshot) for j in jobs]
        order = order_by(jobs, work)
        base = math.log(1 + 1 / self.epsilon)
        classes: list[list[int]] = []
        last = None
        for pos in order:
            c = math.floor(math.log(max(work[pos], 1e-12)) / base)
            if c != last:
                classes.append([])
                last = c
            classes[-1].append(pos)
        place_in_classes(snapshot, out, classes, best_fit=True)
        return out

"""Capacity-style FIFO with LATE speculative execution (the papers' "Capacity" baseline; Dolly Sec. 5.1).

One queue (the Capacity scheduler's default) serves jobs FIFO; then LATE (Zaharia et al., OSDI'08, as the
Dolly paper uses it) adds speculative copies in the capacity left over:
* a task is a candidate if it runs with one copy, has run at least `min_runtime` seconds, and its progress
  rate (progress / elapsed) is below the `slow_task_pct` percentile of its phase's running tasks;
  `min_runtime` = 60 s is Hadoop's speculative lag (TaskInProgress.SPECULATIVE_LAG = 60 * 1000 ms in the
  Hadoop MapReduce that LATE was built into and the Facebook cluster of Dolly Sec. 2 ran): a task is not
  judged before it has run a minute. (An earlier 10 s let LATE judge tasks on their first seconds, which,
  with the simulator's exact progress reports, made it see every straggler almost at once.)
* candidates are taken by longest estimated time left, (1 - progress) / rate;
* speculative copies never exceed `speculative_cap` of the cluster's containers.
Progress is the fraction of work done that tasks report (Hadoop's progress score; the simulator reports it
exactly, which favours LATE).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from pyscheduler.objects import TaskState
from pyscheduler.policies.base import Decisions, Snapshot, register_policy
from pyscheduler.policies.baseline_common import order_by, place_copies, place_in_classes, room_for_copies
from pyscheduler.policies.placement import PlacementEngine

REASON_SPECULATE = "late_speculation"


@register_policy("capacity")
class CapacityLatePolicy:
    name = "capacity"

    def __init__(
        self,
        speculative_cap: float = 0.1,
        slow_task_pct: float = 25.0,
        min_runtime: float = 60.0,
        speculate: bool = True,
    ) -> None:
        if not 0 <= speculative_cap <= 1:
            raise ValueError(f"speculative_cap must be in [0, 1], got {speculative_cap!r}")
        self.speculative_cap = speculative_cap
        self.slow_task_pct = slow_task_pct
        self.min_runtime = min_runtime
        self.speculate = speculate

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        order = order_by(jobs, [j.arrival for j in jobs])
        engine = place_in_classes(snapshot, out, [[p] for p in order], best_fit=False)
        if self.speculate and engine.cand.size and room_for_copies(jobs, engine):
            self._late(snapshot, out, engine)
        return out

    def _late(self, snapshot: Snapshot, out: Decisions, engine: PlacementEngine) -> None:
        now = snapshot.time
        pos = {j.job_id: i for i, j in enumerate(snapshot.jobs)}
        by_phase: dict[tuple[int, int], list[tuple[float, float, int]]] = defaultdict(list)
        copies = 0
        running_clones = 0
        for a in snapshot.attempts:
            copies += 1
            running_clones += a.is_clone
            jp = pos.get(a.job_id)
            if jp is None:
                continue
            job = snapshot.jobs[jp]
            k = job.phase_index[a.phase_id]
            elapsed = now - a.start_time
            progress = float(getattr(a, "progress", 0.0))
            if elapsed <= 0 or progress <= 0:
                continue
            if elapsed < self.min_runtime:
                continue
            rate = progress / elapsed
            by_phase[(jp, k)].append((rate, (1 - progress) / rate, a.task_index))
        budget = int(self.speculative_cap * max(copies, 1)) - running_clones
        if budget <= 0:
            return
        cands: list[tuple[float, int, int, int]] = []
        for (jp, k), items in by_phase.items():
            phase = snapshot.jobs[jp].phases[k]
            threshold = float(np.percentile([r for r, _, _ in items], self.slow_task_pct))
            for rate, left, t in items:
                if (
                    rate <= threshold
                    and phase.copies[t] == 1
                    and phase.state[t] == TaskState.RUNNING
                    and left > 0
                ):
                    cands.append((-left, jp, k, t))
        cands.sort()
        for _, jp, k, t in cands[:budget]:
            job = snapshot.jobs[jp]
            place_copies(out, engine, job, jp, k, np.array([t], np.int64), REASON_SPECULATE)
            if not engine.cand.size:
                break

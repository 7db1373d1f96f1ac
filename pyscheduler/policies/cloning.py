"""Which running tasks may get another copy, and how many clones a phase is granted.

Rules (DollyMP Section 5, Dolly Section 3.2):
* at most `max_clones` clones per task (DollyMP: two, i.e. three copies);
* clone rule "idle" (Algorithm 2 as written: clones wherever idle resources remain after every original),
  "corollary" (Corollary 4.1's r_j - 1, see policies/model.py) or "dolly" (Pseudocode 1 with its budget);
* downstream clones never exceed upstream copies (Dolly 3.2, "Multi-phased jobs"). Choice: a phase with
  parents may have at most as many copies per task as the *fewest* copies any task of a parent phase had
  (Phase.peak), so each downstream copy can read a distinct upstream copy of every upstream task.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pyscheduler.objects import Job, TaskState
from pyscheduler.policies.base import IntArray
from pyscheduler.policies.dolly import REASON_STARTED, REASON_STICKY, DollyBudget

REASON_IDLE = "algorithm2_idle_capacity"
REASON_COROLLARY = "corollary_4_1"
REASON_UPSTREAM = "upstream_copies_limit"


def upstream_copy_limit(job: Job, k: int) -> int:
    """Most copies per task phase k may have: min over parent phases of the fewest copies a task had."""
    limit = 1 << 30
    for q in job.parent_idx[k]:
        limit = min(limit, int(job.phases[q].peak.min()))
    return limit


@dataclass(slots=True)
class CloneBook:
    """Per-round working state: copies added this round and the clones granted per (job, phase)."""

    extra: dict[tuple[int, int], IntArray] = field(default_factory=dict)
    granted: dict[tuple[int, int], tuple[int, str]] = field(default_factory=dict)

    def add(self, pos: int, k: int, tasks: IntArray, size: int) -> None:
        arr = self.extra.get((pos, k))
        if arr is None:
            arr = np.zeros(size, np.int64)
            self.extra[(pos, k)] = arr
        np.add.at(arr, tasks, 1)

    def copies(self, job: Job, pos: int, k: int) -> IntArray:
        base = job.phases[k].copies.astype(np.int64)
        arr = self.extra.get((pos, k))
        return base if arr is None else base + arr

    def candidates(self, job: Job, pos: int, k: int, have: int) -> IntArray:
        """Running, unfinished tasks that now have exactly `have` copies (they get copy have + 1)."""
        p = job.phases[k]
        cur = self.copies(job, pos, k)
        return np.flatnonzero((cur == have) & (p.state != TaskState.FINISHED)).astype(np.int64)


def dolly_grant(
    job: Job, k: int, budget: DollyBudget, share: float, theta: float, sigma: float, max_clones: int
) -> tuple[int, str]:
    """Dolly admission for phase k, evaluated when its first task is to run (see policies/dolly.py)."""
    p = job.phases[k]
    if int(p.peak.max()) > 1:
        return min(max_clones, int(p.peak.max()) - 1), REASON_STICKY
    if p.num_pending + p.num_finished < p.num_tasks or p.num_finished > 0:
        return 0, REASON_STARTED
    return budget.admit(p.num_tasks, share, theta, sigma, max_clones)


def clones_in_use(job: Job, share_of: list[float]) -> float:
    """Dominant share held by running clones of a job (B_U of Dolly's Pseudocode 1)."""
    used = 0.0
    for k, p in enumerate(job.phases):
        running = p.num_tasks - p.num_pending - p.num_finished
        if running > 0:
            extra = int(p.copies.sum()) - int(np.count_nonzero(p.copies))
            used += extra * share_of[k]
    return used

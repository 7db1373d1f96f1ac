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

from dataclasses import dataclass

import numpy as np

from pyscheduler.objects import Job, TaskState
from pyscheduler.policies.base import IntArray, Snapshot
from pyscheduler.policies.clone_counts import corollary_copies, in_tail
from pyscheduler.policies.dolly import REASON_STARTED, REASON_STICKY, DollyBudget
from pyscheduler.policies.table import FlatTasks, RoundView

REASON_IDLE = "algorithm2_idle_capacity"
REASON_COROLLARY = "corollary_4_1"
REASON_UPSTREAM = "upstream_copies_limit"
REASON_NO_ROOM = "corollary_4_1_not_packed"  # r_j = 1, or r_j v_j does not fit the knapsack's slack
REASON_SMALL_JOB = "small_job_idle_capacity"
REASON_NO_LAUNCH_CLONES = "no_launch_clones"
REASON_PHASE_TAIL = "phase_tail_idle_capacity"
_PENDING = int(TaskState.PENDING)


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


@dataclass(frozen=True, slots=True)
class CloneAllowance:
    """How many clones each running task may have in a round (DollyMP Sec. 5; step 5 of the docstring
    of policies/dollymp.py): `rule` "paper" (Corollary 4.1), "idle", "none" or "dolly" (with `dolly`:
    Dolly's beta, tau, epsilon, straggler_p), raised by the extensions small_job_clones and phase_tail
    (tail_tasks)."""

    max_clones: int
    rule: str
    dolly: tuple[float, float, float, float | None]
    small_job_clones: int = 0
    phase_tail: bool = False
    tail_tasks: int = 10

    def allowed(
        self,
        snapshot: Snapshot,
        view: RoundView,
        flat: FlatTasks,
        prio: IntArray,
        measures: tuple[np.ndarray, np.ndarray],
        total: np.ndarray,
    ) -> tuple[IntArray, dict[int, tuple[int, str]]]:
        """Copies allowed per task of each row (1 + clones granted) and, per table row, (clones, reason):
        the clone rule's count, raised by the small-job and phase-tail extensions where they apply."""
        t = flat.table
        allowed = np.zeros(flat.rows.size, np.int64)  # 0: not considered (nothing runs)
        reasons: dict[int, tuple[int, str]] = {}  # local: decide() may run on several threads
        running = flat.running_rows()
        allowed[running] = 1
        budget = self._budget(snapshot, view, flat, total) if self.rule == "dolly" else None
        job_copies = (
            corollary_copies(view, flat, running, prio, *measures, self.max_clones)
            if self.rule == "paper"
            else None
        )
        small_job, tail = self._small_and_tail(flat, bool(running.size))
        for r in running.tolist():
            row = int(flat.rows[r])
            pos = int(t.row_job[row])
            job = t.jobs[pos]
            if self.rule == "idle":  # Algorithm 2's passes with no other limit
                clones, reason = self.max_clones, REASON_IDLE
            elif job_copies is not None:  # Corollary 4.1 with Step 6's packing condition
                clones = int(job_copies[pos]) - 1
                reason = REASON_COROLLARY if clones else REASON_NO_ROOM
            elif budget is not None:  # Dolly's Pseudocode 1, and Dolly 3.2's upstream limit
                clones, reason = dolly_grant(
                    job,
                    int(t.row_k[row]),
                    budget,
                    float(view.share[row]),
                    float(view.theta[row]),
                    float(view.sigma[row]),
                    self.max_clones,
                )
                clones, reason = _upstream_limit(job, int(t.row_k[row]), clones, reason)
            else:  # "none": only the extensions add copies
                clones, reason = 0, REASON_NO_LAUNCH_CLONES
            if clones < self.max_clones and small_job and small_job[pos]:  # Dolly 3.2 limits launch clones
                clones, reason = _upstream_limit(job, int(t.row_k[row]), self.max_clones, REASON_SMALL_JOB)
            elif clones < self.max_clones and tail and tail[r]:
                clones, reason = self.max_clones, REASON_PHASE_TAIL
            allowed[r] = 1 + clones
            reasons[row] = (clones, reason)
        return allowed, reasons

    def _small_and_tail(self, flat: FlatTasks, any_rows: bool) -> tuple[list[bool], list[bool]]:
        """Per job of the table, at most `small_job_clones` tasks (extension small_job_clones); per phase of
        `flat`, `_in_tail` (extension phase_tail). Empty lists when the extension is off."""
        if not any_rows:
            return [], []
        t = flat.table
        small: list[bool] = (
            (np.add.reduceat(t.n_tasks, t.job_ptr[:-1]) <= self.small_job_clones).tolist()
            if self.small_job_clones
            else []
        )
        return small, in_tail(flat, self.tail_tasks) if self.phase_tail else []

    def _budget(self, snapshot: Snapshot, view: RoundView, flat: FlatTasks, total: np.ndarray) -> DollyBudget:
        """B_U: dominant share held by running clones (copies beyond the first, before this round's clones);
        U: the cluster's dominant utilisation with this round's originals (Dolly 3.3 admits a phase when its
        first task is to run); p: measured (policies/dolly.py `DollyBudget.observed_p`) unless given."""
        beta, tau, eps, p = self.dolly
        c = snapshot.cluster
        started = view.n_pending[flat.rows] - np.bincount(
            flat.owner[flat.state == _PENDING], minlength=flat.rows.size
        )
        used = total - c.free[c.active].sum(axis=0) + started @ flat.table.demand[flat.rows]
        util = float(np.max(np.where(total > 0, used / np.where(total > 0, total, 1.0), 0.0), initial=0.0))
        extra = np.bincount(flat.owner, weights=np.maximum(flat.copies - 1, 0), minlength=flat.rows.size)
        in_use = float(extra @ view.share[flat.rows]) if flat.rows.size else 0.0
        p = DollyBudget.observed_p(snapshot) if p is None else p
        return DollyBudget(beta, tau, eps, p, used_by_clones=in_use, utilization=util)


def _upstream_limit(job: Job, k: int, clones: int, reason: str) -> tuple[int, str]:
    """Dolly 3.2: clones launched with a downstream phase never outnumber its upstream phases' copies."""
    if job.parent_idx[k]:
        limit = min(job.phases[q].peak_min() for q in job.parent_idx[k]) - 1
        if limit < clones:
            return max(0, limit), REASON_UPSTREAM
    return clones, reason

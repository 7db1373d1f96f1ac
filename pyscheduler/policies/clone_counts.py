"""How many copies DollyMP allows a running task (paper 000): Corollary 4.1's count per job, and the phases
in their tail for the phase_tail extension (policies/dollymp.py)."""

from __future__ import annotations

import numpy as np

from pyscheduler.objects import TaskState
from pyscheduler.policies.base import IntArray
from pyscheduler.policies.model import corollary_grants
from pyscheduler.policies.table import FlatTasks, RoundView

_PENDING, _FINISHED = int(TaskState.PENDING), int(TaskState.FINISHED)


def corollary_copies(
    view: RoundView,
    flat: FlatTasks,
    running: IntArray,
    prio: IntArray,
    times: np.ndarray,
    volume: np.ndarray,
    max_clones: int,
) -> IntArray:
    """Copies per task of every job by Corollary 4.1 with its Step-6 packing condition
    (policies/model.py `corollary_grants`); the job's (theta, sigma) are those of its first running
    phase in topological order (the phase its clones would copy)."""
    t = flat.table
    n = len(t.jobs)
    stats: list[tuple[float, float] | None] = [None] * n
    for r in running.tolist():
        row = int(flat.rows[r])
        pos = int(t.row_job[row])
        if stats[pos] is None:
            stats[pos] = (float(view.theta[row]), float(view.sigma[row]))
    ok = np.isfinite(volume) & np.isfinite(times) & (prio < (1 << 20))
    copies = np.ones(n, np.int64)
    idx = np.flatnonzero(ok)
    if idx.size:
        copies[idx] = corollary_grants(
            prio[idx], volume[idx], times[idx], [stats[i] for i in idx.tolist()], 1 + max_clones
        )
    return copies


def in_tail(flat: FlatTasks, small: int) -> list[bool]:
    """Per phase of `flat` (after this round's originals): it has no task waiting and at most `small` (a
    small job's task count) unfinished tasks (every phase has a task: no segment is empty)."""
    lo = flat.offset[:-1]
    left = np.add.reduceat((flat.state != _FINISHED).astype(np.int64), lo)
    waiting = np.logical_or.reduceat(flat.state == _PENDING, lo)
    result: list[bool] = ((left > 0) & (left <= small) & ~waiting).tolist()
    return result

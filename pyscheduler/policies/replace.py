"""Late tasks that already run their most copies: replace the slowest copy by a fresh one.

DollyMP (paper 000, Section 5 and Algorithm 2) caps a task at two clones (three copies). Under a heavy-tailed
run time (Eq. 2: Pareto) a task's copies can all straggle: with alpha = 1.5, P(S > 4) = 1/8 per copy, so
about one task in 500 has three copies slower than 4x, and a phase of many tasks waits for it. The
late-copy rule (policies/late.py) then has nothing left to do, since a further copy would exceed the cap.

Rule (`Replacements.judge`): a running task at the cap whose every copy is late by the late-copy rule's own
test (`residual.late_copies`: LATE's time left from reported progress >= f x a fresh copy's expected time,
`residual.fresh_copy_time`, f = the policy's `progress_factor`) gets a fresh copy, and its copy with the
most time left is killed in the same round. That is the relaunch of paper 003 (Aktas et al., Sec. V:
Straggler-relaunch kills a straggling copy and starts it afresh with a new slowdown draw) and Mantri's
kill-restart (Ananthanarayanan et al., OSDI'10, as SREW+C Sec. 5 describes Mantri: act when
t_rem > t_new), applied only where DollyMP's cap forbids another clone. The copy count never exceeds the
cap after the round, so "at most two clones per task" holds.

Choices:
* only copies that report progress are judged (as `late_copies`' progress branch): a copy without progress
  (the live path today) is never killed on an elapsed-time guess;
* a fresh copy's expected time leaves out every copy of the judged task (`_fresh_without_task`), not only
  the judged copy as the late-copy rule does: a sibling slowed 17x inflated the phase's estimate so much
  that the task's other copies were never late, and the task waited for its best, 2x-slowed copy (Alibaba
  slice, load 0.8, seed 2: 96.6 -> 93.3 s; FB-2010 seed 1: 94.7 -> 93.8 s; same resources);
* the killed copy is the one with the most time left (the least likely to win); the kill is issued only if
  the fresh copy found room in the same round (`kills_for`), so no work is thrown away for nothing;
* resources: with f >= 1 the fresh copy is expected to run theta <= R / f while the killed copy would have
  held its container R more seconds, so a replacement is expected to save resources, not spend them.
"""

from __future__ import annotations

import math

import numpy as np

from pyscheduler.objects import TaskState
from pyscheduler.policies.base import Kill, Snapshot
from pyscheduler.policies.late_kernel import copies_of_phases, late_at_cap
from pyscheduler.policies.residual import progress_remaining
from pyscheduler.policies.table import FlatTasks, RoundView

REASON_REPLACE = "replace_slowest_copy"
_RUNNING = int(TaskState.RUNNING)


class Replacements:
    """One round's replacement candidates: which flat tasks get a fresh copy, which copy each one loses."""

    def __init__(self, cap: int, factor: float, min_elapsed: float) -> None:
        self.cap, self.factor, self.min_elapsed = cap, factor, min_elapsed
        # flat task -> (time left, position in Snapshot.attempts of the copy to kill)
        self.victims: dict[int, tuple[float, int]] = {}
        self._snapshot: Snapshot | None = None  # the snapshot `victims` index into

    def judge(self, snapshot: Snapshot, view: RoundView, flat: FlatTasks) -> tuple[np.ndarray, float]:
        """Per flat task: replace one copy this round; and the earliest time an unjudged copy of a task at
        the cap may be judged (for Decisions.wake_at)."""
        self.victims = {}
        swap = np.zeros(flat.copies.size, bool)
        now = snapshot.time
        at_cap = (flat.copies >= self.cap) & (flat.state == _RUNNING)
        if not math.isfinite(now) or not at_cap.any():
            return swap, math.inf
        t = flat.table
        # Section 5's condition, as for late copies: every task of the phase has been scheduled
        at_cap &= (view.n_pending[flat.rows] == 0)[flat.owner]
        owners = _distinct(flat.owner[at_cap], flat.rows.size)
        if owners.size == 0:
            return swap, math.inf
        # The running copies as columns (Snapshot.attempt_columns, in the order of Snapshot.attempts): no
        # Python loop over every attempt of the cluster each round (the simulator keeps them as arrays).
        cols = snapshot.attempt_columns()
        row_lo = np.full(len(t.phases), -1, np.int64)  # per table row: flat offset of its task 0, or -1
        row_lo[flat.rows[owners]] = flat.offset[owners]
        # the copies of the phases with a task at the cap: table row, flat task, progress, elapsed time
        sel, rows, at, pa, ela = copies_of_phases(t, cols, row_lo, now)
        if sel.size == 0:
            return swap, math.inf
        # per copy: late by residual.late_copies (no elapsed-time fallback: only copies with progress
        # count) against _fresh_without_task's fresh-copy time; per task: copies listed, copies not late
        # (policies/late_kernel.py, one compiled pass equal to that numpy composition)
        late, wait, listed, not_late = late_at_cap(
            view.theta,
            view.n_finished,
            pa,
            ela,
            rows,
            at,
            int(flat.copies.size),
            self.factor,
            self.min_elapsed,
            snapshot.startup_s,
        )
        swap = at_cap & (listed >= flat.copies) & (not_late == 0)
        if swap.any():
            mine = np.flatnonzero(swap[at])  # the copies of the replaced tasks (time left only for those)
            self._victims(snapshot, at[mine], progress_remaining(pa[mine], ela[mine]), cols.index[sel[mine]])
        soon = wait[at_cap[at] & ~late]
        return swap, now + float(soon.min()) if soon.size else math.inf

    def _victims(self, snapshot: Snapshot, at: np.ndarray, left: np.ndarray, index: np.ndarray) -> None:
        """Per replaced task, its copy with the most time left (the first such in attempt order). `at`,
        `left`, `index`: per copy of a replaced task, its flat task, time left and position in
        Snapshot.attempts (AttemptColumns.index): the attempt is looked up there, not searched for, and
        only when its Kill is issued (`kills_for`)."""
        best: dict[int, tuple[float, int]] = {}  # flat task -> (time left, position in Snapshot.attempts)
        for task, time_left, pos in zip(at.tolist(), left.tolist(), index.tolist(), strict=True):
            if task not in best or time_left > best[task][0]:
                best[task] = (time_left, pos)
        self._snapshot = snapshot
        self.victims = best

    def kills_for(self, placed: np.ndarray) -> list[Kill]:
        """The kills of the tasks whose fresh copy was placed (`placed`: per flat task), in task order."""
        kills: list[Kill] = []
        snapshot = self._snapshot
        if snapshot is None:
            return kills
        for task, (_, pos) in sorted(self.victims.items()):
            if placed[task]:
                a = snapshot.attempts[pos]
                kills.append(
                    Kill(a.attempt_id, a.job_id, a.phase_id, a.task_index, a.node_id, REASON_REPLACE)
                )
        return kills


def _fresh_without_task(
    theta: np.ndarray,
    finished: np.ndarray,
    progress: np.ndarray,
    elapsed: np.ndarray,
    phase: np.ndarray,
    task: np.ndarray,
    min_elapsed: float,
) -> np.ndarray:
    """A fresh copy's expected time per copy, as `residual.fresh_copy_time` (finished tasks' mean and the
    phase's running copies' projected totals), but leaving out every copy of the copy's own *task*, not
    only the copy itself: the siblings' projections are the same straggle in question (one sibling slowed
    17x raised the bar until the task's other copies could not be judged late, and the task waited for it).
    `task[i]` identifies copy i's task (flat index)."""
    known = np.isfinite(progress) & (progress > 0) & (elapsed >= min_elapsed) & (elapsed > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.where(known, elapsed / np.where(known, progress, 1.0), 0.0)
    m = theta.size
    s = np.bincount(phase, weights=total, minlength=m)[phase] - np.bincount(task, weights=total)[task]
    c = np.bincount(phase, weights=known, minlength=m)[phase] - np.bincount(task, weights=known)[task]
    w = finished.astype(np.float64)[phase]
    out: np.ndarray = np.where((w + c) > 0, (w * theta[phase] + s) / np.maximum(w + c, 1.0), theta[phase])
    return out


def _distinct(values: np.ndarray, bound: int) -> np.ndarray:
    """np.unique(values) for integers in [0, bound), by marking (no sort)."""
    seen = np.zeros(bound, bool)
    seen[values] = True
    return np.flatnonzero(seen)

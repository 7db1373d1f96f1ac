"""Which running tasks of DollyMP are late and get one more copy this round (policies/residual.py's rules).

DollyMP (paper 000, Section 5) clones "the scheduled tasks if there still exist extra idle resources" once a
phase's tasks have all been scheduled, but leaves open which running tasks, and when. `LateTasks` answers it:

* `late_by="progress"` (default): each running copy's own progress (attribute `progress`, fraction 0..1, as
  Hadoop tasks report it and the simulator does exactly) gives LATE's time-left estimate (Zaharia et al.,
  OSDI'08); a task is late when every copy's time left reaches `progress_factor` x a fresh copy's expected
  time (`residual.late_copies`, `residual.fresh_copy_time`). Copies without progress (the live service does
  not report it yet: Attempt has no `progress`, or a Snapshot without attempts) fall back to:
* `late_by="elapsed"`: the task's newest copy has run f (alpha - 1) theta seconds since the policy first saw
  it (Pareto mean residual life, `residual.residual_thresholds`, f = `residual_factor`).

Choices (measured in docs/reproduction.md, FB-2010 and Alibaba slices at load 0.8):
* Dolly 3.2's limit (downstream copies <= upstream copies) is for clones launched with a phase, which read
  the upstream outputs together; a late copy reads long after the original did, so it does not apply to
  late copies unless `upstream_cap` is set (it blocked every straggler clone of a downstream phase whose
  upstream had no clones: Alibaba DAG jobs, 0.81 -> 0.58 of DollyMP0's flowtime when lifted).
* Which late task of a phase takes free room first (`late_first_by_time_left`): the one whose time left is
  longest (LATE, Zaharia et al., OSDI'08, Sec. 4.2: speculate "the task that will finish farthest into the
  future"); a copy with no estimate (stalled, or no progress reported and past the elapsed threshold)
  counts as infinitely far. Late tasks whose copies are not listed at all keep task order, after the others.
* `progress_factor` (DollyMP's default 1.0, policies/dollymp.py): with the time left observed rather than
  inferred, a clone is expected to finish first at f >= 1; with DollyMP's replacement of the slowest copy
  at the copy cap (policies/replace.py) the resources stayed within DollyMP0's + 5% in the runs.
"""

from __future__ import annotations

import math

import numpy as np

from pyscheduler.estimate.pareto import fit_pareto
from pyscheduler.objects import TaskState
from pyscheduler.policies.base import IntArray, Snapshot
from pyscheduler.policies.cloning import REASON_UPSTREAM
from pyscheduler.policies.late_kernel import copies_of_phases, late_by_copies
from pyscheduler.policies.residual import (
    REASON_PROGRESS,
    REASON_RESIDUAL,
    StartTimes,
    residual_thresholds,
)
from pyscheduler.policies.table import FlatTasks, PhaseTable, RoundView

_RUNNING = int(TaskState.RUNNING)
LATE_BY = ("progress", "elapsed")


class LateTasks:
    """Judges late tasks each round; keeps when each task was first seen running (the elapsed rule)."""

    def __init__(
        self,
        max_clones: int,
        residual_factor: float = 2.0,
        progress_factor: float = 1.5,
        progress_after: float = 10.0,
        late_by: str = "progress",
        upstream_cap: bool = False,
    ) -> None:
        for name, v in (("residual_factor", residual_factor), ("progress_factor", progress_factor)):
            if not (isinstance(v, int | float) and 0 < v < math.inf):
                raise ValueError(f"dollymp option {name} must be finite > 0, got {v!r}")
        if not (isinstance(progress_after, int | float) and 0 <= progress_after < math.inf):
            raise ValueError(f"dollymp option progress_after must be finite >= 0, got {progress_after!r}")
        if late_by not in LATE_BY:
            raise ValueError(f"dollymp option late_by must be one of {LATE_BY}, got {late_by!r}")
        self.max_clones = max_clones
        self.residual_factor, self.progress_factor = float(residual_factor), float(progress_factor)
        self.progress_after, self.late_by, self.upstream_cap = float(progress_after), late_by, upstream_cap
        self.starts = StartTimes()
        self._kept_for: PhaseTable | None = None  # the table whose jobs `starts` was last trimmed to

    def judge(
        self, snapshot: Snapshot, view: RoundView, flat: FlatTasks, reasons: dict[int, tuple[int, str]]
    ) -> tuple[np.ndarray, float, np.ndarray]:
        """Per flat task: running, late, below its phase's copy cap; the earliest time another running
        task may turn late (Decisions.wake_at); and per flat task the time left by which late tasks of one
        phase take free room (`placement_order`). Writes each candidate row's (clones, reason) in
        `reasons`."""
        t = flat.table
        late = np.zeros(flat.copies.size, bool)
        left = np.full(flat.copies.size, math.nan)
        now = snapshot.time
        if not math.isfinite(now):
            return late, math.inf, left
        if self._kept_for is not t:  # the same table has the same jobs: nothing to forget
            self.starts.keep_only({j.job_id for j in t.jobs})
            self._kept_for = t
        running = flat.running_rows()
        rows = flat.rows[running]
        caps = np.full(running.size, 1 + self.max_clones, np.int64)
        for i in np.flatnonzero(t.has_parent[rows] & self.upstream_cap).tolist():  # Dolly 3.2
            row = int(rows[i])
            job = t.jobs[t.row_job[row]]
            ups = job.parent_idx[int(t.row_k[row])]
            caps[i] = min(int(caps[i]), *(job.phases[q].peak_min() for q in ups))
            if caps[i] <= 1:
                reasons[row] = (0, REASON_UPSTREAM)
        thr = residual_thresholds(view.theta[rows], view.sigma[rows], self.residual_factor)
        # Section 5: clones once every task of the phase has been scheduled. A phase whose run time shows
        # no spread yet (one finished task: sigma 0, no elapsed threshold) is still judged by progress.
        judged = np.isfinite(thr) | (self.late_by == "progress")
        keep = np.flatnonzero((caps > 1) & judged & (view.n_pending[rows] == 0))
        if keep.size == 0:
            return late, math.inf, left
        cand = running[keep]  # indices into flat.rows of the judged phases
        seen = self._observe(flat, cand, now)
        for row, cap in zip(rows[keep].tolist(), caps[keep].tolist(), strict=True):
            reasons[row] = (cap - 1, REASON_RESIDUAL)
        cap_row = np.zeros(flat.rows.size, np.int64)
        cap_row[cand] = caps[keep]
        c = flat.copies
        room = (c > 0) & (c < cap_row[flat.owner]) & (flat.state == _RUNNING)
        by_copy = (
            self._by_progress(snapshot, view, flat, cand, thr[keep]) if self.late_by == "progress" else None
        )
        if by_copy is None:  # elapsed time since first seen
            due = self._due(flat, cand, thr[keep], seen)
            late = room & (due < now)
            soon = due[room & (due >= now)]
        else:
            covered, late_t, wait_t, left_t = by_copy
            left = np.where(covered, left_t, math.nan)
            if (room & ~covered).any():  # some task without a listed copy: the elapsed-time rule for it
                due = self._due(flat, cand, thr[keep], seen)
                late = room & np.where(covered, late_t, due < now)
                soon = np.where(covered, now + wait_t, due)[room & ~late]
            else:  # the same answer when every task with room is covered (speed)
                late = room & late_t
                soon = (now + wait_t)[room & ~late]
            # a judged phase whose first task has a listed copy is reported as judged by progress
            for row in flat.rows[cand[covered[flat.offset[cand]]]].tolist():
                reasons[row] = (reasons[row][0], REASON_PROGRESS)
        return late, float(soon.min()) if soon.size else math.inf, left

    def _observe(self, flat: FlatTasks, cand: IntArray, now: float) -> list[np.ndarray]:
        """`StartTimes.observe` of the judged phases `cand` (indices into flat.rows, increasing): when each
        of their tasks was first seen running (inf: not running). Every round, whether or not the
        elapsed-time rule is read: a later round's answer depends on it."""
        t = flat.table
        rows = flat.rows[cand]
        observe, job_ids, phases = self.starts.observe, t.job_ids, t.phases  # per table row (speed)
        return [
            observe(job_ids[r], k, phases[r], now)
            for r, k in zip(rows.tolist(), t.row_k[rows].tolist(), strict=True)
        ]

    def _due(self, flat: FlatTasks, cand: IntArray, thr: np.ndarray, seen: list[np.ndarray]) -> np.ndarray:
        """Per flat task: when the elapsed-time rule makes it late, first seen running (`seen`, per judged
        phase, from `_observe`) plus its phase's threshold `thr`, for the tasks of the judged phases `cand`
        (indices into flat.rows, increasing); inf elsewhere."""
        lo = flat.offset[cand]
        size = flat.offset[cand + 1] - lo
        # (np.cumsum / np.repeat without their wrappers: speed)
        at = (lo - (np.add.accumulate(size) - size)).repeat(size) + np.arange(int(size.sum()))
        due = np.full(flat.copies.size, math.inf)
        due[at] = np.concatenate(seen) + thr.repeat(size)
        return due

    def _by_progress(
        self, snapshot: Snapshot, view: RoundView, flat: FlatTasks, cand: IntArray, thr: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """Per flat task from its running copies (`residual.late_copies`): (has a listed copy, every copy
        late, seconds until every copy may be late, time left: the least of its copies' LATE estimates).
        `cand`: indices into flat.rows of the judged phases,
        `thr` their elapsed-time thresholds. None when no copy of those phases reports progress (then the
        elapsed-time rule applies). Reads the copies as columns (`Snapshot.attempt_columns`), in the order
        of Snapshot.attempts, with no Python loop over them."""
        t = flat.table
        cols = snapshot.attempt_columns()
        judged_rows = flat.rows[cand]
        row_lo = np.full(len(t.phases), -1, np.int64)  # per table row: flat offset of its task 0
        row_lo[judged_rows] = flat.offset[cand]
        row_thr = np.zeros(len(t.phases))
        row_thr[judged_rows] = thr
        # the copies of the judged phases: table row, flat task, progress, elapsed time (one compiled pass)
        _, row, at, pa, ela = copies_of_phases(t, cols, row_lo, snapshot.time)
        if not np.isfinite(pa).any():
            return None
        # residual.fresh_copy_time and residual.late_copies per copy, then per task: every copy must be
        # late, and the longest wait counts (policies/late_kernel.py, one compiled pass)
        n, f, after = int(flat.copies.size), self.progress_factor, self.progress_after
        result: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] = late_by_copies(
            view.theta, view.n_finished, row_thr, pa, ela, row, at, n, f, after, snapshot.startup_s
        )
        return result


def late_first_by_time_left(tasks: IntArray, task_ptr: IntArray, late: np.ndarray, left: np.ndarray) -> None:
    """Reorder, in place, the late tasks among the candidate `tasks` of each placement entry
    (tasks[task_ptr[e]:task_ptr[e+1]]) by time left `left`, longest first (module docstring; nan last,
    ties in task order). Other tasks keep their positions: the kernel places an entry's candidates in order,
    so only which late task gets the entry's room changes."""
    pos = np.flatnonzero(late[tasks])
    if pos.size < 2:
        return
    entry = np.searchsorted(task_ptr, pos, side="right") - 1
    if not (entry[1:] == entry[:-1]).any():  # no entry with two late tasks: nothing to reorder
        return
    key = -left[tasks[pos]]
    key = np.where(np.isnan(key), math.inf, key)
    order = np.lexsort((tasks[pos], key, entry))  # by entry, then longest time left, then task
    tasks[pos] = tasks[pos][order]


def phase_gain(
    left: np.ndarray, rest: float, theta: float, sigma: float, startup: float, steps: int = 256
) -> tuple[float, float]:
    """(gain, held) of one more copy for each late task of one phase (the `late_first_worth` extension,
    policies/dollymp.py): how many seconds sooner the phase is expected to end, and the slot-seconds the
    copies are expected to hold.

    The late tasks' lead copies have L_i = `left` seconds to go, the phase's other running tasks at most
    R = `rest`. A fresh copy starts after `startup` s and runs X, Pareto fitted from the phase's theta and
    sigma (DollyMP Eq. 2, estimate/pareto.py `fit_pareto`), so task i ends at T_i = min(L_i, startup +
    X_i) and the phase at max(R, T_1, ..., T_k), where it ended at max L_i without the copies (a phase ends
    with its last task). E[max] = R + integral from R to max L_i of 1 - prod_i Pr{T_i <= t} dt
    (trapezoids on `steps` points). Copy i holds its slot G(L_i) = E[min(L_i, startup + X)] seconds
    (`_slot_time`). Time left inf or nan (stalled, or no progress) or no usable theta: gain inf."""
    L = np.asarray(left, np.float64)
    bad = not (math.isfinite(theta) and theta > 0 and math.isfinite(sigma) and sigma >= 0)
    if bad or not L.size or not np.isfinite(L).all():
        return math.inf, 0.0
    x_m, alpha = fit_pareto(theta, sigma)
    held = float(_slot_time(L, startup, np.full(L.size, x_m), np.full(L.size, alpha)).sum())
    top = float(L.max())
    lo = 0.0 if math.isnan(rest) else min(max(rest, 0.0), top)
    if top <= lo:
        return 0.0, held
    t = np.linspace(lo, top, steps)
    y = t - startup
    with np.errstate(divide="ignore", invalid="ignore"):
        done = np.where(
            y >= x_m, 1.0 - (x_m / np.maximum(y, x_m)) ** alpha if math.isfinite(alpha) else 1.0, 0.0
        )
    alive = L.size - np.searchsorted(np.sort(L), t, side="right")  # lead copies not ended by t
    later = 1.0 - done**alive  # Pr{the phase has not ended by t}
    e_end = lo + float(((later[1:] + later[:-1]) * np.diff(t)).sum() / 2.0)
    return top - e_end, held


def _slot_time(z: np.ndarray, startup: float, x_m: np.ndarray, alpha: np.ndarray) -> np.ndarray:
    """G(z) = E[min(z, startup + X)] for X Pareto(x_m, alpha) (alpha inf: X = x_m), z >= 0: G(z) = z for
    z <= startup, else startup + F(z - startup) with F(y) = y for y <= x_m and
    x_m + x_m (1 - (x_m / y)^(alpha - 1)) / (alpha - 1) above (`phase_gain`)."""
    y = np.maximum(z - startup, 0.0)
    finite = np.isfinite(alpha)
    a1 = np.where(finite, alpha - 1.0, 1.0)
    tail = x_m + x_m * (1.0 - (x_m / np.maximum(y, x_m)) ** a1) / a1
    f = np.where(y <= x_m, y, np.where(finite, tail, x_m))
    result: np.ndarray = np.where(z <= startup, z, startup + f)
    return result

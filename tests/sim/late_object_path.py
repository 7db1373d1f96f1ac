"""The reference twin of `LateTasks.judge` (policies/late.py): the straightforward object path it had
before the columns (a Python pass over Snapshot.attempts and a dict of the judged phases). Kept here so
the equivalence tests can swap it in and check that the array path decides exactly the same."""

from __future__ import annotations

import math

import numpy as np

from pyscheduler.objects import TaskState
from pyscheduler.policies.base import Snapshot
from pyscheduler.policies.cloning import REASON_UPSTREAM
from pyscheduler.policies.late import LateTasks
from pyscheduler.policies.residual import (
    REASON_PROGRESS,
    REASON_RESIDUAL,
    fresh_copy_time,
    late_copies,
    progress_remaining,
    residual_thresholds,
)
from pyscheduler.policies.table import FlatTasks, RoundView

_RUNNING = int(TaskState.RUNNING)
Spans = dict[tuple[str, str], tuple[int, int, float]]  # (job id, phase id) -> (flat offset, row, threshold)


def object_path_judge(
    self: LateTasks,
    snapshot: Snapshot,
    view: RoundView,
    flat: FlatTasks,
    reasons: dict[int, tuple[int, str]],
) -> tuple[np.ndarray, float, np.ndarray]:
    t = flat.table
    late = np.zeros(flat.copies.size, bool)
    left = np.full(flat.copies.size, math.nan)
    now = snapshot.time
    if not math.isfinite(now):
        return late, math.inf, left
    self.starts.keep_only({j.job_id for j in t.jobs})
    running = flat.running_rows()
    rows = flat.rows[running]
    caps = np.full(running.size, 1 + self.max_clones, np.int64)
    for i in np.flatnonzero(t.has_parent[rows] & self.upstream_cap).tolist():
        row = int(rows[i])
        job = t.jobs[t.row_job[row]]
        ups = job.parent_idx[int(t.row_k[row])]
        caps[i] = min(int(caps[i]), *(job.phases[q].peak_min() for q in ups))
        if caps[i] <= 1:
            reasons[row] = (0, REASON_UPSTREAM)
    thr = residual_thresholds(view.theta[rows], view.sigma[rows], self.residual_factor)
    judged = np.isfinite(thr) | (self.late_by == "progress")
    keep = np.flatnonzero((caps > 1) & judged & (view.n_pending[rows] == 0))
    if keep.size == 0:
        return late, math.inf, left
    due = np.full(flat.copies.size, math.inf)
    cap_task = np.zeros(flat.copies.size, np.int64)
    spans: Spans = {}
    for i in keep.tolist():
        r, row, cap = int(running[i]), int(rows[i]), int(caps[i])
        job = t.jobs[t.row_job[row]]
        k = int(t.row_k[row])
        lo, hi = int(flat.offset[r]), int(flat.offset[r + 1])
        due[lo:hi] = self.starts.observe(job.job_id, k, job.phases[k], now) + thr[i]
        cap_task[lo:hi] = cap
        spans[(t.job_ids[row], t.phase_ids[row])] = (lo, row, float(thr[i]))
        reasons[row] = (cap - 1, REASON_RESIDUAL)
    c = flat.copies
    room = (c > 0) & (c < cap_task) & (flat.state == _RUNNING)
    by_copy = _by_progress(self, snapshot, view, spans, c.size) if self.late_by == "progress" else None
    if by_copy is None:
        late = room & (due < now)
        soon = due[room & (due >= now)]
    else:
        covered, late_t, wait_t, left_t = by_copy
        left = np.where(covered, left_t, math.nan)
        late = room & np.where(covered, late_t, due < now)
        soon = np.where(covered, now + wait_t, due)[room & ~late]
        for lo, row, _ in spans.values():
            if covered[lo]:
                reasons[row] = (reasons[row][0], REASON_PROGRESS)
    return late, float(soon.min()) if soon.size else math.inf, left


def _by_progress(
    self: LateTasks, snapshot: Snapshot, view: RoundView, spans: Spans, n: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    idx: list[int] = []
    sid: list[int] = []
    prog: list[float] = []
    start: list[float] = []
    rows: list[int] = []
    thr: list[float] = []
    ids: dict[tuple[str, str], int] = {}
    for a in snapshot.attempts:
        key = (a.job_id, a.phase_id)
        span = spans.get(key)
        if span is None:
            continue
        s = ids.get(key)
        if s is None:
            s = ids[key] = len(rows)
            rows.append(span[1])
            thr.append(span[2])
        idx.append(span[0] + a.task_index)
        sid.append(s)
        p = getattr(a, "progress", None)
        prog.append(math.nan if p is None else float(p))
        start.append(a.start_time)
    pa = np.asarray(prog, np.float64)
    if not np.isfinite(pa).any():
        return None
    ela = snapshot.time - np.asarray(start, np.float64)
    si = np.asarray(sid, np.int64)
    r = np.asarray(rows, np.int64)
    theta = fresh_copy_time(view.theta[r], view.n_finished[r], pa, ela, si, self.progress_after)
    late_c, wait_c = late_copies(
        pa, ela, theta, np.asarray(thr)[si], self.progress_factor, self.progress_after
    )
    at = np.asarray(idx, np.int64)
    covered = np.bincount(at, minlength=n) > 0
    late_t = covered & (np.bincount(at, weights=~late_c, minlength=n) == 0)
    wait_t = np.zeros(n)
    np.maximum.at(wait_t, at[~late_c], wait_c[~late_c])
    left_t = np.full(n, math.inf)
    np.minimum.at(left_t, at, progress_remaining(pa, ela))
    return covered, late_t, wait_t, left_t

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
* `progress_factor` (DollyMP's default 1.0, policies/dollymp.py): with the time left observed rather than
  inferred, a clone is expected to finish first at f >= 1; with DollyMP's replacement of the slowest copy
  at the copy cap (policies/replace.py) the resources stayed within DollyMP0's + 5% in the runs.
"""

from __future__ import annotations

import math

import numpy as np

from pyscheduler.objects import TaskState
from pyscheduler.policies.base import Snapshot
from pyscheduler.policies.cloning import REASON_UPSTREAM
from pyscheduler.policies.residual import (
    REASON_PROGRESS,
    REASON_RESIDUAL,
    StartTimes,
    fresh_copy_time,
    late_copies,
    residual_thresholds,
)
from pyscheduler.policies.table import FlatTasks, RoundView

_RUNNING = int(TaskState.RUNNING)
LATE_BY = ("progress", "elapsed")
Spans = dict[tuple[str, str], tuple[int, int, float]]  # (job id, phase id) -> (flat offset, row, threshold)


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

    def judge(
        self, snapshot: Snapshot, view: RoundView, flat: FlatTasks, reasons: dict[int, tuple[int, str]]
    ) -> tuple[np.ndarray, float]:
        """Per flat task: running, late, below its phase's copy cap; and the earliest time another running
        task may turn late (Decisions.wake_at). Writes each candidate row's (clones, reason) in `reasons`."""
        t = flat.table
        late = np.zeros(flat.copies.size, bool)
        now = snapshot.time
        if not math.isfinite(now):
            return late, math.inf
        self.starts.keep_only({j.job_id for j in t.jobs})
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
            return late, math.inf
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
        by_copy = self._by_progress(snapshot, view, spans, c.size) if self.late_by == "progress" else None
        if by_copy is None:  # elapsed time since first seen
            late = room & (due < now)
            soon = due[room & (due >= now)]
        else:
            covered, late_t, wait_t = by_copy
            late = room & np.where(covered, late_t, due < now)
            soon = np.where(covered, now + wait_t, due)[room & ~late]
            for lo, row, _ in spans.values():
                if covered[lo]:
                    reasons[row] = (reasons[row][0], REASON_PROGRESS)
        return late, float(soon.min()) if soon.size else math.inf

    def _by_progress(
        self, snapshot: Snapshot, view: RoundView, spans: Spans, n: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """Per flat task from its running copies (`residual.late_copies`): (has a listed copy, every copy
        late, seconds until every copy may be late). None when no copy of the candidate phases reports
        progress (then the elapsed-time rule applies)."""
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
        np.maximum.at(wait_t, at[~late_c], wait_c[~late_c])  # every copy must be late
        return covered, late_t, wait_t

"""The late-copy rule's per-copy arithmetic and per-task reduction in one compiled pass (speed).

`late_by_copies` equals, operation for operation (the same IEEE operations in the same order, sums taken
in copy order as np.bincount takes them), this numpy composition of policies/residual.py:

    theta = fresh_copy_time(theta_rows, finished_rows, progress, elapsed, row, min_elapsed)
    late, wait = late_copies(progress, elapsed, theta, thr_rows[row], factor, min_elapsed)
    covered = np.bincount(at, minlength=n) > 0
    late_t = covered & (np.bincount(at, weights=~late, minlength=n) == 0)
    wait_t = np.zeros(n); np.maximum.at(wait_t, at[~late], wait[~late])
    left_t = np.full(n, inf); np.minimum.at(left_t, at, progress_remaining(progress, elapsed))

which policies/late.py ran every round as some twenty numpy calls (tests/sim/test_late_kernel.py checks
the two agree bit for bit, nan/0/1/inf progress and zero elapsed times included).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt
from numba import njit

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

if TYPE_CHECKING:
    from pyscheduler.policies.attempts import AttemptColumns
    from pyscheduler.policies.table import PhaseTable


_NJIT = njit(cache=True, nogil=True)


@_NJIT  # type: ignore[misc,unused-ignore]
def _left_one(p: float, e: float) -> float:
    """residual.progress_remaining of one copy."""
    if np.isfinite(p) and p > 0 and e > 0:
        pp = p if p <= 1.0 else 1.0  # np.minimum(p, 1.0)
        return e * (1.0 - pp) / pp
    return math.inf


@_NJIT  # type: ignore[misc,unused-ignore]
def _late_one(
    p: float, e: float, theta: float, threshold: float, factor: float, min_elapsed: float, startup: float
) -> tuple[bool, float]:
    """residual.late_copies of one copy: (late, wait)."""
    known = np.isfinite(p) and p > 0
    judged = known and e >= min_elapsed
    stalled = p == 0 and e >= min_elapsed and e > 0
    late = (judged and _left_one(p, e) >= factor * theta + startup) if known else (stalled or e >= threshold)
    wait = (min_elapsed - e) if known else (threshold - e)
    if late or (known and judged) or not np.isfinite(wait):
        wait = math.inf
    elif not wait >= 0.0:  # np.maximum(wait, 0.0)
        wait = 0.0
    return late, wait


@_NJIT  # type: ignore[misc,unused-ignore]
def _projections(
    progress: FloatArray, elapsed: FloatArray, min_elapsed: float
) -> tuple[FloatArray, FloatArray]:
    """fresh_copy_time's per copy projected total (elapsed / progress) and whether it counts (1.0 / 0.0)."""
    k = progress.shape[0]
    total = np.zeros(k)
    known = np.zeros(k)
    for i in range(k):
        p, e = progress[i], elapsed[i]
        if np.isfinite(p) and p > 0 and e >= min_elapsed and e > 0:
            total[i] = e / p
            known[i] = 1.0
    return total, known


@_NJIT  # type: ignore[misc,unused-ignore]
def _sum_by(index: IntArray, weights: FloatArray, size: int) -> FloatArray:
    """np.bincount(index, weights, minlength=size) (added in index order, as bincount adds)."""
    out = np.zeros(size)
    for i in range(index.shape[0]):
        out[index[i]] += weights[i]
    return out


@_NJIT  # type: ignore[misc,unused-ignore]
def _fresh_one(finished: float, theta: float, others: float, counted: float) -> float:
    """fresh_copy_time's estimate from `finished` tasks of mean `theta` and `counted` other copies whose
    projected totals sum to `others`."""
    w = finished
    return (w * theta + others) / max(w + counted, 1.0) if (w + counted) > 0 else theta


@_NJIT  # type: ignore[misc,unused-ignore]
def late_by_copies(
    theta_rows: FloatArray,
    finished_rows: IntArray,
    thr_rows: FloatArray,
    progress: FloatArray,
    elapsed: FloatArray,
    row: IntArray,
    at: IntArray,
    n: int,
    factor: float,
    min_elapsed: float,
    startup: float = 0.0,
) -> tuple[BoolArray, BoolArray, FloatArray, FloatArray]:
    """Per flat task (n of them): (has a listed copy, every copy late, seconds until every copy may be
    late, the task's time left: the least of its copies' LATE estimates, inf when none has one), from the
    copies' progress, elapsed time, table row `row` and flat task `at` (module docstring). `theta_rows`,
    `finished_rows`, `thr_rows`: per table row."""
    total, known = _projections(progress, elapsed, min_elapsed)
    m = theta_rows.shape[0]
    sums, counts = _sum_by(row, total, m), _sum_by(row, known, m)
    covered = np.zeros(n, np.bool_)
    not_late = np.zeros(n, np.int64)
    wait_t = np.zeros(n)
    left_t = np.full(n, math.inf)
    for i in range(progress.shape[0]):
        r, t = row[i], at[i]
        fresh = _fresh_one(float(finished_rows[r]), theta_rows[r], sums[r] - total[i], counts[r] - known[i])
        late, wait = _late_one(progress[i], elapsed[i], fresh, thr_rows[r], factor, min_elapsed, startup)
        covered[t] = True
        left = _left_one(progress[i], elapsed[i])
        if left < left_t[t]:  # np.minimum.at
            left_t[t] = left
        if not late:
            not_late[t] += 1
            cur = wait_t[t]
            if not (cur >= wait or np.isnan(cur)):  # np.maximum.at
                wait_t[t] = wait
    return covered, covered & (not_late == 0), wait_t, left_t


@_NJIT  # type: ignore[misc,unused-ignore]
def late_at_cap(
    theta_rows: FloatArray,
    finished_rows: IntArray,
    progress: FloatArray,
    elapsed: FloatArray,
    row: IntArray,
    at: IntArray,
    n: int,
    factor: float,
    min_elapsed: float,
    startup: float = 0.0,
) -> tuple[BoolArray, FloatArray, IntArray, IntArray]:
    """The replacement rule's pass (policies/replace.py): per copy (late, wait) by residual.late_copies with
    no elapsed-time fallback (threshold inf) against replace._fresh_without_task's fresh-copy time, and per
    flat task (n of them) the copies listed and the copies not late (np.bincount over `at`); equal, bit
    for bit, to that numpy composition (tests/sim/test_late_kernel.py)."""
    total, known = _projections(progress, elapsed, min_elapsed)
    m, k = theta_rows.shape[0], progress.shape[0]
    sums, counts = _sum_by(row, total, m), _sum_by(row, known, m)
    task_sums, task_counts = _sum_by(at, total, n), _sum_by(at, known, n)
    late = np.zeros(k, np.bool_)
    wait = np.empty(k)
    listed = np.zeros(n, np.int64)
    not_late = np.zeros(n, np.int64)
    for i in range(k):
        r, t = row[i], at[i]
        others, counted = sums[r] - task_sums[t], counts[r] - task_counts[t]
        fresh = _fresh_one(float(finished_rows[r]), theta_rows[r], others, counted)
        late[i], wait[i] = _late_one(progress[i], elapsed[i], fresh, math.inf, factor, min_elapsed, startup)
        listed[t] += 1
        if not late[i]:
            not_late[t] += 1
    return late, wait, listed, not_late


@_NJIT  # type: ignore[misc,unused-ignore]
def copies_of_rows(
    row_index: IntArray,
    job_ptr: IntArray,
    job_pos: IntArray,
    phase_k: IntArray,
    task_index: IntArray,
    start_time: FloatArray,
    progress: FloatArray,
    row_lo: IntArray,
    now: float,
) -> tuple[IntArray, IntArray, IntArray, FloatArray, FloatArray]:
    """The copies (AttemptColumns' job_pos, phase_k, task_index, start_time, progress) of the table rows
    with row_lo >= 0, in one pass: (sel, row, at, progress, elapsed), equal to

        row_all = row_index[job_ptr[job_pos] + phase_k]; sel = np.flatnonzero(row_lo[row_all] >= 0)
        row = row_all[sel]; at = row_lo[row] + task_index[sel]
        progress[sel], now - start_time[sel]

    (what LateTasks._by_progress and Replacements.judge did as some ten numpy calls each)."""
    k = job_pos.shape[0]
    rows = np.empty(k, np.int64)
    m = 0
    for i in range(k):
        r = row_index[job_ptr[job_pos[i]] + phase_k[i]]
        rows[i] = r
        if row_lo[r] >= 0:
            m += 1
    sel = np.empty(m, np.int64)
    row = np.empty(m, np.int64)
    at = np.empty(m, np.int64)
    pa = np.empty(m)
    ela = np.empty(m)
    m = 0
    for i in range(k):
        r = rows[i]
        lo = row_lo[r]
        if lo >= 0:
            sel[m] = i
            row[m] = r
            at[m] = lo + task_index[i]
            pa[m] = progress[i]
            ela[m] = now - start_time[i]
            m += 1
    return sel, row, at, pa, ela


def copies_of_phases(
    table: PhaseTable, cols: AttemptColumns, row_lo: IntArray, now: float
) -> tuple[IntArray, IntArray, IntArray, FloatArray, FloatArray]:
    """`copies_of_rows` of the attempt columns `cols` over `table`: (sel, row, at, progress, elapsed) of
    the copies of the rows with row_lo >= 0."""
    result: tuple[IntArray, IntArray, IntArray, FloatArray, FloatArray] = copies_of_rows(
        table.row_index(),
        table.job_ptr,
        cols.job_pos,
        cols.phase_k,
        cols.task_index,
        cols.start_time,
        cols.progress,
        row_lo,
        float(now),
    )
    return result

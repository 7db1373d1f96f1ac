"""policies/late_kernel.py's compiled pass equals the numpy composition of policies/residual.py it replaced
in LateTasks, bit for bit (its module docstring), on random copies with awkward progress values."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest

from pyscheduler.policies.late_kernel import copies_of_rows, late_at_cap, late_by_copies
from pyscheduler.policies.replace import _fresh_without_task
from pyscheduler.policies.residual import fresh_copy_time, late_copies, progress_remaining


def _numpy_path(
    theta_rows: npt.NDArray[np.float64],
    finished_rows: npt.NDArray[np.int64],
    thr_rows: npt.NDArray[np.float64],
    pa: npt.NDArray[np.float64],
    ela: npt.NDArray[np.float64],
    row: npt.NDArray[np.int64],
    at: npt.NDArray[np.int64],
    n: int,
    factor: float,
    min_elapsed: float,
    startup: float = 0.0,
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    theta = fresh_copy_time(theta_rows, finished_rows, pa, ela, row, min_elapsed)
    late_c, wait_c = late_copies(pa, ela, theta, thr_rows[row], factor, min_elapsed, startup)
    covered = np.bincount(at, minlength=n) > 0
    late_t = covered & (np.bincount(at, weights=~late_c, minlength=n) == 0)
    wait_t = np.zeros(n)
    np.maximum.at(wait_t, at[~late_c], wait_c[~late_c])
    left_t = np.full(n, math.inf)
    np.minimum.at(left_t, at, progress_remaining(pa, ela))
    return covered, late_t, wait_t, left_t


def _random_copies(
    rng: np.random.Generator,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.int64],
    npt.NDArray[np.int64],
    int,
]:
    m, n, k = int(rng.integers(1, 8)), int(rng.integers(1, 40)), int(rng.integers(0, 60))
    theta_rows = rng.choice([0.0, 5.0, 40.0, 300.0], m) * rng.random(m)
    finished_rows = rng.integers(0, 4, m).astype(np.int64)
    pa = rng.choice([math.nan, 0.0, 1.0, 1.5, 1e-300, 0.5], k) * np.where(rng.random(k) < 0.5, 1.0, 0.3)
    pa = np.where(rng.random(k) < 0.4, rng.random(k), pa)
    ela = rng.choice([0.0, 5.0, 10.0, 60.0, 500.0], k) + np.where(rng.random(k) < 0.5, rng.random(k), 0)
    row = rng.integers(0, m, k).astype(np.int64)
    at = rng.integers(0, n, k).astype(np.int64)
    return theta_rows, finished_rows, pa, ela, row, at, n


@pytest.mark.parametrize(
    ("factor", "min_elapsed", "startup"),
    [(1.0, 10.0, 0.0), (1.5, 0.0, 0.0), (0.5, 30.0, 0.0), (1.0, 10.0, 15.0)],
)
def test_compiled_late_rule_equals_the_numpy_rule(factor: float, min_elapsed: float, startup: float) -> None:
    rng = np.random.default_rng(4)
    late_seen = waits_seen = 0
    for _ in range(300):
        theta_rows, finished_rows, pa, ela, row, at, n = _random_copies(rng)
        thr_rows = rng.choice([0.0, 20.0, math.inf], theta_rows.size)
        got = late_by_copies(
            theta_rows, finished_rows, thr_rows, pa, ela, row, at, n, factor, min_elapsed, startup
        )
        want = _numpy_path(
            theta_rows, finished_rows, thr_rows, pa, ela, row, at, n, factor, min_elapsed, startup
        )
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert np.array_equal(g, w, equal_nan=True)
        late_seen += int(want[1].sum())
        waits_seen += int((np.isfinite(want[2]) & (want[2] > 0)).sum())
    assert late_seen > 50 and waits_seen > 50  # both outcomes exercised


@pytest.mark.parametrize(
    ("factor", "min_elapsed", "startup"), [(1.0, 10.0, 0.0), (2.0, 0.0, 0.0), (1.0, 10.0, 15.0)]
)
def test_compiled_replacement_pass_equals_the_numpy_rule(
    factor: float, min_elapsed: float, startup: float
) -> None:
    rng = np.random.default_rng(5)
    late_seen = 0
    for _ in range(300):
        theta_rows, finished_rows, pa, ela, row, at, n = _random_copies(rng)
        got = late_at_cap(theta_rows, finished_rows, pa, ela, row, at, n, factor, min_elapsed, startup)
        theta = _fresh_without_task(theta_rows, finished_rows, pa, ela, row, at, min_elapsed)
        late, wait = late_copies(pa, ela, theta, np.full(pa.size, math.inf), factor, min_elapsed, startup)
        want = (late, wait, np.bincount(at, minlength=n), np.bincount(at, weights=~late, minlength=n))
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1], equal_nan=True)
        assert np.array_equal(got[2], want[2]) and np.array_equal(got[3], want[3])
        assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
        late_seen += int(late.sum())
    assert late_seen > 50


def test_copies_of_rows_equals_the_numpy_selection() -> None:
    """The compiled selection of the judged phases' copies equals the numpy gathers it replaced."""
    rng = np.random.default_rng(6)
    picked = 0
    for _ in range(300):
        n_jobs = int(rng.integers(1, 6))
        per_job = rng.integers(1, 4, n_jobs)
        job_ptr = np.concatenate([[0], np.cumsum(per_job)]).astype(np.int64)
        p = int(job_ptr[-1])
        row_index = rng.permutation(p).astype(np.int64)
        k = int(rng.integers(0, 50))
        job_pos = rng.integers(0, n_jobs, k).astype(np.int64)
        phase_k = (rng.random(k) * per_job[job_pos]).astype(np.int64)
        task_index = rng.integers(0, 9, k).astype(np.int64)
        start = rng.choice([0.0, 3.5, 100.25], k) + rng.random(k)
        progress = rng.choice([math.nan, 0.0, 0.5, 1.0], k)
        row_lo = np.where(rng.random(p) < 0.5, -1, rng.integers(0, 40, p)).astype(np.int64)
        now = float(rng.choice([0.0, 101.0, 1e6 + 0.1]))
        got = copies_of_rows(row_index, job_ptr, job_pos, phase_k, task_index, start, progress, row_lo, now)
        row_all = row_index[job_ptr[job_pos] + phase_k]
        sel = np.flatnonzero(row_lo[row_all] >= 0)
        row = row_all[sel]
        want = (sel, row, row_lo[row] + task_index[sel], progress[sel], now - start[sel])
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert np.array_equal(g, w, equal_nan=True)
        picked += sel.size
    assert picked > 1000

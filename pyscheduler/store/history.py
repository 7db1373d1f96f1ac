"""Statistics history of recurring jobs, keyed by job name: per-phase task durations.

For every (job name, phase id) the store keeps running moments over all durations ever recorded
(count, mean, M2, min, max) and the most recent `max_samples` durations themselves (for a Pareto tail
fit or a recency-weighted estimate). pyscheduler.estimate reads it; the rpc service writes it when the
AM helper reports task completions:

    history.record("wordcount", "map", [31.2, 29.8])   # each finished task's duration, seconds
    history.record_run("wordcount")                    # once per finished run of the job
    history.moments("wordcount", "map")  -> PhaseMoments(count, mean, variance, min, max) | None
    history.samples("wordcount", "map")  -> [..., 29.8] oldest first, at most max_samples
    history.phases("wordcount")          -> {"map": PhaseMoments, ...}
    history.runs("wordcount")            -> number of finished runs recorded
    history.merge("wordcount", "map", count, mean, m2)   # fold in moments only (no samples), e.g. a
                                                         # finished job's running stats from the core
    history.all_moments()                -> {(job name, phase id): PhaseMoments} (warm a cache at start)

A duration must be finite and >= 0; anything else is refused with ValueError naming the element.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyscheduler.store.db import Database

PG_LOCK_HISTORY = 0x444D5033  # "DMP3"
DEFAULT_MAX_SAMPLES = 2000


@dataclass(frozen=True, slots=True)
class PhaseMoments:
    """Moments of a phase's task durations over all recorded runs. `variance` is the sample variance
    (divisor count - 1; 0.0 for a single sample)."""

    count: int
    mean: float
    variance: float
    min: float
    max: float

    @property
    def sd(self) -> float:
        return math.sqrt(self.variance)


def _moments(count: Any, mean: Any, m2: Any, low: Any, high: Any) -> PhaseMoments:
    n = int(count)
    return PhaseMoments(n, float(mean), float(m2) / (n - 1) if n > 1 else 0.0, float(low), float(high))


def _duration_ok(v: object) -> bool:
    return not isinstance(v, bool) and isinstance(v, int | float) and math.isfinite(v) and v >= 0


def _check_key(job_name: str, phase_id: str) -> None:
    if not isinstance(job_name, str) or not job_name:
        raise ValueError("job_name must be a non-empty string")
    if not isinstance(phase_id, str) or not phase_id:
        raise ValueError("phase_id must be a non-empty string")


def _summarise(values: Sequence[float]) -> tuple[int, float, float]:
    """(count, mean, M2) of `values` (two-pass, exact enough for a batch)."""
    n = len(values)
    mean = math.fsum(values) / n
    return n, mean, math.fsum((v - mean) ** 2 for v in values)


def merge_moments(a: tuple[int, float, float], b: tuple[int, float, float]) -> tuple[int, float, float]:
    """Combine (count, mean, M2) of two disjoint sets: the pairwise update of Chan, Golub and LeVeque
    (1979), written with means: M2 = M2a + M2b + delta^2 * na * nb / n, with delta = mean_b - mean_a."""
    na, ma, m2a = a
    nb, mb, m2b = b
    if na == 0:
        return b
    if nb == 0:
        return a
    n = na + nb
    delta = mb - ma
    return n, ma + delta * nb / n, m2a + m2b + delta * delta * na * nb / n


class StatisticsHistory:
    """Recurring-job task-duration statistics in the same database as the decision log."""

    def __init__(self, db: Database, max_samples: int = DEFAULT_MAX_SAMPLES) -> None:
        if max_samples < 1:
            raise ValueError(f"max_samples must be >= 1, got {max_samples}")
        self.db = db
        self.max_samples = max_samples

    def record(self, job_name: str, phase_id: str, durations: Sequence[float]) -> PhaseMoments | None:
        """Add task durations (seconds) of one phase; return the updated moments (None if nothing known)."""
        _check_key(job_name, phase_id)
        values: list[float] = []
        for i, v in enumerate(durations):
            if not _duration_ok(v):
                raise ValueError(f"durations[{i}] must be a finite number >= 0, got {v!r}")
            values.append(float(v))
        if not values:
            return self.moments(job_name, phase_id)
        return self._fold(job_name, phase_id, _summarise(values), min(values), max(values), values)

    def merge(
        self,
        job_name: str,
        phase_id: str,
        count: int,
        mean: float,
        m2: float,
        low: float | None = None,
        high: float | None = None,
    ) -> PhaseMoments | None:
        """Fold in moments of durations not recorded one by one (count, mean, M2 = sum of squared
        deviations). Without `low`/`high` the mean stands in for the batch's minimum and maximum."""
        _check_key(job_name, phase_id)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"count must be an integer >= 0, got {count!r}")
        for name, v in (("mean", mean), ("m2", m2), ("low", low), ("high", high)):
            if v is not None and not _duration_ok(v):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if count == 0:
            return self.moments(job_name, phase_id)
        lo = float(mean) if low is None else float(low)
        hi = float(mean) if high is None else float(high)
        return self._fold(job_name, phase_id, (count, float(mean), float(m2)), lo, hi, [])

    def all_moments(self) -> dict[tuple[str, str], PhaseMoments]:
        """Moments of every (job name, phase id) in the history."""
        with self.db.read() as cur:
            cur.execute("SELECT job_name, phase_id, count, mean, m2, min, max FROM phase_moments")
            rows = cur.fetchall()
        return {(str(r[0]), str(r[1])): _moments(*r[2:]) for r in rows}

    def _fold(
        self,
        job_name: str,
        phase_id: str,
        batch: tuple[int, float, float],
        batch_low: float,
        batch_high: float,
        values: Sequence[float],
    ) -> PhaseMoments:
        db = self.db
        key = (job_name, phase_id)
        with db.write() as cur:
            db.lock(cur, PG_LOCK_HISTORY)
            cur.execute(
                db.sql(
                    "SELECT count, mean, m2, min, max FROM phase_moments WHERE job_name = ? AND phase_id = ?"
                ),
                key,
            )
            old = cur.fetchone()
            if old is None:
                n, mean, m2 = batch
                low, high = batch_low, batch_high
            else:
                n, mean, m2 = merge_moments((int(old[0]), float(old[1]), float(old[2])), batch)
                low, high = min(float(old[3]), batch_low), max(float(old[4]), batch_high)
            cur.execute(
                db.sql(
                    "INSERT INTO phase_moments (job_name, phase_id, count, mean, m2, min, max, updated_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_name, phase_id) DO UPDATE SET "
                    "count = excluded.count, mean = excluded.mean, m2 = excluded.m2, min = excluded.min, "
                    "max = excluded.max, updated_at = excluded.updated_at"
                ),
                (*key, n, mean, m2, low, high, time.time()),
            )
            if not values:
                return _moments(n, mean, m2, low, high)
            cur.executemany(
                db.sql("INSERT INTO phase_samples (job_name, phase_id, duration) VALUES (?, ?, ?)"),
                [(*key, v) for v in values[-self.max_samples :]],
            )
            # Keep the newest max_samples: drop every sample older than the max_samples-th newest.
            cur.execute(
                db.sql(
                    "SELECT id FROM phase_samples WHERE job_name = ? AND phase_id = ? "
                    "ORDER BY id DESC LIMIT 1 OFFSET ?"
                ),
                (*key, self.max_samples - 1),
            )
            oldest_kept = cur.fetchone()
            if oldest_kept is not None:
                cur.execute(
                    db.sql("DELETE FROM phase_samples WHERE job_name = ? AND phase_id = ? AND id < ?"),
                    (*key, int(oldest_kept[0])),
                )
        return _moments(n, mean, m2, low, high)

    def record_run(self, job_name: str, now: float | None = None) -> int:
        """Count one finished run of a recurring job; return its number of runs so far."""
        _check_key(job_name, "-")
        db = self.db
        with db.write() as cur:
            cur.execute(
                db.sql(
                    "INSERT INTO job_runs (job_name, runs, last_run_at) VALUES (?, 1, ?) "
                    "ON CONFLICT (job_name) DO UPDATE SET runs = job_runs.runs + 1, "
                    "last_run_at = excluded.last_run_at"
                ),
                (job_name, time.time() if now is None else now),
            )
            cur.execute(db.sql("SELECT runs FROM job_runs WHERE job_name = ?"), (job_name,))
            return int(cur.fetchone()[0])

    def runs(self, job_name: str) -> int:
        with self.db.read() as cur:
            cur.execute(self.db.sql("SELECT runs FROM job_runs WHERE job_name = ?"), (job_name,))
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def moments(self, job_name: str, phase_id: str) -> PhaseMoments | None:
        return self.phases(job_name, phase_id).get(phase_id)

    def phases(self, job_name: str, only: str | None = None) -> dict[str, PhaseMoments]:
        """Moments of every phase recorded for `job_name` (or just phase `only`)."""
        sql = "SELECT phase_id, count, mean, m2, min, max FROM phase_moments WHERE job_name = ?"
        params: tuple[str, ...] = (job_name,)
        if only is not None:
            sql += " AND phase_id = ?"
            params = (job_name, only)
        with self.db.read() as cur:
            cur.execute(self.db.sql(sql + " ORDER BY phase_id"), params)
            rows = cur.fetchall()
        return {str(r[0]): _moments(*r[1:]) for r in rows}

    def samples(self, job_name: str, phase_id: str, limit: int | None = None) -> list[float]:
        """The most recent durations of a phase, oldest first (at most `limit`, at most max_samples)."""
        n = self.max_samples if limit is None else max(0, min(limit, self.max_samples))
        with self.db.read() as cur:
            cur.execute(
                self.db.sql(
                    "SELECT duration FROM phase_samples WHERE job_name = ? AND phase_id = ? "
                    "ORDER BY id DESC LIMIT ?"
                ),
                (job_name, phase_id, n),
            )
            rows = cur.fetchall()
        return [float(r[0]) for r in reversed(rows)]

    def job_names(self) -> list[str]:
        with self.db.read() as cur:
            cur.execute(
                "SELECT job_name FROM phase_moments UNION SELECT job_name FROM job_runs ORDER BY job_name"
            )
            return [str(r[0]) for r in cur.fetchall()]

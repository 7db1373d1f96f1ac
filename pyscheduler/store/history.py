"""Statistics history of recurring jobs, per tenant: per-phase task durations of each (queue, user, job
name), the recurring job's identity within a tenant as the RM reports the application (ApplicationInfo's
queue, user and name; the wire contract carries no submitter-given recurring-job key).

For every (JobKey, phase id) the store keeps running moments over all durations ever recorded (count,
mean, M2, min, max) and the most recent `max_samples` durations themselves (for a Pareto tail fit or a
recency-weighted estimate). The decision service writes it when the AM helper reports task completions and
reads it for the AM plan's θ/σ (service/rmproxy/amservice.py, service/state/amregistry.py):

    key = JobKey("root.prod", "alice", "wordcount")
    history.record(key, "map", [31.2, 29.8])   # each finished task's duration, seconds
    history.record_run(key)                    # once per finished run of the job
    history.moments(key, "map")  -> PhaseMoments(count, mean, variance, min, max) | None
    history.samples(key, "map")  -> [..., 29.8] oldest first, at most max_samples
    history.phases(key)          -> {"map": PhaseMoments, ...}
    history.runs(key)            -> number of finished runs recorded
    history.merge(key, "map", count, mean, m2)   # fold in moments only (no samples)
    history.all_moments()        -> {(JobKey as stored, phase id): PhaseMoments}
    history.framework("root.prod", "map")  -> PhaseMoments | None: the prior of a phase nobody measured

Isolation: a job's rows are never read by a job of another queue or user, unless `share_across_queues`
(the operator's `store.history_share_across_queues`): then a user's job of one name shares one history
in every queue (stored under queue SHARED_QUEUE, ""). Bounded per tenant: at most
`max_rows_per_user` (queue, phase) rows of one user in one queue and `max_rows_per_queue` rows in one
queue (the same bounds for `record_run`'s job rows); beyond, the tenant's own least recently updated
rows (and their samples) are forgotten, never another tenant's.

A duration must be finite and >= 0, the key's parts non-empty strings; anything else is refused with
ValueError naming the element.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pyscheduler.store.db import Cursor, Database

PG_LOCK_HISTORY = 0x444D5033  # "DMP3"
DEFAULT_MAX_SAMPLES = 2000
DEFAULT_MAX_ROWS_PER_QUEUE = 10_000
DEFAULT_MAX_ROWS_PER_USER = 1_000
# The framework prior pools the moments of at most this many recurring jobs of the queue (the most recently
# updated), so that reading it stays one bounded query however long the queue's history.
FRAMEWORK_JOBS = 50
MAX_READS_KEPT = 65_536  # phases whose moments `cache_reads` keeps (all forgotten past that)
SHARED_QUEUE = ""  # the queue part of a stored key when histories are shared across queues


@dataclass(frozen=True, slots=True)
class JobKey:
    """A recurring job within a tenant: the leaf queue, user and application name the RM reports."""

    queue: str
    user: str
    job_name: str


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


def _check_key(key: JobKey, phase_id: str) -> None:
    if not isinstance(key, JobKey):
        raise ValueError(f"key must be a JobKey (queue, user, job name), got {key!r}")
    for name in ("queue", "user", "job_name"):
        v = getattr(key, name)
        if not isinstance(v, str) or not v:
            raise ValueError(f"{name} must be a non-empty string, got {v!r}")
    if not isinstance(phase_id, str) or not phase_id:
        raise ValueError("phase_id must be a non-empty string")


def _bound(name: str, v: int) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
    return v


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


_KEY = "queue = ? AND user_name = ? AND job_name = ?"
_PHASE_KEY = _KEY + " AND phase_id = ?"


class StatisticsHistory:
    """Recurring-job task-duration statistics in the same database as the decision log, per tenant."""

    def __init__(
        self,
        db: Database,
        max_samples: int = DEFAULT_MAX_SAMPLES,
        max_rows_per_queue: int = DEFAULT_MAX_ROWS_PER_QUEUE,
        max_rows_per_user: int = DEFAULT_MAX_ROWS_PER_USER,
        share_across_queues: bool = False,
        cache_reads: bool = False,
    ) -> None:
        self.db = db
        self.max_samples = _bound("max_samples", max_samples)
        self.max_rows_per_queue = _bound("max_rows_per_queue", max_rows_per_queue)
        self.max_rows_per_user = _bound("max_rows_per_user", max_rows_per_user)
        self.share_across_queues = bool(share_across_queues)
        # `cache_reads`: the owner is the only writer of the store's history (the decision service), so
        # `moments` keeps what it read of a phase until this object writes that phase, or trims the rows
        self._read: dict[tuple[str, str, str, str], PhaseMoments | None] | None = {} if cache_reads else None
        self._writes = 0  # writes so far: a read that overlapped one is not kept
        self._read_lock = threading.Lock()

    def _wrote(self, row: tuple[str, str, str, str] | None, trimmed: bool) -> None:
        with self._read_lock:
            self._writes += 1
            if self._read is not None:
                if trimmed:
                    self._read.clear()
                elif row is not None:
                    self._read.pop(row, None)

    def stored(self, key: JobKey) -> tuple[str, str, str]:
        """The (queue, user, job name) a key's rows are stored under: its own queue, or SHARED_QUEUE
        when histories are shared across queues."""
        return (SHARED_QUEUE if self.share_across_queues else key.queue, key.user, key.job_name)

    def record(self, key: JobKey, phase_id: str, durations: Sequence[float]) -> PhaseMoments | None:
        """Add task durations (seconds) of one phase; return the updated moments (None if nothing known)."""
        _check_key(key, phase_id)
        values: list[float] = []
        for i, v in enumerate(durations):
            if not _duration_ok(v):
                raise ValueError(f"durations[{i}] must be a finite number >= 0, got {v!r}")
            values.append(float(v))
        if not values:
            return self.moments(key, phase_id)
        return self._fold(key, phase_id, _summarise(values), min(values), max(values), values)

    def merge(
        self,
        key: JobKey,
        phase_id: str,
        count: int,
        mean: float,
        m2: float,
        low: float | None = None,
        high: float | None = None,
    ) -> PhaseMoments | None:
        """Fold in moments of durations not recorded one by one (count, mean, M2 = sum of squared
        deviations). Without `low`/`high` the mean stands in for the batch's minimum and maximum."""
        _check_key(key, phase_id)
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"count must be an integer >= 0, got {count!r}")
        for name, v in (("mean", mean), ("m2", m2), ("low", low), ("high", high)):
            if v is not None and not _duration_ok(v):
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if count == 0:
            return self.moments(key, phase_id)
        lo = float(mean) if low is None else float(low)
        hi = float(mean) if high is None else float(high)
        return self._fold(key, phase_id, (count, float(mean), float(m2)), lo, hi, [])

    def all_moments(self) -> dict[tuple[JobKey, str], PhaseMoments]:
        """Moments of every (key as stored, phase id) in the history (an operator's view: every tenant)."""
        with self.db.read() as cur:
            cur.execute(
                "SELECT queue, user_name, job_name, phase_id, count, mean, m2, min, max FROM phase_moments"
            )
            rows = cur.fetchall()
        return {(JobKey(str(r[0]), str(r[1]), str(r[2])), str(r[3])): _moments(*r[4:]) for r in rows}

    def _fold(
        self,
        key: JobKey,
        phase_id: str,
        batch: tuple[int, float, float],
        batch_low: float,
        batch_high: float,
        values: Sequence[float],
    ) -> PhaseMoments:
        db = self.db
        row = (*self.stored(key), phase_id)
        with db.write() as cur:
            db.lock(cur, PG_LOCK_HISTORY)
            cur.execute(
                db.sql(f"SELECT count, mean, m2, min, max FROM phase_moments WHERE {_PHASE_KEY}"), row
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
                    "INSERT INTO phase_moments (queue, user_name, job_name, phase_id, count, mean, m2, "
                    "min, max, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT (queue, user_name, job_name, phase_id) DO UPDATE SET "
                    "count = excluded.count, mean = excluded.mean, m2 = excluded.m2, min = excluded.min, "
                    "max = excluded.max, updated_at = excluded.updated_at"
                ),
                (*row, n, mean, m2, low, high, time.time()),
            )
            trimmed = old is None and self._trim(cur, "phase_moments", "updated_at", row)
            if values:
                self._keep_recent(cur, row, values)
        self._wrote(row, trimmed)
        return _moments(n, mean, m2, low, high)

    def _keep_recent(self, cur: Cursor, row: tuple[str, str, str, str], values: Sequence[float]) -> None:
        """Add a phase's samples, keeping its newest max_samples."""
        db = self.db
        cur.executemany(
            db.sql(
                "INSERT INTO phase_samples (queue, user_name, job_name, phase_id, duration) "
                "VALUES (?, ?, ?, ?, ?)"
            ),
            [(*row, v) for v in values[-self.max_samples :]],
        )
        # Drop every sample older than the max_samples-th newest.
        cur.execute(
            db.sql(f"SELECT id FROM phase_samples WHERE {_PHASE_KEY} ORDER BY id DESC LIMIT 1 OFFSET ?"),
            (*row, self.max_samples - 1),
        )
        oldest_kept = cur.fetchone()
        if oldest_kept is not None:
            cur.execute(
                db.sql(f"DELETE FROM phase_samples WHERE {_PHASE_KEY} AND id < ?"),
                (*row, int(oldest_kept[0])),
            )

    def _trim(self, cur: Cursor, table: str, stamp: str, new: tuple[str, ...]) -> bool:
        """After `new` (queue, user, job name[, phase id]) was added to `table`: forget the least recently
        updated rows (by `stamp`) of the same user in the same queue beyond max_rows_per_user, then of the
        same queue beyond max_rows_per_queue; never `new` itself, never another queue's rows. The
        phase rows' samples go with them. Whether any row went."""
        db = self.db
        trimmed = False
        names = ("user_name", "job_name", "phase_id")[: len(new) - 1]
        not_new = " AND NOT (" + " AND ".join(f"{c} = ?" for c in names) + ")"
        for scope, limit in (
            (("queue", "user_name"), self.max_rows_per_user),
            (("queue",), self.max_rows_per_queue),
        ):
            where = " AND ".join(f"{c} = ?" for c in scope)
            params = new[: len(scope)]
            cur.execute(db.sql(f"SELECT COUNT(*) FROM {table} WHERE {where}"), params)
            extra = int(cur.fetchone()[0]) - limit
            if extra <= 0:
                continue
            cur.execute(
                db.sql(
                    f"SELECT {', '.join(names)} FROM {table} WHERE {where}{not_new} "
                    f"ORDER BY {stamp}, {', '.join(names)} LIMIT ?"
                ),
                (*params, *new[1:], extra),
            )
            gone = [(new[0], *(str(v) for v in r)) for r in cur.fetchall()]
            match = "queue = ? AND " + " AND ".join(f"{c} = ?" for c in names)
            cur.executemany(db.sql(f"DELETE FROM {table} WHERE {match}"), gone)
            if table == "phase_moments":
                cur.executemany(db.sql(f"DELETE FROM phase_samples WHERE {match}"), gone)
            trimmed = trimmed or bool(gone)
        return trimmed

    def record_run(self, key: JobKey, now: float | None = None) -> int:
        """Count one finished run of a recurring job; return its number of runs so far."""
        _check_key(key, "-")
        db = self.db
        job = self.stored(key)
        with db.write() as cur:
            db.lock(cur, PG_LOCK_HISTORY)
            cur.execute(db.sql(f"SELECT runs FROM job_runs WHERE {_KEY}"), job)
            new = cur.fetchone() is None
            cur.execute(
                db.sql(
                    "INSERT INTO job_runs (queue, user_name, job_name, runs, last_run_at) "
                    "VALUES (?, ?, ?, 1, ?) ON CONFLICT (queue, user_name, job_name) DO UPDATE SET "
                    "runs = job_runs.runs + 1, last_run_at = excluded.last_run_at"
                ),
                (*job, time.time() if now is None else now),
            )
            if new:
                self._trim(cur, "job_runs", "last_run_at", job)
            cur.execute(db.sql(f"SELECT runs FROM job_runs WHERE {_KEY}"), job)
            return int(cur.fetchone()[0])

    def runs(self, key: JobKey) -> int:
        with self.db.read() as cur:
            cur.execute(self.db.sql(f"SELECT runs FROM job_runs WHERE {_KEY}"), self.stored(key))
            row = cur.fetchone()
        return int(row[0]) if row else 0

    def moments(self, key: JobKey, phase_id: str) -> PhaseMoments | None:
        if self._read is None:
            return self.phases(key, phase_id).get(phase_id)
        row = (*self.stored(key), phase_id)
        with self._read_lock:
            if row in self._read:
                return self._read[row]
            at = self._writes
        m = self.phases(key, phase_id).get(phase_id)
        with self._read_lock:
            if self._writes == at:  # no write since the read began
                if len(self._read) >= MAX_READS_KEPT:
                    self._read.clear()
                self._read[row] = m
        return m

    def phases(self, key: JobKey, only: str | None = None) -> dict[str, PhaseMoments]:
        """Moments of every phase recorded for `key` (or just phase `only`)."""
        sql = f"SELECT phase_id, count, mean, m2, min, max FROM phase_moments WHERE {_KEY}"
        params: tuple[str, ...] = self.stored(key)
        if only is not None:
            sql += " AND phase_id = ?"
            params = (*params, only)
        with self.db.read() as cur:
            cur.execute(self.db.sql(sql + " ORDER BY phase_id"), params)
            rows = cur.fetchall()
        return {str(r[0]): _moments(*r[1:]) for r in rows}

    def framework(self, queue: str, phase_id: str, jobs: int = FRAMEWORK_JOBS) -> PhaseMoments | None:
        """DollyMP Sec. 5.2's third source for a phase with neither a recurring-job history nor a
        finished task: "all the prior jobs from the same application framework", here the moments of the
        phase of the same id (an AM helper's framework names its phases: MapReduce's "map" and "reduce")
        pooled over the `jobs` most recently updated recurring jobs of the queue, every user's (the
        queue, the tenant, is the bound: another queue's jobs are never read unless histories are shared
        across queues). None when none holds a duration."""
        if not isinstance(queue, str) or not queue or not isinstance(phase_id, str) or not phase_id:
            raise ValueError("queue and phase_id must be non-empty strings")
        stored = SHARED_QUEUE if self.share_across_queues else queue
        with self.db.read() as cur:
            cur.execute(
                self.db.sql(
                    "SELECT count, mean, m2, min, max FROM phase_moments WHERE queue = ? AND phase_id = ? "
                    "ORDER BY updated_at DESC LIMIT ?"
                ),
                (stored, phase_id, _bound("jobs", jobs)),
            )
            rows = cur.fetchall()
        pooled: tuple[int, float, float] = (0, 0.0, 0.0)
        low, high = math.inf, -math.inf
        for n, mean, m2, lo, hi in rows:
            pooled = merge_moments(pooled, (int(n), float(mean), float(m2)))
            low, high = min(low, float(lo)), max(high, float(hi))
        return _moments(*pooled, low, high) if pooled[0] > 0 else None

    def samples(self, key: JobKey, phase_id: str, limit: int | None = None) -> list[float]:
        """The most recent durations of a phase, oldest first (at most `limit`, at most max_samples)."""
        n = self.max_samples if limit is None else max(0, min(limit, self.max_samples))
        with self.db.read() as cur:
            cur.execute(
                self.db.sql(
                    f"SELECT duration FROM phase_samples WHERE {_PHASE_KEY} ORDER BY id DESC LIMIT ?"
                ),
                (*self.stored(key), phase_id, n),
            )
            rows = cur.fetchall()
        return [float(r[0]) for r in reversed(rows)]

    def job_keys(self) -> list[JobKey]:
        """Every (queue, user, job name) as stored (an operator's view: every tenant)."""
        with self.db.read() as cur:
            cur.execute(
                "SELECT queue, user_name, job_name FROM phase_moments "
                "UNION SELECT queue, user_name, job_name FROM job_runs ORDER BY 1, 2, 3"
            )
            return [JobKey(str(r[0]), str(r[1]), str(r[2])) for r in cur.fetchall()]

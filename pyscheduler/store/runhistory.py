"""Recurring-job history of applications without an AM helper: run-time moments per (application name,
queue, YARN priority), in the same database as the decision log and the AM helper's history
(pyscheduler.store.history, keyed by queue, user, job name and phase). The same class keeps DollyMP Sec.
5.2's framework-wide prior in its own table (`FRAMEWORKS`): moments per (application type, queue, YARN
priority), every application of that framework in the queue folded in.

    runs = AppRunHistory(db, max_keys=10_000, max_samples=2_000)
    runs.fold("nightly-etl", "root.eng", 5, count=40, mean=31.2, m2=812.0)  # one finished run's containers
    runs.moments("nightly-etl", "root.eng", 5)  -> AppRunMoments(runs, count, mean, m2) | None
    priors = AppRunHistory(db, table=FRAMEWORKS)  # keyed by application type ("SPARK") instead of name

The queue is part of the key: an application can only add to the history of its own queue, so a tenant
cannot move the θ and σ another queue's jobs are ordered by. Bounded: at most `max_keys` keys (beyond,
the least recently updated key of the queue holding the most keys is forgotten, so that one queue's many
names cannot push another queue's history out), and each key's moments weigh at most `max_samples` run
times (an earlier run's weight shrinks, its mean and variance kept, when a later run would pass the
bound), so a recurring job that changes is followed. `moments` answers from memory (loaded when opened,
updated by `fold`): the decision round reads it for every application without a database query. Bad
arguments raise ValueError naming the argument.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from pyscheduler.store.db import Cursor, Database
from pyscheduler.store.history import merge_moments

PG_LOCK_APP_RUNS = 0x444D5034  # "DMP4"
PG_LOCK_FRAMEWORK_RUNS = 0x444D5035  # "DMP5"
DEFAULT_MAX_KEYS = 10_000
DEFAULT_MAX_SAMPLES = 2_000
RunKey = tuple[str, str, int]  # (application name, queue, YARN priority)
RunTimes = tuple[str, str, int, int, float, float]  # RunKey, then count, mean and M2 of the run times


@dataclass(frozen=True, slots=True)
class RunTable:
    """Where one kind of history lives: its table, the column of the key's first part, its lock."""

    table: str
    name_column: str
    pg_lock: int


APPS = RunTable("app_run_times", "app_name", PG_LOCK_APP_RUNS)  # by application name
FRAMEWORKS = RunTable("framework_run_times", "app_type", PG_LOCK_FRAMEWORK_RUNS)  # by application type


@dataclass(frozen=True, slots=True)
class AppRunMoments:
    """Moments of the run times of one key: `runs` applications folded in, `count` run times weighed
    (at most max_samples), their mean and M2 (sum of squared deviations)."""

    runs: int
    count: int
    mean: float
    m2: float

    @property
    def sd(self) -> float:
        """Sample standard deviation (divisor count - 1; 0 for a single run time)."""
        return math.sqrt(self.m2 / (self.count - 1)) if self.count > 1 else 0.0


def _weighed(n: int, mean: float, m2: float, k: int) -> tuple[int, float, float]:
    """(count, mean, M2) of `n` run times counted as `k` <= n: same mean, same sample variance."""
    if k >= n:
        return n, mean, m2
    if k <= 0:
        return 0, 0.0, 0.0
    return k, mean, m2 * (k - 1) / (n - 1) if n > 1 else 0.0


def _check(column: str, app_name: str, queue: str, priority: int, count: int, mean: float, m2: float) -> None:
    if not isinstance(app_name, str) or not app_name:
        raise ValueError(f"{column} must be a non-empty string")
    if not isinstance(queue, str):
        raise ValueError(f"queue must be a string, got {queue!r}")
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ValueError(f"priority must be an integer, got {priority!r}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"count must be an integer >= 1, got {count!r}")
    for name, v in (("mean", mean), ("m2", m2)):
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")


class AppRunHistory:
    """Run-time moments of applications without an AM helper, kept in the database and in memory."""

    def __init__(
        self,
        db: Database,
        max_keys: int = DEFAULT_MAX_KEYS,
        max_samples: int = DEFAULT_MAX_SAMPLES,
        table: RunTable = APPS,
    ) -> None:
        for name, v in (("max_keys", max_keys), ("max_samples", max_samples)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        self.db = db
        self.max_keys = max_keys
        self.max_samples = max_samples
        self.t = table
        self._lock = threading.Lock()
        self._cache = self._load()

    def _load(self) -> dict[RunKey, AppRunMoments]:
        """The newest `max_keys` keys (a store written with a larger bound keeps the rest on disk until
        the next fold trims them)."""
        t = self.t
        with self.db.read() as cur:
            cur.execute(
                self.db.sql(
                    f"SELECT {t.name_column}, queue, priority, runs, count, mean, m2 FROM {t.table} "
                    "ORDER BY updated_at DESC LIMIT ?"
                ),
                (self.max_keys,),
            )
            rows = cur.fetchall()
        return {
            (str(r[0]), str(r[1]), int(r[2])): AppRunMoments(int(r[3]), int(r[4]), float(r[5]), float(r[6]))
            for r in rows
        }

    def moments(self, app_name: str, queue: str, priority: int) -> AppRunMoments | None:
        """The key's moments from memory; None when no run of it was recorded. No lock: a dict lookup is
        atomic, and `fold` replaces a key's value whole (read on every round, for every ask)."""
        return self._cache.get((app_name, queue, priority))

    def __len__(self) -> int:
        with self._lock:
            return len(self._cache)

    def fold(
        self, app_name: str, queue: str, priority: int, count: int, mean: float, m2: float
    ) -> AppRunMoments:
        """Add one finished application's run times of one YARN priority (count, mean, M2); return the
        key's moments (`fold_many` of one)."""
        return self.fold_many([(app_name, queue, priority, count, mean, m2)])[0]

    def fold_many(self, runs: Sequence[RunTimes]) -> list[AppRunMoments]:
        """`fold` each (app name, queue, priority, count, mean, M2), in order, in one transaction (one
        commit for all the applications a batch removed); return each key's moments after its fold. Every
        item is checked before anything is written. Beyond `max_keys`, keys are forgotten (`_evict`)."""
        for r in runs:
            _check(self.t.name_column, *r)
        if not runs:
            return []
        db, out = self.db, list[AppRunMoments]()
        keys: list[RunKey] = [(r[0], r[1], r[2]) for r in runs]
        with db.write() as cur:  # folds are serialised by the writer; reads wait only for the dict update
            db.lock(cur, self.t.pg_lock)
            for key, (*_, count, mean, m2) in zip(keys, runs, strict=True):
                out.append(
                    self._fold_one(cur, key, _weighed(count, float(mean), float(m2), self.max_samples))
                )
            cur.execute(f"SELECT COUNT(*) FROM {self.t.table}")
            gone = self._evict(cur, int(cur.fetchone()[0]) - self.max_keys)
            with self._lock:
                self._cache.update(zip(keys, out, strict=True))
                for k in gone:
                    self._cache.pop(k, None)
        return out

    def _fold_one(self, cur: Cursor, key: RunKey, new: tuple[int, float, float]) -> AppRunMoments:
        """Merge `new` (count, mean, M2, already weighed) into the key's row; the earlier runs weigh at
        most max_samples - count."""
        db, t = self.db, self.t
        cur.execute(
            db.sql(
                f"SELECT runs, count, mean, m2 FROM {t.table} "
                f"WHERE {t.name_column} = ? AND queue = ? AND priority = ?"
            ),
            key,
        )
        old = cur.fetchone()
        runs = 1
        n, mu, m2 = new
        if old is not None:
            runs = int(old[0]) + 1
            kept = _weighed(int(old[1]), float(old[2]), float(old[3]), self.max_samples - new[0])
            n, mu, m2 = merge_moments(kept, new)
        cur.execute(
            db.sql(
                f"INSERT INTO {t.table} ({t.name_column}, queue, priority, runs, count, mean, m2, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                f"ON CONFLICT ({t.name_column}, queue, priority) DO UPDATE SET "
                "runs = excluded.runs, count = excluded.count, mean = excluded.mean, m2 = excluded.m2, "
                "updated_at = excluded.updated_at"
            ),
            (*key, runs, n, mu, m2, time.time()),
        )
        return AppRunMoments(runs, n, mu, m2)

    def _evict(self, cur: Cursor, extra: int) -> list[RunKey]:
        """Forget `extra` keys, each the least recently updated of the queue holding the most keys (of
        those, the one with the oldest key): a queue's flood of names pushes out its own history first,
        not another queue's."""
        db, t, gone = self.db, self.t, list[RunKey]()
        while extra > 0:
            cur.execute(
                f"SELECT queue, COUNT(*) FROM {t.table} GROUP BY queue "
                "ORDER BY COUNT(*) DESC, MIN(updated_at), queue LIMIT 2"
            )
            rows = cur.fetchall()
            most, then = int(rows[0][1]), int(rows[1][1]) if len(rows) > 1 else 0
            cur.execute(
                db.sql(
                    f"SELECT {t.name_column}, queue, priority FROM {t.table} WHERE queue = ? "
                    f"ORDER BY updated_at, {t.name_column}, priority LIMIT ?"
                ),
                (str(rows[0][0]), min(extra, max(1, most - then))),
            )
            batch = [(str(r[0]), str(r[1]), int(r[2])) for r in cur.fetchall()]
            cur.executemany(
                db.sql(f"DELETE FROM {t.table} WHERE {t.name_column} = ? AND queue = ? AND priority = ?"),
                batch,
            )
            gone.extend(batch)
            extra -= len(batch)
        return gone

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

Memory is the history's view; the database follows it. `fold_many` folds into memory (the same merge and
eviction as the database's) and, without a `writer`, writes the same folds in the caller, in one
transaction, before memory changes (a failed write changes nothing). With a `RunHistoryWriter`
(`dollymp serve`), the caller only queues them: the RM round that records finished applications never
waits for the store (its writer lock, held meanwhile by AM calls' history writes and the decision log,
and its commit's fsync), and the next round and AM plan read the folds from memory at once. A queued fold
is committed within a few milliseconds (`RunHistoryWriter.flush` waits for it; the service's stop
flushes); kill -9 before then loses it, as it would a fold whose round had not yet run. A store holding
more keys than `max_keys` (written with a larger bound) is trimmed when opened, so that memory holds every
key the database does and both evict the same keys.
"""

from __future__ import annotations

import collections
import logging
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
RETRY_S = 0.5  # a failed background write is tried again after this long
log = logging.getLogger(__name__)


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
    """Run-time moments of applications without an AM helper, kept in memory and in the database."""

    def __init__(
        self,
        db: Database,
        max_keys: int = DEFAULT_MAX_KEYS,
        max_samples: int = DEFAULT_MAX_SAMPLES,
        table: RunTable = APPS,
        writer: RunHistoryWriter | None = None,
    ) -> None:
        for name, v in (("max_keys", max_keys), ("max_samples", max_samples)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        self.db = db
        self.max_keys = max_keys
        self.max_samples = max_samples
        self.t = table
        self.writer = writer
        self._lock = threading.Lock()
        self._stamp = 0.0  # the last fold's updated_at: stamps only grow, so both orders agree
        self._cache: dict[RunKey, AppRunMoments] = {}
        # per queue, its keys by updated_at (oldest first), as the database orders them for `_evict`
        self._queues: dict[str, collections.OrderedDict[RunKey, float]] = {}
        self._load()

    def _load(self) -> None:
        """Every key (a store written with a larger bound is trimmed to `max_keys` first)."""
        t = self.t
        with self.db.read() as cur:
            cur.execute(f"SELECT COUNT(*) FROM {t.table}")
            extra = int(cur.fetchone()[0]) - self.max_keys
        if extra > 0:
            with self.db.write() as wcur:
                self.db.lock(wcur, t.pg_lock)
                self._evict(wcur, extra)
        with self.db.read() as cur:
            cur.execute(
                f"SELECT {t.name_column}, queue, priority, runs, count, mean, m2, updated_at FROM {t.table} "
                f"ORDER BY updated_at, {t.name_column}, priority"
            )
            rows = cur.fetchall()
        for r in rows:
            key = (str(r[0]), str(r[1]), int(r[2]))
            self._cache[key] = AppRunMoments(int(r[3]), int(r[4]), float(r[5]), float(r[6]))
            self._queues.setdefault(key[1], collections.OrderedDict())[key] = float(r[7])
            self._stamp = max(self._stamp, float(r[7]))

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
        """`fold` each (app name, queue, priority, count, mean, M2), in order (one commit for all the
        applications a batch removed); return each key's moments after its fold. Every item is checked
        before anything is written. Beyond `max_keys`, keys are forgotten (`_evict`). Without a writer the
        commit is made here, before memory changes; with one it is queued (module docstring)."""
        for r in runs:
            _check(self.t.name_column, *r)
        if not runs:
            return []
        with self._lock:  # folds in memory in the order their writes are made or queued
            stamps = self._stamps(len(runs))
            if self.writer is None:
                with self.db.write() as cur:
                    self.write(cur, runs, stamps)
            else:
                self.writer.submit(self, runs, stamps)
            return self._fold_memory(runs, stamps)

    def _stamps(self, n: int) -> list[float]:
        """`n` updated_at times, each later than the one before (caller holds the lock)."""
        out = []
        for _ in range(n):
            self._stamp = max(time.time(), self._stamp + 1e-6)
            out.append(self._stamp)
        return out

    def _fold_memory(self, runs: Sequence[RunTimes], stamps: Sequence[float]) -> list[AppRunMoments]:
        """The folds in memory, as `write` makes them in the database (caller holds the lock)."""
        out: list[AppRunMoments] = []
        cache = self._cache  # each key's value replaced whole: `moments` reads without the lock
        for (name, queue, priority, count, mean, m2), stamp in zip(runs, stamps, strict=True):
            key = (name, queue, priority)
            new = _weighed(count, float(mean), float(m2), self.max_samples)
            old = cache.get(key)
            moments = AppRunMoments(1, *new)
            if old is not None:
                kept = _weighed(old.count, old.mean, old.m2, self.max_samples - new[0])
                moments = AppRunMoments(old.runs + 1, *merge_moments(kept, new))
            cache[key] = moments
            keys = self._queues.setdefault(queue, collections.OrderedDict())
            keys.pop(key, None)
            keys[key] = stamp
            out.append(moments)
        extra = len(cache) - self.max_keys
        while extra > 0:  # `_evict`'s choice: the queue with the most keys (then the oldest), its oldest
            ranked = sorted(self._queues.items(), key=lambda q: (-len(q[1]), next(iter(q[1].values())), q[0]))
            most, then = len(ranked[0][1]), len(ranked[1][1]) if len(ranked) > 1 else 0
            keys = ranked[0][1]
            for _ in range(min(extra, max(1, most - then))):
                gone, _stamp = keys.popitem(last=False)
                cache.pop(gone, None)
                extra -= 1
            if not keys:
                del self._queues[ranked[0][0]]
        return out

    def write(self, cur: Cursor, runs: Sequence[RunTimes], stamps: Sequence[float]) -> None:
        """The folds of `runs` (`stamps`: their updated_at) in the database, in the caller's transaction."""
        self.db.lock(cur, self.t.pg_lock)
        for (name, queue, priority, count, mean, m2), stamp in zip(runs, stamps, strict=True):
            new = _weighed(count, float(mean), float(m2), self.max_samples)
            self._fold_one(cur, (name, queue, priority), new, stamp)
        cur.execute(f"SELECT COUNT(*) FROM {self.t.table}")
        self._evict(cur, int(cur.fetchone()[0]) - self.max_keys)

    def _fold_one(self, cur: Cursor, key: RunKey, new: tuple[int, float, float], stamp: float) -> None:
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
            (*key, runs, n, mu, m2, stamp),
        )

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


class RunHistoryWriter:
    """Commits the folds of AppRunHistory instances in a thread of its own (module docstring).

    `submit` queues (never waits for the store); the thread commits whatever is queued in one transaction,
    in the order it was queued, and on a failure (disk full, database gone) logs it and tries the same
    folds again after `retry_s`. `flush(timeout)` returns once everything queued before it is committed
    (False if the timeout passed first); `close` flushes, then stops the thread."""

    def __init__(self, retry_s: float = RETRY_S) -> None:
        self.retry_s = retry_s
        self.last_error: BaseException | None = None
        self.commits = 0
        self._pending: collections.deque[tuple[AppRunHistory, Sequence[RunTimes], Sequence[float]]] = (
            collections.deque()
        )
        self._cond = threading.Condition()
        self._queued = 0
        self._committed = 0
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="run-history-writer", daemon=True)
        self._thread.start()

    @property
    def depth(self) -> int:
        """Folds (batches of `fold_many`) queued and not committed yet."""
        with self._cond:
            return self._queued - self._committed

    def submit(self, history: AppRunHistory, runs: Sequence[RunTimes], stamps: Sequence[float]) -> None:
        with self._cond:
            if self._stopping:
                raise RuntimeError("the run-history writer is closed")
            self._pending.append((history, list(runs), list(stamps)))
            self._queued += 1
            self._cond.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._queued
            while self._committed < target:
                left = None if deadline is None else deadline - time.monotonic()
                if (left is not None and left <= 0) or not self._thread.is_alive():
                    return False
                self._cond.wait(left if left is not None else 1.0)
            return True

    def close(self, timeout: float | None = None) -> bool:
        """Flush (within `timeout`), then stop the thread; False when folds were left uncommitted."""
        done = self.flush(timeout)
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
        self._thread.join(timeout)
        return done

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if not self._pending:
                    return
                batch = list(self._pending)
            try:
                db = batch[0][0].db
                with db.write() as cur:  # one database behind every history of the service
                    for history, runs, stamps in batch:
                        history.write(cur, runs, stamps)
            except Exception as exc:
                self.last_error = exc
                log.error("run history: %d fold(s) not committed, trying again: %s", len(batch), exc)
                with self._cond:
                    if self._stopping:
                        return
                    self._cond.wait(self.retry_s)
                continue
            with self._cond:
                for _ in batch:
                    self._pending.popleft()
                self._committed += len(batch)
                self.commits += 1
                self.last_error = None
                self._cond.notify_all()

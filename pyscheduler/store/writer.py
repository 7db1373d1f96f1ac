"""A background writer so the decision loop never waits on the disk for long.

    writer = BackgroundWriter(log)            # starts its thread
    writer.submit(decisions)                  # cheap: queues them (blocks only while the queue is full)
    writer.flush()                            # returns once everything submitted so far is committed
    writer.close()                            # flush, then stop the thread

Durability point: a submitted decision is *committed* (survives kill -9) once `flush()` has returned,
or once `on_commit` has been called with it; `submit()` alone promises nothing. The writer batches
whatever is queued (up to `max_batch` decisions per transaction, lingering `linger_s` for more), so
commit cost is paid per batch rather than per decision.

Backpressure: the queue holds at most `max_queue` decisions; `submit` blocks while it is full (at most
`timeout` seconds, then raises `QueueFull`), so a stalled disk slows the producer instead of growing
memory without bound. A failed commit (disk full, database gone) keeps its batch at the head of the queue
and is retried every `retry_s`; `last_error` says why, and `flush(timeout)` raises after its timeout.
Before a retry the SQLite WAL is checkpointed and truncated (pyscheduler.store.db), so space freed on a
full disk goes to the retried commit rather than to the write-ahead file.
Optionally the writer also applies a `Retention` every `retention.interval_s`.
"""

from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyscheduler import metrics
from pyscheduler.objects.decision import Decision
from pyscheduler.store.db import StoreError
from pyscheduler.store.log import DecisionLog

log = logging.getLogger(__name__)
_DEPTH = metrics.QUEUE_DEPTH.labels(queue="decision_log")

OnCommit = Callable[[Sequence[int], Sequence[Decision]], None]


class QueueFull(Exception):
    """The writer's queue stayed full for the whole submit timeout."""


@dataclass(frozen=True)
class Retention:
    """Retention applied by the background writer (see DecisionLog.prune)."""

    max_age_s: float | None = None
    max_bytes: int | None = None
    interval_s: float = 60.0


class BackgroundWriter:
    def __init__(
        self,
        store: DecisionLog,
        *,
        max_queue: int = 100_000,
        max_batch: int = 5_000,
        linger_s: float = 0.01,
        retry_s: float = 0.5,
        on_commit: OnCommit | None = None,
        retention: Retention | None = None,
    ) -> None:
        if max_queue < 1 or max_batch < 1:
            raise ValueError("max_queue and max_batch must be >= 1")
        self.store = store
        self.max_queue = max_queue
        self.max_batch = max_batch
        self.linger_s = linger_s
        self.retry_s = retry_s
        self.on_commit = on_commit
        self.retention = retention
        self.last_error: BaseException | None = None
        self.last_id = 0
        self._pending: collections.deque[Decision] = collections.deque()
        self._cond = threading.Condition()
        self._submitted = 0
        self._committed = 0
        self._flushing = 0
        self._stopping = False
        self._next_prune = time.monotonic() + (retention.interval_s if retention else 0.0)
        self._thread = threading.Thread(target=self._run, name="decision-log-writer", daemon=True)
        self._thread.start()

    @property
    def depth(self) -> int:
        """Decisions submitted but not yet committed."""
        with self._cond:
            return self._submitted - self._committed

    def submit(self, decisions: Decision | Sequence[Decision], timeout: float | None = None) -> None:
        batch = [decisions] if isinstance(decisions, Decision) else list(decisions)
        for i, d in enumerate(batch):
            if not isinstance(d, Decision):
                raise TypeError(f"decisions[{i}] is {type(d).__name__}, not Decision")
        if not batch:
            return
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            if self._stopping:
                raise StoreError("background writer is closed")
            # A batch larger than the whole queue is admitted once the queue is empty.
            while self._pending and len(self._pending) + len(batch) > self.max_queue:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise QueueFull(f"decision log queue full ({len(self._pending)} pending) for {timeout} s")
                self._cond.wait(remaining)
            self._pending.extend(batch)
            self._submitted += len(batch)
            _DEPTH.set(self._submitted - self._committed)
            self._cond.notify_all()

    def append(self, decisions: Sequence[Decision]) -> None:
        """Same as `submit` (so the writer can stand where a DecisionLog is expected, e.g. the
        service's DecisionRecorder): queues only; the decisions are committed once `flush()` returns."""
        self.submit(decisions)

    def flush(self, timeout: float | None = None) -> int:
        """Wait until every decision submitted before this call is committed; return the last committed id."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            target = self._submitted
            self._flushing += 1
            self._cond.notify_all()
            try:
                while self._committed < target:
                    if not self._thread.is_alive():
                        raise StoreError("background writer thread has stopped") from self.last_error
                    remaining = None if deadline is None else deadline - time.monotonic()
                    if remaining is not None and remaining <= 0:
                        raise StoreError(
                            f"flush timed out with {target - self._committed} decisions uncommitted"
                            + (f"; last error: {self.last_error}" if self.last_error else "")
                        ) from self.last_error
                    self._cond.wait(remaining if remaining is not None else 1.0)
                return self.last_id
            finally:
                self._flushing -= 1

    def close(self, timeout: float | None = None) -> None:
        """Commit what is queued, then stop the thread; `timeout` bounds the whole call."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            self.flush(timeout)
        finally:
            with self._cond:
                self._stopping = True
                self._cond.notify_all()
            self._thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    # -- the writer thread ---------------------------------------------------------------------------------
    def _take(self) -> list[Decision] | None:
        with self._cond:
            while not self._pending and not self._stopping:
                self._cond.wait(self._wait_for_prune())
                if not self._pending:
                    return []  # woke for retention or stop
            if not self._pending:
                return None
            if (
                len(self._pending) < self.max_batch
                and not self._flushing
                and not self._stopping
                and self.linger_s > 0
            ):
                self._cond.wait(self.linger_s)  # let a round's decisions gather into one transaction
            n = min(len(self._pending), self.max_batch)
            batch = [self._pending.popleft() for _ in range(n)]
            self._cond.notify_all()  # room for blocked submitters
            return batch

    def _wait_for_prune(self) -> float | None:
        if self.retention is None:
            return None
        return max(0.0, self._next_prune - time.monotonic())

    def _run(self) -> None:
        while True:
            batch = self._take()
            if batch is None:
                return
            if batch:
                self._commit(batch)
            self._maybe_prune()

    def _commit(self, batch: list[Decision]) -> None:
        while True:
            try:
                ids = self.store.append(batch)
            except Exception as exc:
                self.last_error = exc
                log.error("decision log append failed, retrying in %.1f s: %s", self.retry_s, exc)
                with self._cond:
                    if self._stopping and not self._flushing:
                        return
                    self._cond.wait(self.retry_s)
                continue
            break
        with self._cond:
            self._committed += len(batch)
            _DEPTH.set(self._submitted - self._committed)
            self.last_id = ids[-1]
            self.last_error = None
            self._cond.notify_all()
        if self.on_commit is not None:
            try:
                self.on_commit(ids, batch)
            except Exception:
                log.exception("decision log on_commit callback failed")

    def _maybe_prune(self) -> None:
        r = self.retention
        if r is None or time.monotonic() < self._next_prune:
            return
        self._next_prune = time.monotonic() + r.interval_s
        try:
            deleted = self.store.prune(max_age_s=r.max_age_s, max_bytes=r.max_bytes)
            if deleted:
                log.info("decision log retention deleted %d decisions", deleted)
        except Exception as exc:
            log.error("decision log retention failed: %s", exc)

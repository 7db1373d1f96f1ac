"""The server-sent-event stream of new decisions (GET /v1/decisions/stream), bounded (issue 57 item 5).

One `StreamHub` per app polls the log by keyset (id > last seen) for *all* new decisions, serialises
each event once and hands the same batch object to every subscriber; a subscriber only compares the
batch's decisions with its filters (field equality, no query, no re-serialisation). So the log is read
once per poll whatever the number of subscribers, and the thread pool stays free for other queries.

Memory is bounded: a subscriber holds references to shared batches, at most `queue_events` decisions
behind; one that falls further behind (a client that does not read) is dropped with an `event: error`
and its queue freed; its EventSource reconnects with Last-Event-ID and catches up from the log.

Ordering: ids are assigned in commit order (pyscheduler.store.log), so once the log's latest id is L no
decision with id <= L can appear later. A subscriber registers at the hub's position H, reads (start, H]
from the log itself (catch-up, with its filters in SQL) and then only the hub's batches (ids > H):
nothing is repeated or skipped.

Admission (`StreamSlots`): at most `max_total` streams open, at most `max_per_caller` per caller; a
refused stream is answered 429 naming the limit and its configuration key.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import threading
from collections import Counter, deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import NamedTuple

from fastapi.concurrency import run_in_threadpool

from pyscheduler.api.models import DecisionOut
from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store import DecisionLog, Page, StoredDecision, StoreError

log = logging.getLogger(__name__)
_PAGE = 500
_WAKE_STEP = 50  # subscribers woken per turn of the event loop
_DRAIN_FROM = 64  # subscribers: when at least half of such a peak have left, memory is handed back


def return_memory() -> None:
    """After many subscribers left: collect what they left in cycles, including objects the service's
    GC pacer froze while they were alive (pyscheduler.service.rmproxy.gcpace: frozen objects are otherwise
    only collected at its rare thaw), then give the C heap's free pages back to the system (malloc_trim)."""
    from pyscheduler.service.rmproxy.gcpace import MALLOC_TRIM

    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()
        gc.freeze()
    else:
        gc.collect()
    if MALLOC_TRIM is not None:
        MALLOC_TRIM(0)


class Filters(NamedTuple):
    application_id: str | None
    job_id: str | None
    node_id: str | None
    task_id: str | None
    kinds: tuple[DecisionKind, ...]

    def page(self, store: DecisionLog, cursor: int) -> Page:
        return store.query(
            application_id=self.application_id,
            job_id=self.job_id,
            node_id=self.node_id,
            task_id=self.task_id,
            kinds=self.kinds,
            cursor=cursor,
            limit=_PAGE,
        )

    @property
    def everything(self) -> bool:
        return self == _ALL

    def match(self, d: Decision) -> bool:
        return (
            (self.application_id is None or d.application_id == self.application_id)
            and (self.job_id is None or d.job_id == self.job_id)
            and (self.node_id is None or d.node_id == self.node_id)
            and (self.task_id is None or d.task_id == self.task_id)
            and (not self.kinds or d.kind in self.kinds)
        )


_ALL = Filters(None, None, None, None, ())


def event_text(item: StoredDecision) -> str:
    data = json.dumps(DecisionOut.of(item).model_dump(mode="json"), separators=(",", ":"))
    return f"id: {item.id}\nevent: decision\ndata: {data}\n\n"


@dataclass(eq=False)
class Batch:
    """Decisions of one poll with their events, serialised once and shared by every subscriber."""

    items: list[StoredDecision]
    texts: list[str]
    _joined: str | None = None

    @property
    def last_id(self) -> int:
        return self.items[-1].id

    def text_for(self, filters: Filters, after: int) -> str:
        if filters.everything and after < self.items[0].id:
            if self._joined is None:
                self._joined = "".join(self.texts)
            return self._joined
        return "".join(
            t
            for s, t in zip(self.items, self.texts, strict=True)
            if s.id > after and filters.match(s.decision)
        )


@dataclass(eq=False)
class Subscriber:
    queue: deque[Batch] = field(default_factory=deque)
    queued: int = 0  # decisions in `queue`
    overflowed: bool = False
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class StreamHub:
    """Polls the log once for every subscriber and fans the serialised batches out (see module doc)."""

    def __init__(self, store: DecisionLog, poll_s: float, queue_events: int) -> None:
        self.store = store
        self.poll_s = poll_s
        self.queue_events = queue_events
        self.position = 0  # the last id handed to subscribers
        self._subscribers: set[Subscriber] = set()
        self._task: asyncio.Task[None] | None = None
        self._start_lock = asyncio.Lock()
        self._peak = 0  # most subscribers since memory was last handed back
        self.memory_returns = 0

    async def subscribe(self) -> tuple[Subscriber, int]:
        """Register a subscriber; returns it and the hub's position (its batches hold ids above it)."""
        async with self._start_lock:
            if self._task is None or self._task.done():
                self.position = await run_in_threadpool(self.store.latest_id)
                self._task = asyncio.get_running_loop().create_task(self._run())
            sub = Subscriber()
            self._subscribers.add(sub)
            self._peak = max(self._peak, len(self._subscribers))
            return sub, self.position

    def unsubscribe(self, sub: Subscriber) -> None:
        self._subscribers.discard(sub)
        sub.queue.clear()
        sub.queued = 0

    async def _run(self) -> None:
        while True:
            if self._peak >= _DRAIN_FROM and len(self._subscribers) <= self._peak // 2:
                self._peak = len(self._subscribers)
                self.memory_returns += 1
                await run_in_threadpool(return_memory)
            if not self._subscribers:
                self._task = None
                return  # the next subscriber starts a new poller at the log's latest id
            try:
                page = await run_in_threadpool(self.store.query, cursor=self.position, limit=_PAGE)
            except StoreError as exc:
                log.warning("decision stream: log unavailable: %s", exc)
                await asyncio.sleep(max(self.poll_s, 1.0))
                continue
            except Exception:  # never let the poller die silently: streams would stall
                log.exception("decision stream poller failed")
                await asyncio.sleep(max(self.poll_s, 1.0))
                continue
            if page.items:
                batch = Batch(page.items, [event_text(s) for s in page.items])
                self.position = batch.last_id
                await self._publish(batch)
                if page.next_cursor is not None:
                    await asyncio.sleep(0)  # more waiting: no pause, but let requests run
                    continue
            await asyncio.sleep(self.poll_s)

    async def _publish(self, batch: Batch) -> None:
        """Queue `batch` for every subscriber, waking at most _WAKE_STEP of them per turn of the event
        loop, so that a request arriving meanwhile waits for a few sends, not for a thousand."""
        n = len(batch.items)
        for i, sub in enumerate(list(self._subscribers)):
            if i and i % _WAKE_STEP == 0:
                await asyncio.sleep(0)
            if sub.overflowed:
                continue
            if sub.queued + n > self.queue_events:
                sub.overflowed = True  # dropped: free what it held
                sub.queue.clear()
                sub.queued = 0
            else:
                sub.queue.append(batch)
                sub.queued += n
            sub.wake.set()

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)


class StreamRefused(Exception):
    """A stream over a limit; the message names the limit and its configuration key."""


class StreamSlots:
    """Open streams, in total and per caller, under their limits (thread-safe; release is idempotent)."""

    def __init__(self, max_total: int, max_per_caller: int) -> None:
        self.max_total = max_total
        self.max_per_caller = max_per_caller
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()
        self.total = 0

    def acquire(self, caller: str) -> Slot:
        with self._lock:
            if self.total >= self.max_total:
                raise StreamRefused(
                    f"live streams: {self.total} open, limit {self.max_total} (http.stream_max_total)"
                )
            mine = self._open[caller]
            if mine >= self.max_per_caller:
                raise StreamRefused(
                    f"live streams of caller {caller}: {mine} open, limit {self.max_per_caller} "
                    "(http.stream_max_per_caller)"
                )
            self._open[caller] += 1
            self.total += 1
        return Slot(self, caller)

    def _release(self, caller: str) -> None:
        with self._lock:
            self._open[caller] -= 1
            if self._open[caller] <= 0:
                del self._open[caller]
            self.total -= 1

    def open_for(self, caller: str) -> int:
        with self._lock:
            return self._open[caller]


class Slot:
    def __init__(self, slots: StreamSlots, caller: str) -> None:
        self._slots = slots
        self.caller = caller
        self._held = True

    def release(self) -> None:
        if self._held:
            self._held = False
            self._slots._release(self.caller)


async def decision_events(
    hub: StreamHub,
    slot: Slot,
    start: int,
    filters: Filters,
    keepalive_s: float,
) -> AsyncIterator[str]:
    """The events of one subscriber: catch-up from the log for (start, hub position], then the hub's."""
    try:
        sub, position = await hub.subscribe()
    except BaseException:
        slot.release()
        raise
    try:
        cursor = start
        yield f": decisions after {cursor}\nretry: {int(hub.poll_s * 4000)}\n\n"
        while cursor < position:  # catch-up: the subscriber's own filtered pages, up to the hub's position
            try:
                page = await run_in_threadpool(filters.page, hub.store, cursor)
            except StoreError:
                yield "event: error\ndata: decision log unavailable\n\n"
                return  # the client reconnects with Last-Event-ID
            chunk = "".join(event_text(s) for s in page.items if s.id <= position)
            if chunk:
                yield chunk
            if page.next_cursor is None or page.items[-1].id >= position:
                break
            cursor = page.items[-1].id
        cursor = max(cursor, position)
        while True:
            if not sub.queue and not sub.overflowed:
                sub.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(sub.wake.wait(), keepalive_s)
                if not sub.queue and not sub.overflowed:
                    yield ": keep-alive\n\n"
                    continue
            if sub.overflowed:
                yield (
                    "event: error\ndata: subscriber too slow: more than "
                    f"{hub.queue_events} decisions unread (http.stream_queue_events); reconnect\n\n"
                )
                return
            batch = sub.queue.popleft()
            sub.queued -= len(batch.items)
            text = batch.text_for(filters, cursor)
            cursor = max(cursor, batch.last_id)
            if text:
                yield text
    finally:
        hub.unsubscribe(sub)
        slot.release()

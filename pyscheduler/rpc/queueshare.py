"""The queue-share step around any round of the live service (pyscheduler/core/queues.py decides).

The shim sends the RM's leaf queues with their absolute shares (StateBatch.queues); each application
names its leaf (ApplicationInfo.queue). After the policy's round this step admits its placements in
queue order (queues below their guarantee first, borrowing only idle room no waiting queue is owed,
never above a queue's maximum), places asks of queues still below their guarantee that the policy left
waiting (submit order), and preempts clones of queues above their guarantee for what is still owed.
Every refused placement becomes a deferral with REASON_QUEUE_SHARE and its detail.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyscheduler.core.queues import Candidate, QueueBook, Running, admit, reclaim
from pyscheduler.rpc.placer import DeferralChoice, KillChoice, PlacementChoice, RoundResult, fcfs_order, place
from pyscheduler.rpc.yielding import CopySource
from pyscheduler.wire import pb

if TYPE_CHECKING:
    from pyscheduler.rpc.mirror import Mirror

RoundFn = Callable[["Mirror"], RoundResult]


def _app_of_attempt(attempt_id: str) -> str:
    parts = attempt_id.split("_")
    return "application_" + "_".join(parts[1:3]) if len(parts) >= 3 else attempt_id


def _vec(memory_mb: float, vcores: float, n: int = 1) -> tuple[float, float]:
    return (float(memory_mb) * n, float(vcores) * n)


def with_queue_shares(inner: RoundFn, copies: CopySource | None = None) -> RoundFn:
    """`inner` under the queue shares of the mirror's book (unchanged when the book is inactive)."""

    def round_fn(mirror: Mirror) -> RoundResult:
        result = inner(mirror)
        book = mirror.queue_book
        if book is None or not book.active:
            return result
        return _apply(mirror, book, result, copies)

    return round_fn


def _queue_of(mirror: Mirror, attempt_id: str) -> str:
    app = mirror.apps.get(_app_of_attempt(attempt_id))
    return app.queue if app is not None else ""


def _apply(mirror: Mirror, book: QueueBook, result: RoundResult, copies: CopySource | None) -> RoundResult:
    running_nodes = [n for n in mirror.nodes.values() if n.state == pb.NODE_STATE_RUNNING]
    capacity = (
        float(sum(n.capacity.memory_mb for n in running_nodes)),
        float(sum(n.capacity.vcores for n in running_nodes)),
    )
    usage: dict[str, tuple[float, float]] = {}
    for c in mirror.containers.values():
        q = _queue_of(mirror, c.attempt_id)
        u = usage.get(q, (0.0, 0.0))
        usage[q] = (u[0] + c.resource.memory_mb, u[1] + c.resource.vcores)
    for o in mirror.outstanding.values():  # placed earlier, not yet confirmed: it holds room too
        n = max(0, o.count - o.by_containers - o.by_outcomes - o.dropped)
        if n:
            q = _queue_of(mirror, o.key[0])
            u = usage.get(q, (0.0, 0.0))
            usage[q] = (u[0] + o.capability.memory_mb * n, u[1] + o.capability.vcores * n)
    waiting: dict[str, bool] = {}
    for a in mirror.asks.values():
        if a.num_containers > a.outstanding:
            s = book.resolve(_queue_of(mirror, a.key[0]))
            if s is not None:
                waiting[s.path] = True
    kept = _judge(mirror, book, capacity, usage, waiting, result.placements, result.deferrals)
    # Asks of queues below their guarantee that the policy left waiting: placed now, in submit order.
    placed: dict[Any, int] = {}
    now = dict(usage)  # with this round's admitted placements
    for p in kept:
        placed[p.key] = placed.get(p.key, 0) + p.count
        q = _queue_of(mirror, p.key[0])
        u = now.get(q, (0.0, 0.0))
        now[q] = (u[0] + p.capability.memory_mb * p.count, u[1] + p.capability.vcores * p.count)
    starved_asks = [  # what the policy already placed this round counts as outstanding
        dataclasses.replace(a, outstanding=a.outstanding + placed.get(a.key, 0))
        for a in fcfs_order(mirror)
        if a.num_containers > a.outstanding + placed.get(a.key, 0) and _below(book, mirror, now, capacity, a)
    ]
    if starved_asks:
        extra = place(mirror, starved_asks, pb.REASON_QUEUE_GUARANTEE, taken=kept)
        kept += _judge(mirror, book, capacity, now, waiting, extra.placements, [])
    result.placements = kept
    # What queues below their guarantee still wait for: reclaimed from clones of queues above theirs.
    placed_now: dict[Any, int] = {}
    for p in kept:
        placed_now[p.key] = placed_now.get(p.key, 0) + p.count
    unmet: dict[str, tuple[float, float]] = {}
    for a in mirror.asks.values():
        left = a.num_containers - a.outstanding - placed_now.get(a.key, 0)
        if left > 0 and not a.am_container:
            q = _queue_of(mirror, a.key[0])
            u = unmet.get(q, (0.0, 0.0))
            unmet[q] = (u[0] + a.capability.memory_mb * left, u[1] + a.capability.vcores * left)
    if unmet and copies is not None:
        running = []
        for cp in copies():
            rec = mirror.containers.get(cp.container_id)
            if rec is not None and cp.is_clone:
                vec = _vec(rec.resource.memory_mb, rec.resource.vcores)
                running.append(Running(rec.container_id, _queue_of(mirror, rec.attempt_id), vec, True))
        already = {k.container_id for k in result.kills}
        for r, why in reclaim(book, capacity, usage, unmet, running):
            if r.container_id not in already:
                app = _app_of_attempt(mirror.containers[r.container_id].attempt_id)
                result.kills.append(KillChoice(r.container_id, app, "queue_reclaim", why))
    return result


def _below(
    book: QueueBook,
    mirror: Mirror,
    usage: dict[str, tuple[float, float]],
    capacity: tuple[float, float],
    a: Any,
) -> bool:
    q = _queue_of(mirror, a.key[0])
    s = book.resolve(q)
    if s is None:
        return False
    u = usage.get(q, (0.0, 0.0))
    share = max((x / c for x, c in zip(u, capacity, strict=True) if c > 0), default=0.0)
    return share < s.guaranteed


def _judge(
    mirror: Mirror,
    book: QueueBook,
    capacity: tuple[float, float],
    usage: dict[str, tuple[float, float]],
    waiting: dict[str, bool],
    placements: list[PlacementChoice],
    deferrals: list[DeferralChoice],
) -> list[PlacementChoice]:
    cands = [
        Candidate(
            _queue_of(mirror, p.key[0]),
            _vec(p.capability.memory_mb, p.capability.vcores, p.count),
            p.reason == pb.REASON_CLONE_IDLE_CAPACITY,
        )
        for p in placements
    ]
    kept: list[PlacementChoice] = []
    for p, v in zip(placements, admit(book, capacity, usage, waiting, cands), strict=True):
        if v.admitted:
            if v.detail:
                why = f"{p.detail}; {v.reason}: {v.detail}" if p.detail else f"{v.reason}: {v.detail}"
                p = dataclasses.replace(p, detail=why)
            kept.append(p)
        else:
            deferrals.append(DeferralChoice(p.key, pb.REASON_QUEUE_SHARE, f"{v.reason}: {v.detail}"))
    return kept

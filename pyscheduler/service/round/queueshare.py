"""The queue-share step around any round of the live service (pyscheduler/core/queues.py decides).

The shim sends the RM's leaf queues with their absolute shares (StateBatch.queues); each application
names its leaf (ApplicationInfo.queue). After the policy's round this step admits its placements in
queue order (queues below their guarantee first, borrowing only idle room no waiting queue is owed,
never above a queue's maximum), places asks of queues still below their guarantee that the policy left
waiting (submit order), and preempts clones of queues above their guarantee for what is still owed, then
their originals where preemption is on (service/round/queuereclaim.py).
Within a leaf, each user's containers stay within the queue's user limit and its ApplicationMasters
within its AM limit (pyscheduler/core/queue_limits.py); these apply even with a single leaf. Every
refused placement becomes a deferral with its detail: REASON_AM_SHARE_CAP for the AM limit,
REASON_QUEUE_SHARE otherwise. Placements are judged container by container, so a placement of several
containers may be cut to the ones that fit.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyscheduler.core.queue_limits import REASON_AM_LIMIT, REASON_USER_LIMIT, LimitTracker, limited
from pyscheduler.core.queues import Candidate, QueueBook, admit
from pyscheduler.service.round.placer import fcfs_order, place
from pyscheduler.service.round.plan import DeferralChoice, PlacementChoice, RoundResult
from pyscheduler.service.round.queuereclaim import Waits, reclaim_kills
from pyscheduler.wire import pb

if TYPE_CHECKING:
    from pyscheduler.service.round.round_memory import RoundMemory
    from pyscheduler.service.state.mirror import Mirror

RoundFn = Callable[["Mirror", "RoundMemory"], RoundResult]
_LIMIT_PREFIXES = (f"{REASON_USER_LIMIT}:", f"{REASON_AM_LIMIT}:")
# Deferrals for want of room: a user or AM limit, when one holds, is the reason to name instead.
_ROOM_REASONS = frozenset({pb.REASON_WAITING_FOR_RESOURCES, pb.REASON_LOWER_PRIORITY, pb.REASON_QUEUE_SHARE})


def _app_of_attempt(attempt_id: str) -> str:
    parts = attempt_id.split("_")
    return "application_" + "_".join(parts[1:3]) if len(parts) >= 3 else attempt_id


def _vec(memory_mb: float, vcores: float, n: int = 1) -> tuple[float, float]:
    return (float(memory_mb) * n, float(vcores) * n)


def with_queue_shares(inner: RoundFn, waits: Waits | None = None) -> RoundFn:
    """`inner` under the queue shares and limits of the mirror's book (unchanged when it has neither: no
    tree, or one leaf with the whole cluster and no user or AM limit). The clones the queues may reclaim
    are among the running copies the round read (`RoundResult.copies`). `waits`: since when each queue
    has waited (a new one on the monotonic clock by default)."""
    waited = waits if waits is not None else Waits()

    def round_fn(mirror: Mirror, memory: RoundMemory) -> RoundResult:
        result = inner(mirror, memory)
        book = mirror.queue_book
        if book is None or not (book.active or limited(book)):
            return result
        return _apply(mirror, book, result, waited)

    return round_fn


def _queue_of(mirror: Mirror, attempt_id: str) -> str:
    app = mirror.apps.get(_app_of_attempt(attempt_id))
    return app.queue if app is not None else ""


def _user_of(mirror: Mirror, attempt_id: str) -> str:
    app = mirror.apps.get(_app_of_attempt(attempt_id))
    return app.user if app is not None else ""


def _candidate(mirror: Mirror, key: Any, capability: Any, n: int = 1, is_clone: bool = False) -> Candidate:
    """One container (or `n`) of the ask at `key`, with its queue, user and whether it is an AM."""
    a = mirror.asks.get(key)
    return Candidate(
        _queue_of(mirror, key[0]),
        _vec(capability.memory_mb, capability.vcores, n),
        is_clone,
        _user_of(mirror, key[0]),
        bool(a is not None and a.am_container),
        n,
    )


@dataclasses.dataclass(slots=True)
class _Held:
    """What each queue, each (queue, user), each queue's AMs and each (queue, user)'s AMs hold (containers,
    and placements not yet confirmed: they hold room too), and how many users have pending asks per queue."""

    queues: dict[str, tuple[float, float]]
    users: dict[tuple[str, str], tuple[float, float]]
    ams: dict[str, tuple[float, float]]
    user_ams: dict[tuple[str, str], tuple[float, float]]
    active_users: dict[str, int]


def _plus(d: dict[Any, tuple[float, float]], k: Any, vec: tuple[float, float]) -> None:
    u = d.get(k, (0.0, 0.0))
    d[k] = (u[0] + vec[0], u[1] + vec[1])


def _held(mirror: Mirror) -> _Held:
    """The usage the limits judge against (see _Held)."""
    h = _Held({}, {}, {}, {}, {})

    def hold(attempt_id: str, vec: tuple[float, float], am: bool) -> None:
        q = _queue_of(mirror, attempt_id)
        k = (q, _user_of(mirror, attempt_id))
        _plus(h.queues, q, vec)
        _plus(h.users, k, vec)
        if am:
            _plus(h.ams, q, vec)
            _plus(h.user_ams, k, vec)

    for c in mirror.containers.values():
        hold(c.attempt_id, _vec(c.resource.memory_mb, c.resource.vcores), c.am_container)
    for o in mirror.outstanding.values():
        n = max(0, o.count - o.by_containers - o.by_outcomes - o.dropped)
        if n:
            a = mirror.asks.get(o.key)
            hold(o.key[0], _vec(o.capability.memory_mb, o.capability.vcores, n), bool(a and a.am_container))
    active: set[tuple[str, str]] = set()
    for a in mirror.asks.values():
        if a.num_containers > a.outstanding:
            active.add((_queue_of(mirror, a.key[0]), _user_of(mirror, a.key[0])))
    for q, _ in active:
        h.active_users[q] = h.active_users.get(q, 0) + 1
    return h


def _apply(mirror: Mirror, book: QueueBook, result: RoundResult, waits: Waits) -> RoundResult:
    running_nodes = [n for n in mirror.nodes.values() if n.state == pb.NODE_STATE_RUNNING]
    capacity = (
        float(sum(n.capacity.memory_mb for n in running_nodes)),
        float(sum(n.capacity.vcores for n in running_nodes)),
    )
    held = _held(mirror)
    usage = held.queues
    limits = (
        LimitTracker(book, capacity, usage, held.users, held.ams, held.user_ams, held.active_users)
        if limited(book)
        else None
    )

    def refusal(a: Any) -> tuple[str, str] | None:
        """Why one more container of ask `a` would break its user's or its queue's AM limit, or None."""
        q = book.resolve(_queue_of(mirror, a.key[0])) if limits is not None else None
        return (
            None if limits is None or q is None else limits.check(q, _candidate(mirror, a.key, a.capability))
        )

    def room(a: Any, left: int) -> int:
        """How many of `left` more containers of ask `a` its user's limit and its queue's AM limit allow."""
        q = book.resolve(_queue_of(mirror, a.key[0])) if limits is not None else None
        if limits is None or q is None:
            return left
        lo, hi = 0, left  # the check is monotone in the count: the largest count it passes
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if limits.check(q, _candidate(mirror, a.key, a.capability, mid)) is None:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def can_take(a: Any) -> bool:
        return room(a, 1) == 1

    waiting: dict[str, bool] = {}
    for a in mirror.asks.values():
        if a.num_containers > a.outstanding and can_take(a):
            s = book.resolve(_queue_of(mirror, a.key[0]))
            if s is not None:
                waiting[s.path] = True
    kept = _judge(mirror, book, capacity, usage, waiting, result.placements, result.deferrals, limits)
    if book.active:
        # Asks of queues below their guarantee that the policy left waiting: placed now, in submit order.
        now, placed = _after(mirror, usage, kept)
        starved_asks = [  # what the policy already placed this round counts as outstanding
            dataclasses.replace(a, outstanding=a.outstanding + placed.get(a.key, 0))
            for a in fcfs_order(mirror)
            if a.num_containers > a.outstanding + placed.get(a.key, 0)
            and _below(book, mirror, now, capacity, a)
            and can_take(a)
        ]
        if starved_asks:
            extra = place(mirror, starved_asks, pb.REASON_QUEUE_GUARANTEE, taken=kept)
            kept += _judge(mirror, book, capacity, now, waiting, extra.placements, [], limits)
    if any(d.detail.startswith(_LIMIT_PREFIXES) for d in result.deferrals):
        # The room that placements refused for a user or AM limit left: other asks, in submit order, each
        # cut to what its own limits allow (work-conserving within and across queues).
        now, placed = _after(mirror, usage, kept)
        refill = []
        for a in fcfs_order(mirror):
            left = a.num_containers - a.outstanding - placed.get(a.key, 0)
            n = room(a, left) if left > 0 else 0
            if n > 0:
                refill.append(dataclasses.replace(a, num_containers=a.outstanding + n))
        if refill:
            extra = place(mirror, refill, pb.REASON_FCFS_ORDER, taken=kept)
            kept += _judge(mirror, book, capacity, now, waiting, extra.placements, [], limits)
    result.placements = kept
    if limits is not None:  # an ask left waiting at its user's or AM limit is deferred for that reason
        result.deferrals = _named_limits(mirror, result.deferrals, refusal, _after(mirror, usage, kept)[1])
    if not book.active:  # one leaf with the whole cluster: only its limits apply
        return result
    # What queues below their guarantee still wait for: reclaimed from clones of queues above theirs
    # (not for users at their limit, nor for AMs beyond their queue's AM limit: they could not take it),
    # then, where preemption is on, from their originals (for AMs too): service/round/queuereclaim.py.
    _, placed_now = _after(mirror, usage, kept)
    unmet: dict[str, tuple[float, float]] = {}
    with_ams: dict[str, tuple[float, float]] = {}
    for a in mirror.asks.values():
        left = a.num_containers - a.outstanding - placed_now.get(a.key, 0)
        if left > 0 and can_take(a):
            q = _queue_of(mirror, a.key[0])
            want = (a.capability.memory_mb * left, a.capability.vcores * left)
            u = with_ams.get(q, (0.0, 0.0))
            with_ams[q] = (u[0] + want[0], u[1] + want[1])
            if not a.am_container:
                u = unmet.get(q, (0.0, 0.0))
                unmet[q] = (u[0] + want[0], u[1] + want[1])
    queue_of = functools.partial(_queue_of, mirror)
    reclaim_kills(mirror, book, capacity, usage, unmet, with_ams, waits, result.copies, queue_of, result)
    return result


def _named_limits(
    mirror: Mirror,
    deferrals: list[DeferralChoice],
    refusal: Callable[[Any], tuple[str, str] | None],
    placed: dict[Any, int],
) -> list[DeferralChoice]:
    """The deferrals of asks still waiting after this round; one at its user's or AM limit says so."""
    out = []
    for d in deferrals:
        a = mirror.asks.get(d.key)
        if a is None or d.reason not in _ROOM_REASONS or d.detail.startswith(_LIMIT_PREFIXES):
            out.append(d)
            continue
        if a.num_containers <= a.outstanding + placed.get(d.key, 0):
            continue  # placed in full by a later pass of this round
        why = refusal(a)
        if why is not None:
            reason = pb.REASON_AM_SHARE_CAP if why[0] == REASON_AM_LIMIT else pb.REASON_QUEUE_SHARE
            d = DeferralChoice(d.key, reason, f"{why[0]}: {why[1]}")
        out.append(d)
    return out


def _after(
    mirror: Mirror, usage: dict[str, tuple[float, float]], kept: list[PlacementChoice]
) -> tuple[dict[str, tuple[float, float]], dict[Any, int]]:
    """`usage` with this round's admitted placements, and the containers placed per ask key."""
    now = dict(usage)
    placed: dict[Any, int] = {}
    for p in kept:
        placed[p.key] = placed.get(p.key, 0) + p.count
        q = _queue_of(mirror, p.key[0])
        u = now.get(q, (0.0, 0.0))
        now[q] = (u[0] + p.capability.memory_mb * p.count, u[1] + p.capability.vcores * p.count)
    return now, placed


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
    limits: LimitTracker | None = None,
) -> list[PlacementChoice]:
    """The placements admitted (a placement of n containers is judged one container at a time and cut to
    the ones admitted); each refused container's placement gets one deferral with the first refusal."""
    cands: list[Candidate] = []
    owner: list[int] = []
    for i, p in enumerate(placements):
        one = _candidate(mirror, p.key, p.capability, 1, p.reason == pb.REASON_CLONE_IDLE_CAPACITY)
        cands.extend([one] * p.count)
        owner.extend([i] * p.count)
    admitted = [0] * len(placements)
    first_yes: list[Any] = [None] * len(placements)
    first_no: list[Any] = [None] * len(placements)
    for i, v in zip(owner, admit(book, capacity, usage, waiting, cands, limits), strict=True):
        if v.admitted:
            admitted[i] += 1
            first_yes[i] = first_yes[i] or v
        else:
            first_no[i] = first_no[i] or v
    kept: list[PlacementChoice] = []
    for i, p in enumerate(placements):
        yes, no = first_yes[i], first_no[i]
        if admitted[i]:
            if yes.detail:
                why = f"{p.detail}; {yes.reason}: {yes.detail}" if p.detail else f"{yes.reason}: {yes.detail}"
                p = dataclasses.replace(p, detail=why)
            kept.append(p if admitted[i] == p.count else dataclasses.replace(p, count=admitted[i]))
        if no is not None:
            reason = pb.REASON_AM_SHARE_CAP if no.reason == REASON_AM_LIMIT else pb.REASON_QUEUE_SHARE
            deferrals.append(DeferralChoice(p.key, reason, f"{no.reason}: {no.detail}"))
    return kept

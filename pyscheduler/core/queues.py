"""Queue shares: the step every policy's round runs under when the RM has a queue tree.

The ResourceManager's queues (CapacityScheduler's keys, read by the shim) give each leaf a guaranteed
and a maximum share of the cluster, as fractions of its total resources. The policy decides as if
there were no queues; this step then judges its placements, in the policy's order:

1. queues below their guaranteed share that have pending work are served first (their placements are
   admitted before anyone else's), up to their maximum share;
2. the rest is lent: a queue may borrow idle capacity above its guarantee (work-conserving), up to its
   maximum share, but not the room that queues still below their guarantee are waiting for;
3. what is left waiting in a queue below its guarantee is reclaimed from queues above theirs by
   preempting their clones first (a clone is redundant work; an original is not touched here), then,
   where the operator turned preemption on and the queue has waited long enough, their newest original
   containers down to their guarantee (pyscheduler/core/preempt.py).

Shares are dominant shares (the largest fraction over the resource dimensions). Within a leaf, the
user limit (user-limit-factor) and the ApplicationMaster limit (maximum-am-resource-percent) are judged
first (pyscheduler/core/queue_limits.py). Every refusal and every reclaim carries its reason. The
service runs these functions (pyscheduler/service/round/queueshare.py); the simulator does not model queues
yet.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

MAX_QUEUES = 1024
MAX_PREEMPT_AFTER_S = 86_400.0  # a day: longer is no preemption in practice
REASON_BELOW_GUARANTEE = "queue_below_guarantee"
REASON_LENT = "queue_lent_idle_capacity"
REASON_MAX_CAPACITY = "queue_max_capacity"
REASON_RESERVED = "queue_capacity_reserved"
REASON_RECLAIM = "queue_reclaim"
DEFAULT_QUEUE = "root.default"


@dataclass(frozen=True, slots=True)
class QueueShare:
    """One leaf queue: guaranteed and maximum share of the cluster (fractions in [0, 1]), its
    user-limit-factor (-1 or 0: no user limit), maximum-am-resource-percent (0: no AM limit), after how
    many seconds of another queue's unmet guarantee its originals may be preempted (0: never;
    pyscheduler/core/preempt.py), and its minimum-user-limit-percent (100: no bound beyond the factor)."""

    path: str
    guaranteed: float
    maximum: float
    user_limit_factor: float = -1.0
    am_percent: float = 0.0
    preempt_after_s: float = 0.0
    min_user_limit_percent: float = 100.0

    def __post_init__(self) -> None:
        if not self.path or len(self.path) > 1024:
            raise ValueError(f"QueueShare.path must be 1..1024 characters, got {self.path!r}")
        for name, v in (("guaranteed", self.guaranteed), ("maximum", self.maximum)):
            if not (math.isfinite(v) and 0.0 <= v <= 1.0):
                raise ValueError(f"QueueShare[{self.path!r}].{name} must be in [0, 1], got {v!r}")
        if self.maximum + 1e-9 < self.guaranteed:
            raise ValueError(
                f"QueueShare[{self.path!r}].maximum {self.maximum} is below guaranteed {self.guaranteed}"
            )
        ulf = self.user_limit_factor
        if not (math.isfinite(ulf) and (ulf == -1.0 or 0.0 <= ulf <= 1e6)):
            raise ValueError(
                f"QueueShare[{self.path!r}].user_limit_factor must be -1 or in [0, 1e6], got {ulf!r}"
            )
        if not (math.isfinite(self.am_percent) and 0.0 <= self.am_percent <= 1.0):
            name = f"QueueShare[{self.path!r}].maximum_am_resource_percent"
            raise ValueError(f"{name} must be in [0, 1], got {self.am_percent!r}")
        mulp = self.min_user_limit_percent
        if not (math.isfinite(mulp) and 0.0 < mulp <= 100.0):
            name = f"QueueShare[{self.path!r}].minimum_user_limit_percent"
            raise ValueError(f"{name} must be in (0, 100], got {mulp!r}")
        if not (math.isfinite(self.preempt_after_s) and 0.0 <= self.preempt_after_s <= MAX_PREEMPT_AFTER_S):
            name = f"QueueShare[{self.path!r}].preempt_originals_after_ms"
            got = self.preempt_after_s * 1000
            raise ValueError(f"{name} must be in [0, {MAX_PREEMPT_AFTER_S * 1000:.0f}], got {got!r}")


class QueueBook:
    """The leaf queues by path. A job in a queue the book lacks counts as in `root.default`'s (or, with
    no such leaf, is unconstrained)."""

    def __init__(self, leaves: Sequence[QueueShare] = ()) -> None:
        if len(leaves) > MAX_QUEUES:
            raise ValueError(f"queues: at most {MAX_QUEUES} leaf queues, got {len(leaves)}")
        self.leaves: dict[str, QueueShare] = {}
        for q in leaves:
            if q.path in self.leaves:
                raise ValueError(f"queues: leaf {q.path!r} given twice")
            self.leaves[q.path] = q
        total = sum(q.guaranteed for q in self.leaves.values())
        if total > 1.0 + 1e-3:  # the RM's percentages multiplied down the tree, in float32
            raise ValueError(f"queues: guaranteed shares sum to {total:.6f}, more than the cluster")

    @property
    def active(self) -> bool:
        """Whether shares matter: two or more leaves, or one leaf whose maximum is below the cluster."""
        return len(self.leaves) > 1 or any(q.maximum < 1.0 for q in self.leaves.values())

    def resolve(self, queue: str) -> QueueShare | None:
        q = self.leaves.get(queue)
        if q is None:
            # the RM names a leaf by short name or full path; the book is keyed by full path
            matches = [s for p, s in self.leaves.items() if p.rsplit(".", 1)[-1] == queue]
            q = matches[0] if len(matches) == 1 else self.leaves.get(DEFAULT_QUEUE)
        return q


def book_of_wire(queues: Sequence[Any]) -> QueueBook:
    """The QueueBook of StateBatch.queues (QueueShareInfo messages); ValueError naming `queues[i]`."""
    if len(queues) > MAX_QUEUES:
        raise ValueError(f"at most {MAX_QUEUES} leaf queues, got {len(queues)}")
    leaves = []
    for i, q in enumerate(queues):
        try:
            leaves.append(
                QueueShare(
                    q.path,
                    q.guaranteed,
                    q.maximum,
                    q.user_limit_factor,
                    q.maximum_am_resource_percent,
                    q.preempt_originals_after_ms / 1000.0,
                    q.minimum_user_limit_percent or 100.0,  # 0: not sent, CapacityScheduler's default
                )
            )
        except ValueError as e:
            raise ValueError(f"queues[{i}]: {e}") from e
    return QueueBook(leaves)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A placement the policy proposed: its queue, its resources, whether it is a clone, its
    application's user (empty: no user limit applies), whether it is an ApplicationMaster, and how many
    containers `demand` is (a user or queue holding nothing may always take one, not more)."""

    queue: str
    demand: tuple[float, ...]
    is_clone: bool = False
    user: str = ""
    is_am: bool = False
    count: int = 1


@dataclass(frozen=True, slots=True)
class Verdict:
    admitted: bool
    reason: str
    detail: str


def dominant(used: Sequence[float], capacity: Sequence[float]) -> float:
    """The dominant share of `used` in `capacity` (dimensions with no capacity do not count)."""
    return max((u / c for u, c in zip(used, capacity, strict=True) if c > 0), default=0.0)


def add(a: Sequence[float], b: Sequence[float]) -> tuple[float, ...]:
    return tuple(x + y for x, y in zip(a, b, strict=True))


def _by_leaf(
    book: QueueBook, usage: Mapping[str, Sequence[float]], zero: tuple[float, ...]
) -> dict[str, tuple[float, ...]]:
    """`usage` keyed by the RM's queue names, summed per leaf of the book (by full path)."""
    used: dict[str, tuple[float, ...]] = {}
    for name, u in usage.items():
        q = book.resolve(name)
        if q is not None:
            used[q.path] = add(used.get(q.path, zero), u)
    return used


class Limits(Protocol):
    """What `admit` asks of the users' and AMs' limits (queue_limits.py's LimitTracker)."""

    def check(self, q: QueueShare, c: Candidate) -> tuple[str, str] | None: ...
    def take(self, q: QueueShare, c: Candidate) -> None: ...


def admit(
    book: QueueBook,
    capacity: Sequence[float],
    usage: Mapping[str, Sequence[float]],
    waiting: Mapping[str, bool],
    candidates: Sequence[Candidate],
    limits: Limits | None = None,
) -> list[Verdict]:
    """Judge `candidates` (in the policy's order): one verdict each, in the same order.

    `usage` is what each queue's containers hold now; `waiting` says which queues have work pending.
    Pass 1 admits the placements of queues below their guarantee (within their maximum); pass 2 lends
    what is left: a placement that takes its queue above its guarantee is admitted only if, after it,
    the idle capacity still covers what waiting queues below their guarantee are owed. With `limits`, a
    placement above its user's limit or its queue's AM limit is refused first (queue_limits.py).
    """
    zero = (0.0,) * len(capacity)
    used = _by_leaf(book, usage, zero)
    verdicts: list[Verdict | None] = [None] * len(candidates)
    shares = [book.resolve(c.queue) for c in candidates]

    def owed(exclude: str) -> tuple[float, ...]:
        """Resources waiting queues below their guarantee are still owed (their guarantee minus use)."""
        out = zero
        for path, q in book.leaves.items():
            if path == exclude or not waiting.get(path, False):
                continue
            u = used.get(path, zero)
            if dominant(u, capacity) < q.guaranteed:
                out = add(
                    out, tuple(max(0.0, q.guaranteed * c - x) for c, x in zip(capacity, u, strict=True))
                )
        return out

    total_used = zero
    for u in used.values():
        total_used = add(total_used, u)
    for first in (True, False):
        for i, (c, q) in enumerate(zip(candidates, shares, strict=True)):
            if verdicts[i] is not None:
                continue
            if q is None:
                if not first:
                    verdicts[i] = Verdict(True, REASON_LENT, "no queue tree entry: unconstrained")
                continue
            u = used.get(q.path, zero)
            after = add(u, c.demand)
            below = dominant(after, capacity) <= q.guaranteed + 1e-9
            if first and not below:
                continue
            refusal = limits.check(q, c) if limits is not None else None
            if refusal is not None:
                verdicts[i] = Verdict(False, *refusal)
                continue
            if dominant(after, capacity) > q.maximum + 1e-9:
                verdicts[i] = Verdict(
                    False,
                    REASON_MAX_CAPACITY,
                    f"{q.path} would hold more than its maximum share {q.maximum:.3f}",
                )
                continue
            if not below:
                free_after = tuple(
                    cap - x - d for cap, x, d in zip(capacity, total_used, c.demand, strict=True)
                )
                need = owed(q.path)
                if any(f + 1e-9 < n for f, n in zip(free_after, need, strict=True)):
                    verdicts[i] = Verdict(
                        False,
                        REASON_RESERVED,
                        f"{q.path} is above its guarantee; the room is owed to queues below theirs",
                    )
                    continue
            used[q.path] = after
            total_used = add(total_used, c.demand)
            if limits is not None:
                limits.take(q, c)
            reason = REASON_BELOW_GUARANTEE if below else REASON_LENT
            verdicts[i] = Verdict(True, reason, f"{q.path} at {dominant(after, capacity):.3f} of the cluster")
    return [v if v is not None else Verdict(True, REASON_LENT, "") for v in verdicts]


@dataclass(frozen=True, slots=True)
class Running:
    """A running container: its id, queue, resources, whether it is a clone, its start time (seconds) and
    whether it runs an ApplicationMaster."""

    container_id: str
    queue: str
    resource: tuple[float, ...]
    is_clone: bool = False
    start_s: float = 0.0
    is_am: bool = False


def owed_by_leaf(
    book: QueueBook,
    capacity: Sequence[float],
    used: Mapping[str, Sequence[float]],
    unmet: Mapping[str, Sequence[float]],
) -> dict[str, tuple[float, ...]]:
    """Per leaf path: what its unplaced work (`unmet`, keyed by the RM's queue names) is owed, up to its
    guarantee (`used`: per leaf path)."""
    zero = (0.0,) * len(capacity)
    out: dict[str, tuple[float, ...]] = {}
    for name, want in unmet.items():
        q = book.resolve(name)
        if q is None:
            continue
        u = used.get(q.path, zero)
        room = tuple(max(0.0, q.guaranteed * c - x) for c, x in zip(capacity, u, strict=True))
        out[q.path] = add(out.get(q.path, zero), tuple(min(r, w) for r, w in zip(room, want, strict=True)))
    return out


def reclaim(
    book: QueueBook,
    capacity: Sequence[float],
    usage: Mapping[str, Sequence[float]],
    unmet: Mapping[str, Sequence[float]],
    running: Sequence[Running],
) -> list[tuple[Running, str]]:
    """Clones to preempt so that queues below their guarantee get what they wait for (`unmet`: per queue,
    the resources of its pending work this round left unplaced). Only clones of queues above their
    guarantee are chosen, newest first in `running`'s order reversed, and never more than owed."""
    zero = (0.0,) * len(capacity)
    used = _by_leaf(book, usage, zero)
    owed = zero
    for o in owed_by_leaf(book, capacity, used, unmet).values():
        owed = add(owed, o)
    if dominant(owed, capacity) <= 0:
        return []
    out: list[tuple[Running, str]] = []
    freed = zero
    for r in reversed(running):
        if not r.is_clone:
            continue
        q = book.resolve(r.queue)
        if q is None or dominant(used.get(q.path, zero), capacity) <= q.guaranteed + 1e-9:
            continue
        out.append(
            (r, f"{q.path} is above its guarantee {q.guaranteed:.3f}: its clone yields to a queue below")
        )
        freed = add(freed, r.resource)
        used[q.path] = tuple(x - y for x, y in zip(used[q.path], r.resource, strict=True))
        if all(f >= o for f, o in zip(freed, owed, strict=True)):
            break
    return out

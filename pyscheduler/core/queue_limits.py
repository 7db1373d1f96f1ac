"""Per-queue limits inside a leaf's share: user limits and the ApplicationMaster share, as CapacityScheduler.

Two of CapacityScheduler's leaf-queue keys, read by the shim and sent in QueueShareInfo:

- `user-limit-factor` (f): one user's containers in a queue may hold at most the queue's guaranteed share
  times f, never more than the queue's maximum share; f = -1 (or unset on the wire, 0) is no user limit.
  A user who holds nothing in the queue may always take one placement (CapacityScheduler's `>` test lets a
  user at zero take a container however small the limit, so a queue of capacity 0 still runs). Clones and
  ApplicationMasters count toward the user's usage like any container.
- `maximum-am-resource-percent` (p): the queue's ApplicationMasters together may hold at most p times the
  queue's usable share, which is the larger of its guaranteed share and what it could reach now (its use
  plus the cluster's idle room, never above its maximum share): CapacityScheduler's AM limit, the larger
  of the queue's capacity and its current limit, times p. When the queue runs no AM, one is always allowed
  (so a limit smaller than one AM never stops a queue). p = 0 on the wire: no per-queue AM limit.

Shares are dominant shares over the resource dimensions, as in pyscheduler/core/queues.py, which runs these
checks before its own; this module is pure (no wire, no mirror).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyscheduler.core.queues import Candidate, QueueBook, QueueShare, add, dominant

REASON_USER_LIMIT = "queue_user_limit"
REASON_AM_LIMIT = "queue_am_limit"
_EPS = 1e-9


def user_limit(q: QueueShare) -> float | None:
    """The largest share of the cluster one user may hold in `q`, or None (no user limit, or none tighter
    than the queue's maximum)."""
    if q.user_limit_factor <= 0:  # -1: no limit; 0: not sent
        return None
    limit = min(q.maximum, q.guaranteed * q.user_limit_factor)
    return None if limit >= q.maximum - _EPS else limit


def am_usable(q: QueueShare, queue_share: float, idle_share: float) -> float:
    """The share the AM percent applies to: the guaranteed share, or what the queue could reach now (its use
    plus the idle room, at most its maximum), whichever is larger."""
    return max(q.guaranteed, min(q.maximum, queue_share + max(0.0, idle_share)))


def limited(book: QueueBook) -> bool:
    """Whether any leaf has a user limit below its maximum or an AM percent."""
    return any(q.am_percent > 0 or user_limit(q) is not None for q in book.leaves.values())


class LimitTracker:
    """The users' and ApplicationMasters' usage per leaf for one round: `check` judges a candidate against
    its user limit and its queue's AM limit, `take` records an admitted one."""

    def __init__(
        self,
        book: QueueBook,
        capacity: Sequence[float],
        queue_usage: Mapping[str, Sequence[float]],
        user_usage: Mapping[tuple[str, str], Sequence[float]],
        am_usage: Mapping[str, Sequence[float]],
    ) -> None:
        """Usage is keyed by the RM's queue names (and user); it is summed per leaf of the book. The AM limit
        of each leaf is fixed here, from the usage at the start of the round."""
        self.capacity = tuple(capacity)
        zero = (0.0,) * len(self.capacity)
        self.users: dict[tuple[str, str], tuple[float, ...]] = {}
        for (queue, user), u in user_usage.items():
            q = book.resolve(queue)
            if q is not None:
                self.users[(q.path, user)] = add(self.users.get((q.path, user), zero), u)
        self.ams: dict[str, tuple[float, ...]] = {}
        for queue, u in am_usage.items():
            q = book.resolve(queue)
            if q is not None:
                self.ams[q.path] = add(self.ams.get(q.path, zero), u)
        used: dict[str, tuple[float, ...]] = {}
        total = zero
        for queue, u in queue_usage.items():
            total = add(total, u)
            q = book.resolve(queue)
            if q is not None:
                used[q.path] = add(used.get(q.path, zero), u)
        idle = 1.0 - dominant(total, self.capacity)
        self.am_limits: dict[str, tuple[float, float]] = {}  # path -> (usable share, AM limit)
        for path, q in book.leaves.items():
            if q.am_percent > 0:
                usable = am_usable(q, dominant(used.get(path, zero), self.capacity), idle)
                self.am_limits[path] = (usable, q.am_percent * usable)
        self.zero = zero

    def check(self, q: QueueShare, c: Candidate) -> tuple[str, str] | None:
        """(reason, detail) when `c` would break its user's limit or its queue's AM limit, else None."""
        if c.is_am and q.path in self.am_limits:
            held = self.ams.get(q.path, self.zero)
            after = dominant(add(held, c.demand), self.capacity)
            usable, limit = self.am_limits[q.path]
            if after > limit + _EPS and dominant(held, self.capacity) > 0:
                return (
                    REASON_AM_LIMIT,
                    f"{q.path}: its ApplicationMasters would hold {after:.3f} of the cluster, above the "
                    f"queue's AM limit {limit:.3f} (maximum-am-resource-percent {q.am_percent:g} of "
                    f"{usable:.3f})",
                )
        limit_u = user_limit(q)
        if limit_u is not None and c.user:
            held = self.users.get((q.path, c.user), self.zero)
            after = dominant(add(held, c.demand), self.capacity)
            if after > limit_u + _EPS and dominant(held, self.capacity) > 0:
                kind = "clone" if c.is_clone else "container"
                return (
                    REASON_USER_LIMIT,
                    f"user {c.user} in {q.path} would hold {after:.3f} of the cluster with this {kind}, "
                    f"above the user limit {limit_u:.3f} (capacity {q.guaranteed:.3f} x user-limit-factor "
                    f"{q.user_limit_factor:g})",
                )
        return None

    def take(self, q: QueueShare, c: Candidate) -> None:
        if c.user:
            key = (q.path, c.user)
            self.users[key] = add(self.users.get(key, self.zero), c.demand)
        if c.is_am:
            self.ams[q.path] = add(self.ams.get(q.path, self.zero), c.demand)

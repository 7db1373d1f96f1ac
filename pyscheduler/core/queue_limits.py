"""Per-queue limits inside a leaf's share: user limits and the ApplicationMaster share, as CapacityScheduler.

Three of CapacityScheduler's leaf-queue keys, read by the shim and sent in QueueShareInfo:

- `user-limit-factor` (f): one user's containers in a queue may hold at most the queue's guaranteed share
  times f, never more than the queue's maximum share; f = -1 (or unset on the wire, 0) is no user limit.
  A user who holds nothing in the queue may always take one placement (CapacityScheduler's `>` test lets a
  user at zero take a container however small the limit, so a queue of capacity 0 still runs). Clones and
  ApplicationMasters count toward the user's usage like any container.
- `minimum-user-limit-percent` (m, percent): with n users that have pending asks in the queue, each user's
  limit is also at most the queue's current capacity (its guaranteed share while its use is below that,
  else its use plus the container asked for) times the larger of 1/n and m/100, as CapacityScheduler
  computes it; m = 100 (its default, or 0 on the wire) adds nothing to the factor's limit.
- `maximum-am-resource-percent` (p): the queue's ApplicationMasters together may hold at most p times the
  queue's usable share, which is the larger of its guaranteed share and what it could reach now (its use
  plus the cluster's idle room, never above its maximum share): CapacityScheduler's AM limit, the larger
  of the queue's capacity and its current limit, times p. When the queue runs no AM, one is always allowed
  (so a limit smaller than one AM never stops a queue). p = 0 on the wire: no per-queue AM limit. One
  user's AMs may hold at most the queue's AM limit times max(1/n, m/100) times f (CapacityScheduler's user
  AM limit; with m = 100 it never binds below the queue's); a user running no AM may always start one.

Shares are dominant shares over the resource dimensions, as in pyscheduler/core/queues.py, which runs these
checks before its own; this module is pure (no wire, no mirror).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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
    """Whether any leaf has a user limit below its maximum, a minimum user limit percent or an AM percent."""
    return any(
        q.am_percent > 0 or user_limit(q) is not None or q.min_user_limit_percent < 100
        for q in book.leaves.values()
    )


def _by_path(
    book: QueueBook, usage: Mapping[Any, Sequence[float]], zero: tuple[float, ...]
) -> dict[Any, tuple[float, ...]]:
    """`usage` keyed by RM queue name, or by (RM queue name, user), summed per leaf path (and user)."""
    out: dict[Any, tuple[float, ...]] = {}
    for key, u in usage.items():
        name, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, ())
        q = book.resolve(name)
        if q is not None:
            k = (q.path, *rest) if rest else q.path
            out[k] = add(out.get(k, zero), tuple(u))
    return out


class LimitTracker:
    """The users' and ApplicationMasters' usage per leaf for one round: `check` judges a candidate against
    its user limit and its queue's (and its user's) AM limit, `take` records an admitted one."""

    def __init__(
        self,
        book: QueueBook,
        capacity: Sequence[float],
        queue_usage: Mapping[str, Sequence[float]],
        user_usage: Mapping[tuple[str, str], Sequence[float]],
        am_usage: Mapping[str, Sequence[float]],
        user_am_usage: Mapping[tuple[str, str], Sequence[float]] | None = None,
        active_users: Mapping[str, int] | None = None,
    ) -> None:
        """Usage is keyed by the RM's queue names (and user); it is summed per leaf of the book. The AM limit
        of each leaf is fixed here, from the usage at the start of the round. `active_users`: per RM queue
        name, how many users have pending asks there (minimum-user-limit-percent's n; 1 when not given)."""
        self.capacity = tuple(capacity)
        zero = (0.0,) * len(self.capacity)
        self.zero = zero
        self.users = _by_path(book, user_usage, zero)
        self.ams = _by_path(book, am_usage, zero)
        self.user_ams = _by_path(book, user_am_usage or {}, zero)
        self.used = _by_path(book, queue_usage, zero)
        self.active: dict[str, int] = {}
        for name, n in (active_users or {}).items():
            q = book.resolve(name)
            if q is not None:
                self.active[q.path] = self.active.get(q.path, 0) + n
        total = zero
        for u in queue_usage.values():
            total = add(total, tuple(u))
        idle = 1.0 - dominant(total, self.capacity)
        self.am_limits: dict[str, tuple[float, float]] = {}  # path -> (usable share, AM limit)
        for path, q in book.leaves.items():
            if q.am_percent > 0:
                usable = am_usable(q, dominant(self.used.get(path, zero), self.capacity), idle)
                self.am_limits[path] = (usable, q.am_percent * usable)

    def _user_fraction(self, q: QueueShare) -> float:
        """max(1/n, m/100): the part of the queue's current capacity one user may reach (1: no bound)."""
        n = max(1, self.active.get(q.path, 1))
        return 1.0 if q.min_user_limit_percent >= 100 else max(1.0 / n, q.min_user_limit_percent / 100.0)

    def _user_cap(self, q: QueueShare, c: Candidate) -> tuple[float, str] | None:
        """The user's limit for `c` and how it was reached, or None (no user limit)."""
        cap = user_limit(q)
        why = f"capacity {q.guaranteed:.3f} x user-limit-factor {q.user_limit_factor:g}"
        frac = self._user_fraction(q)
        if frac < 1.0:
            used = self.used.get(q.path, self.zero)
            below = dominant(used, self.capacity) < q.guaranteed
            current = q.guaranteed if below else dominant(add(used, c.demand), self.capacity)
            share = current * frac
            if cap is None or share < cap:
                n = max(1, self.active.get(q.path, 1))
                cap, why = (
                    share,
                    (
                        f"queue capacity now {current:.3f} x {frac:.3g} ({n} active users, "
                        f"minimum-user-limit-percent {q.min_user_limit_percent:g})"
                    ),
                )
        return None if cap is None else (cap, why)

    def check(self, q: QueueShare, c: Candidate) -> tuple[str, str] | None:
        """(reason, detail) when `c` would break its user's limit or its queue's (or user's) AM limit."""
        if c.is_am and q.path in self.am_limits:
            held = self.ams.get(q.path, self.zero)
            after = dominant(add(held, c.demand), self.capacity)
            usable, limit = self.am_limits[q.path]
            if after > limit + _EPS and (c.count > 1 or dominant(held, self.capacity) > 0):
                return (
                    REASON_AM_LIMIT,
                    f"{q.path}: its ApplicationMasters would hold {after:.3f} of the cluster, above the "
                    f"queue's AM limit {limit:.3f} (maximum-am-resource-percent {q.am_percent:g} of "
                    f"{usable:.3f})",
                )
            ulf = q.user_limit_factor if q.user_limit_factor > 0 else float("inf")
            user_am = limit * self._user_fraction(q) * ulf
            mine = self.user_ams.get((q.path, c.user), self.zero)
            after = dominant(add(mine, c.demand), self.capacity)
            if c.user and after > user_am + _EPS and (c.count > 1 or dominant(mine, self.capacity) > 0):
                return (
                    REASON_AM_LIMIT,
                    f"{q.path}: user {c.user}'s ApplicationMasters would hold {after:.3f} of the cluster, "
                    f"above the user AM limit {user_am:.3f} (the queue's {limit:.3f} x "
                    f"{self._user_fraction(q):.3g} x user-limit-factor {q.user_limit_factor:g})",
                )
        user_cap = self._user_cap(q, c) if c.user else None
        if user_cap is not None:
            limit_u, why = user_cap
            held = self.users.get((q.path, c.user), self.zero)
            after = dominant(add(held, c.demand), self.capacity)
            if after > limit_u + _EPS and (c.count > 1 or dominant(held, self.capacity) > 0):
                kind = "clone" if c.is_clone else "container"
                return (
                    REASON_USER_LIMIT,
                    f"user {c.user} in {q.path} would hold {after:.3f} of the cluster with this {kind}, "
                    f"above the user limit {limit_u:.3f} ({why})",
                )
        return None

    def take(self, q: QueueShare, c: Candidate) -> None:
        self.used[q.path] = add(self.used.get(q.path, self.zero), c.demand)
        if c.user:
            key = (q.path, c.user)
            self.users[key] = add(self.users.get(key, self.zero), c.demand)
        if c.is_am:
            self.ams[q.path] = add(self.ams.get(q.path, self.zero), c.demand)
            if c.user:
                key = (q.path, c.user)
                self.user_ams[key] = add(self.user_ams.get(key, self.zero), c.demand)

"""Preempting original containers for queues below their guarantee: CapacityScheduler's preemption
monitor, as the shim reports it per leaf (QueueShareInfo.preempt_originals_after_ms, read into
QueueShare.preempt_after_s; 0 for a leaf with preemption off).

Clones are reclaimed first (pyscheduler/core/queues.py `reclaim`: a clone is redundant work). What a
queue below its guarantee is still owed after that is taken from original containers when:
- the owed queue has waited, with demand it could not place, at least the victim queue's
  `preempt_after_s` (CapacityScheduler's max_wait_before_kill: a victim is not killed at the first
  shortfall);
- the victim queue has preemption on (> 0) and is above its guarantee, and losing the container does not
  take it below its guarantee;
- the container is not an ApplicationMaster's (losing it would lose the application's work);
- newest first (the least work lost; CapacityScheduler too takes the most recently allocated
  containers first);
- in one round at most `per_round` of the cluster (dominant share; CapacityScheduler's
  total_preemption_per_round default, 0.1) but always one container, and no more than owed.

Pure: the caller (pyscheduler/service/round/queueshare.py) tracks how long each queue has waited.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pyscheduler.core.queues import QueueBook, Running, add, dominant, owed_by_leaf

REASON_RECLAIM_ORIGINAL = "queue_reclaim_original"
PER_ROUND = 0.1
_EPS = 1e-9


def reclaim_originals(
    book: QueueBook,
    capacity: Sequence[float],
    usage: Mapping[str, Sequence[float]],
    unmet: Mapping[str, Sequence[float]],
    waited_s: Mapping[str, float],
    originals: Sequence[Running],
    freed: Sequence[float] = (),
    per_round: float = PER_ROUND,
) -> list[tuple[Running, str]]:
    """Running containers to preempt this round, each with its reason's detail. `usage` and `unmet` are
    keyed by the RM's queue names; `waited_s` by leaf path; `freed`: what the round's clone preemptions
    already free (it counts against what is owed)."""
    if not any(q.preempt_after_s > 0 for q in book.leaves.values()):
        return []
    zero = (0.0,) * len(capacity)
    used: dict[str, tuple[float, ...]] = {}
    for name, u in usage.items():
        q = book.resolve(name)
        if q is not None:
            used[q.path] = add(used.get(q.path, zero), tuple(u))
    owed = sorted(
        (
            (waited_s.get(path, 0.0), o, path)
            for path, o in owed_by_leaf(book, capacity, used, unmet).items()
            if dominant(o, capacity) > 0
        ),
        key=lambda t: (-t[0], t[2]),
    )  # (how long it waited, what it is owed, its path), longest wait first
    if not owed:
        return []
    got = tuple(freed) if freed else zero
    taken = 0.0
    out: list[tuple[Running, str]] = []
    for r in sorted(originals, key=lambda o: (-o.start_s, o.container_id)):
        q = book.resolve(r.queue)
        if r.is_am or q is None or q.preempt_after_s <= 0:
            continue
        # what the queues that waited at least this victim queue's time are owed, less what is freed
        due = zero
        waited = ""
        for w, o, path in owed:
            if w + _EPS >= q.preempt_after_s and path != q.path:
                due = add(due, o)
                waited = waited or f"{path} waited {w:.1f} s"
        if not waited or all(g + _EPS >= d for g, d in zip(got, due, strict=True)):
            continue
        after = tuple(x - y for x, y in zip(used.get(q.path, zero), r.resource, strict=True))
        if dominant(after, capacity) + _EPS < q.guaranteed:
            continue  # never below the victim's own guarantee
        share = dominant(r.resource, capacity)
        if out and taken + share > per_round + _EPS:
            break
        out.append(
            (
                r,
                f"{q.path} is above its guarantee {q.guaranteed:.3f}: its newest original yields "
                f"({waited} below its guarantee; preemption after {q.preempt_after_s:.1f} s)",
            )
        )
        used[q.path] = after
        got = add(got, r.resource)
        taken += share
    return out

"""What queues below their guarantee are still owed after a round, taken back from queues above theirs:
their clones first (pyscheduler/core/queues.py `reclaim`), then, where the operator turned preemption on,
their newest original containers once the owed queue has waited long enough
(pyscheduler/core/preempt.py). Each preemption is a KillChoice with its reason; the shim preempts it.
`Waits` keeps, across rounds, since when each queue has had demand left unplaced.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from pyscheduler.core.preempt import REASON_RECLAIM_ORIGINAL, reclaim_originals
from pyscheduler.core.queues import QueueBook, Running, reclaim
from pyscheduler.service.round.plan import KillChoice, RoundResult
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.service.state.mirror import application_of_attempt

if TYPE_CHECKING:
    from pyscheduler.service.state.mirror import Mirror

Vec = tuple[float, float]


class Waits:
    """Since when each queue (by the RM's name) has had demand left unplaced, on `clock` (seconds)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.since: dict[str, float] = {}

    def update(self, unmet: Mapping[str, Vec]) -> dict[str, float]:
        """Record this round's unmet queues (a queue no longer unmet starts over); how long each has
        waited, by leaf-independent RM queue name."""
        now = self.clock()
        self.since = {q: self.since.get(q, now) for q in unmet}
        return {q: now - t for q, t in self.since.items()}


def _vec(memory_mb: float, vcores: float) -> Vec:
    return (float(memory_mb), float(vcores))


def reclaim_kills(
    mirror: Mirror,
    book: QueueBook,
    capacity: Vec,
    usage: Mapping[str, Vec],
    unmet: Mapping[str, Vec],
    unmet_with_ams: Mapping[str, Vec],
    waits: Waits,
    copies: Sequence[Copy] | None,
    queue_of: Callable[[str], str],
    result: RoundResult,
) -> None:
    """Append to `result.kills` the clones, then the originals, to preempt this round. `unmet`: the work
    each queue left unplaced that clones may be preempted for; `unmet_with_ams` adds its AMs (an original
    may be preempted for an AM that cannot start)."""
    already = {k.container_id for k in result.kills}
    clone_ids = [cp.container_id for cp in copies if cp.is_clone] if copies is not None else []
    clones = set(clone_ids)
    if unmet and clone_ids:
        running = []  # in the copies' order: reclaim takes the newest (last) first
        for cid in clone_ids:
            rec = mirror.containers.get(cid)
            if rec is not None:
                vec = _vec(rec.resource.memory_mb, rec.resource.vcores)
                running.append(Running(cid, queue_of(rec.attempt_id), vec, True))
        for r, why in reclaim(book, capacity, usage, unmet, running):
            if r.container_id not in already:
                app = application_of_attempt(mirror.containers[r.container_id].attempt_id)
                result.kills.append(KillChoice(r.container_id, app, "queue_reclaim", why))
                already.add(r.container_id)
    waited = waits.update(unmet_with_ams)
    if not unmet_with_ams or not any(q.preempt_after_s > 0 for q in book.leaves.values()):
        return
    by_path: dict[str, float] = {}
    for name, w in waited.items():
        q = book.resolve(name)
        if q is not None:
            by_path[q.path] = max(by_path.get(q.path, 0.0), w)
    freed = [0.0, 0.0]
    for k in result.kills:
        rec = mirror.containers.get(k.container_id)
        if rec is not None:
            freed[0] += rec.resource.memory_mb
            freed[1] += rec.resource.vcores
    originals = [
        Running(
            c.container_id,
            queue_of(c.attempt_id),
            _vec(c.resource.memory_mb, c.resource.vcores),
            start_s=c.start_time_ms / 1000.0,
            is_am=c.am_container,
        )
        for c in mirror.containers.values()
        if c.container_id not in clones and c.container_id not in already
    ]
    for o, why in reclaim_originals(book, capacity, usage, unmet_with_ams, by_path, originals, tuple(freed)):
        app = application_of_attempt(mirror.containers[o.container_id].attempt_id)
        result.kills.append(KillChoice(o.container_id, app, REASON_RECLAIM_ORIGINAL, why))

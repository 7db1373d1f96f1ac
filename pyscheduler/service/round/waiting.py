"""Containers that wait for room after a round, which running clones may yield to (service/round/yielding.py):
original containers still waiting (`waiting_originals`), clones judged alone (`waiting_alone`), clones at
launch that would be their task's first running clone (`waiting_first`), each counted only once it has
waited STEADY_S (`steady`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyscheduler.service.round.plan import PlacementChoice, RoundResult
from pyscheduler.service.round.round_memory import RoundMemory
from pyscheduler.service.state.mirror import AskKey, Mirror, application_of_attempt
from pyscheduler.service.state.resources import Res
from pyscheduler.wire import pb

if TYPE_CHECKING:
    from pyscheduler.service.state.amcopies import Copy

# Deferrals that mean "an original container waits for room" (clone asks are subtracted per key).
_WAITING = frozenset({pb.REASON_WAITING_FOR_RESOURCES, pb.REASON_LOWER_PRIORITY})
# A container must have waited this long before a clone yields to it (`steady`): the AM helper reports a
# clone it added (ATTEMPT_WAITING) on its next poll, and a clone that got its container likewise, so for
# a second or two a clone's ask looks like an original's (or a late copy's that still waits).
STEADY_S = 3.0


@dataclass(frozen=True, slots=True)
class Waiting:
    """A container that waits for room (`steady`): its size, and the ask it is of."""

    res: Res
    key: AskKey | None = None
    # an original's container (a task's first attempt, an AM): every preemptible clone may yield to it;
    # False for a clone judged alone, to which only clones at launch yield (`held_back`)
    original: bool = True
    # a clone at launch that would be its task's first running clone, of a task not covered (`first`):
    # only clones worth the least yield to it (`ranked`'s cheap ones)
    first: bool = False

    def of_same_ask(self, mirror: Mirror, c: Copy) -> bool:
        """Whether clone `c` is of this ask's application and YARN priority (the same phase of one job)."""
        rec = mirror.containers.get(c.container_id)
        return (
            self.key is not None
            and rec is not None
            and rec.priority == self.key[1]
            and c.app_id == application_of_attempt(self.key[0])
        )


def waiting_originals(mirror: Mirror, result: RoundResult, clones: Mapping[AskKey, int]) -> dict[AskKey, int]:
    """Original containers still waiting for room after the round, per ask."""
    placed: dict[AskKey, int] = {}
    for p in result.placements:
        placed[p.key] = placed.get(p.key, 0) + p.count
    out: dict[AskKey, int] = {}
    for key in sorted({d.key for d in result.deferrals if d.reason in _WAITING}):
        a = mirror.asks.get(key)
        if a is None:
            continue
        n = a.num_containers - a.outstanding - clones.get(key, 0) - placed.get(key, 0)
        if n > 0:
            out[key] = n
    return out


def waiting_alone(
    mirror: Mirror, alone: Mapping[AskKey, int], placed: Sequence[PlacementChoice]
) -> dict[AskKey, int]:
    """Clones judged alone (a late copy, the phase tail, the last stage: CloneAsks.alone) still waiting
    after the round's clone pass (`placed`, which serves them first), per ask."""
    got: dict[AskKey, int] = {}
    for p in placed:
        got[p.key] = got.get(p.key, 0) + p.count
    out: dict[AskKey, int] = {}
    for key, n in sorted(alone.items()):
        if key in mirror.asks and n > got.get(key, 0):
            out[key] = n - got.get(key, 0)
    return out


def waiting_first(
    clones: Mapping[AskKey, int], alone: Mapping[AskKey, int], placed: Sequence[PlacementChoice]
) -> dict[AskKey, int]:
    """Clones at launch that would be their task's first running clone (CloneAsks.first) still waiting
    after the round's clone pass, per ask: of an ask's clones not placed, those not judged alone
    (`alone`, still waiting), at most the ask's first ones. Which waiting clone a container goes to is
    the AM's choice, so this is a count, not a list of tasks."""
    first: Mapping[AskKey, int] = getattr(clones, "first", {})
    got: dict[AskKey, int] = {}
    for p in placed:
        got[p.key] = got.get(p.key, 0) + p.count
    out: dict[AskKey, int] = {}
    for key, n in sorted(first.items()):
        left = min(n, clones.get(key, 0) - got.get(key, 0) - alone.get(key, 0))
        if left > 0:
            out[key] = left
    return out


def steady(
    mirror: Mirror, memory: RoundMemory, waiting: Mapping[tuple[str, AskKey], int], now_ms: int
) -> list[Waiting]:
    """The capability of every container that has waited at least STEADY_S: per (kind, ask), the least
    count seen over the last STEADY_S, once it has been waiting that long (module docstring)."""
    seen = memory.waiting_seen
    for k in [k for k in seen if waiting.get(k, 0) <= 0]:
        del seen[k]
    window = int(STEADY_S * 1000)
    out: list[Waiting] = []
    for k, n in sorted(waiting.items(), key=lambda kv: (kv[0][0] == "first", kv[0])):  # first ones last
        a = mirror.asks.get(k[1])
        if n <= 0 or a is None:
            continue
        hist = seen.setdefault(k, [])
        if hist and now_ms - hist[-1][0] > window:  # no round for a while: a new wait
            hist.clear()
        hist.append((now_ms, n))
        while len(hist) > 1 and hist[1][0] <= now_ms - window:
            del hist[0]
        original, first = k[0] == "original", k[0] == "first"
        if original and (a.am_container or not _phase_started(mirror, k[1])):
            out.extend([Waiting(a.capability, k[1], original)] * n)  # no clone can be among them
        elif hist[0][0] <= now_ms - window:
            out.extend([Waiting(a.capability, k[1], original, first)] * min(c for _, c in hist))
    return out


def _phase_started(mirror: Mirror, key: AskKey) -> bool:
    """Whether a task container of ask `key`'s application attempt and YARN priority (one phase of one
    job) is mirrored. Until one is, the ask holds no clone: the AM helper adds a task's clone only once
    the task runs, in a container of its phase's priority (CloningSpeculator.launch)."""
    return any(c.priority == key[1] and not c.am_container for c in mirror.containers_of_attempt(key[0]))

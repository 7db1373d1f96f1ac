"""Preemption on values: one eligibility predicate and per-node victim selection in ascending value, the
shape of Kubernetes' SelectVictimsOnNode and YuniKorn's preemptor: on each node, take the cheapest eligible
victims until the waiting container fits, choose the node whose victims are worth least, and accept only
when their summed value plus a margin is below the waiting container's value."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

Size = tuple[float, float]  # (memory MB, vcores)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A running container that might yield: its id, node, size, value in seconds (model.value_of_copy)
    and the facts the predicate reads."""

    container_id: str
    node_id: str
    size: Size
    value_s: float
    is_clone: bool
    lead: bool  # the copy of its task expected to finish first
    ask: object  # the ask (job phase) it was placed for
    in_flight: bool = False  # a preemption of it was already asked for


def eligible(c: Candidate, waiting_ask: object, waited_s: float, min_wait_s: float) -> bool:
    """Whether `c` may yield to a container of `waiting_ask` that has waited `waited_s`: a clone, never its
    task's lead copy, never for its own ask (a job's originals are placed before its clones, so such an ask
    is the clone's own relaunch), not already being preempted, and only for a container that has waited
    long enough (a clone's fresh ask looks like an original's until the AM reports it)."""
    return (
        c.is_clone
        and not c.lead
        and not c.in_flight
        and c.ask != waiting_ask
        and waited_s >= min_wait_s
        and c.value_s < float("inf")
    )


@dataclass(frozen=True, slots=True)
class Victims:
    node_id: str
    container_ids: tuple[str, ...]
    value_s: float


def _fits(have: Size, need: Size) -> bool:
    return have[0] >= need[0] and have[1] >= need[1]


def select_victims(
    need: Size,
    value_s: float,
    room: Mapping[str, Size],
    candidates: Iterable[Candidate],
    margin_s: float,
) -> Victims | None:
    """The cheapest set of candidates on one node that frees `need` with the node's `room`, if their value
    plus `margin_s` is below `value_s` (the waiting container's); None otherwise. Candidates are taken as
    given: filter them with `eligible` first. Ties go to the fewer victims, then the node id."""
    by_node: dict[str, list[Candidate]] = {}
    for c in candidates:
        by_node.setdefault(c.node_id, []).append(c)
    best: tuple[float, int, str, tuple[str, ...]] | None = None
    for node_id, cs in sorted(by_node.items()):
        have = room.get(node_id, (0.0, 0.0))
        taken: list[Candidate] = []
        for c in sorted(cs, key=lambda c: (c.value_s, c.container_id)):
            if _fits(have, need):
                break
            taken.append(c)
            have = (have[0] + c.size[0], have[1] + c.size[1])
        if not taken or not _fits(have, need):
            continue
        cost = sum(c.value_s for c in taken)
        key = (cost, len(taken), node_id, tuple(c.container_id for c in taken))
        if best is None or key < best:
            best = key
    if best is None or not best[0] + margin_s < value_s:
        return None
    return Victims(best[2], best[3], best[0])

"""Turning a policy's order of pending asks into placements that fit the mirrored nodes.

The policy decides *which asks first* (FCFS here: application submit time, then the YARN scheduler
key); this module decides *where*, and guarantees the wire-level invariants whatever the policy:
a placement never exceeds a node's free room (capacity minus the larger of the RM's allocation and
the mirrored containers, minus outstanding placements), only RUNNING nodes get placements, locality
is honoured (preferred hosts/racks first; only them when relax_locality is false), no ask goes to a
node its attempt blacklisted (by host, node id or rack), and every ask not fully placed gets a
deferral with a reason.
"""

from __future__ import annotations

from collections.abc import Sequence

from pyscheduler.service.round.plan import DeferralChoice, PlacementChoice, RoundResult
from pyscheduler.service.state.mirror import AskRec, Mirror, NodeRec, application_of_attempt
from pyscheduler.service.state.resources import Res, fits_count, res_add
from pyscheduler.wire import pb

ANY_LOCATION = "*"  # YARN's ResourceRequest.ANY


def fcfs_order(mirror: Mirror) -> list[AskRec]:
    """First come first served: application submit time, then application id, then the YARN key
    (a lower priority number is served first in YARN), then the order the key first appeared."""

    def sort_key(a: AskRec) -> tuple[int, str, int, int, int]:
        app_id = application_of_attempt(a.key[0])
        app = mirror.apps.get(app_id)
        submit = app.submit_time_ms if app is not None else 2**62
        return (submit, app_id, a.key[1], a.key[2], a.arrival)

    return sorted(mirror.asks.values(), key=sort_key)


def _is_preferred(node: NodeRec, locations: Sequence[str]) -> bool:
    return node.host in locations or node.node_id in locations or (bool(node.rack) and node.rack in locations)


def _infeasible(cap: Res, running: Sequence[NodeRec], cap_mem: int, cap_cores: int) -> bool:
    """True when no running node could ever hold one container of `cap`."""
    if cap.memory_mb <= cap_mem and cap.vcores <= cap_cores and not cap.others:
        return False
    return not any(fits_count(cap, n.capacity, 1) for n in running)


def strict_locality(ask: AskRec) -> bool:
    """relax_locality false with real preferences: only the preferred hosts/racks may take it."""
    return not ask.relax_locality and any(loc != ANY_LOCATION for loc in ask.locations)


def blacklisted(node: NodeRec, ask: AskRec) -> bool:
    """The ask's attempt blacklisted the node (its host, its node id or its rack)."""
    return bool(ask.blacklist) and _is_preferred(node, ask.blacklist)


def placer_only(ask: AskRec) -> bool:
    """Asks the decision core cannot place, as it knows no node constraints: strict locality or a
    blacklist. The placer puts them, FCFS, in the room the core's round left (coreround.core_round)."""
    return strict_locality(ask) or bool(ask.blacklist)


def place(
    mirror: Mirror,
    order: Sequence[AskRec],
    placement_reason: int,
    taken: Sequence[PlacementChoice] = (),
) -> RoundResult:
    """Place the asks in `order` first-fit on the running nodes (sorted by id for determinism)."""
    running = sorted(
        (n for n in mirror.nodes.values() if n.state == pb.NODE_STATE_RUNNING), key=lambda n: n.node_id
    )
    free: dict[str, Res] = {n.node_id: n.free() for n in running}
    for t in taken:  # placed earlier in this round (not yet outstanding in the mirror)
        if t.node_id in free:
            free[t.node_id] = res_add(free[t.node_id], t.capability, -t.count)
    cap_mem = max((n.capacity.memory_mb for n in running), default=-1)
    cap_cores = max((n.capacity.vcores for n in running), default=-1)
    # Largest free room in each dimension: an ask above it cannot fit anywhere this round.
    max_mem = max((f.memory_mb for f in free.values()), default=-1)
    max_cores = max((f.vcores for f in free.values()), default=-1)
    placements: list[PlacementChoice] = []
    deferrals: list[DeferralChoice] = []
    for ask in order:
        want = ask.num_containers - ask.outstanding
        if want <= 0:
            continue
        cap = ask.capability
        if _infeasible(cap, running, cap_mem, cap_cores):
            deferrals.append(DeferralChoice(ask.key, pb.REASON_INFEASIBLE, "larger than every running node"))
            continue
        if cap.memory_mb > max_mem or cap.vcores > max_cores:
            deferrals.append(DeferralChoice(ask.key, pb.REASON_WAITING_FOR_RESOURCES, "no node has room now"))
            continue
        locs = [loc for loc in ask.locations if loc != ANY_LOCATION]
        if locs:
            preferred = [n for n in running if _is_preferred(n, locs)]
            candidates = (
                preferred
                if not ask.relax_locality
                else preferred + [n for n in running if not _is_preferred(n, locs)]
            )
        else:
            candidates = running
        if ask.blacklist:
            candidates = [n for n in candidates if not blacklisted(n, ask)]
        reason = pb.REASON_AM_CONTAINER if ask.am_container else placement_reason
        for node in candidates:
            if want <= 0:
                break
            room = free[node.node_id]
            k = fits_count(cap, room, want)
            if k <= 0:
                continue
            free[node.node_id] = Res(
                room.memory_mb - cap.memory_mb * k,
                room.vcores - cap.vcores * k,
                tuple((name, v - k * dict(cap.others).get(name, 0)) for name, v in room.others),
            )
            want -= k
            detail = "AM container" if ask.am_container else "first come first served"
            placements.append(PlacementChoice(ask.key, node.node_id, cap, k, reason, detail))
        if want > 0:
            why = "no preferred node has room" if locs and not ask.relax_locality else "no node has room now"
            why += " off its blacklist" if ask.blacklist else ""
            deferrals.append(
                DeferralChoice(ask.key, pb.REASON_WAITING_FOR_RESOURCES, f"{want} unplaced: {why}")
            )
        if want < ask.num_containers - ask.outstanding:  # something was placed: the maxima shrank
            max_mem = max((f.memory_mb for f in free.values()), default=-1)
            max_cores = max((f.vcores for f in free.values()), default=-1)
    return RoundResult(placements, deferrals)

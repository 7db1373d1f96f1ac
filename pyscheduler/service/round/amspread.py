"""AM containers spread over the running nodes (service/round/coreround.py's choice, documented there): each
goes to the node with the fewest AM containers that has room and suits its locality; and the locality check
of every placement (`preferred`)."""

from __future__ import annotations

import bisect

from pyscheduler.service.round.placer import ANY_LOCATION, blacklisted
from pyscheduler.service.state.mirror import AskKey, AskRec, Mirror
from pyscheduler.service.state.resources import Res, fits_count, res_add
from pyscheduler.wire import pb


def preferred(mirror: Mirror, ask: AskRec, node_id: str) -> bool:
    n = mirror.nodes[node_id]
    if blacklisted(n, ask):
        return False
    if ask.relax_locality:
        return True
    locs = [loc for loc in ask.locations if loc != ANY_LOCATION]
    if not locs:
        return True
    return n.host in locs or n.node_id in locs or (bool(n.rack) and n.rack in locs)


def spread_am_containers(
    mirror: Mirror, counts: dict[tuple[AskKey, str, str], int]
) -> dict[tuple[AskKey, str, str], int]:
    """The core's placements with each AM container moved to the node with the fewest AM containers
    (live and placed earlier in this round) that has room and suits its locality; the core's node
    first among equals, then node id order. Other placements keep their nodes (and their room)."""
    running = sorted(
        n.node_id for n in mirror.nodes.values() if n.state == pb.NODE_STATE_RUNNING and n.node_id
    )
    room = mirror.free_of(running)
    for (key, node_id, _), m in counts.items():  # the room the round's other placements take
        ask = mirror.asks[key]
        if not ask.am_container and node_id in room:
            room[node_id] = res_add(room[node_id], ask.capability, -m)
    ams: dict[str, int] = dict.fromkeys(running, 0)
    for c in mirror.containers.values():
        if c.am_container and c.node_id in ams:
            ams[c.node_id] += 1
    buckets: dict[int, list[str]] = {}  # AM count -> its nodes in id order
    for n in running:
        buckets.setdefault(ams[n], []).append(n)
    out: dict[tuple[AskKey, str, str], int] = {}
    for (key, core_node, reason), m in counts.items():
        ask = mirror.asks[key]
        if not ask.am_container:
            out[(key, core_node, reason)] = out.get((key, core_node, reason), 0) + m
            continue
        for _ in range(m):
            node_id = _fewest_ams(mirror, ask, core_node, buckets, ams, room)
            if node_id in room:
                room[node_id] = res_add(room[node_id], ask.capability, -1)
                buckets[ams[node_id]].remove(node_id)
                ams[node_id] += 1
                bisect.insort(buckets.setdefault(ams[node_id], []), node_id)
            out[(key, node_id, reason)] = out.get((key, node_id, reason), 0) + 1
    return out


def _fewest_ams(
    mirror: Mirror,
    ask: AskRec,
    core_node: str,
    buckets: dict[int, list[str]],
    ams: dict[str, int],
    room: dict[str, Res],
) -> str:
    """The first node, by (AM containers, not the core's node, node id), with room for `ask`."""

    def ok(n: str) -> bool:
        return fits_count(ask.capability, room[n], 1) > 0 and preferred(mirror, ask, n)

    for count in sorted(buckets):
        if core_node in ams and ams[core_node] == count and ok(core_node):
            return core_node
        for n in buckets[count]:
            if ok(n):
                return n
    return core_node  # no node has room: the re-check below defers it

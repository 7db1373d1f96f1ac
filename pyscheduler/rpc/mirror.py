"""The service's mirror of one ResourceManager: nodes, applications, asks, containers, and the
placements sent but not yet confirmed (outstanding).

Batches are validated before they reach `Mirror.apply` (pyscheduler.rpc.validate), so applying
cannot fail half-way: a batch is applied whole or not at all.

Accounting choices (documented here, tested in tests/rpc):
- A node's used resources are the larger, per dimension, of the RM's `allocated` and the sum of
  the containers mirrored on it, so a container that arrives before the node's next upsert is
  never counted as free room.
- A placement stays outstanding (its room reserved on the node and its count subtracted from the
  ask) until the shim confirms it: by containers carrying its placement_id, by PLACEMENT_COMMITTED
  outcomes (the larger of the two counts, never their sum), by dropped outcomes, or until it ages
  out after `outstanding_ttl_s`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pyscheduler.rpc.res import ZERO, Res, res_add, res_max, res_of_wire, same_as_wire
from pyscheduler.wire import pb

AskKey = tuple[str, int, int]  # (attempt_id, priority, allocation_request_id), YARN's scheduler key

_ATTEMPT_RE = re.compile(r"^appattempt_(\d+)_(\d+)_\d+$")


@functools.lru_cache(maxsize=1 << 16)  # called per container and ask; attempt ids repeat
def application_of_attempt(attempt_id: str) -> str:
    """application_<ts>_<seq> for appattempt_<ts>_<seq>_<n>; the attempt id itself otherwise."""
    m = _ATTEMPT_RE.match(attempt_id)
    return f"application_{m.group(1)}_{m.group(2)}" if m else attempt_id


def _index(index: dict[str, set[str]], key: str, item: str) -> None:
    items = index.get(key)
    if items is None:
        index[key] = {item}
    else:
        items.add(item)


def _discard(index: dict[str, set[str]], key: str, item: str) -> None:
    items = index.get(key)
    if items is not None:
        items.discard(item)
        if not items:
            del index[key]


@dataclass(slots=True)
class NodeRec:
    node_id: str
    rack: str
    capacity: Res
    allocated: Res
    state: int
    speed: float
    host: str = ""
    containers_used: Res = ZERO  # sum of mirrored containers on this node
    outstanding: Res = ZERO  # room reserved by placements not yet confirmed
    wire: bytes = b""  # the last upsert as sent: an identical heartbeat is skipped by comparing bytes

    def free(self) -> Res:
        cap, a, c, o = self.capacity, self.allocated, self.containers_used, self.outstanding
        if not (cap.others or a.others or c.others or o.others):  # the common case, without dicts
            return Res(
                cap.memory_mb - max(a.memory_mb, c.memory_mb) - o.memory_mb,
                cap.vcores - max(a.vcores, c.vcores) - o.vcores,
            )
        used = res_max(self.allocated, self.containers_used)
        total = res_add(used, self.outstanding)
        keys = {k for k, _ in self.capacity.others} | {k for k, _ in total.others}
        cap_o, tot_o = dict(self.capacity.others), dict(total.others)
        others = tuple(sorted((k, cap_o.get(k, 0) - tot_o.get(k, 0)) for k in keys))
        return Res(self.capacity.memory_mb - total.memory_mb, self.capacity.vcores - total.vcores, others)


@dataclass(slots=True)
class AppRec:
    application_id: str
    attempt_id: str
    queue: str
    user: str
    name: str
    submit_time_ms: int
    application_type: str


@dataclass(slots=True)
class AskRec:
    key: AskKey
    capability: Res
    num_containers: int
    locations: tuple[str, ...]
    relax_locality: bool
    am_container: bool
    arrival: int  # order in which the key first appeared (FCFS tie-break)
    outstanding: int = 0  # containers placed but not yet confirmed


@dataclass(slots=True)
class ContainerRec:
    container_id: str
    attempt_id: str
    node_id: str
    priority: int
    allocation_request_id: int
    resource: Res
    placement_id: str
    am_container: bool
    start_time_ms: int


@dataclass(slots=True)
class OutstandingPlacement:
    placement_id: str
    key: AskKey
    node_id: str
    capability: Res
    count: int
    created_s: float
    by_containers: int = 0
    by_outcomes: int = 0
    dropped: int = 0
    container_ids: set[str] = field(default_factory=set)

    def remaining(self) -> int:
        return max(self.count - max(self.by_containers, self.by_outcomes) - self.dropped, 0)


class Mirror:
    """Everything the service knows about one RM, rebuilt from scratch by a full resync."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeRec] = {}
        self.apps: dict[str, AppRec] = {}
        self.asks: dict[AskKey, AskRec] = {}
        self.containers: dict[str, ContainerRec] = {}
        self.outstanding: dict[str, OutstandingPlacement] = {}
        self._arrivals = 0
        self.fallback_active = False
        self.rm_time_ms = 0
        # Indexes, so that removing a node or an application costs its own records only.
        self._node_containers: dict[str, set[str]] = {}
        self._app_containers: dict[str, set[str]] = {}
        self._app_asks: dict[str, set[AskKey]] = {}
        # Change tracking for the translation's cached cluster arrays: rows to recompute, and a
        # counter bumped whenever the set of running nodes (the rows themselves) changes.
        self.dirty: set[str] = set()
        self.resource_types: set[str] = set()  # names beyond memory and vcores seen (until a resync)
        self.layout = 0
        self.cache: dict[str, Any] = {}  # the translation's per-mirror caches (rows, jobs)

    # ---- applying a validated batch ------------------------------------------------------------

    def apply(self, batch: Any, node_wires: Sequence[tuple[str, bytes]] | None = None) -> None:
        """Apply a validated batch. `node_wires`: (node_id, wire bytes) of each upserted node, as
        pyscheduler.rpc.validate.state_batch returns them (computed here when not given)."""
        if batch.full_resync:
            self.nodes.clear()
            self.apps.clear()
            self.asks.clear()
            self.containers.clear()
            self._node_containers.clear()
            self._app_containers.clear()
            self._app_asks.clear()
            self.resource_types.clear()
            self.layout += 1
        self.rm_time_ms = batch.rm_time_ms
        self.fallback_active = batch.fallback_active
        upserted = batch.nodes_upserted
        if node_wires is None:
            node_wires = [(n.node_id, n.SerializeToString()) for n in upserted]
        known = self.nodes.get
        for i, (node_id, raw) in enumerate(node_wires):
            old = known(node_id)
            if old is None or old.wire != raw:  # most heartbeats change nothing: one bytes comparison
                self._upsert_node(upserted[i], old, raw)
        for node_id in batch.nodes_removed:
            self._remove_node(node_id)
        for a in batch.apps_upserted:
            self.apps[a.application_id] = AppRec(
                a.application_id, a.attempt_id, a.queue, a.user, a.name, a.submit_time_ms, a.application_type
            )
        for app_id in batch.apps_removed:
            self._remove_app(app_id)
        for ask in batch.asks:
            self._replace_ask(ask)
        for c in batch.containers_allocated:
            self._add_container(c)
        for done in batch.containers_completed:
            self._remove_container(done.container_id)
        for o in batch.outcomes:
            self._outcome(o)
        if batch.full_resync:
            self._recount()

    def _upsert_node(self, n: Any, old: NodeRec | None, raw: bytes) -> None:
        if old is not None:  # update in place: keeps the service's own sums
            old.wire = raw
            cap, alloc, state = n.capacity, n.allocated, n.state
            same_cap, same_alloc = same_as_wire(old.capacity, cap), same_as_wire(old.allocated, alloc)
            if same_cap and same_alloc and old.state == state and old.speed == n.speed and old.rack == n.rack:
                return  # a heartbeat that changes nothing mirrored
            if old.state != state:
                self.layout += 1
            self.dirty.add(old.node_id)
            if not same_cap:
                old.capacity = res_of_wire(cap)
                self.resource_types.update(cap.others)
            if not same_alloc:
                old.allocated = res_of_wire(alloc)
            old.rack, old.state, old.speed = n.rack, state, n.speed
            return
        self.layout += 1
        self.dirty.add(n.node_id)
        self.resource_types.update(n.capacity.others)
        rec = NodeRec(
            node_id=n.node_id,
            rack=n.rack,
            capacity=res_of_wire(n.capacity),
            allocated=res_of_wire(n.allocated),
            state=n.state,
            speed=n.speed,
            host=n.node_id.rsplit(":", 1)[0],
            wire=raw,
        )
        for cid in self._node_containers.get(n.node_id, ()):  # containers reported before their node
            rec.containers_used = res_add(rec.containers_used, self.containers[cid].resource)
        self.nodes[n.node_id] = rec

    def _remove_node(self, node_id: str) -> None:
        if self.nodes.pop(node_id, None) is not None:
            self.layout += 1
        for cid in list(self._node_containers.get(node_id, ())):
            self._remove_container(cid)
        for pid in [p.placement_id for p in self.outstanding.values() if p.node_id == node_id]:
            self._forget_placement(pid)

    def _remove_app(self, app_id: str) -> None:
        self.apps.pop(app_id, None)
        for key in self._app_asks.pop(app_id, set()):
            self.asks.pop(key, None)
        for cid in list(self._app_containers.get(app_id, ())):
            self._remove_container(cid)

    def _replace_ask(self, ask: Any) -> None:
        key: AskKey = (ask.attempt_id, ask.priority, ask.allocation_request_id)
        old = self.asks.get(key)
        app_id = application_of_attempt(ask.attempt_id)
        if ask.num_containers == 0:
            if self.asks.pop(key, None) is not None:
                keys = self._app_asks.get(app_id)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._app_asks[app_id]
            return
        self.resource_types.update(ask.capability.others)
        if old is None:
            self._arrivals += 1
            self._app_asks.setdefault(app_id, set()).add(key)
        self.asks[key] = AskRec(
            key=key,
            capability=Res.of(ask.capability),
            num_containers=ask.num_containers,
            locations=tuple(ask.locations),
            relax_locality=ask.relax_locality,
            am_container=ask.am_container,
            arrival=old.arrival if old is not None else self._arrivals,
            outstanding=old.outstanding if old is not None else 0,
        )

    def _add_container(self, c: Any) -> None:
        cid, attempt, node_id, pid = c.container_id, c.attempt_id, c.node_id, c.placement_id
        if cid in self.containers:
            self._remove_container(cid)
        res = res_of_wire(c.resource)
        self.containers[cid] = ContainerRec(
            cid,
            attempt,
            node_id,
            c.priority,
            c.allocation_request_id,
            res,
            pid,
            c.am_container,
            c.start_time_ms,
        )
        _index(self._node_containers, node_id, cid)
        _index(self._app_containers, application_of_attempt(attempt), cid)
        node = self.nodes.get(node_id)
        if node is not None:
            used = node.containers_used
            node.containers_used = (
                Res(used.memory_mb + res.memory_mb, used.vcores + res.vcores)
                if not (used.others or res.others)
                else res_add(used, res)
            )
            self.dirty.add(node_id)
        p = self.outstanding.get(pid) if pid else None
        if p is not None and cid not in p.container_ids:
            before = p.remaining()
            p.container_ids.add(cid)
            p.by_containers += 1
            self._settle(p, before)

    def _remove_container(self, container_id: str) -> None:
        rec = self.containers.pop(container_id, None)
        if rec is None:
            return
        _discard(self._node_containers, rec.node_id, container_id)
        _discard(self._app_containers, application_of_attempt(rec.attempt_id), container_id)
        node = self.nodes.get(rec.node_id)
        if node is not None:
            node.containers_used = res_add(node.containers_used, rec.resource, -1)
            self.dirty.add(rec.node_id)

    def _outcome(self, o: Any) -> None:
        p = self.outstanding.get(o.placement_id)
        if p is None:
            return
        before = p.remaining()
        if o.kind == pb.PLACEMENT_COMMITTED:
            p.by_outcomes += o.containers if o.containers > 0 else before
        else:
            p.dropped += o.containers if o.containers > 0 else before
        self._settle(p, before)

    # ---- outstanding placements ----------------------------------------------------------------

    def add_placement(self, p: OutstandingPlacement) -> None:
        self.outstanding[p.placement_id] = p
        node = self.nodes[p.node_id]
        node.outstanding = res_add(node.outstanding, p.capability, p.count)
        self.dirty.add(p.node_id)
        ask = self.asks.get(p.key)
        if ask is not None:
            ask.outstanding += p.count

    def _settle(self, p: OutstandingPlacement, before: int) -> None:
        """Release the room of the containers of `p` that are no longer outstanding."""
        after = p.remaining()
        released = before - after
        if released > 0:
            node = self.nodes.get(p.node_id)
            if node is not None:
                node.outstanding = res_add(node.outstanding, p.capability, -released)
                self.dirty.add(p.node_id)
            ask = self.asks.get(p.key)
            if ask is not None:
                ask.outstanding = max(ask.outstanding - released, 0)
        if after == 0:
            del self.outstanding[p.placement_id]

    def _forget_placement(self, placement_id: str) -> None:
        p = self.outstanding.get(placement_id)
        if p is not None:
            before = p.remaining()
            p.dropped += before
            self._settle(p, before)

    def expire(self, now_s: float, ttl_s: float) -> int:
        """Drop placements older than ttl_s that the shim never confirmed; returns how many."""
        old = [p.placement_id for p in self.outstanding.values() if now_s - p.created_s > ttl_s]
        for pid in old:
            self._forget_placement(pid)
        return len(old)

    def _recount(self) -> None:
        """After a full resync: recompute per-node and per-ask sums from the mirrored records."""
        self.layout += 1
        for rec in self.nodes.values():
            rec.containers_used = ZERO
            rec.outstanding = ZERO
        for c in self.containers.values():
            node = self.nodes.get(c.node_id)
            if node is not None:
                node.containers_used = res_add(node.containers_used, c.resource)
        for a in self.asks.values():
            a.outstanding = 0
        for pid in list(self.outstanding):
            p = self.outstanding[pid]
            node = self.nodes.get(p.node_id)
            if node is None:
                del self.outstanding[pid]
                continue
            node.outstanding = res_add(node.outstanding, p.capability, p.remaining())
            ask = self.asks.get(p.key)
            if ask is not None:
                ask.outstanding += p.remaining()

    # ---- inspection ----------------------------------------------------------------------------

    def app_ids_with_asks(self) -> set[str]:
        return set(self._app_asks)

    def containers_on(self, node_id: str) -> int:
        return len(self._node_containers.get(node_id, ()))

    def containers_of(self, app_id: str) -> int:
        return len(self._app_containers.get(app_id, ()))

    def dump(self) -> dict[str, Any]:
        """A canonical JSON-able dump of the mirrored RM state (not the service's own bookkeeping)."""
        return {
            "nodes": {
                n.node_id: {
                    "rack": n.rack,
                    "capacity": n.capacity.to_json(),
                    "allocated": n.allocated.to_json(),
                    "state": pb.NodeState.Name(n.state),
                    "speed": n.speed,
                }
                for n in sorted(self.nodes.values(), key=lambda n: n.node_id)
            },
            "apps": {
                a.application_id: {
                    "attempt_id": a.attempt_id,
                    "queue": a.queue,
                    "user": a.user,
                    "name": a.name,
                    "submit_time_ms": a.submit_time_ms,
                    "application_type": a.application_type,
                }
                for a in sorted(self.apps.values(), key=lambda a: a.application_id)
            },
            "asks": [
                {
                    "attempt_id": k[0],
                    "priority": k[1],
                    "allocation_request_id": k[2],
                    "capability": a.capability.to_json(),
                    "num_containers": a.num_containers,
                    "locations": list(a.locations),
                    "relax_locality": a.relax_locality,
                    "am_container": a.am_container,
                }
                for k, a in sorted(self.asks.items())
            ],
            "containers": {
                c.container_id: {
                    "attempt_id": c.attempt_id,
                    "node_id": c.node_id,
                    "priority": c.priority,
                    "allocation_request_id": c.allocation_request_id,
                    "resource": c.resource.to_json(),
                    "placement_id": c.placement_id,
                    "am_container": c.am_container,
                    "start_time_ms": c.start_time_ms,
                }
                for c in sorted(self.containers.values(), key=lambda c: c.container_id)
            },
        }

"""The service's mirror of one ResourceManager: nodes, applications, asks, containers, and the
placements sent but not yet confirmed (outstanding).

Batches are validated before they reach `Mirror.apply` (pyscheduler.rpc.validate), so applying
cannot fail half-way: a batch is applied whole or not at all.

Accounting choices (documented here, tested in tests/rpc):
- A node's used resources are the larger, per dimension, of the RM's `allocated` and the sum of
  the containers mirrored on it, so a container that arrives before the node's next upsert is
  never counted as free room.
- The per-node figures live in numeric arrays (pyscheduler.rpc.nodearrays), one row per node, so a
  commit wave and the core's view of free room are array operations; `NodeRec.free()` reads them.
- A placement stays outstanding (its room reserved on the node and its count subtracted from the
  ask) until the shim confirms it: by containers carrying its placement_id, by PLACEMENT_COMMITTED
  outcomes (the larger of the two counts, never their sum), by dropped outcomes, or until it ages
  out after `outstanding_ttl_s`.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pyscheduler.core.queues import QueueBook, book_of_wire
from pyscheduler.rpc.nodearrays import ALLOC, CAP, OUT, USED, NodeArrays
from pyscheduler.rpc.records import (
    AppRec,
    AskKey,
    AskRec,
    ContainerRec,
    NodeRec,
    OutstandingPlacement,
    Release,
    application_of_attempt,
    index_add,
    index_discard,
    records,
    rolled_tokens,
)
from pyscheduler.rpc.res import Res, interned, res_of_wire, same_as_wire
from pyscheduler.wire import pb

__all__ = [
    "AppRec",
    "AskKey",
    "AskRec",
    "ContainerRec",
    "Mirror",
    "NodeRec",
    "OutstandingPlacement",
    "application_of_attempt",
    "records",
]


@dataclass(slots=True)
class _Allocs:
    """New allocations (memory, vcores) of a batch's nodes, by row: one array write for the lot."""

    rows: list[int]
    memory_mb: list[int]
    vcores: list[int]


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
        # The RM's leaf queues and their shares (StateBatch.queues), or None: no queue tree
        self.queue_book: QueueBook | None = None
        # Indexes, so that removing an application costs its own records only: containers by attempt,
        # attempts by application (one set per attempt, not per application: no id parsing per
        # container). Removing a node (rare) scans the containers instead; containers whose node was
        # not mirrored when they came are indexed by node until it comes (`_orphans`).
        self._attempt_containers: dict[str, set[str]] = {}
        self._app_attempts: dict[str, set[str]] = {}
        self._orphans: dict[str, set[str]] = {}
        self._app_asks: dict[str, set[AskKey]] = {}
        # Change tracking for the translation's cached cluster arrays: rows to recompute, and a
        # counter bumped whenever the set of running nodes (the rows themselves) changes.
        self.dirty: set[str] = set()
        self.resource_types: set[str] = set()  # names beyond memory and vcores seen (until a resync)
        self.layout = 0
        self.cache: dict[str, Any] = {}  # the translation's per-mirror caches (rows, jobs)
        self.arrays = NodeArrays()  # the nodes' numeric figures, one row per node (NodeRec.row)

    # ---- applying a validated batch ------------------------------------------------------------

    def apply(
        self,
        batch: Any,
        node_wires: Sequence[tuple[str, bytes]] | None = None,
        containers: Sequence[ContainerRec] | None = None,
    ) -> None:
        """Apply a validated batch. `node_wires`: (node_id, wire bytes) of each upserted node, as
        pyscheduler.rpc.validate.state_batch returns them; `containers`: the records of
        `containers_allocated`, as it collects them (both computed here when not given)."""
        if batch.full_resync:
            self.nodes.clear()
            self.apps.clear()
            self.asks.clear()
            self.containers.clear()
            self._attempt_containers.clear()
            self._app_attempts.clear()
            self._orphans.clear()
            self._app_asks.clear()
            self.resource_types.clear()
            self.arrays.clear()
            self.layout += 1
        self.rm_time_ms = batch.rm_time_ms
        self.fallback_active = batch.fallback_active
        if batch.queues_set:
            self.queue_book = book_of_wire(batch.queues) if batch.queues else None
        upserted = batch.nodes_upserted
        if node_wires is None:
            node_wires = [(n.node_id, n.SerializeToString()) for n in upserted]
        known, allocs = self.nodes.get, _Allocs([], [], [])
        for i, (node_id, raw) in enumerate(node_wires):
            old = known(node_id)
            if old is None or old.wire != raw:  # most heartbeats change nothing: one bytes comparison
                self._upsert_node(upserted[i], old, raw, allocs)
        if allocs.rows:
            self.arrays.put_plain(ALLOC, allocs.rows, allocs.memory_mb, allocs.vcores)
        if batch.nodes_removed:
            self._remove_nodes(batch.nodes_removed)
        for a in batch.apps_upserted:
            old_app = self.apps.get(a.application_id)
            self.apps[a.application_id] = AppRec(
                a.application_id,
                a.attempt_id,
                a.queue,
                a.user,
                a.name,
                a.submit_time_ms,
                a.application_type,
                rolled_tokens(old_app, a.attempt_id, a.amrm_token_sha256),
                a.priority,
            )
        if batch.apps_removed:
            self._remove_apps(batch.apps_removed)
        for ask in batch.asks:
            self._replace_ask(ask)
        if batch.containers_allocated:
            self._add_containers(
                containers if containers is not None else records(batch.containers_allocated)
            )
        if batch.containers_completed:
            self._remove_containers([d.container_id for d in batch.containers_completed])
        for o in batch.outcomes:
            self._outcome(o)
        if batch.full_resync:
            self._recount()

    def _upsert_node(self, n: Any, old: NodeRec | None, raw: bytes, allocs: _Allocs) -> None:
        """Mirror one upserted node. A new allocation of memory and vcores only (the usual change: the
        containers on the node changed) goes to `allocs`, written to the arrays for all nodes at once."""
        if old is not None:  # update in place: keeps the service's own sums
            old.wire = raw
            cap, alloc, state = n.capacity, n.allocated, n.state
            prev, mem, cores, others = old.allocated, alloc.memory_mb, alloc.vcores, alloc.others
            plain = not (others or prev.others)
            same_alloc = (
                prev.memory_mb == mem and prev.vcores == cores if plain else same_as_wire(prev, alloc)
            )
            same_cap = same_as_wire(old.capacity, cap)
            if same_cap and same_alloc and old.state == state and old.speed == n.speed and old.rack == n.rack:
                return  # a heartbeat that changes nothing mirrored
            if old.state != state:
                self.layout += 1
            self.dirty.add(old.node_id)
            if not same_cap:  # may make the node a row of the core's cluster or not: a new layout
                self.layout += 1
                old.capacity = res_of_wire(cap)
                self.resource_types.update(cap.others)
                self.arrays.put(CAP, old.row, old.capacity)
            if not same_alloc:
                if plain:
                    old.allocated = interned(mem, cores)
                    allocs.rows.append(old.row)
                    allocs.memory_mb.append(mem)
                    allocs.vcores.append(cores)
                else:
                    old.allocated = res_of_wire(alloc)
                    self.arrays.put(ALLOC, old.row, old.allocated)
            old.rack, old.state, old.speed = n.rack, state, n.speed
            return
        self.layout += 1
        self.dirty.add(n.node_id)
        self.resource_types.update(n.capacity.others)
        arrays = self.arrays
        row = arrays.take_row()
        rec = NodeRec(
            n.node_id,
            n.rack,
            res_of_wire(n.capacity),
            res_of_wire(n.allocated),
            n.state,
            n.speed,
            n.node_id.rsplit(":", 1)[0],
            raw,
            row,
            arrays,
        )
        arrays.put(CAP, row, rec.capacity)
        arrays.put(ALLOC, row, rec.allocated)
        for cid in self._orphans.pop(n.node_id, ()):  # containers reported before their node
            arrays.add(USED, row, self.containers[cid].resource)
            arrays.count[row] += 1
        self.nodes[n.node_id] = rec

    def _remove_nodes(self, node_ids: Collection[str]) -> None:
        """Forget nodes, the containers on them and the placements sent to them (one scan for all)."""
        gone = set(node_ids)
        for node_id in gone:
            rec = self.nodes.pop(node_id, None)
            if rec is not None:
                self.arrays.release(rec.row)
                self.layout += 1
        self._remove_containers([cid for cid, c in self.containers.items() if c.node_id in gone])
        for pid in [p.placement_id for p in self.outstanding.values() if p.node_id in gone]:
            self._forget_placement(pid)

    def _remove_apps(self, app_ids: Iterable[str]) -> None:
        """Forget applications, their asks and their containers (one array update for all)."""
        attempts, gone = self._attempt_containers, list[str]()
        for app_id in app_ids:
            self.apps.pop(app_id, None)
            for key in self._app_asks.pop(app_id, set()):
                self.asks.pop(key, None)
            gone.extend(c for a in list(self._app_attempts.get(app_id, ())) for c in attempts.get(a, ()))
        self._remove_containers(gone)

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
            blacklist=tuple(ask.blacklist),
        )

    def _add_containers(self, recs: Sequence[ContainerRec]) -> None:
        """Add the batch's containers: their records and indexes, then, once for the lot, the node sums
        (NodeArrays.add_many) and each placement's confirmation count (the room released by k
        containers of one placement at once equals that of k steps of one: `remaining` only depends on
        the count, clipped at 0). A container reported again replaces its earlier record."""
        ids = [r[0] for r in recs]
        containers, outstanding = self.containers, self.outstanding
        if len(set(ids)) != len(ids) or not containers.keys().isdisjoint(ids):  # re-reports: in order
            for r in recs:
                if r.container_id in containers:
                    self._remove_container(r.container_id)
                self._add_containers([r])
            return
        containers.update(zip(ids, recs, strict=True))
        by_attempt = self._attempt_containers
        for cid, attempt in zip(ids, [r[1] for r in recs], strict=True):
            items = by_attempt.get(attempt)
            if items is None:
                by_attempt[attempt] = {cid}
                index_add(self._app_attempts, application_of_attempt(attempt), attempt)
            else:
                items.add(cid)
        node_ids = [r[2] for r in recs]
        amounts = [r[5] for r in recs]
        pids = [r[6] for r in recs]
        nodes = self.nodes
        if nodes.keys() >= set(node_ids):  # every node mirrored (the usual case)
            rows = [nodes[n].row for n in node_ids]
            self.arrays.add_many(USED, rows, amounts)
            self.dirty.update(node_ids)
        else:
            known = [i for i, n in enumerate(node_ids) if n in nodes]
            rows = [nodes[node_ids[i]].row for i in known]
            self.arrays.add_many(USED, rows, [amounts[i] for i in known])
            self.dirty.update(node_ids[i] for i in known)
            for i in set(range(len(recs))).difference(known):
                index_add(self._orphans, node_ids[i], ids[i])
        self.arrays.count_add(rows)
        confirmed: dict[str, int] = {}
        for cid, pid in zip(ids, pids, strict=True):
            p = outstanding.get(pid) if pid else None
            if p is not None and cid not in p.container_ids:
                p.container_ids.add(cid)
                confirmed[pid] = confirmed.get(pid, 0) + 1
        release = Release()
        for pid, k in confirmed.items():
            p = outstanding[pid]
            before = p.remaining()
            p.by_containers += k
            self._settle(p, before, release)
        self.arrays.add_many(OUT, release.rows, release.amounts, release.times)

    def _remove_container(self, container_id: str) -> None:
        self._remove_containers([container_id])

    def _remove_containers(self, container_ids: Iterable[str]) -> None:
        """Forget containers (unknown ids are ignored); their nodes' sums change once for the lot."""
        containers, nodes, by_attempt = self.containers, self.nodes, self._attempt_containers
        rows: list[int] = []
        amounts: list[Res] = []
        for cid in container_ids:
            rec = containers.pop(cid, None)
            if rec is None:
                continue
            items = by_attempt.get(rec.attempt_id)
            if items is not None:
                items.discard(cid)
                if not items:
                    del by_attempt[rec.attempt_id]
                    index_discard(self._app_attempts, application_of_attempt(rec.attempt_id), rec.attempt_id)
            node = nodes.get(rec.node_id)
            if node is not None:
                rows.append(node.row)
                amounts.append(rec.resource)
                self.dirty.add(rec.node_id)
            else:
                index_discard(self._orphans, rec.node_id, cid)
        self.arrays.add_many(USED, rows, amounts, sign=-1)
        self.arrays.count_add(rows, -1)

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
        self.add_placements([p])

    def add_placements(self, ps: Sequence[OutstandingPlacement]) -> None:
        """Hold room for placements just sent (their nodes must be mirrored)."""
        rows = [self.nodes[p.node_id].row for p in ps]
        asks, outstanding, dirty = self.asks, self.outstanding, self.dirty
        for p in ps:
            outstanding[p.placement_id] = p
            dirty.add(p.node_id)
            ask = asks.get(p.key)
            if ask is not None:
                ask.outstanding += p.count
        self.arrays.add_many(OUT, rows, [p.capability for p in ps], [p.count for p in ps])

    def _settle(self, p: OutstandingPlacement, before: int, release: Release | None = None) -> None:
        """Release the room of the containers of `p` that are no longer outstanding (into `release`
        when given, to be applied at once with others)."""
        after = p.remaining()
        released = before - after
        if released > 0:
            node = self.nodes.get(p.node_id)
            if node is not None:
                if release is None:
                    self.arrays.add(OUT, node.row, p.capability, -released)
                else:
                    release.rows.append(node.row)
                    release.amounts.append(p.capability)
                    release.times.append(-released)
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
        arrays = self.arrays
        arrays.t[USED][:] = 0
        arrays.t[OUT][:] = 0
        arrays.count[:] = 0
        rows, amounts = [], []
        for c in self.containers.values():
            node = self.nodes.get(c.node_id)
            if node is not None:
                rows.append(node.row)
                amounts.append(c.resource)
                arrays.count[node.row] += 1
            else:
                index_add(self._orphans, c.node_id, c.container_id)
        arrays.add_many(USED, rows, amounts)
        for a in self.asks.values():
            a.outstanding = 0
        for pid in list(self.outstanding):
            p = self.outstanding[pid]
            node = self.nodes.get(p.node_id)
            if node is None:
                del self.outstanding[pid]
                continue
            arrays.add(OUT, node.row, p.capability, p.remaining())
            ask = self.asks.get(p.key)
            if ask is not None:
                ask.outstanding += p.remaining()

    # ---- inspection ----------------------------------------------------------------------------

    def free_of(self, node_ids: Collection[str]) -> dict[str, Res]:
        """`NodeRec.free()` of each of the mirrored nodes `node_ids`, computed at once."""
        if len(self.arrays.names) > 2:  # further resource types: node by node
            return {nid: self.nodes[nid].free() for nid in node_ids}
        ids = list(node_ids)
        rows = np.fromiter((self.nodes[nid].row for nid in ids), np.intp, len(ids))
        free = self.arrays.free_rows(rows, ("memory_mb", "vcores")).tolist()
        return {nid: Res(mem, cores) for nid, (mem, cores) in zip(ids, free, strict=True)}

    def room_soon_of(self, node_ids: Collection[str]) -> dict[str, Res]:
        """Memory and vcores of each of the mirrored nodes `node_ids` once the RM's `allocated` catches up
        with the mirrored containers: capacity - containers - outstanding. A container the shim reported
        gone (a preempted clone) keeps its room in the RM's figures until its NodeManager's next
        heartbeat; rpc/yielding.py must count that room as coming, not free it a second time."""
        ids = list(node_ids)
        rows = np.fromiter((self.nodes[nid].row for nid in ids), np.intp, len(ids))
        free = self.arrays.free_rows(rows, ("memory_mb", "vcores"), rm_allocated=False).tolist()
        return {nid: Res(mem, cores) for nid, (mem, cores) in zip(ids, free, strict=True)}

    def app_ids_with_asks(self) -> set[str]:
        return set(self._app_asks)

    def containers_on(self, node_id: str) -> int:
        node = self.nodes.get(node_id)
        return int(self.arrays.count[node.row]) if node is not None else len(self._orphans.get(node_id, ()))

    def containers_of(self, app_id: str) -> int:
        return sum(len(self._attempt_containers[a]) for a in self._app_attempts.get(app_id, ()))

    def containers_of_attempt(self, attempt_id: str) -> list[ContainerRec]:
        """The mirrored containers of one application attempt (the index, not a scan of all)."""
        return [self.containers[cid] for cid in self._attempt_containers.get(attempt_id, ())]

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
                    "priority": a.priority,
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
                    "blacklist": list(a.blacklist),
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

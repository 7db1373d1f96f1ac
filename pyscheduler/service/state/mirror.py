"""The service's mirror of one ResourceManager: nodes, applications, asks, containers, and the
placements sent but not yet confirmed (outstanding).

Batches are validated before they reach `Mirror.apply` (pyscheduler.service.rmproxy.validate), so applying
cannot fail half-way: a batch is applied whole or not at all.

Accounting choices (documented here, tested in tests/rpc):
- A node's used resources are the larger, per dimension, of the RM's `allocated` and the sum of
  the containers mirrored on it, so a container that arrives before the node's next upsert is
  never counted as free room.
- The per-node figures live in numeric arrays (pyscheduler.service.state.nodearrays), one row per node, so a
  commit wave and the core's view of free room are array operations; `NodeRec.free()` reads them.
- A placement stays outstanding (its room reserved on the node and its count subtracted from the
  ask) until the shim confirms it: by containers carrying its placement_id, by PLACEMENT_COMMITTED
  outcomes (the larger of the two counts, never their sum), by dropped outcomes, or until it ages
  out after `outstanding_ttl_s`.

The containers and outstanding placements, and the sums they move, are kept by `MirrorBook`
(pyscheduler.service.state.mirrorbook), which `Mirror` extends with the nodes, applications and asks.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from pyscheduler.core.queues import QueueBook, book_of_wire
from pyscheduler.estimate.stats import RunningStats
from pyscheduler.service.state.mirrorbook import MirrorBook
from pyscheduler.service.state.nodearrays import ALLOC, CAP, USED
from pyscheduler.service.state.records import (
    AppRec,
    AskKey,
    AskRec,
    ContainerRec,
    NodeRec,
    OutstandingPlacement,
    application_of_attempt,
    records,
    rolled_tokens,
)
from pyscheduler.service.state.resources import Res, interned, res_of_wire, same_as_wire
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


FINISHED_KEPT = 10_000  # finished applications' run times awaiting `take_finished` (the oldest dropped)


class FinishedRuns(NamedTuple):
    """An application that left the RM with containers that succeeded: its name, queue and type as the RM
    knows them, and its run times per YARN priority (the recurring-job history's input,
    service/state/runhistory.py)."""

    application_id: str
    name: str
    queue: str
    run_times: dict[int, RunningStats]
    application_type: str = ""


@dataclass(slots=True)
class _Allocs:
    """New allocations (memory, vcores) of a batch's nodes, by row: one array write for the lot."""

    rows: list[int]
    memory_mb: list[int]
    vcores: list[int]


class Mirror(MirrorBook):
    """Everything the service knows about one RM, rebuilt from scratch by a full resync."""

    def __init__(self) -> None:
        super().__init__()  # nodes, asks, containers, outstanding placements, node arrays (MirrorBook)
        self.apps: dict[str, AppRec] = {}
        self._arrivals = 0
        self.fallback_active = False
        self.rm_time_ms = 0
        # The RM's leaf queues and their shares (StateBatch.queues), or None: no queue tree
        self.queue_book: QueueBook | None = None
        self._app_asks: dict[str, set[AskKey]] = {}  # keys of the asks, by application
        self.resource_types: set[str] = set()  # names beyond memory and vcores seen (until a resync)
        # the preemptions the plans asked for and not yet expired: container id -> (time ms, node id)
        # (service/round/yielding.py `in_flight`)
        self.kills_in_flight: dict[str, tuple[int, str]] = {}
        # Run times of the containers that succeeded, per (application, YARN priority): an application
        # without an AM helper is profiled from its own containers (`record_run_times`)
        self.run_times: dict[tuple[str, int], RunningStats] = {}
        self.finished: deque[FinishedRuns] = deque(maxlen=FINISHED_KEPT)  # apps_removed with run times

    # ---- applying a validated batch ------------------------------------------------------------

    def apply(
        self,
        batch: Any,
        node_wires: Sequence[tuple[str, bytes]] | None = None,
        containers: Sequence[ContainerRec] | None = None,
    ) -> None:
        """Apply a validated batch. `node_wires`: (node_id, wire bytes) of each upserted node, as
        pyscheduler.service.rmproxy.validate.state_batch returns them; `containers`: the records of
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
            self.record_run_times(batch.containers_completed)
            self._remove_containers([d.container_id for d in batch.containers_completed])
        for o in batch.outcomes:
            self._outcome(o)
        if batch.full_resync:
            self._recount()
            self.run_times = {k: v for k, v in self.run_times.items() if k[0] in self.apps}

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

    def record_run_times(self, completions: Iterable[Any]) -> None:
        """The run time (finish - start) of each task container that exited successfully, into
        `run_times` of its application and priority: θ and σ of a phase no AM helper describes (DollyMP
        Sec. 5.2 estimates them from the first tasks of the phase). AM containers, failed, killed and
        preempted ones say nothing of a task's run time and are left out."""
        for d in completions:
            rec = self.containers.get(d.container_id)
            if rec is None or rec.am_container or d.exit_kind != pb.CONTAINER_EXIT_SUCCESS:
                continue
            if rec.start_time_ms > 0 and d.finish_time_ms >= rec.start_time_ms:
                key = (application_of_attempt(rec.attempt_id), rec.priority)
                self.run_times.setdefault(key, RunningStats()).add(
                    (d.finish_time_ms - rec.start_time_ms) / 1000.0
                )

    def _remove_apps(self, app_ids: Iterable[str]) -> None:
        """Forget applications, their asks and their containers (one array update for all)."""
        attempts, gone = self._attempt_containers, list[str]()
        for app_id in app_ids:
            rec = self.apps.pop(app_id, None)
            runs = {k[1]: self.run_times.pop(k) for k in [k for k in self.run_times if k[0] == app_id]}
            if rec is not None and runs:
                self.finished.append(FinishedRuns(app_id, rec.name, rec.queue, runs, rec.application_type))
            for key in self._app_asks.pop(app_id, set()):
                self.asks.pop(key, None)
            gone.extend(c for a in list(self._app_attempts.get(app_id, ())) for c in attempts.get(a, ()))
        self._remove_containers(gone)

    def take_finished(self) -> list[FinishedRuns]:
        """The applications removed since the last call that had containers succeed (then forgotten)."""
        out = list(self.finished)
        self.finished.clear()
        return out

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
        heartbeat; service/round/yielding.py must count that room as coming, not free it a second time."""
        ids = list(node_ids)
        rows = np.fromiter((self.nodes[nid].row for nid in ids), np.intp, len(ids))
        free = self.arrays.free_rows(rows, ("memory_mb", "vcores"), rm_allocated=False).tolist()
        return {nid: Res(mem, cores) for nid, (mem, cores) in zip(ids, free, strict=True)}

    def app_ids_with_asks(self) -> set[str]:
        return set(self._app_asks)

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

"""A mirror's containers and outstanding placements (sent but not yet confirmed), and the node and ask
sums they move: the bookkeeping half of `pyscheduler.service.state.mirror.Mirror`, whose docstring states the
accounting rules (a container's room counts on its node once mirrored; a placement holds its room on the
node and its count on the ask until confirmed, dropped, or aged out)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pyscheduler.service.state.nodearrays import OUT, USED, NodeArrays
from pyscheduler.service.state.records import (
    AskKey,
    AskRec,
    ContainerRec,
    NodeRec,
    OutstandingPlacement,
    Release,
    application_of_attempt,
    index_add,
    index_discard,
)
from pyscheduler.service.state.resources import Res
from pyscheduler.wire import pb


class MirrorBook:
    """The nodes, asks, containers and outstanding placements of a mirror, the containers' indexes, and the
    per-node figures (NodeArrays); `Mirror` (pyscheduler.service.state.mirror) fills the nodes and asks from
    the RM's batches, this class keeps the containers and placements and the sums they move."""

    def __init__(self) -> None:
        self.nodes: dict[str, NodeRec] = {}
        self.asks: dict[AskKey, AskRec] = {}
        self.containers: dict[str, ContainerRec] = {}
        self.outstanding: dict[str, OutstandingPlacement] = {}
        # Indexes, so that removing an application costs its own records only: containers by attempt,
        # attempts by application (one set per attempt, not per application: no id parsing per
        # container). Removing a node (rare) scans the containers instead; containers whose node was
        # not mirrored when they came are indexed by node until it comes (`_orphans`).
        self._attempt_containers: dict[str, set[str]] = {}
        self._app_attempts: dict[str, set[str]] = {}
        self._orphans: dict[str, set[str]] = {}
        # Change tracking for the translation's cached cluster arrays: rows to recompute, and a
        # counter bumped whenever the set of running nodes (the rows themselves) changes.
        self.dirty: set[str] = set()
        self.layout = 0
        self.arrays = NodeArrays()  # the nodes' numeric figures, one row per node (NodeRec.row)

    # ---- containers ----------------------------------------------------------------------------

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

    def containers_on(self, node_id: str) -> int:
        node = self.nodes.get(node_id)
        return int(self.arrays.count[node.row]) if node is not None else len(self._orphans.get(node_id, ()))

    def containers_of(self, app_id: str) -> int:
        return sum(len(self._attempt_containers[a]) for a in self._app_attempts.get(app_id, ()))

    def containers_of_attempt(self, attempt_id: str) -> list[ContainerRec]:
        """The mirrored containers of one application attempt (the index, not a scan of all)."""
        return [self.containers[cid] for cid in self._attempt_containers.get(attempt_id, ())]

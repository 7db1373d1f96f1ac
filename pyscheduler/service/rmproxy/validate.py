"""Validation of wire messages before anything is applied.

Each check raises `InvalidMessage` with the path of the offending field in protobuf text form,
e.g. `nodes_upserted[2].capacity.memory_mb: must be >= 0`; the servicer turns it into
grpc.StatusCode.INVALID_ARGUMENT with that message. A batch is checked whole before the mirror is
touched, so a rejected batch changes nothing.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from typing import Any

from pyscheduler.core.queues import book_of_wire
from pyscheduler.echo import shown
from pyscheduler.service.state.mirror import ContainerRec
from pyscheduler.service.state.resources import Res, interned
from pyscheduler.wire import pb


class InvalidMessage(ValueError):
    """A wire message that breaks the contract; `path` names the field."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def nonempty(value: str, path: str) -> None:
    if not value:
        raise InvalidMessage(path, "must be non-empty")


def at_least(value: int, low: int, path: str) -> None:
    if value < low:
        raise InvalidMessage(path, f"must be >= {low}, got {value}")


def finite_nonneg(value: float, path: str) -> None:
    if not math.isfinite(value):
        raise InvalidMessage(path, f"must be a finite number, got {value!r}")
    if value < 0:
        raise InvalidMessage(path, f"must be >= 0, got {value!r}")


def enum_value(value: int, enum_type: Any, path: str) -> None:
    if value == 0:
        raise InvalidMessage(path, f"must be set ({enum_type.Name(0)} is not allowed)")
    if value not in enum_type.values():
        raise InvalidMessage(path, f"unknown {enum_type.DESCRIPTOR.name} value {value}")


def resource(r: Any, path: str, parent: Any, field_name: str, required: bool = True) -> None:
    if not parent.HasField(field_name):
        if required:
            raise InvalidMessage(path, "is required")
        return
    if r.memory_mb < 0:
        raise InvalidMessage(f"{path}.memory_mb", f"must be >= 0, got {r.memory_mb}")
    if r.vcores < 0:
        raise InvalidMessage(f"{path}.vcores", f"must be >= 0, got {r.vcores}")
    # a protobuf map's order is not kept on the wire: by name, so that the first error named is the same on
    # both sides of a socket (tests/rpc/test_fuzz.py compares the service's answer with this, in process)
    for name, amount in sorted(r.others.items()):
        if not name:
            raise InvalidMessage(f"{path}.others", "resource type names must be non-empty")
        if amount < 0:
            raise InvalidMessage(f"{path}.others[{shown(name)}]", f"must be >= 0, got {amount}")


def _ids(values: Iterable[str], path: str) -> None:
    seen: set[str] = set()
    for i, v in enumerate(values):
        if not v:
            raise InvalidMessage(f"{path}[{i}]", "must be non-empty")
        if v in seen:
            raise InvalidMessage(f"{path}[{i}]", f"duplicate id {shown(v)}")
        seen.add(v)


_NODE_STATES = frozenset(v for v in pb.NodeState.values() if v != 0)


def _node_ok(n: Any) -> bool:
    """True for a node that `node` would accept (no others, allocated set or not); False: check fully."""
    cap, alloc = n.capacity, n.allocated
    return bool(
        n.node_id
        and n.HasField("capacity")
        and cap.memory_mb >= 0
        and cap.vcores >= 0
        and not cap.others
        and alloc.memory_mb >= 0
        and alloc.vcores >= 0
        and not alloc.others
        and n.state in _NODE_STATES
        and 0.0 <= n.speed < math.inf  # False for NaN
    )


_EXIT_KINDS = frozenset(v for v in pb.ContainerExitKind.values() if v != 0)


def node(n: Any, p: str) -> None:
    nonempty(n.node_id, f"{p}.node_id")
    resource(n.capacity, f"{p}.capacity", n, "capacity")
    resource(n.allocated, f"{p}.allocated", n, "allocated", required=False)
    enum_value(n.state, pb.NodeState, f"{p}.state")
    finite_nonneg(n.speed, f"{p}.speed")


def app(a: Any, p: str) -> None:
    nonempty(a.application_id, f"{p}.application_id")
    at_least(a.submit_time_ms, 0, f"{p}.submit_time_ms")


def ask(a: Any, p: str) -> None:
    nonempty(a.attempt_id, f"{p}.attempt_id")
    at_least(a.priority, 0, f"{p}.priority")
    at_least(a.allocation_request_id, -1, f"{p}.allocation_request_id")  # YARN's default id is -1
    at_least(a.num_containers, 0, f"{p}.num_containers")
    if a.num_containers > 0:
        resource(a.capability, f"{p}.capability", a, "capability")
    for j, loc in enumerate(a.locations):
        nonempty(loc, f"{p}.locations[{j}]")
    for j, place in enumerate(a.blacklist):
        nonempty(place, f"{p}.blacklist[{j}]")


def container(c: Any, p: str) -> None:
    nonempty(c.container_id, f"{p}.container_id")
    nonempty(c.attempt_id, f"{p}.attempt_id")
    nonempty(c.node_id, f"{p}.node_id")
    at_least(c.priority, 0, f"{p}.priority")
    at_least(c.allocation_request_id, -1, f"{p}.allocation_request_id")
    resource(c.resource, f"{p}.resource", c, "resource")
    at_least(c.start_time_ms, 0, f"{p}.start_time_ms")


# (node_id, the NodeInfo's wire bytes) per upserted node, in batch order: the mirror compares the
# bytes with the node's last upsert, so a heartbeat that changes nothing costs one bytes comparison.
NodeWires = list[tuple[str, bytes]]


class NodeMemo:
    """NodeInfo messages already found valid, by node id (one per Sync stream).

    Checking a NodeInfo depends on its content only, so a heartbeat whose bytes equal the node's last
    valid upsert is valid without looking at its fields again. Bounded: cleared past `limit` ids.
    """

    def __init__(self, limit: int = 1 << 20) -> None:
        self.limit = limit
        self.valid: dict[str, bytes] = {}


def state_batch(
    b: Any, memo: NodeMemo | None = None, containers: list[ContainerRec] | None = None
) -> NodeWires:
    """Check a whole StateBatch; raises InvalidMessage naming the first bad field. Returns the
    upserted nodes' (node_id, wire bytes), for Mirror.apply; appends the records of
    `containers_allocated` to `containers` when given (each field read once, for the check and the
    record)."""
    nonempty(b.session_id, "session_id")
    at_least(b.seq, 1, "seq")
    at_least(b.rm_time_ms, 0, "rm_time_ms")
    valid = memo.valid if memo is not None else {}
    if len(valid) > (memo.limit if memo is not None else 0):
        valid.clear()
    wires: NodeWires = []
    seen_nodes: set[str] = set()
    for i, n in enumerate(b.nodes_upserted):
        node_id, raw = n.node_id, n.SerializeToString()
        if valid.get(node_id) != raw:
            if not _node_ok(n):  # fast check first; the path is only built for a bad node
                node(n, f"nodes_upserted[{i}]")
            if memo is not None:
                valid[node_id] = raw
        if node_id in seen_nodes:
            raise InvalidMessage(
                f"nodes_upserted[{i}].node_id", f"duplicate node {shown(node_id)} in one batch"
            )
        seen_nodes.add(node_id)
        wires.append((node_id, raw))
    _ids(b.nodes_removed, "nodes_removed")
    for i, a in enumerate(b.apps_upserted):
        app(a, f"apps_upserted[{i}]")
    _ids(b.apps_removed, "apps_removed")
    if b.queues_set:
        try:
            book_of_wire(b.queues)
        except ValueError as e:
            raise InvalidMessage("queues", str(e)) from e
    seen_keys: set[tuple[str, int, int]] = set()
    for i, a in enumerate(b.asks):
        p = f"asks[{i}]"
        ask(a, p)
        key = (a.attempt_id, a.priority, a.allocation_request_id)
        if key in seen_keys:
            raise InvalidMessage(p, f"duplicate scheduler key {shown(key)} in one batch")
        seen_keys.add(key)
    _containers(b.containers_allocated, containers)
    for i, d in enumerate(b.containers_completed):
        if d.container_id and d.exit_kind in _EXIT_KINDS and d.finish_time_ms >= 0:
            continue
        p = f"containers_completed[{i}]"
        nonempty(d.container_id, f"{p}.container_id")
        enum_value(d.exit_kind, pb.ContainerExitKind, f"{p}.exit_kind")
        at_least(d.finish_time_ms, 0, f"{p}.finish_time_ms")
    for i, o in enumerate(b.outcomes):
        p = f"outcomes[{i}]"
        nonempty(o.placement_id, f"{p}.placement_id")
        enum_value(o.kind, pb.PlacementOutcomeKind, f"{p}.kind")
        at_least(o.containers, 0, f"{p}.containers")
    return wires


def _containers(cs: Any, out: list[ContainerRec] | None) -> None:
    """Check `containers_allocated`; append their records to `out` when given. A container's resource
    is read and checked only when it differs from the previous container's (one comparison in C:
    the containers of a commit wave mostly share a size). A record's attempt and node ids are
    interned: the containers of one attempt, or on one node, share one string (each field read makes
    a new one), ~170 bytes less per mirrored container."""
    add = out.append if out is not None else None
    intern = sys.intern
    new = tuple.__new__  # ContainerRec's own __new__ is Python code
    ref: Any = None  # the last container's wire Resource, valid, and its Res
    res = Res()
    for i, c in enumerate(cs):
        cid, attempt, node_id, prio, alloc, start, r = (
            c.container_id,
            c.attempt_id,
            c.node_id,
            c.priority,
            c.allocation_request_id,
            c.start_time_ms,
            c.resource,
        )
        if not (
            cid
            and attempt
            and node_id
            and prio >= 0
            and alloc >= -1
            and start >= 0
            and c.HasField("resource")
        ):
            container(c, f"containers_allocated[{i}]")  # raises for a bad one
        if r != ref:
            mem, cores, others = r.memory_mb, r.vcores, r.others
            if not (mem >= 0 and cores >= 0 and not others):
                container(c, f"containers_allocated[{i}]")  # raises for a bad one (further types are fine)
            ref, res = r, (interned(mem, cores) if not others else Res.of(r))
        if add is not None:
            add(
                new(
                    ContainerRec,
                    (
                        cid,
                        intern(attempt),
                        intern(node_id),
                        prio,
                        alloc,
                        res,
                        c.placement_id,
                        c.am_container,
                        start,
                    ),
                )
            )


def register_request(r: Any) -> None:
    nonempty(r.rm_id, "rm_id")
    at_least(r.tick_ms, 0, "tick_ms")
    for i, t in enumerate(r.resource_types):
        nonempty(t, f"resource_types[{i}]")

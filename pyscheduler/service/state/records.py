"""The mirror's records: nodes, applications, asks, containers, placements not yet confirmed.

pyscheduler.service.state.mirror keeps them (and re-exports these names); see it for the accounting rules.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from pyscheduler.service.state.nodearrays import OUT, USED, NodeArrays
from pyscheduler.service.state.resources import Res, res_of_wire

AskKey = tuple[str, int, int]  # (attempt_id, priority, allocation_request_id), YARN's scheduler key

_ATTEMPT_RE = re.compile(r"^appattempt_(\d+)_(\d+)_\d+$")


@functools.lru_cache(maxsize=1 << 16)  # called per container and ask; attempt ids repeat
def application_of_attempt(attempt_id: str) -> str:
    """application_<ts>_<seq> for appattempt_<ts>_<seq>_<n>; the attempt id itself otherwise."""
    m = _ATTEMPT_RE.match(attempt_id)
    return f"application_{m.group(1)}_{m.group(2)}" if m else attempt_id


def index_add(index: dict[str, set[str]], key: str, item: str) -> None:
    items = index.get(key)
    if items is None:
        index[key] = {item}
    else:
        items.add(item)


def index_discard(index: dict[str, set[str]], key: str, item: str) -> None:
    items = index.get(key)
    if items is not None:
        items.discard(item)
        if not items:
            del index[key]


class NodeRec:
    """One mirrored node: what the RM said of it, and its row in the mirror's NodeArrays, which hold
    the numeric figures (capacity and allocated as upserted; the service's container and outstanding
    sums). `capacity` and `allocated` are also kept as Res; the sums are read from the arrays."""

    __slots__ = (
        "allocated",
        "arrays",
        "capacity",
        "host",
        "node_id",
        "rack",
        "row",
        "speed",
        "state",
        "wire",
    )

    def __init__(
        self,
        node_id: str,
        rack: str,
        capacity: Res,
        allocated: Res,
        state: int,
        speed: float,
        host: str,
        wire: bytes,
        row: int,
        arrays: NodeArrays,
    ) -> None:
        self.node_id, self.rack, self.state, self.speed, self.host = node_id, rack, state, speed, host
        self.capacity, self.allocated = capacity, allocated
        self.wire = wire  # the last upsert as sent: an identical heartbeat is skipped by comparing bytes
        self.row, self.arrays = row, arrays

    @property
    def containers_used(self) -> Res:
        """Sum of the containers mirrored on this node."""
        return self.arrays.res(USED, self.row)

    @property
    def outstanding(self) -> Res:
        """Room reserved by placements not yet confirmed."""
        return self.arrays.res(OUT, self.row)

    def free(self) -> Res:
        """capacity - max(allocated, containers) - outstanding; further types: those the capacity
        names, and those the node's figures use."""
        return self.arrays.free(
            self.row, [k for k, _ in self.capacity.others] if self.capacity.others else ()
        )


@dataclass(slots=True)
class AppRec:
    application_id: str
    attempt_id: str
    queue: str
    user: str
    name: str
    submit_time_ms: int
    application_type: str
    # SHA-256 digests of the attempt's AMRMToken, newest first: the current and the one before it (an
    # AM may present the old one until it sees the rolled-over token); see pyscheduler.service.rmproxy.auth.
    amrm_tokens: tuple[bytes, ...] = ()
    priority: int = 0  # YARN application priority: higher first among jobs of equal DollyMP class


def rolled_tokens(old: AppRec | None, attempt_id: str, digest: bytes) -> tuple[bytes, ...]:
    """An application's AMRMToken digests after an upsert carrying `digest` (empty: none yet): the
    current one and, within the same attempt, the one it replaced."""
    if old is None or old.attempt_id != attempt_id or not old.amrm_tokens:
        return (digest,) if digest else ()
    if not digest or digest == old.amrm_tokens[0]:
        return old.amrm_tokens
    return (digest, old.amrm_tokens[0])


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
    blacklist: tuple[str, ...] = ()  # hosts, node ids or racks the attempt excludes (Ask.blacklist)

    def copied(self) -> AskRec:
        """A copy that later placements do not change (`outstanding` moves in place): a round's view
        (service/round/planview.py) copies each pending ask once a round, and copy.copy costs ~4x this."""
        return AskRec(
            self.key,
            self.capability,
            self.num_containers,
            self.locations,
            self.relax_locality,
            self.am_container,
            self.arrival,
            self.outstanding,
            self.blacklist,
        )


class ContainerRec(NamedTuple):
    """A mirrored container (built by pyscheduler.service.rmproxy.validate.state_batch as it checks the
    batch)."""

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


@dataclass(slots=True)
class Release:
    """Outstanding room to release from nodes, gathered to be applied at once (NodeArrays.add_many)."""

    rows: list[int] = field(default_factory=list)
    amounts: list[Res] = field(default_factory=list)
    times: list[int] = field(default_factory=list)


def records(cs: Sequence[Any]) -> list[ContainerRec]:
    """The ContainerRecs of wire ContainerInfos."""
    return [
        ContainerRec(
            c.container_id,
            c.attempt_id,
            c.node_id,
            c.priority,
            c.allocation_request_id,
            res_of_wire(c.resource),
            c.placement_id,
            c.am_container,
            c.start_time_ms,
        )
        for c in cs
    ]

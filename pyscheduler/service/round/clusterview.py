"""The core's ClusterState of a mirror's running nodes, kept across rounds
(pyscheduler.service.round.translate).

Each RUNNING node with non-zero capacity is a row, sorted by node id; dimensions are vcores, memory_mb, then
every further resource type seen, sorted; free = the mirror's free room (NodeRec.free()), clipped to
0..capacity. The rows are rebuilt when the mirror's `layout` changes (nodes come, go, change state or
capacity); otherwise only the figures of the rows marked dirty are read again from the mirror's arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from pyscheduler.objects import ClusterState
from pyscheduler.service.round.round_memory import ClusterCache, RoundMemory
from pyscheduler.service.state.mirror import Mirror, NodeRec
from pyscheduler.service.state.nodearrays import CAP
from pyscheduler.wire import pb


def dims_of(mirror: Mirror) -> tuple[str, ...]:
    """The core's dimensions for the mirror: vcores, memory_mb, then the further resource types, sorted."""
    return ("vcores", "memory_mb", *sorted(mirror.resource_types))


def _row_member(n: NodeRec) -> bool:
    return n.state == pb.NODE_STATE_RUNNING and (n.capacity.memory_mb > 0 or n.capacity.vcores > 0)


def _figures(mirror: Mirror, rows: npt.NDArray[np.intp], dims: tuple[str, ...]) -> tuple[Any, Any]:
    """Capacity and free room (clipped to 0..capacity) of the mirror's node rows `rows`, columns `dims`:
    NodeRec.free() for every row at once."""
    cap = mirror.arrays.columns(CAP, rows, dims).astype(np.float64)
    free = mirror.arrays.free_rows(rows, dims).astype(np.float64)
    return cap, np.clip(free, 0.0, cap)


def _build(mirror: Mirror, dims: tuple[str, ...]) -> ClusterCache:
    members = sorted((n for n in mirror.nodes.values() if _row_member(n)), key=lambda n: n.node_id)
    rows = np.fromiter((n.row for n in members), np.intp, len(members))
    cap, free = _figures(mirror, rows, dims)
    state = ClusterState.from_arrays([n.node_id for n in members], cap, free, dims)
    return ClusterCache(mirror.layout, dims, state, rows)


def cluster_of(mirror: Mirror, memory: RoundMemory) -> ClusterState:
    """ClusterState of the running nodes (sorted by id), its figures read from the mirror's arrays."""
    dims = dims_of(mirror)
    c = memory.cluster
    if c is None or c.layout != mirror.layout or c.dims != dims:
        c = memory.cluster = _build(mirror, dims)
    elif mirror.dirty:  # rows whose figures changed (rows come and go with `layout`)
        m = len(c.rows)
        c.state.capacity[:m], c.state.free[:m] = _figures(mirror, c.rows, dims)
    mirror.dirty.clear()
    return c.state

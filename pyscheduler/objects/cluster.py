"""Nodes and the array-native cluster state (capacity and free resources per node).

`ClusterState` keeps one (M x D) float64 array of capacity and one of free resources, with an index from
node id to row, so drivers update it incrementally (one row per heartbeat) instead of rebuilding it each
round. Rows of removed nodes are kept but marked inactive (their free row is zeroed), so indices stay stable.
`Node` is the simple record form used by tests, the simulator and the service at the boundary.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pyscheduler.objects.resources import DEFAULT_DIMENSIONS, FloatArray, Resources


@dataclass(frozen=True, slots=True)
class Node:
    """A server i with capacity C_i (every dimension) and currently free resources."""

    node_id: str
    capacity: Resources
    free: Resources | None = None  # None: the whole capacity is free
    speed: float = 1.0

    def __post_init__(self) -> None:
        if not self.node_id:
            raise ValueError("Node.node_id must be non-empty")
        if self.capacity.is_zero():
            raise ValueError(f"Node[{self.node_id!r}].capacity must be non-zero")
        if self.free is not None and self.free.dims != self.capacity.dims:
            raise ValueError(
                f"Node[{self.node_id!r}].free has {self.free.dims} dims, capacity {self.capacity.dims}"
            )
        if not math.isfinite(self.speed) or self.speed <= 0:
            raise ValueError(f"Node[{self.node_id!r}].speed must be finite and > 0, got {self.speed!r}")


class ClusterState:
    """Capacity and free resources of every node as numpy arrays, indexed by node id."""

    def __init__(self, dims: Sequence[str] = DEFAULT_DIMENSIONS, initial_rows: int = 16) -> None:
        if not dims:
            raise ValueError("ClusterState.dims must name at least one dimension")
        self.dims: tuple[str, ...] = tuple(dims)
        d = len(self.dims)
        self._capacity: FloatArray = np.zeros((max(1, initial_rows), d))
        self._free: FloatArray = np.zeros((max(1, initial_rows), d))
        self._active: npt.NDArray[np.bool_] = np.zeros(max(1, initial_rows), dtype=bool)
        self.node_ids: list[str] = []
        self.index: dict[str, int] = {}
        self._distinct: tuple[int, FloatArray] | None = None
        self._total: tuple[int, FloatArray] | None = None
        self.capacity_version = 0  # bumped whenever a node's capacity or membership changes

    @classmethod
    def from_nodes(cls, nodes: Iterable[Node], dims: Sequence[str] | None = None) -> ClusterState:
        nodes = list(nodes)
        if dims is None:
            d = nodes[0].capacity.dims if nodes else len(DEFAULT_DIMENSIONS)
            dims = DEFAULT_DIMENSIONS if d == len(DEFAULT_DIMENSIONS) else tuple(f"r{i}" for i in range(d))
        state = cls(dims, initial_rows=len(nodes))
        for n in nodes:
            state.upsert(n.node_id, n.capacity, n.free)
        return state

    @classmethod
    def from_arrays(
        cls,
        node_ids: Sequence[str],
        capacity: FloatArray,
        free: FloatArray,
        dims: Sequence[str] = DEFAULT_DIMENSIONS,
    ) -> ClusterState:
        """Bulk constructor (benchmarks, simulator): validates every row at once."""
        cap = np.array(capacity, dtype=np.float64, ndmin=2)
        fr = np.array(free, dtype=np.float64, ndmin=2)
        if cap.shape != fr.shape or cap.shape != (len(node_ids), len(dims)):
            raise ValueError(
                f"ClusterState: capacity {cap.shape} / free {fr.shape} must be ({len(node_ids)}, {len(dims)})"
            )
        _check_rows("capacity", cap, node_ids)
        _check_rows("free", fr, node_ids)
        zero = np.flatnonzero(~(cap > 0).any(axis=1))
        if zero.size:
            raise ValueError(f"ClusterState: node {node_ids[int(zero[0])]!r} has zero capacity")
        if len(set(node_ids)) != len(node_ids):
            raise ValueError("ClusterState: duplicate node ids")
        state = cls(dims, initial_rows=len(node_ids))
        m = len(node_ids)
        state._capacity[:m] = cap
        state._free[:m] = np.minimum(fr, cap)
        state._active[:m] = True
        state.node_ids = list(node_ids)
        state.index = {nid: i for i, nid in enumerate(node_ids)}
        return state

    def with_free(self, free: FloatArray) -> ClusterState:
        """A new state of the same nodes, capacities and active rows with `free` (validated and clipped as
        `from_arrays` does): the node index copied, not rebuilt, and the distinct and total capacities
        carried over, computed once here (speed: the AM plans copy the cluster for every report)."""
        fr = np.array(free, dtype=np.float64, ndmin=2)
        m = self.size
        if fr.shape != (m, len(self.dims)):
            raise ValueError(f"ClusterState: free {fr.shape} must be ({m}, {len(self.dims)})")
        _check_rows("free", fr, self.node_ids)
        self.distinct_capacities()
        self.total_capacity()
        state = self.copy()
        state._free[:m] = np.minimum(fr, self.capacity)
        state._distinct, state._total = self._distinct, self._total
        return state

    @property
    def size(self) -> int:
        """Rows in use (including inactive ones)."""
        return len(self.node_ids)

    @property
    def capacity(self) -> FloatArray:
        return self._capacity[: self.size]

    @property
    def free(self) -> FloatArray:
        return self._free[: self.size]

    @property
    def active(self) -> npt.NDArray[np.bool_]:
        return self._active[: self.size]

    def distinct_capacities(self) -> FloatArray:
        """The distinct capacity vectors of active nodes (cached until capacities change)."""
        if self._distinct is None or self._distinct[0] != self.capacity_version:
            rows = self.capacity[self.active]
            self._distinct = (self.capacity_version, np.unique(rows, axis=0) if rows.size else rows)
        return self._distinct[1]

    def total_capacity(self) -> FloatArray:
        """sum_i C_i per dimension over active nodes (the denominators of Eq. 9 / 15); cached."""
        if self._total is None or self._total[0] != self.capacity_version:
            self._total = (self.capacity_version, self.capacity[self.active].sum(axis=0))
        return self._total[1].copy()

    def upsert(self, node_id: str, capacity: Resources, free: Resources | None = None) -> int:
        """Add or update a node; returns its row."""
        if capacity.dims != len(self.dims):
            raise ValueError(
                f"Node[{node_id!r}].capacity has {capacity.dims} dims, cluster has {len(self.dims)}"
            )
        if capacity.is_zero():
            raise ValueError(f"Node[{node_id!r}].capacity must be non-zero")
        if free is not None and free.dims != len(self.dims):
            raise ValueError(f"Node[{node_id!r}].free has {free.dims} dims, cluster has {len(self.dims)}")
        row = self.index.get(node_id)
        if row is None:
            row = len(self.node_ids)
            if row >= self._capacity.shape[0]:
                self._grow()
            self.node_ids.append(node_id)
            self.index[node_id] = row
        cap = capacity.as_array()
        self.capacity_version += 1
        self._capacity[row] = cap
        self._free[row] = cap if free is None else np.minimum(free.as_array(), cap)
        self._active[row] = True
        return row

    def set_free(self, node_id: str, free: Resources) -> None:
        row = self._row(node_id)
        if free.dims != len(self.dims):
            raise ValueError(f"Node[{node_id!r}].free has {free.dims} dims, cluster has {len(self.dims)}")
        self._free[row] = np.minimum(free.as_array(), self._capacity[row])

    def allocate(self, node_id: str, amount: Resources) -> None:
        """Subtract `amount` from the node's free resources (a container started)."""
        row = self._row(node_id)
        self._free[row] = np.maximum(self._free[row] - amount.as_array(), 0.0)

    def release(self, node_id: str, amount: Resources) -> None:
        """Add `amount` back to the node's free resources, never above capacity (a container ended)."""
        row = self._row(node_id)
        self._free[row] = np.minimum(self._free[row] + amount.as_array(), self._capacity[row])

    def remove(self, node_id: str) -> None:
        row = self._row(node_id)
        self.capacity_version += 1
        self._active[row] = False
        self._free[row] = 0.0

    def free_of(self, node_id: str) -> Resources:
        return Resources(tuple(float(v) for v in self._free[self._row(node_id)]))

    def copy(self) -> ClusterState:
        other = ClusterState(self.dims, initial_rows=self.size)
        m = self.size
        other._capacity[:m] = self.capacity
        other._free[:m] = self.free
        other._active[:m] = self.active
        other.node_ids = list(self.node_ids)
        other.index = dict(self.index)
        other.capacity_version = self.capacity_version
        return other

    def _row(self, node_id: str) -> int:
        try:
            return self.index[node_id]
        except KeyError:
            raise KeyError(f"unknown node {node_id!r}") from None

    def _grow(self) -> None:
        rows = self._capacity.shape[0] * 2
        d = len(self.dims)
        for name in ("_capacity", "_free"):
            old = getattr(self, name)
            new = np.zeros((rows, d))
            new[: old.shape[0]] = old
            setattr(self, name, new)
        act = np.zeros(rows, dtype=bool)
        act[: self._active.shape[0]] = self._active
        self._active = act


def _check_rows(name: str, arr: FloatArray, node_ids: Sequence[str]) -> None:
    bad = np.flatnonzero(~np.isfinite(arr).all(axis=1) | (arr < 0).any(axis=1))
    if bad.size:
        i = int(bad[0])
        raise ValueError(
            f"ClusterState: node {node_ids[i]!r} {name} must be finite and >= 0, got {arr[i].tolist()}"
        )

"""Vectorised (numpy) placement of task copies, used by baseline policies (DollyMP, fcfs and dolly use the
compiled Algorithm 2 kernel in policies/kernel.py, which places task by task exactly as printed).

Algorithm 2 is written server by server: each server with free resources takes, from the highest-priority
class first, the task whose demand has the largest inner product with the server's free vector, while
anything fits. Processing priority class by class over all servers (in server order) gives the same
schedule, because a class only sees what higher classes left on each server. We batch that per class:

* entries of a group (one class) with identical demand vectors form a *shape*; entries of one shape are
  served in the order given (the policy's tie-break);
* all servers of a window choose at once the shape with the best fit among those that still fit and still
  have tasks, and take as many of it as fit; conflicts over the same shape are resolved in server order;
  servers whose run was cut short choose again. (Choice made here: a server re-scores after a run of one
  shape rather than after every single task -- the inner product is evaluated per run.)
* servers on which nothing of the group fits leave the window; the window grows from the node order.

Node state is the (M x D) free array of ClusterState, copied once per round; never more than free is used.
Groups that need no shape scoring (first fit, or one shape) run in a compiled twin of the same schedule
(policies/placement_kernel.py).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from pyscheduler.objects.resources import FloatArray
from pyscheduler.policies.base import IntArray
from pyscheduler.policies.placement_kernel import first_fit_run

_EPS = 1e-9
USE_COMPILED = True  # groups without shape scoring go to placement_kernel.first_fit_run (same result)


@dataclass(slots=True)
class Entry:
    """Task copies of one (job, phase) wanting a node: `tasks` in the order they should be served."""

    job_pos: int
    phase_k: int
    demand: FloatArray  # (D,)
    tasks: IntArray


@dataclass(slots=True)
class Assigned:
    tasks: IntArray
    nodes: IntArray  # rows of ClusterState


class PlacementEngine:
    """Holds the working copy of free resources for one round and places groups of entries."""

    def __init__(
        self,
        capacity: FloatArray,
        free: FloatArray,
        active: npt.NDArray[np.bool_],
        compiled: bool | None = None,
    ) -> None:
        """`compiled=False` keeps every group on the numpy path (the reference the compiled twin is tested
        against); None: the module's USE_COMPILED."""
        self.compiled = USE_COMPILED if compiled is None else compiled
        self.capacity = capacity
        self.free: FloatArray = np.array(free, dtype=np.float64, copy=True)
        self.free[~active] = 0.0
        self.cand: IntArray = np.flatnonzero(active & (self.free > _EPS).any(axis=1)).astype(np.int64)
        self._feasible: dict[tuple[float, ...], bool] = {}
        self._active = active
        # demands no candidate node has room for any more: free only shrinks while the engine places, so
        # such a demand stays unplaceable until `release` gives resources back
        self._full: set[tuple[float, ...]] = set()

    def feasible(self, demand: FloatArray | tuple[float, ...]) -> bool:
        """Some active node's total capacity holds `demand` in every dimension (else: infeasible)."""
        key = demand if isinstance(demand, tuple) else tuple(demand.tolist())
        ok = self._feasible.get(key)
        if ok is None:
            fits = (self.capacity[self._active] + _EPS >= np.asarray(key)).all(axis=1)
            ok = bool(fits.any())
            self._feasible[key] = ok
        return ok

    def is_full(self, demand: tuple[float, ...]) -> bool:
        """No candidate node has room left for one task of `demand` (known from an earlier placement)."""
        return demand in self._full

    def room_for_any(self, demands: Iterable[tuple[float, ...]]) -> bool:
        """Some candidate node has room for one task of some demand in `demands` (those without are
        remembered as full)."""
        for d in demands:
            if d in self._full or not self.cand.size:
                continue
            if (self.free[self.cand] + _EPS >= np.asarray(d)).all(axis=1).any():
                return True
            self._full.add(d)
        return False

    def release(self, row: int, demand: FloatArray) -> None:
        """Give `demand` back on node `row` (a copy the driver frees before placing): it may fit again."""
        self.free[row] += demand
        if row not in set(self.cand.tolist()):
            self.cand = np.append(self.cand, row)
        self._full.clear()

    def prune(self, min_demand: FloatArray) -> None:
        """Drop candidate nodes on which not even the smallest demand of the round fits."""
        if self.cand.size:
            keep = (self.free[self.cand] + _EPS >= min_demand).all(axis=1)
            self.cand = self.cand[keep]

    def place_group(self, entries: list[Entry], best_fit: bool = True) -> list[Assigned]:
        """Place as many task copies of `entries` as fit; returns per entry tasks placed, nodes."""
        empty = Assigned(np.empty(0, np.int64), np.empty(0, np.int64))
        if not entries or self.cand.size == 0:
            return [empty for _ in entries]
        if len(entries) == 1 and self.is_full(tuple(entries[0].demand.tolist())):
            return [empty]
        counts = np.array([len(e.tasks) for e in entries], dtype=np.int64)
        if len(entries) == 1:  # np.unique of one row is that row
            shapes: FloatArray = np.array(entries[0].demand, dtype=np.float64, ndmin=2)
            inv: IntArray = np.zeros(1, np.int64)
            rem = counts.copy()
        else:
            shapes, inv = np.unique(np.stack([e.demand for e in entries]), axis=0, return_inverse=True)
            inv = inv.reshape(-1)
            rem = np.bincount(inv, weights=counts, minlength=len(shapes)).astype(np.int64)
        placed_rows: list[list[IntArray]] = [[] for _ in range(len(shapes))]
        placed_cnt: list[list[IntArray]] = [[] for _ in range(len(shapes))]
        if self.compiled and not (best_fit and shapes.shape[0] > 1):
            self._run_compiled(shapes, rem, placed_rows, placed_cnt)
        else:
            self._run(shapes, rem, best_fit, placed_rows, placed_cnt)
        return self._split(entries, inv, counts, placed_rows, placed_cnt, empty)

    def _candidates(self, shapes: FloatArray, rem: IntArray) -> tuple[IntArray, int]:
        """Nodes on which the element-wise smallest shape of the group fits, and the window width."""
        smallest = shapes.min(axis=0)
        cand = self.cand[(self.free[self.cand] + _EPS >= smallest).all(axis=1)]
        if not cand.size and len(shapes) == 1:
            self._full.add(tuple(smallest.tolist()))
        return cand, int(min(cand.size, max(32, int(rem.sum()) // 4)))

    def _run_compiled(
        self,
        shapes: FloatArray,
        rem: IntArray,
        placed_rows: list[list[IntArray]],
        placed_cnt: list[list[IntArray]],
    ) -> None:
        """`_run` without shape scoring (first fit, or one shape), by the compiled twin."""
        cand, width = self._candidates(shapes, rem)
        shape, rows, cnt = first_fit_run(self.free, cand, np.ascontiguousarray(shapes), rem, width)
        if len(shapes) == 1:
            placed_rows[0].append(rows)
            placed_cnt[0].append(cnt)
            return
        for s in np.unique(shape).tolist():
            sel = shape == s
            placed_rows[s].append(rows[sel])
            placed_cnt[s].append(cnt[sel])

    def _run(
        self,
        shapes: FloatArray,
        rem: IntArray,
        best_fit: bool,
        placed_rows: list[list[IntArray]],
        placed_cnt: list[list[IntArray]],
    ) -> None:
        # nodes on which not even the element-wise smallest shape of the group fits are skipped up front
        cand, width = self._candidates(shapes, rem)
        window = cand[:width]
        nxt = width
        dims = [
            (d, shapes[:, d] > 0, np.where(shapes[:, d] > 0, shapes[:, d], 1.0))
            for d in range(shapes.shape[1])
        ]
        while rem.any() and window.size:
            f = self.free[window]  # (w, D)
            k: npt.NDArray[np.float64] | None = None
            for d, pos, safe in dims:
                kd = np.where(pos[None, :], np.floor((f[:, d, None] + _EPS) / safe[None, :]), np.inf)
                k = kd if k is None else np.minimum(k, kd)
            assert k is not None
            kk = np.minimum(k, rem[None, :]).astype(
                np.int64
            )  # tasks of each shape fitting each server (w, U)
            valid = kk > 0
            alive = valid.any(axis=1)
            if best_fit and shapes.shape[0] > 1:
                choice = np.where(valid, f @ shapes.T, -np.inf).argmax(axis=1)
            else:
                choice = valid.argmax(axis=1)  # first shape (group order) that fits
            for s in np.unique(choice[alive]).tolist():
                sel = np.flatnonzero(alive & (choice == s))
                take = kk[sel, s]
                before = np.cumsum(take) - take
                alloc = np.clip(rem[s] - before, 0, take)
                got = alloc > 0
                if not got.any():
                    continue
                rows, alloc = window[sel[got]], alloc[got]
                self.free[rows] -= alloc[:, None] * shapes[s][None, :]
                rem[s] -= int(alloc.sum())
                placed_rows[s].append(rows)
                placed_cnt[s].append(alloc)
            # servers where nothing of this group fits leave the window; refill it in node order
            window = window[alive]
            if window.size < width and nxt < cand.size:
                extra = cand[nxt : nxt + width - window.size]
                nxt += extra.size
                window = np.concatenate([window, extra])

    @staticmethod
    def _split(
        entries: list[Entry],
        inv: IntArray,
        counts: IntArray,
        placed_rows: list[list[IntArray]],
        placed_cnt: list[list[IntArray]],
        empty: Assigned,
    ) -> list[Assigned]:
        out = [empty] * len(entries)
        for s in range(len(placed_rows)):
            if not placed_rows[s]:
                continue
            slots = np.repeat(np.concatenate(placed_rows[s]), np.concatenate(placed_cnt[s]))
            offset = 0
            for e in np.flatnonzero(inv == s).tolist():
                n = int(min(counts[e], slots.size - offset))
                if n <= 0:
                    break
                out[e] = Assigned(entries[e].tasks[:n], slots[offset : offset + n])
                offset += n
        return out

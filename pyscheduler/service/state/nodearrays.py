"""The mirror's per-node resource figures as numeric arrays (one row per node, one column per type).

Four int64 tables, indexed [row, column]: `capacity` and `allocated` (the RM's figures, as last
upserted), `used` (the sum of the containers mirrored on the node) and `outstanding` (room held by
placements the shim has not confirmed), and `count`, the containers mirrored per row. Columns:
memory_mb, vcores, then every further resource type in the order it was first seen (a new type adds
a zero column to every table).

Why arrays: a commit wave (10^4 containers in one batch) updates `used` with one `np.add.at` per
column instead of one Res object per container, and the translation reads free room for every
running node with a few array operations instead of one `NodeRec.free()` per node.

Free room of a row (the accounting rule of pyscheduler.service.state.mirror, per column):
    capacity - max(allocated, used) - outstanding
`res()` turns a row back into a Res: further types are listed when the row's value is non-zero or,
for `free`, when the node's capacity names the type (so a node without a type shows none of it).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from pyscheduler.service.state.resources import Res

IntTable = npt.NDArray[np.int64]

_BASE = ("memory_mb", "vcores")


CAP, ALLOC, USED, OUT = 0, 1, 2, 3  # the four tables, by index into NodeArrays.t
# An update of k rows of an n-row table goes row by row (np.add.at) when k * _DENSE < n, else through one
# pass over the whole table (np.bincount): removing one finished application's containers from a
# 10,000-node table must not cost two passes over all of it.
_DENSE = 16


class NodeArrays:
    def __init__(self, rows: int = 64) -> None:
        self._initial = max(rows, 1)
        self.clear()

    def clear(self) -> None:
        """Forget every row and every further resource type (a full resync)."""
        self.names: list[str] = list(_BASE)
        self.col: dict[str, int] = {n: i for i, n in enumerate(_BASE)}
        self.t: list[IntTable] = [np.zeros((self._initial, len(_BASE)), np.int64) for _ in range(4)]
        self.count: npt.NDArray[np.int64] = np.zeros(self._initial, np.int64)  # containers per row
        self.size = 0  # rows handed out so far (released ones are reused first)
        self._released: list[int] = []

    def _reshape(self, rows: int, cols: int) -> None:
        for i, t in enumerate(self.t):
            g = np.zeros((rows, cols), np.int64)
            g[: t.shape[0], : t.shape[1]] = t
            self.t[i] = g
        if rows != len(self.count):
            count = np.zeros(rows, np.int64)
            count[: len(self.count)] = self.count
            self.count = count

    def take_row(self) -> int:
        """A zeroed row for a new node."""
        if self._released:
            return self._released.pop()
        if self.size == self.t[CAP].shape[0]:
            self._reshape(2 * self.size, len(self.names))
        self.size += 1
        return self.size - 1

    def release(self, row: int) -> None:
        for t in self.t:
            t[row] = 0
        self.count[row] = 0
        self._released.append(row)

    def column(self, name: str) -> int:
        c = self.col.get(name)
        if c is None:
            c = self.col[name] = len(self.names)
            self.names.append(name)
            self._reshape(self.t[CAP].shape[0], len(self.names))
        return c

    # ---- one row at a time -----------------------------------------------------------------------

    def put(self, table: int, row: int, r: Res) -> None:
        """t[table][row] = r."""
        t = self.t[table]
        if not r.others and t.shape[1] == 2:  # memory and vcores only: one assignment
            t[row] = (r.memory_mb, r.vcores)
            return
        cols = [(self.column(name), v) for name, v in r.others]
        t = self.t[table]
        t[row] = 0
        t[row, 0] = r.memory_mb
        t[row, 1] = r.vcores
        for c, v in cols:
            t[row, c] = v

    def add(self, table: int, row: int, r: Res, times: int = 1) -> None:
        """t[table][row] += times * r."""
        cols = [(self.column(name), v) for name, v in r.others]
        t = self.t[table]
        t[row, 0] += r.memory_mb * times
        t[row, 1] += r.vcores * times
        for c, v in cols:
            t[row, c] += v * times

    def put_plain(
        self, table: int, rows: Sequence[int], memory_mb: Sequence[int], vcores: Sequence[int]
    ) -> None:
        """t[table][rows[i]] = (memory_mb[i], vcores[i]) for rows whose further types are all zero,
        before and after (distinct rows)."""
        t, idx = self.t[table], np.fromiter(rows, np.intp, len(rows))
        t[idx, 0] = memory_mb
        t[idx, 1] = vcores

    def res(self, table: int, row: int) -> Res:
        """Row `row` of a table as a Res (further types where non-zero)."""
        values = self.t[table][row].tolist()
        if len(values) == 2:
            return Res(values[0], values[1])
        names = self.names
        return Res(
            values[0], values[1], tuple(sorted((names[c], v) for c, v in enumerate(values) if c > 1 and v))
        )

    def free(self, row: int, keep: Sequence[str] = ()) -> Res:
        """Free room of one row as a Res; further types where the room is non-zero, the node uses
        them, or they are named in `keep` (the types its capacity lists)."""
        cap, a, u, o = (t[row].tolist() for t in self.t)
        values = [c - (x if x > y else y) - z for c, x, y, z in zip(cap, a, u, o, strict=True)]
        if len(values) == 2:
            return Res(values[0], values[1])
        names = self.names
        others = tuple(
            sorted(
                (names[c], v)
                for c, v in enumerate(values)
                if c > 1 and (v or a[c] or u[c] or o[c] or names[c] in keep)
            )
        )
        return Res(values[0], values[1], others)

    # ---- many rows at once -----------------------------------------------------------------------

    def add_many(
        self,
        table: int,
        rows: Sequence[int],
        amounts: Sequence[Res],
        times: Sequence[int] | None = None,
        sign: int = 1,
    ) -> None:
        """t[table][rows[i]] += sign * times[i] * amounts[i] (times 1 when not given) for every i; rows
        may repeat."""
        if not rows:
            return
        if any(r.others for r in amounts):
            for i, (row, r) in enumerate(zip(rows, amounts, strict=True)):
                self.add(table, row, r, sign * (times[i] if times is not None else 1))
            return
        t = self.t[table]
        n = len(rows)
        idx = np.fromiter(rows, np.intp, n)
        first = amounts[0]
        if times is None and all(r is first for r in amounts):  # one size (interned Res)
            if n * _DENSE < t.shape[0]:  # a few rows: no pass over the whole table
                np.add.at(t[:, 0], idx, sign * first.memory_mb)
                np.add.at(t[:, 1], idx, sign * first.vcores)
                return
            counts = np.bincount(idx, minlength=t.shape[0]) * sign  # many: counts per row
            t[:, 0] += counts * first.memory_mb
            t[:, 1] += counts * first.vcores
            return
        k = sign * (np.fromiter(times, np.int64, n) if times is not None else 1)
        np.add.at(t[:, 0], idx, np.fromiter((r.memory_mb for r in amounts), np.int64, n) * k)
        np.add.at(t[:, 1], idx, np.fromiter((r.vcores for r in amounts), np.int64, n) * k)

    def count_add(self, rows: Sequence[int], sign: int = 1) -> None:
        """count[rows[i]] += sign for every i; rows may repeat."""
        if not rows:
            return
        idx = np.fromiter(rows, np.intp, len(rows))
        if len(rows) * _DENSE < len(self.count):
            np.add.at(self.count, idx, sign)
        else:
            self.count += sign * np.bincount(idx, minlength=len(self.count))

    def columns(self, table: int, rows: npt.NDArray[np.intp], names: Sequence[str]) -> npt.NDArray[np.int64]:
        """t[table] at `rows` in the columns `names` (zero for a type not seen), shape (k, len(names))."""
        out = np.zeros((len(rows), len(names)), np.int64)
        for j, n in enumerate(names):
            c = self.col.get(n)
            if c is not None:
                out[:, j] = self.t[table][rows, c]
        return out

    def free_rows(
        self, rows: npt.NDArray[np.intp], names: Sequence[str], rm_allocated: bool = True
    ) -> npt.NDArray[np.int64]:
        """Free room of `rows` in the columns `names` (zero for a type not seen), shape (k, len(names)).
        Without `rm_allocated`, the room once the RM's figures catch up with the mirrored containers:
        capacity - containers - outstanding (a released container leaves the RM's `allocated` only when
        its NodeManager reports it gone)."""
        cap, a, u, o = (self.columns(i, rows, names) for i in (CAP, ALLOC, USED, OUT))
        out: npt.NDArray[np.int64] = cap - (np.maximum(a, u) if rm_allocated else u) - o
        return out

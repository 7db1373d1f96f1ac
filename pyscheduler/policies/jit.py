"""Small compiled (numba) helpers for per-round bookkeeping that numpy would do in several passes over
small arrays, each pass paying numpy's call overhead. Each states the numpy expression it equals."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _observe_starts(
    seen: npt.NDArray[np.float64], count: npt.NDArray[np.int8], copies: npt.NDArray[np.int8], now: float
) -> None:
    for i in range(copies.shape[0]):
        c = copies[i]
        if c > 0:
            if np.isinf(seen[i]) or c > count[i]:
                seen[i] = now
        else:
            seen[i] = np.inf
        count[i] = c


def observe_starts(
    seen: npt.NDArray[np.float64], count: npt.NDArray[np.int8], copies: npt.NDArray[np.int8], now: float
) -> None:
    """In place, equal to:
    seen[(copies > 0) & (np.isinf(seen) | (copies > count))] = now; seen[copies == 0] = inf;
    count[:] = copies (copies are never negative)."""
    _observe_starts(seen, count, copies, float(now))


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _clone_candidates(
    copies: npt.NDArray[np.int64],
    state: npt.NDArray[np.int8],
    allowed: npt.NDArray[np.int64],
    owner: npt.NDArray[np.int64],
    have: int,
    finished: int,
) -> npt.NDArray[np.bool_]:
    out = np.zeros(copies.shape[0], np.bool_)
    for i in range(copies.shape[0]):
        out[i] = copies[i] == have and state[i] != finished and allowed[owner[i]] > have
    return out


def clone_candidates(
    copies: npt.NDArray[np.int64],
    state: npt.NDArray[np.int8],
    allowed: npt.NDArray[np.int64],
    owner: npt.NDArray[np.int64],
    have: int,
    finished: int,
) -> npt.NDArray[np.bool_]:
    """(copies == have) & (state != finished) & (allowed[owner] > have), in one pass."""
    result: npt.NDArray[np.bool_] = _clone_candidates(
        copies, state, np.ascontiguousarray(allowed, np.int64), owner, int(have), int(finished)
    )
    return result


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _started(
    copies: npt.NDArray[np.int64],
    state: npt.NDArray[np.int8],
    flat: npt.NDArray[np.int64],
    pending: int,
    running: int,
) -> None:
    for i in flat:
        copies[i] += 1
    for i in flat:
        if state[i] == pending:
            state[i] = running


def started(
    copies: npt.NDArray[np.int64],
    state: npt.NDArray[np.int8],
    flat: npt.NDArray[np.int64],
    pending: int,
    running: int,
) -> None:
    """In place, equal to: np.add.at(copies, flat, 1); state[flat] = np.where(state[flat] == pending,
    running, state[flat])."""
    _started(copies, state, np.ascontiguousarray(flat, np.int64), int(pending), int(running))


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _size_classes(
    volumes: npt.NDArray[np.float64], times: npt.NDArray[np.float64], order: npt.NDArray[np.int64], g: int
) -> npt.NDArray[np.int64]:
    n = volumes.shape[0]
    p = np.full(n, g + 1, np.int64)
    left = n
    for level in range(1, g + 1):
        cap = 2.0**level
        total = 0.0
        for i in range(n):
            j = order[i]
            inside = times[j] <= cap
            total += volumes[j] if inside else 0.0
            if inside and total <= cap and p[j] == g + 1:
                p[j] = level
                left -= 1
        if left == 0:
            break
    return p


def size_classes(
    volumes: npt.NDArray[np.float64], times: npt.NDArray[np.float64], order: npt.NDArray[np.int64], g: int
) -> npt.NDArray[np.int64]:
    """model.transient_priorities' loop over levels 1..g in one pass per level: equal to
    p = full(n, g + 1); for each level, p[knapsack_level(volumes, times, level, order) & (p == g + 1)] =
    level (the running sum of np.cumsum(np.where(in_b, v, 0.0)), taken in the same order: the same
    IEEE additions; adding 0.0 leaves a sum of non-negative volumes unchanged)."""
    result: npt.NDArray[np.int64] = _size_classes(
        np.ascontiguousarray(volumes, np.float64), np.ascontiguousarray(times, np.float64), order, int(g)
    )
    return result


_I = npt.NDArray[np.int64]
# pass_input's answer: (class_ptr, shape_ptr, task_ptr, shape_demand, tasks, entry_rows, entry_counts)
PassInput = tuple[_I, _I, _I, npt.NDArray[np.float64], _I, _I, _I]


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _entry_before(
    a: int, b: int, cls: npt.NDArray[np.int64], shape: npt.NDArray[np.int64], rank: npt.NDArray[np.int64]
) -> bool:
    """Row a sorts before row b by (class, shape, rank, row): np.lexsort's key order in pass_input."""
    if cls[a] != cls[b]:
        return bool(cls[a] < cls[b])
    if shape[a] != shape[b]:
        return bool(shape[a] < shape[b])
    if rank[a] != rank[b]:
        return bool(rank[a] < rank[b])
    return a < b


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _pass_input(
    mask: npt.NDArray[np.bool_], owner: _I, n_rows: int, row_class: _I, row_rank: _I, row_shape: _I
) -> tuple[_I, _I, _I, _I, _I, _I, _I]:
    counts = np.zeros(n_rows, np.int64)
    for i in range(mask.shape[0]):
        if mask[i]:
            counts[owner[i]] += 1
    n_entries = 0
    for r in range(n_rows):
        if counts[r] > 0:
            n_entries += 1
    entry_rows = np.empty(n_entries, np.int64)
    e = 0
    for r in range(n_rows):
        if counts[r] > 0:
            # insertion sort by (class, shape, rank, row): entries are few, the keys distinct (rows)
            j = e
            while j > 0 and _entry_before(r, entry_rows[j - 1], row_class, row_shape, row_rank):
                entry_rows[j] = entry_rows[j - 1]
                j -= 1
            entry_rows[j] = r
            e += 1
    entry_counts = np.empty(n_entries, np.int64)
    task_ptr = np.zeros(n_entries + 1, np.int64)
    for e in range(n_entries):
        entry_counts[e] = counts[entry_rows[e]]
        task_ptr[e + 1] = task_ptr[e] + entry_counts[e]
    # each row's tasks in flat order (rows own contiguous, increasing segments of the flat tasks)
    seg = np.zeros(n_rows + 1, np.int64)
    for r in range(n_rows):
        seg[r + 1] = seg[r] + counts[r]
    by_row = np.empty(seg[n_rows], np.int64)
    fill = seg[:n_rows].copy()
    for i in range(mask.shape[0]):
        if mask[i]:
            o = owner[i]
            by_row[fill[o]] = i
            fill[o] += 1
    tasks = np.empty(seg[n_rows], np.int64)
    for e in range(n_entries):
        r = entry_rows[e]
        tasks[task_ptr[e] : task_ptr[e + 1]] = by_row[seg[r] : seg[r + 1]]
    # shapes: runs of equal (class, shape) among the entries; classes: runs of equal class among shapes
    shape_start = np.empty(n_entries, np.int64)
    n_shapes = 0
    for e in range(n_entries):
        r = entry_rows[e]
        if (
            e == 0
            or row_class[r] != row_class[entry_rows[e - 1]]
            or row_shape[r] != row_shape[entry_rows[e - 1]]
        ):
            shape_start[n_shapes] = e
            n_shapes += 1
    shape_ptr = np.empty(n_shapes + 1, np.int64)
    shape_ptr[:n_shapes] = shape_start[:n_shapes]
    shape_ptr[n_shapes] = n_entries
    class_start = np.empty(n_shapes + 1, np.int64)
    n_classes = 0
    for s in range(n_shapes):
        r = entry_rows[shape_start[s]]
        if s == 0 or row_class[r] != row_class[entry_rows[shape_start[s - 1]]]:
            class_start[n_classes] = s
            n_classes += 1
    class_ptr = np.empty(n_classes + 1, np.int64)
    class_ptr[:n_classes] = class_start[:n_classes]
    class_ptr[n_classes] = n_shapes
    shape_rows = np.empty(n_shapes, np.int64)  # a row of each shape run (its shape id gives the demand)
    for s in range(n_shapes):
        shape_rows[s] = entry_rows[shape_start[s]]
    return class_ptr, shape_ptr, task_ptr, shape_rows, tasks, entry_rows, entry_counts


def pass_input_compiled(
    mask: npt.NDArray[np.bool_],
    owner: _I,
    n_rows: int,
    row_class: _I,
    row_rank: _I,
    row_shape: _I,
    shapes: npt.NDArray[np.float64],
) -> PassInput:
    """table.pass_input's answer in one compiled pass (entries sorted by insertion; the same order as its
    np.lexsort, the keys being distinct): (class_ptr, shape_ptr, task_ptr, shape_demand, tasks,
    entry_rows, entry_counts), `owner` grouping the flat tasks in increasing segments per row."""
    class_ptr, shape_ptr, task_ptr, shape_rows, tasks, entry_rows, entry_counts = _pass_input(
        mask,
        owner,
        int(n_rows),
        np.ascontiguousarray(row_class, np.int64),
        np.ascontiguousarray(row_rank, np.int64),
        np.ascontiguousarray(row_shape, np.int64),
    )
    if entry_rows.size == 0:
        z = np.zeros(1, np.int64)
        return z, z, z, np.zeros((0, shapes.shape[1])), tasks, entry_rows, entry_rows
    shape_demand = np.ascontiguousarray(shapes[row_shape[shape_rows]])
    return class_ptr, shape_ptr, task_ptr, shape_demand, tasks, entry_rows, entry_counts

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

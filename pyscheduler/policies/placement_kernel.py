"""Compiled (numba) twin of `PlacementEngine._run` (policies/placement.py) for groups whose shape choice
needs no scoring: first fit, or a single shape. It replays the same windowed schedule step by step, so it
places exactly the same copies on exactly the same nodes (tests/sim/test_speed_equivalence.py compares
the two on whole simulations); only the interpreter overhead of the numpy version is gone.

Per window step the numpy version lets every server of the window choose a shape at once from the free
resources and counts left at the start of the step, then serves servers in window order, shape by shape.
Servers of one step are distinct and every server takes at most one shape per step, so serving them one
after another in window order, with each shape's count running down, gives the same allocations; the
output keeps, per shape, the order (step, window position) in which the numpy version records them.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_EPS = 1e-9


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _first_fit_run(
    free: FloatArray,
    cand: IntArray,
    shapes: FloatArray,
    rem: IntArray,
    width: int,
    out_shape: IntArray,
    out_row: IntArray,
    out_cnt: IntArray,
) -> int:
    n_shapes, dims = shapes.shape
    window = np.empty(max(width, 1), np.int64)
    keep = np.empty(max(width, 1), np.int64)
    wlen = 0
    for i in range(width):
        window[i] = cand[i]
        wlen += 1
    nxt = width
    rem_start = np.empty(n_shapes, np.int64)
    n_out = 0
    while wlen > 0:
        left = 0
        for s in range(n_shapes):
            left += rem[s]
            rem_start[s] = rem[s]
        if left == 0:
            break
        nkeep = 0
        for w in range(wlen):
            row = window[w]
            choice = -1
            take = 0
            for s in range(n_shapes):
                k = np.inf
                for d in range(dims):
                    if shapes[s, d] > 0:
                        kd = np.floor((free[row, d] + _EPS) / shapes[s, d])
                        if kd < k:
                            k = kd
                if float(rem_start[s]) < k:
                    k = float(rem_start[s])
                kk = int(k)  # finite: k <= rem_start[s]
                if kk > 0:
                    choice = s
                    take = kk
                    break
            if choice < 0:
                continue  # nothing of the group fits: the server leaves the window
            keep[nkeep] = row
            nkeep += 1
            alloc = take if take < rem[choice] else rem[choice]
            if alloc <= 0:
                continue
            for d in range(dims):
                free[row, d] -= float(alloc) * shapes[choice, d]
            rem[choice] -= alloc
            out_shape[n_out] = choice
            out_row[n_out] = row
            out_cnt[n_out] = alloc
            n_out += 1
        for w in range(nkeep):
            window[w] = keep[w]
        wlen = nkeep
        if wlen < width and nxt < cand.shape[0]:
            stop = min(cand.shape[0], nxt + width - wlen)
            for i in range(nxt, stop):
                window[wlen] = cand[i]
                wlen += 1
            nxt = stop
    return n_out


def first_fit_run(
    free: FloatArray, cand: IntArray, shapes: FloatArray, rem: IntArray, width: int
) -> tuple[IntArray, IntArray, IntArray]:
    """Run the schedule on `free` (mutated) and `rem` (mutated); returns (shape, node row, count) per
    allocation in the order the numpy version records them."""
    cap = int(rem.sum())
    out_shape = np.empty(cap, np.int64)
    out_row = np.empty(cap, np.int64)
    out_cnt = np.empty(cap, np.int64)
    n = _first_fit_run(free, cand, shapes, rem, width, out_shape, out_row, out_cnt)
    return out_shape[:n], out_row[:n], out_cnt[:n]

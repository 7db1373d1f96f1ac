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

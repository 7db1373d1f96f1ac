"""Delay assignment's search over omega (policies/delay.py `choose_omega`) in one compiled pass (speed).

`best_omega` equals, bit for bit, np.argmin of policies/delay.py's `expected_durations` over the candidates
and that value: the same IEEE operations per (omega, sample), and each candidate's mean summed as numpy
sums a contiguous row (pairwise: eight running sums over blocks of at most 128 values, halves above),
then divided by the sample count (tests/core/test_delay_kernel.py compares the two on random samples).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

FloatArray = npt.NDArray[np.float64]
_BLOCK = 128  # numpy's pairwise-summation block (PW_BLOCKSIZE)


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _block_sum(a: FloatArray, lo: int, n: int) -> float:
    """numpy's sum of a block a[lo:lo + n], n <= 128: eight running sums, then the rest one by one."""
    if n < 8:
        res = -0.0
        for i in range(lo, lo + n):
            res += a[i]
        return res
    r0, r1, r2, r3 = float(a[lo]), float(a[lo + 1]), float(a[lo + 2]), float(a[lo + 3])
    r4, r5, r6, r7 = float(a[lo + 4]), float(a[lo + 5]), float(a[lo + 6]), float(a[lo + 7])
    i = 8
    stop = n - n % 8
    while i < stop:
        j = lo + i
        r0 += a[j]
        r1 += a[j + 1]
        r2 += a[j + 2]
        r3 += a[j + 3]
        r4 += a[j + 4]
        r5 += a[j + 5]
        r6 += a[j + 6]
        r7 += a[j + 7]
        i += 8
    res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
    while i < n:
        res += a[lo + i]
        i += 1
    return res


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _pairwise_sum(a: FloatArray, n: int) -> float:
    """numpy's pairwise sum of a[:n] (the order np.add.reduce adds a contiguous row in): blocks of at most
    128 values, larger spans split in two halves (a multiple of 8 first) whose sums are added. The
    recursion runs on an explicit stack (numba's cache does not reload recursive functions safely)."""
    if n <= _BLOCK:
        return _block_sum(a, 0, n)
    los, ns, ops = [0], [n], [0]  # op 0: sum the span; op 1: add the two sums on top of `sums`
    sums = [0.0]
    sums.pop()
    while ops:
        op, lo, m = ops.pop(), los.pop(), ns.pop()
        if op == 1:
            right = sums.pop()
            left = sums.pop()
            sums.append(left + right)
        elif m <= _BLOCK:
            sums.append(_block_sum(a, lo, m))
        else:
            half = m // 2
            half -= half % 8
            for o, x, y in ((1, lo, m), (0, lo + half, m - half), (0, lo, half)):  # left span first
                ops.append(o)
                los.append(x)
                ns.append(y)
    return sums[0]


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def best_omega(
    cands: FloatArray,
    r_bytes: float,
    bandwidth: float,
    alpha: float,
    gaps: FloatArray,
    c1: FloatArray,
    c2: FloatArray,
) -> tuple[int, float]:
    """(index of the first candidate omega with the least expected duration, that duration); the duration
    of each as delay.expected_durations computes it (see that function for the model)."""
    m = gaps.shape[0]
    solo = r_bytes / bandwidth
    contended_bw = alpha * bandwidth
    row = np.empty(m)
    best, best_value = -1, np.inf
    for c in range(cands.shape[0]):
        w = cands[c]
        extra = r_bytes - bandwidth * w
        read1_c = (w if w < solo else solo) + (extra if extra > 0.0 else 0.0) / contended_bw
        read2_c = w + read1_c
        read2_e = solo + (solo if solo < w else w)
        for s in range(m):
            if gaps[s] > w:  # the exclusive copy did not arrive within omega
                d1, d2 = read1_c + c1[s], read2_c + c2[s]
            else:
                d1, d2 = solo + c1[s], read2_e + c2[s]
            row[s] = d1 if d1 < d2 else d2
        value = (0.0 + _pairwise_sum(row, m)) / m
        if best < 0 or value < best_value:
            best, best_value = c, value
    return best, best_value

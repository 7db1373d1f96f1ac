"""Delay assignment (Dolly, paper 001, Section 4.4): the wait omega before a downstream clone gives up on an
exclusive copy of an upstream output and reads one with contention.

Model (two copies of a downstream task; the first starts reading at 0, size r, bandwidth B alone, alpha*B
when two readers contend; alpha <= 1):
  contention (the second upstream copy is not done within omega, probability p_c):
      T_C: first copy  min(omega, r/B) + max(0, r - B omega)/(alpha B) [paper: omega + (r-B omega)/(alpha B)]
           second copy omega + (the first copy's read)        [paper: 2 omega + (r-B omega)/(alpha B)]
  exclusive (probability 1 - p_c):
      T_E: first copy r/B, second copy r/B + min(r/B, omega)
  task duration = min over copies of (read + compute).
p_c and compute times come from samples: each sample is (gap between the two upstream copies' finish
times, compute time of copy 1, of copy 2), so E[duration] = mean over samples, which equals
p_c T_C + (1 - p_c) T_E per copy with p_c = Pr{gap > omega} (decreasing in omega, as Dolly notes).
Choice: the paper minimises over omega without saying how; E[duration](omega) is piecewise linear, so its
minimum is at a breakpoint: 0, r/B, a gap g_s, or a crossing c1_s - c2_s of the two copies. We evaluate
exactly those candidates (exact, and cheaper than a grid).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from pyscheduler.objects.resources import FloatArray
from pyscheduler.policies.delay_kernel import best_omega


def _check(r_bytes: float, bandwidth: float, alpha: float) -> None:
    if not (math.isfinite(r_bytes) and r_bytes >= 0):
        raise ValueError(f"delay assignment: output size must be finite >= 0, got {r_bytes!r}")
    if not (math.isfinite(bandwidth) and bandwidth > 0):
        raise ValueError(f"delay assignment: bandwidth B must be finite > 0, got {bandwidth!r}")
    if not (0 < alpha <= 1):
        raise ValueError(f"delay assignment: contention factor alpha must be in (0, 1], got {alpha!r}")


def expected_durations(
    omegas: FloatArray,
    r_bytes: float,
    bandwidth: float,
    alpha: float,
    gaps: FloatArray,
    c1: FloatArray,
    c2: FloatArray,
) -> FloatArray:
    """E[task duration] for each omega in `omegas` (vectorised over omegas x samples)."""
    _check(r_bytes, bandwidth, alpha)
    w = np.asarray(omegas, dtype=np.float64)[:, None]
    solo = r_bytes / bandwidth
    read1_c = np.minimum(w, solo) + np.maximum(0.0, r_bytes - bandwidth * w) / (alpha * bandwidth)
    read2_c = w + read1_c
    read2_e = solo + np.minimum(solo, w)
    contended = gaps[None, :] > w  # the exclusive copy did not arrive within omega
    read1 = np.where(contended, read1_c, solo)
    read2 = np.where(contended, read2_c, read2_e)
    duration = np.minimum(read1 + c1[None, :], read2 + c2[None, :])
    result: FloatArray = duration.mean(axis=1)
    return result


def choose_omega(
    r_bytes: float, bandwidth: float, alpha: float, gaps: FloatArray, c1: FloatArray, c2: FloatArray
) -> tuple[float, float]:
    """(omega, expected duration) minimising the expected task duration; the smallest omega on ties."""
    _check(r_bytes, bandwidth, alpha)
    gaps = np.asarray(gaps, dtype=np.float64)
    c1 = np.asarray(c1, dtype=np.float64)
    c2 = np.asarray(c2, dtype=np.float64)
    if gaps.size == 0 or gaps.shape != c1.shape or gaps.shape != c2.shape:
        raise ValueError("delay assignment: gaps, c1 and c2 must be non-empty and of equal length")
    for name, arr in (("gaps", gaps), ("c1", c1), ("c2", c2)):
        if not np.isfinite(arr).all() or (arr < 0).any():
            raise ValueError(f"delay assignment: {name} samples must be finite and >= 0")
    cross = c1 - c2
    cands = np.unique(np.concatenate([[0.0, r_bytes / bandwidth], gaps, cross[cross > 0]]))
    # np.argmin(expected_durations(cands, ...)) and its value, in one compiled pass (policies/delay_kernel.py)
    best, value = best_omega(cands, float(r_bytes), float(bandwidth), float(alpha), gaps, c1, c2)
    return float(cands[best]), float(value)


def sample_pairs(
    upstream: list[float], downstream: list[float], seed: int = 0
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Samples (gap, c1, c2): pairs of upstream copy durations and of downstream compute times, paired by a
    fixed permutation (deterministic)."""
    up = np.asarray(upstream, dtype=np.float64)
    down = np.asarray(downstream, dtype=np.float64)
    perm_up, perm_down = _permutations(seed, up.size, down.size)
    gaps = np.abs(up - up[perm_up])
    return gaps, down, down[perm_down]


IntArray = npt.NDArray[np.int64]
_PERMUTATIONS: dict[tuple[int, int, int], tuple[IntArray, IntArray]] = {}


def _permutations(seed: int, n_up: int, n_down: int) -> tuple[IntArray, IntArray]:
    """The two permutations sample_pairs draws (seeded: a function of the seed and the sizes, so kept)."""
    key = (seed, n_up, n_down)
    perms = _PERMUTATIONS.get(key)
    if perms is None:
        rng = np.random.default_rng(seed)
        perms = (rng.permutation(n_up), rng.permutation(n_down))
        if len(_PERMUTATIONS) > 4096:
            _PERMUTATIONS.clear()
        _PERMUTATIONS[key] = perms
    return perms

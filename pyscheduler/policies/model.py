"""DollyMP's job measures (paper 000, Sections 4-5): dominant share, effective time, volume, critical path,
Algorithm 1's size classes and Corollary 4.1's clone count. Pure functions; numpy where it pays.

Ambiguities and the choices made here:
* Section 5 writes e = theta + sigma but says sigma enters "by a factor of r"; we use e = theta + r * sigma
  with r = `sigma_factor` (default 1, the printed formula).
* Eq. 16/17 ("remaining versions"): finished phases drop out; a phase in progress counts its unfinished
  tasks n_j^k(t) in the volume and its full e_j^k on the critical path.
* Algorithm 1 line 2: g = log(sum v / (1 - max d)) is rounded up, base 2, at least 1, and at least
  ceil(log2(max e)) so that every job lands in some class (otherwise a long job with a tiny volume could
  stay at p = inf); 1 - max d is floored at 1e-3 (a job asking for the whole cluster).
* Algorithm 1 loops l = 1..g as printed; a time slot is one second.
* Corollary 4.1 as printed, r = min{r : 2^l h(r) >= theta}, is always 1 for a job of class l (theta <= 2^l
  is what put it there). We read it as the copies needed to bring the job one class down:
  r_j = min{r >= 1 : 2^(l-1) h(r) >= e_j}, capped at 1 + max_clones (cap when no r reaches it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from pyscheduler.estimate.pareto import fit_pareto, speedup
from pyscheduler.objects import Job, Phase

FloatArray = npt.NDArray[np.float64]


def dominant_share(demand: Sequence[float], total_capacity: Sequence[float]) -> float:
    """d = max_r demand_r / sum_i C_i,r (DollyMP Eq. 9 for a job, Eq. 15 for a phase's task).

    A dimension the cluster lacks entirely but the task needs gives inf (the task can never run).
    """
    share = 0.0
    for need, cap in zip(demand, total_capacity, strict=True):
        if need > 0:
            share = max(share, need / cap if cap > 0 else math.inf)
    return share


def effective_time(theta: float, sigma: float, sigma_factor: float = 1.0) -> float:
    """e = theta + r * sigma (DollyMP Section 5, effective processing time of a phase)."""
    return theta + sigma_factor * sigma


def job_measures(
    job: Job,
    theta_sigma: Callable[[Job, Phase], tuple[float, float]],
    total_capacity: Sequence[float],
    sigma_factor: float = 1.0,
) -> tuple[float, float, float]:
    """(v_j(t), e_j(t), max_k d_j^k) over the job's unfinished phases (Eq. 14, 16, 17).

    v_j(t) = sum_k n_j^k(t) e_j^k d_j^k (Eq. 16); e_j(t) = sum of e_j^k along the longest path of unfinished
    phases (Eq. 17; Eq. 14 at t = arrival, when nothing has finished).
    """
    phases = job.phases
    longest = [0.0] * len(phases)
    volume = 0.0
    dmax = 0.0
    best = 0.0
    for k in job.topo:
        p = phases[k]
        up = max((longest[q] for q in job.parent_idx[k]), default=0.0)
        if p.num_finished == p.num_tasks:
            longest[k] = up
            continue
        theta, sigma = theta_sigma(job, p)
        e = theta + sigma_factor * sigma  # effective processing time of the phase
        d = dominant_share(p.demand.values, total_capacity)  # Eq. 15
        volume += (p.num_tasks - p.num_finished) * e * d  # Eq. 16
        dmax = max(dmax, d)
        longest[k] = up + e
        best = max(best, longest[k])
    return volume, best, dmax


def size_class_count(volumes: FloatArray, times: FloatArray, max_share: float) -> int:
    """g of Algorithm 1 line 2 (rounded up, base 2; see the module docstring)."""
    denom = max(1.0 - max_share, 1e-3)
    total = float(volumes.sum()) / denom
    g = math.ceil(math.log2(total)) if total > 1 else 1
    tmax = float(times.max()) if times.size else 1.0
    if tmax > 1:
        g = max(g, math.ceil(math.log2(tmax)))
    return max(g, 1)


def transient_priorities(volumes: FloatArray, times: FloatArray, max_share: float) -> npt.NDArray[np.int64]:
    """Algorithm 1 (transient scheduling): the size class p_j of every job (lower runs first).

    For l = 1..g: B_l = {j : e_j <= 2^l}; the knapsack max sum x_j s.t. sum v_j x_j <= 2^l over B_l is solved
    by taking the smallest volumes first (all profits are 1, so this is optimal); a job first packed at
    level l gets p_j = l. Ties in volume keep the input order.
    """
    n = volumes.size
    if n == 0:
        return np.empty(0, np.int64)
    if not (np.isfinite(volumes).all() and np.isfinite(times).all()):
        raise ValueError("transient_priorities: volumes and times must be finite")
    g = size_class_count(volumes, times, max_share)
    p = np.full(n, g + 1, np.int64)  # never reached: 2^g covers every job (see size_class_count)
    unset = np.ones(n, bool)
    order = np.argsort(volumes, kind="stable")
    for level in range(1, g + 1):
        newly = knapsack_level(volumes, times, level, order) & unset
        p[newly] = level
        unset &= ~newly
        if not unset.any():
            break
    return p


def knapsack_level(
    volumes: FloatArray, times: FloatArray, level: int, order: npt.NDArray[np.intp] | None = None
) -> npt.NDArray[np.bool_]:
    """Algorithm 1 lines 5-6 for one level l: x_j of max sum x_j s.t. sum v_j x_j <= 2^l over B_l.

    B_l = {j : e_j <= 2^l}; equal profits make "smallest weights first" optimal. `order` is
    argsort(volumes) (stable), passed in when called for many levels.
    """
    if order is None:
        order = np.argsort(volumes, kind="stable")
    cap = 2.0**level
    v, t = volumes[order], times[order]
    in_b = t <= cap
    packed = in_b & (np.cumsum(np.where(in_b, v, 0.0)) <= cap)
    x = np.zeros(volumes.size, bool)
    x[order] = packed
    return x


def clone_copies(level: int, job_time: float, theta: float, sigma: float, max_copies: int) -> int:
    """Corollary 4.1 (read as in the module docstring): copies r_j = min{r : 2^(l-1) h(r) >= e_j}."""
    if max_copies <= 1 or theta <= 0:
        return 1
    target = 2.0 ** (level - 1)
    _, alpha = fit_pareto(theta, sigma)
    for r in range(1, max_copies + 1):
        if target * speedup(alpha, r) >= job_time:
            return r
    return max_copies

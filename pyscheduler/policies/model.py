"""DollyMP's job measures (paper 000, Sections 4-5): dominant share, effective time, volume, critical path,
Algorithm 1's size classes and Corollary 4.1's clone count. Pure functions; numpy where it pays.

Ambiguities and the choices made here:
* Section 5 writes e = theta + sigma but says sigma enters "by a factor of r"; we use e = theta + r * sigma
  with r = `sigma_factor` (1 in these functions, the printed formula; the dollymp policy passes 1.5, the
  value of Sec. 6).
* Eq. 16/17 ("remaining versions"): finished phases drop out; a phase in progress counts its unfinished
  tasks n_j^k(t) in the volume and its full e_j^k on the critical path.
* Algorithm 1 line 2: g = log(sum v / (1 - max d)) is rounded up, base 2, at least 1, and at least
  ceil(log2(max e)) so that every job lands in some class (otherwise a long job with a tiny volume could
  stay at p = inf); 1 - max d is floored at 1e-3 (a job asking for the whole cluster).
* Algorithm 1 loops l = 1..g as printed; a time slot is one second.
* Corollary 4.1 as printed, r = min{r : 2^l h(r) >= theta}, is always 1 for a job of class l (theta <= 2^l
  is what put it there). We read it inside Algorithm 1's loop: with r copies a job's time is e_j / h(r)
  (Eq. 1), so at level l' = l - 1 the job joins B_l' with r_j = min{r : 2^(l-1) h(r) >= e_j} copies and
  knapsack weight r_j v_j, and "(r_j - 1) clones will be made if the corresponding resources can be packed
  in Step 6": only if r_j v_j fits in what the level-l' knapsack left, 2^(l-1) - sum of the volumes it
  packed (minus the clone volume granted to jobs before it, smallest class and volume first, Section
  4.1's "priority should be given to small jobs"). When no r <= 1 + max_clones reaches it, or the job
  already met 2^(l-1) (it is in class l for its volume, not its time), cloning cannot move it: no
  clones. The slack shrinks as the backlog of smaller jobs grows, so cloning fades at high load
  (Section 6.3.1) with no load parameter. See `corollary_grants`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from pyscheduler.estimate.pareto import fit_pareto, speedup
from pyscheduler.objects import Job, Phase
from pyscheduler.policies import jit

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
    # p starts at g + 1, never reached (2^g covers every job, see size_class_count); each level l sets
    # p_j = l for the jobs knapsack_level(volumes, times, l) packs first (compiled, policies/jit.py)
    return jit.size_classes(volumes, times, np.argsort(volumes, kind="stable").astype(np.int64), g)


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
    """Corollary 4.1 (read as in the module docstring): r_j = min{r : 2^(l-1) h(r) >= e_j}, h from the
    Pareto fit of (theta, sigma) (Eq. 2-3); 1 when no r <= max_copies reaches it (cloning cannot move the
    job a class down, so it is not worth its resources)."""
    if max_copies <= 1 or theta <= 0:
        return 1
    target = 2.0 ** (level - 1)
    _, alpha = fit_pareto(theta, sigma)
    for r in range(1, max_copies + 1):
        if target * speedup(alpha, r) >= job_time:  # Corollary 4.1: 2^l h_j(r) >= theta_j, at l - 1
            return r
    return 1


def level_slack(volumes: FloatArray, times: FloatArray, levels: int) -> FloatArray:
    """slack[l] = 2^l - sum of the volumes Algorithm 1's Step-6 knapsack packs at level l (l = 0..levels)."""
    order = np.argsort(volumes, kind="stable")
    out = np.empty(levels + 1, np.float64)
    for level in range(levels + 1):
        out[level] = 2.0**level - float(volumes[knapsack_level(volumes, times, level, order)].sum())
    return out


def corollary_grants(
    classes: npt.NDArray[np.int64],
    volumes: FloatArray,
    times: FloatArray,
    theta_sigma: Sequence[tuple[float, float] | None],
    max_copies: int,
) -> npt.NDArray[np.int64]:
    """Copies per task for every job (1 = no clones) by Corollary 4.1 with its packing condition.

    `theta_sigma[j]` is the (theta, sigma) of the phase job j would clone (None: nothing running).
    Jobs are taken smallest class first, then smallest volume (Algorithm 1's knapsack order); a job of
    class l >= 2 with e_j > 2^(l-1) gets r_j copies if r_j v_j fits in the level-(l-1) slack, which it
    then uses up. Finite volumes and times only (the caller filters jobs that can never run).
    """
    n = volumes.size
    copies = np.ones(n, np.int64)
    if n == 0 or max_copies <= 1:
        return copies
    top = int(classes.max(initial=1))
    slack = level_slack(volumes, times, max(top - 1, 0))
    for j in np.lexsort((volumes, classes)).tolist():
        stats = theta_sigma[j]
        level = int(classes[j])
        if stats is None or level < 2 or times[j] <= 2.0 ** (level - 1):
            continue
        r = clone_copies(level, float(times[j]), stats[0], stats[1], max_copies)
        need = r * float(volumes[j])  # the job's knapsack weight with r copies
        if r > 1 and need <= slack[level - 1]:
            slack[level - 1] -= need
            copies[j] = r
    return copies


def job_order(
    classes: np.ndarray, arrival: np.ndarray, app_priority: np.ndarray, volumes: np.ndarray | None = None
) -> np.ndarray:
    """The order in which jobs are served: lowest DollyMP class (priority value) first; among jobs of
    equal class the higher YARN application priority first (the paper has no application priorities:
    the project's tie-break, so that an operator's priorities order equal jobs as in YARN), then earlier
    arrival, then the job's index. With `volumes` (the extension order="size_class_volume"), jobs of
    equal class and application priority go smallest volume v_j(t) first, before arrival."""
    n = classes.size
    keys = [np.arange(n), arrival]
    if volumes is not None:
        keys.append(volumes)
    return np.lexsort((*keys, -app_priority.astype(np.int64), classes))

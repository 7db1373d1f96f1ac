"""Paper 003 (Aktas et al., "Scheduling with redundancy in Master-Worker clusters"), Sec. IV: the M/G/c
approximation of a Master-Worker cluster under Redundant-small, and the demand threshold d* minimising it.

Model (Sec. II): a job of k tasks, each asking r of the capacity for a minimum service time b; every copy of a
task is slowed by an independent S ~ Pareto(1, alpha). Under Redundant-small a job of demand D = k r b <= d
runs expanded at rate `rate`, a larger one as is. The paper expands by MDS coding (any k of n = ceil(k rate)
tasks finish the job); the policy (redundant_small.py) replicates instead: ceil(k rate) - k extra copies
dealt to the tasks in order, all launched with the originals, the first copy of a task to finish wins and
the others are killed. Both are modelled here (`model="coded"`: Eq. 5; `model="replication"`: the same
quantities for what the policy runs). Per job (moments in units of b, b^2 and r b):
    coded, n = ceil(k rate):  Latency = b S_{n:k}, E[Cost] = r b n / (alpha-1) (alpha - (1-k/n) E[S_{n:k}])
                              (Eq. 5), E[S_{n:k}^m] = Gamma(n+1) Gamma(n-k+1-m/alpha) /
                              (Gamma(n-k+1) Gamma(n+1-m/alpha)) (Eq. 5 for m = 1; m = 2 the same order
                              statistic's second moment, which Sec. IV says is "derived exactly the same way")
    replication:              a task with c copies ends at b min(S_1..S_c) ~ b Pareto(1, c alpha) and costs
                              c r b E[min] = c r b c alpha / (c alpha - 1); Latency = the max over the tasks,
                              its moments by quadrature of P(max > x)
    no redundancy:            Latency = b S_{k:k}, E[Cost] = k r b alpha / (alpha - 1)
A job of several phases is taken as its phases one after another with independent latencies (the paper's
jobs have one phase; [reconstruction]): latencies and costs add, variances add.

System (Approximation 1, Claim 1): capacity N C (here 1: r is a share of the cluster total), arrival rate
lambda; rho = lambda E[Cost] / NC (Eq. 2); an M/G/c queue with c = NC E[Latency] / E[Cost] servers and
service time Latency; Erlang's C for non-integer c through the incomplete gamma function (Eq. 9);
    E[T] ~ E[Latency] + E[Latency^2] / (2 E[Latency]^2) Pr{Queueing} rho / (lambda (1 - rho))     (Eq. 8, 11)
with every expectation over the job mix by the law of total expectation (Eq. 3): jobs with D <= d
redundant. d* is the threshold of least E[T] among the sample's demands (and 0: no redundancy); E[T] is inf
when rho >= 1 or a second moment diverges (alpha <= 2 without enough copies), and if every candidate is
inf, d* = 0 (Redundant-none: never adds load).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
MODELS = ("replication", "coded")


def pareto_order_moment(n: int, k: int, alpha: float, m: int = 1) -> float:
    """E[S_{n:k}^m], the k-th smallest of n i.i.d. Pareto(1, alpha) (paper 003, Eq. 5); inf if divergent."""
    a = n - k + 1 - m / alpha
    if a <= 0:
        return math.inf
    return math.exp(
        math.lgamma(n + 1) + math.lgamma(a) - math.lgamma(n - k + 1) - math.lgamma(n + 1 - m / alpha)
    )


def max_pareto_moment(groups: tuple[tuple[int, float], ...], j: int) -> float:
    """E[X^j], X the max of independent Pareto(1, a) variables, `count` of each (count, a) in `groups`:
    1 + int_0^inf j e^{jt} (1 - prod (1 - e^{-a t})^count) dt (x = e^t), Simpson's rule, analytic tail."""
    groups = tuple((c, a) for c, a in groups if c > 0)
    a_min = min(a for _, a in groups)
    if a_min <= j:
        return math.inf
    t_max = (40.0 + math.log(sum(c for c, _ in groups))) / (a_min - j)
    t = np.linspace(0.0, t_max, 8001)
    with np.errstate(divide="ignore"):
        log_cdf = sum(c * np.log1p(-np.exp(-a * t)) for c, a in groups)
    f = j * np.exp(j * t) * -np.expm1(log_cdf)
    h = t[1] - t[0]
    body = h / 3 * (f[0] + f[-1] + 4 * f[1:-1:2].sum() + 2 * f[2:-1:2].sum())
    tail = sum(c * j * math.exp((j - a) * t_max) / (a - j) for c, a in groups)
    return 1.0 + float(body) + tail


@lru_cache(maxsize=4096)
def phase_factors(k: int, alpha: float, rate: float, model: str) -> tuple[float, ...]:
    """(E[L], E[L^2], E[Cost]) of one phase of k tasks with b = r = 1: without, then with redundancy."""
    mean_s = alpha / (alpha - 1)
    plain = (pareto_order_moment(k, k, alpha, 1), pareto_order_moment(k, k, alpha, 2), k * mean_s)
    n = math.ceil(k * rate - 1e-9)
    if n <= k:
        return plain + plain
    if model == "coded":
        s1 = pareto_order_moment(n, k, alpha, 1)
        red = (s1, pareto_order_moment(n, k, alpha, 2), n / (alpha - 1) * (alpha - (1 - k / n) * s1))
    else:
        extra = n - k
        base, hi = 1 + extra // k, extra % k
        groups = ((hi, (base + 1) * alpha), (k - hi, base * alpha))
        cost = sum(cnt * c * (c * alpha) / (c * alpha - 1) for cnt, c in ((hi, base + 1), (k - hi, base)))
        red = (max_pareto_moment(groups, 1), max_pareto_moment(groups, 2), cost)
    return plain + red


def job_moments(
    phases: list[tuple[int, float, float]], alpha: float, rate: float, model: str
) -> tuple[float, FloatArray, FloatArray]:
    """Demand D = sum k r b and (E[L], E[L^2], E[Cost]) without and with redundancy, for a job given as
    phases (k tasks, minimum service time b, share r per task) run one after another."""
    demand = 0.0
    out = np.zeros((2, 3))
    var = np.zeros(2)
    for k, b, r in phases:
        f = phase_factors(k, alpha, rate, model)
        demand += k * r * b
        for i in (0, 1):
            e1, e2, cost = f[3 * i : 3 * i + 3]
            out[i, 0] += b * e1
            var[i] += b * b * (e2 - e1 * e1)
            out[i, 2] += r * b * cost
    out[:, 1] = var + out[:, 0] ** 2
    return demand, out[0], out[1]


def erlang_c(c: FloatArray, rho: FloatArray) -> FloatArray:
    """Pr{Queueing} = (1 + (1 - rho) c e^{c rho} Gamma(c, c rho) / (c rho)^c)^-1 (paper 003, Eq. 9: Erlang's C
    for real c > 0, 0 < rho < 1). Gamma(c, x) = Gamma(c) (1 - P(c, x)), P by its series (x < c converges)."""
    c = np.asarray(c, np.float64)
    x = c * np.asarray(rho, np.float64)
    log_g = np.array([math.lgamma(v) for v in c.tolist()])
    log_a = x + log_g - c * np.log(x)  # log of e^x Gamma(c) / x^c
    term = 1.0 / c
    series = term.copy()
    for i in range(1, 100000):
        term = term * x / (c + i)
        series += term
        if (term <= 1e-17 * series).all():
            break
    p_lower = np.minimum(series * np.exp(-log_a), 1.0)  # P(c, x) = x^c e^-x series / Gamma(c)
    z = np.log1p(-rho) + np.log(c) + log_a + np.log1p(-p_lower)  # log of the second term of Eq. 9
    return np.asarray(np.exp(-np.logaddexp(0.0, z)), np.float64)  # 1 / (1 + e^z), without overflow


def response_times(
    demand: FloatArray, plain: FloatArray, red: FloatArray, lam: float, cuts: npt.NDArray[np.int64]
) -> FloatArray:
    """E[T] (Eq. 11) when the `cut` jobs of least demand run redundant, for each cut in `cuts`; rows of
    `plain`/`red` are jobs (E[L], E[L^2], E[Cost]), sorted by `demand` ascending; capacity NC = 1."""
    n = len(demand)
    pre = np.vstack([np.zeros(3), np.cumsum(red - plain, axis=0)])
    mean = (plain.sum(axis=0)[None, :] + pre[cuts]) / n  # (len(cuts), 3)
    e1, e2, cost = mean[:, 0], mean[:, 1], mean[:, 2]
    rho = lam * cost
    out = np.full(len(cuts), math.inf)
    ok = (rho < 1) & (rho > 0) & np.isfinite(e2) & (e1 > 0)
    if ok.any():
        r = rho[ok]
        pq = erlang_c(e1[ok] / cost[ok], r)
        out[ok] = e1[ok] + e2[ok] / (2 * e1[ok] ** 2) * pq * r / (lam * (1 - r))
    return out


def optimal_threshold(
    demand: FloatArray, plain: FloatArray, red: FloatArray, lam: float, max_cuts: int = 256
) -> float:
    """d*: the demand threshold of least E[T] (0: no job redundant); jobs as in `response_times` (any order).
    More than `max_cuts` jobs: the candidate cuts are that many quantiles of the demands."""
    order = np.argsort(demand, kind="stable")
    demand, plain, red = demand[order], plain[order], red[order]
    # a cut must not split jobs of equal demand: candidates are the ends of runs of equal demands
    ends = np.flatnonzero(np.append(demand[1:] != demand[:-1], True)) + 1
    if len(ends) > max_cuts:
        ends = np.unique(ends[np.linspace(0, len(ends) - 1, max_cuts).round().astype(np.int64)])
    cuts = np.concatenate([[0], ends]).astype(np.int64)
    times = response_times(demand, plain, red, lam, cuts)
    if not np.isfinite(times).any():
        return 0.0
    best = int(cuts[int(np.argmin(times))])
    return 0.0 if best == 0 else float(demand[best - 1])

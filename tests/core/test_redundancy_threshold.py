"""Redundant-small's threshold d* from paper 003's M/G/c approximation (Sec. IV, Eq. 2-11), checked against a
computation by hand from the printed formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyscheduler.policies import Snapshot, get_policy
from pyscheduler.policies.redundancy_model import (
    erlang_c,
    max_pareto_moment,
    pareto_order_moment,
    phase_factors,
)

from .helpers import cluster, job

ALPHA, RATE = 3.0, 2.0
MIX = [(1, 10.0), (2, 10.0), (1, 30.0), (4, 20.0), (8, 15.0), (10, 40.0)]  # (k tasks, b seconds)
R = 1 / 200  # one task (1 cpu, 1024 MB) of 20 nodes x (10 cpu, 10240 MB)


def _order_stat(n: int, k: int, m: int) -> float:
    """E[S_{n:k}^m] for Pareto(1, alpha), straight from Eq. 5 with math.gamma."""
    g = math.gamma
    return g(n + 1) * g(n - k + 1 - m / ALPHA) / (g(n - k + 1) * g(n + 1 - m / ALPHA))


def _erlang_c(c: float, rho: float) -> float:
    """Eq. 9 with Gamma(c, x) = int_x^inf u^(c-1) e^-u du by the trapezoid rule on a fine grid."""
    x = c * rho
    u = np.linspace(x, x + 60 * math.sqrt(c) + 200, 400001)
    log_f = (c - 1) * np.log(u) - u
    top = log_f.max()
    upper_gamma_log = top + math.log(float(np.trapezoid(np.exp(log_f - top), u)))
    second = (1 - rho) * math.exp(math.log(c) + x + upper_gamma_log - c * math.log(x))
    return 1 / (1 + second)


def _hand_threshold(rho0: float) -> tuple[float, list[float]]:
    mean_s = ALPHA / (ALPHA - 1)
    jobs = []
    for k, b in MIX:
        n = math.ceil(k * RATE)
        s1 = _order_stat(n, k, 1)
        plain = (b * _order_stat(k, k, 1), b * b * _order_stat(k, k, 2), R * b * k * mean_s)
        red = (b * s1, b * b * _order_stat(n, k, 2), R * b * n / (ALPHA - 1) * (ALPHA - (1 - k / n) * s1))
        jobs.append((k * R * b, plain, red))
    jobs.sort()
    lam = rho0 / (sum(d for d, _, _ in jobs) / len(jobs) * mean_s)  # Eq. 2 with d = 0
    times = []
    for cut in range(len(jobs) + 1):  # the `cut` jobs of least demand run with redundancy (Eq. 3)
        e1, e2, cost = (
            sum((red if i < cut else plain)[m] for i, (_, plain, red) in enumerate(jobs)) / len(jobs)
            for m in range(3)
        )
        rho = lam * cost  # Eq. 2, N C = 1
        c = e1 / cost  # Approximation 1: N C E[Latency] / E[Cost] servers
        if rho >= 1:  # unstable: the queue grows without bound
            times.append(math.inf)
            continue
        times.append(e1 + e2 / (2 * e1**2) * _erlang_c(c, rho) * rho / (lam * (1 - rho)))  # Eq. 8, 11
    best = int(np.argmin(times))
    return (0.0 if best == 0 else jobs[best - 1][0]), times


def test_threshold_equals_the_hand_computed_mgc_optimum() -> None:
    d_hand, times = _hand_threshold(0.75)
    assert d_hand == pytest.approx(0.4)  # interior: jobs up to (4 tasks, 20 s) redundant, not the two largest
    assert times[4] < min(times[0], times[-1])
    c = cluster(*[(10.0, 10240.0)] * 20)
    jobs = [job(f"j{i}", 0.0, ("m", k, (1, 1024), b, 0.0, ())) for i, (k, b) in enumerate(MIX)]
    policy = get_policy("redundant-small", model="coded", load=0.75, min_jobs=len(MIX))
    d = policy.decide(Snapshot(0.0, c, jobs))
    assert policy.d_star == pytest.approx(d_hand)  # type: ignore[attr-defined]
    clones = {p.job_id for p in d.placements if p.is_clone}
    assert clones == {"j0", "j1", "j2", "j3"}  # demand k r b <= d*
    assert sum(p.is_clone for p in d.placements) == 1 + 2 + 1 + 4  # rate 2: one extra copy per task


def test_threshold_shrinks_with_load_and_fixed_rule_is_kept() -> None:
    assert _hand_threshold(0.3)[0] == pytest.approx(max(k * R * b for k, b in MIX))  # low load: all
    assert _hand_threshold(0.9)[0] == 0.0  # near saturation: none (paper 003, Fig. 6)
    c = cluster(*[(10.0, 10240.0)] * 20)
    jobs = [job(f"j{i}", 0.0, ("m", k, (1, 1024), b, 0.0, ())) for i, (k, b) in enumerate(MIX)]
    fixed = get_policy("redundant-small", threshold="fixed").decide(Snapshot(0.0, c, jobs))
    # the former rule: remaining task-seconds <= 100 -> j0 (10), j1 (20), j2 (30), j3 (80)
    assert {p.job_id for p in fixed.placements if p.is_clone} == {"j0", "j1", "j2", "j3"}
    few = get_policy("redundant-small").decide(Snapshot(0.0, c, jobs[:3]))  # under min_jobs: no redundancy
    assert not any(p.is_clone for p in few.placements)
    with pytest.raises(ValueError, match="threshold"):
        get_policy("redundant-small", threshold="nope")


def test_model_pieces_against_closed_forms() -> None:
    for c, rho in ((1, 0.5), (5, 0.7), (20, 0.9), (50, 0.3)):  # Eq. 9 = Erlang's C for integer c
        a = c * rho
        tail = a**c / math.factorial(c) / (1 - rho)
        classic = tail / (sum(a**i / math.factorial(i) for i in range(c)) + tail)
        assert float(erlang_c(np.array([float(c)]), np.array([rho]))[0]) == pytest.approx(classic, rel=1e-9)
    real = float(erlang_c(np.array([7.3]), np.array([0.6]))[0])  # non-integer c: against the integral
    assert real == pytest.approx(_erlang_c(7.3, 0.6), rel=1e-6)
    # one task and one replica: min of two Pareto(1, 3) is Pareto(1, 6)
    assert max_pareto_moment(((1, 6.0),), 1) == pytest.approx(6 / 5)
    assert max_pareto_moment(((1, 6.0),), 2) == pytest.approx(6 / 4)
    for k in (1, 4, 10, 300):  # the quadrature of the max matches Eq. 5's order statistic S_{k:k}
        for m in (1, 2):
            assert max_pareto_moment(((k, ALPHA),), m) == pytest.approx(pareto_order_moment(k, k, ALPHA, m))
    assert math.isinf(pareto_order_moment(3, 3, 1.5, 2))  # alpha <= 2: no second moment without copies
    rep = phase_factors(4, ALPHA, RATE, "replication")
    assert rep[5] == pytest.approx(4 * 2 * 6 / 5)  # cost: 4 tasks x 2 copies x E[min]
    assert rep[3] < rep[0] and rep[4] < rep[1]  # replication shortens latency

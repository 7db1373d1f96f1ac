"""DollyMP / Dolly formulas against values computed by hand from the papers' definitions."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pyscheduler.estimate import fit_pareto, quantile_samples, speedup, straggler_probability
from pyscheduler.objects import Job
from pyscheduler.policies.dolly import copies_needed
from pyscheduler.policies.model import clone_copies, dominant_share, effective_time, job_measures
from pyscheduler.policies.table import PhaseTable, RoundView

from .helpers import job


def test_dominant_share_eq9_eq15() -> None:
    # d = max(c / sum C, m / sum M): 4 of 100 cores vs 1024 of 102400 MB -> 0.04
    assert dominant_share((4, 1024), (100, 102400)) == pytest.approx(0.04)
    assert dominant_share((1, 51200), (100, 102400)) == pytest.approx(0.5)
    assert dominant_share((0, 10, 1), (5, 100, 2)) == pytest.approx(0.5)  # three dimensions
    assert dominant_share((1, 1), (10, 0)) == math.inf  # the cluster lacks a needed dimension


def test_effective_time() -> None:
    assert effective_time(10.0, 4.0) == 14.0  # e = theta + sigma (Section 5)
    assert effective_time(10.0, 4.0, sigma_factor=2.0) == 18.0  # e = theta + r sigma


def _dag() -> Job:
    # A -> B, A -> C, B -> D, C -> D; total capacity (10, 10)
    return job(
        "j",
        0.0,
        ("A", 4, (1, 2), 10.0, 2.0, ()),
        ("B", 2, (2, 1), 5.0, 1.0, ("A",)),
        ("C", 1, (1, 5), 20.0, 0.0, ("A",)),
        ("D", 1, (5, 5), 3.0, 1.0, ("B", "C")),
    )


def test_effective_volume_and_critical_path_eq14() -> None:
    j = _dag()
    v, e, dmax = job_measures(j, lambda _j, p: (p.mean, p.sd), (10.0, 10.0))
    # e_A=12 d_A=0.2, e_B=6 d_B=0.2, e_C=20 d_C=0.5, e_D=4 d_D=0.5
    assert v == pytest.approx(4 * 12 * 0.2 + 2 * 6 * 0.2 + 1 * 20 * 0.5 + 1 * 4 * 0.5)  # 23.2
    assert e == pytest.approx(12 + 20 + 4)  # critical path A -> C -> D
    assert dmax == pytest.approx(0.5)


def test_remaining_volume_and_path_eq16_eq17() -> None:
    j = _dag()
    a, b = j.phase("A"), j.phase("B")
    for t in range(4):
        a.start_copy(t)
        a.end_copy(t, succeeded=True)
    b.start_copy(0)
    b.end_copy(0, succeeded=True)
    v, e, _ = job_measures(j, lambda _j, p: (p.mean, p.sd), (10.0, 10.0))
    assert v == pytest.approx(1 * 6 * 0.2 + 1 * 20 * 0.5 + 1 * 4 * 0.5)  # A gone, B has one task left
    assert e == pytest.approx(20 + 4)  # max(B, C) + D over the remaining phases


def test_vectorised_measures_match_scalar() -> None:
    rng = np.random.default_rng(3)
    jobs = []
    for i in range(30):
        n = int(rng.integers(1, 5))
        phases = []
        for k in range(n):
            parents = tuple(f"p{q}" for q in range(k) if rng.random() < 0.5)
            phases.append(
                (
                    f"p{k}",
                    int(rng.integers(1, 6)),
                    (float(rng.integers(1, 4)), float(rng.integers(1, 9))),
                    float(rng.uniform(1, 50)),
                    float(rng.uniform(0, 20)),
                    parents,
                )
            )
        j = job(f"j{i}", float(i), *phases)
        for p in j.phases:
            if j.ready(j.phase_index[p.phase_id]) and rng.random() < 0.4:
                for t in range(p.num_tasks):
                    p.start_copy(t)
                    p.end_copy(t, succeeded=True)
        jobs.append(j)
    total = np.array([40.0, 100.0])
    view = RoundView(PhaseTable(jobs), None)
    vol, times, _ = view.measures(total, 1.5)
    for i, j in enumerate(jobs):
        v, e, _ = job_measures(j, lambda _j, p: (p.mean, p.sd), (40.0, 100.0), 1.5)
        assert vol[i] == pytest.approx(v)
        assert times[i] == pytest.approx(e)


def test_pareto_fit_eq2_matches_mean_and_sd() -> None:
    xm, alpha = fit_pareto(10.0, 10.0)
    assert alpha == pytest.approx(1 + math.sqrt(2))  # CV = 1: alpha (alpha - 2) = 1
    assert alpha * xm / (alpha - 1) == pytest.approx(10.0)
    var = xm**2 * alpha / ((alpha - 1) ** 2 * (alpha - 2))
    assert math.sqrt(var) == pytest.approx(10.0)
    assert fit_pareto(5.0, 0.0) == (5.0, math.inf)
    with pytest.raises(ValueError, match="mean"):
        fit_pareto(-1.0, 1.0)


def test_speedup_eq3_by_hand_and_by_sampling() -> None:
    assert speedup(3.0, 1) == 1.0
    assert speedup(3.0, 2) == pytest.approx(2.5 / 2)  # (alpha - 1/2) / (alpha - 1)
    assert speedup(3.0, 3) == pytest.approx((3 - 1 / 3) / 2)
    assert speedup(math.inf, 3) == 1.0
    # Eq. 1: E[min of r copies] = theta / h(r), checked by sampling the fitted Pareto
    rng = np.random.default_rng(0)
    xm, alpha = 2.0, 3.0
    theta = alpha * xm / (alpha - 1)
    for r in (2, 3):
        draws = xm * (1 - rng.random((200_000, r))) ** (-1 / alpha)
        assert draws.min(axis=1).mean() == pytest.approx(theta / speedup(alpha, r), rel=0.01)


def test_clone_count_corollary_4_1() -> None:
    theta = 10.0
    sigma = theta / math.sqrt(3.0)  # CV^2 = 1/3 -> alpha = 3, h(2) = 1.25, h(3) = 4/3
    assert fit_pareto(theta, sigma)[1] == pytest.approx(3.0)
    assert clone_copies(5, theta, theta, sigma, 3) == 1  # 2^4 >= 10 without clones
    assert clone_copies(4, theta, theta, sigma, 3) == 2  # 2^3 h(2) = 10 >= 10
    assert clone_copies(3, theta, theta, sigma, 3) == 1  # 2^2 h(r) never reaches 10: cloning cannot help
    assert clone_copies(3, theta, theta, sigma, 1) == 1  # no clones allowed


def test_dolly_clone_count_pseudocode_1() -> None:
    # n = 10, p = 0.1, eps = 0.05: c = ceil(log(1 - 0.95^(1/10)) / log 0.1) = ceil(2.29) = 3
    assert copies_needed(10, 0.1, 0.05) == 3
    assert 1 - (1 - 0.1**3) ** 10 <= 0.05 < 1 - (1 - 0.1**2) ** 10
    assert copies_needed(1, 0.0, 0.05) == 1
    with pytest.raises(ValueError, match="epsilon"):
        copies_needed(3, 0.1, 0.0)


def test_straggler_probability_and_quantiles() -> None:
    assert straggler_probability(3.0) == pytest.approx(2.0**-4)
    xm, alpha = 1.0, 3.0
    rng = np.random.default_rng(1)
    draws = xm * (1 - rng.random(400_000)) ** (-1 / alpha)
    assert (draws > 2 * np.median(draws)).mean() == pytest.approx(straggler_probability(alpha), rel=0.03)
    q = quantile_samples(10.0, 5.0, 2000)
    assert float(np.mean(q)) == pytest.approx(10.0, rel=0.05)
    assert q == sorted(q)

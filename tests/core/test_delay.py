"""Delay assignment (Dolly Section 4.4): the model by hand, and omega against brute-force minimisation."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyscheduler.policies.delay import choose_omega, expected_durations, sample_pairs


def test_read_durations_by_hand() -> None:
    r, bw, alpha = 100.0, 10.0, 0.5  # alone 10 s; contended rate 5/s
    one = np.array([1.0])
    # contention (gap 50 > omega 4): first copy reads 40 alone then 60 at 5/s = 4 + 12 = 16;
    # second copy 4 + 16 = 20 ("2 omega + (r - B omega)/(alpha B)"); no compute time: min = 16
    got = expected_durations(np.array([4.0]), r, bw, alpha, np.array([50.0]), 0 * one, 0 * one)
    assert got[0] == pytest.approx(16.0)
    # exclusive (gap 3 <= omega 4): first r/B = 10, second 10 + min(10, 4) = 14; compute 10, 0 -> 14
    got = expected_durations(np.array([4.0]), r, bw, alpha, np.array([3.0]), 10 * one, 0 * one)
    assert got[0] == pytest.approx(14.0)
    # p_c T_C + (1 - p_c) T_E over two samples, one of each kind
    got = expected_durations(np.array([4.0]), r, bw, alpha, np.array([50.0, 3.0]), np.zeros(2), np.zeros(2))
    assert got[0] == pytest.approx((16.0 + 10.0) / 2)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 10_000),
    st.floats(1.0, 500.0),
    st.floats(1.0, 50.0),
    st.floats(0.05, 1.0),
    st.integers(2, 24),
)
def test_omega_matches_brute_force(seed: int, r: float, bw: float, alpha: float, n: int) -> None:
    rng = np.random.default_rng(seed)
    up = list(rng.pareto(2.0, n) * 10 + 5)
    down = list(rng.pareto(2.5, n) * 8 + 3)
    gaps, c1, c2 = sample_pairs(up, down, seed)
    omega, value = choose_omega(r, bw, alpha, gaps, c1, c2)
    top = max(float(gaps.max()), r / bw, float(np.abs(c1 - c2).max())) * 1.5 + 1
    grid = np.linspace(0.0, top, 40_001)
    brute = expected_durations(grid, r, bw, alpha, gaps, c1, c2)
    assert value == pytest.approx(float(expected_durations(np.array([omega]), r, bw, alpha, gaps, c1, c2)[0]))
    assert value <= float(brute.min()) + 1e-9  # never worse than any omega on a fine grid
    assert value >= float(brute.min()) - (top / 40_000) * 3  # and the grid gets within its step of it


def test_bad_inputs_named() -> None:
    with pytest.raises(ValueError, match="alpha"):
        choose_omega(1.0, 1.0, 1.5, np.ones(2), np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="gaps"):
        choose_omega(1.0, 1.0, 0.5, np.array([np.nan, 1.0]), np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="bandwidth"):
        choose_omega(1.0, 0.0, 0.5, np.ones(2), np.ones(2), np.ones(2))

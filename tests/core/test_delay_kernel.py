"""policies/delay_kernel.py's compiled omega search equals np.argmin over delay.expected_durations (the
numpy model it replaced in choose_omega), bit for bit, on random samples of every size up to a few blocks
of numpy's pairwise summation."""

from __future__ import annotations

import numpy as np
import pytest

from pyscheduler.policies.delay import expected_durations
from pyscheduler.policies.delay_kernel import best_omega


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_best_omega_equals_the_numpy_model(seed: int) -> None:
    rng = np.random.default_rng(seed)
    ties = 0
    for _ in range(400):
        m = int(rng.choice([1, 2, 7, 8, 9, 15, 16, 17, 32, 64, 100, 128, 129, 300]))
        scale = float(rng.choice([0.1, 5.0, 300.0]))
        gaps = np.abs(rng.exponential(scale, m) - rng.exponential(scale, m))
        gaps[rng.random(m) < 0.1] = 0.0
        c1 = rng.exponential(scale, m)
        c2 = c1[rng.permutation(m)] if rng.random() < 0.5 else rng.exponential(scale, m)
        r_bytes = float(rng.choice([0.0, 64e6, 1e9]))
        bw = float(rng.choice([12.5e6, 125e6]))
        alpha = float(rng.choice([0.5, 0.9, 1.0]))
        cross = c1 - c2
        cands = np.unique(np.concatenate([[0.0, r_bytes / bw], gaps, cross[cross > 0]]))
        values = expected_durations(cands, r_bytes, bw, alpha, gaps, c1, c2)
        want = int(np.argmin(values))
        got, value = best_omega(cands, r_bytes, bw, alpha, gaps, c1, c2)
        assert got == want
        assert value == values[want]  # bit for bit, not approximately
        ties += int((values == values[want]).sum() > 1)
    assert ties > 0  # equal minima occur: the first one is kept, as np.argmin keeps it

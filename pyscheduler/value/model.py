"""Expected values in seconds under the fitted run-time distribution.

A phase's task run time Θ is Type-I Pareto, Pr{Θ > x} = (x_m / x)^α (DollyMP Eq. 2), fitted from the
phase's mean θ and SD σ (estimate/pareto.py `fit_pareto`). The fastest of r independent copies finishes in
expectation θ / h(r) with h(r) = (α - 1/r) / (α - 1) (Eq. 1, 3); here copies start at different times and
some have known finishes, so the expectation of the minimum is integrated from the copies' survival
functions: E[min R_i] = ∫ Π_i Pr{R_i > t} dt.

A copy's remaining time R (`remaining`):
- timed (its rate known, estimate/copies.py `finish_at_rate`): R = its known time left;
- running with `worked` seconds of work and no rate: Θ conditioned on Θ > worked, less worked, so
  Pr{R > t} = min(1, (max(x_m, worked) / (worked + t))^α) (a Pareto's tail grows with the time survived);
- not started (a waiting clone or original, after `startup` seconds): Pr{R > t} = Pr{Θ > t - startup}.

The value of a copy to its task is E[min of the others] - E[min of all] (`value_of_copy`): what its task's
finish is expected to slip if it went. A copy alone in its task is worth E[its R] in this sense, which is
why a task's last copy is never a victim (service/round/yield_value.py).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

from pyscheduler.estimate.pareto import fit_pareto


@dataclass(frozen=True, slots=True)
class Draw:
    """One copy's remaining time as a distribution: `left_s` known (a timed copy), or Pareto(x_m, alpha) of
    which `worked_s` seconds are done, starting after `startup_s` (0 once it runs)."""

    x_m: float
    alpha: float
    worked_s: float = 0.0
    startup_s: float = 0.0
    left_s: float | None = None

    def survival(self, t: float) -> float:
        if self.left_s is not None:
            return 1.0 if t < self.left_s else 0.0
        if t < self.startup_s:
            return 1.0
        u = t - self.startup_s + self.worked_s
        if math.isinf(self.alpha):  # no spread: the fitted time exactly
            return 1.0 if u < max(self.x_m, self.worked_s) else 0.0
        base = max(self.x_m, self.worked_s)
        return 1.0 if u <= base else (base / u) ** self.alpha

    def mean_hint(self) -> float:
        """A scale for the integration grid: the known time left, or the fitted mean plus the start-up."""
        if self.left_s is not None:
            return max(self.left_s, 1e-3)
        a = self.alpha
        mean = self.x_m * a / (a - 1.0) if a > 1 and math.isfinite(a) else self.x_m
        return max(self.startup_s + max(mean, self.worked_s), 1e-3)


def remaining(
    mean_s: float,
    sd_s: float,
    *,
    worked_s: float = 0.0,
    startup_s: float = 0.0,
    left_s: float | None = None,
) -> Draw:
    """The Draw of a copy of a phase with run time mean `mean_s` and SD `sd_s` (module docstring)."""
    if left_s is not None:
        if not (math.isfinite(left_s) or left_s == math.inf):
            raise ValueError(f"left_s must be a number, got {left_s!r}")
        return Draw(mean_s, math.inf, left_s=max(0.0, left_s))
    x_m, alpha = fit_pareto(mean_s, sd_s)
    return Draw(x_m, alpha, max(0.0, worked_s), max(0.0, startup_s))


def expected_min(draws: Sequence[Draw], horizon: float = 20.0, steps: int = 256) -> float:
    """E[min of the draws' remaining times], s: the integral of the product of their survival functions up
    to `horizon` times the largest scale (geometric grid, trapezoids). 0 for no draw."""
    if not draws:
        return 0.0
    known = [d.left_s for d in draws if d.left_s is not None]
    end = min([horizon * max(d.mean_hint() for d in draws), *known])
    if not math.isfinite(end) or end <= 0:
        return 0.0 if end <= 0 else math.inf
    edges = sorted({0.0, end, *(x for d in draws for x in (d.startup_s, d.left_s or 0.0) if 0 < x < end)})
    total = 0.0
    for lo, hi in itertools.pairwise(edges):
        n = max(2, steps * (hi - lo) // end + 2)
        ts = [lo + (hi - lo) * (i / (n - 1)) ** 2 for i in range(int(n))]
        prev_t, prev_s = ts[0], _survival(draws, ts[0])
        for t in ts[1:]:
            s = _survival(draws, t)
            total += (t - prev_t) * (prev_s + s) / 2.0
            prev_t, prev_s = t, s
    return total


def _survival(draws: Sequence[Draw], t: float) -> float:
    p = 1.0
    for d in draws:
        p *= d.survival(t)
        if p == 0.0:
            break
    return p


def value_of_copy(copy: Draw, others: Sequence[Draw], horizon: float = 20.0) -> float:
    """Seconds by which the task's expected finish slips if `copy` went: E[min others] - E[min all]. A copy
    alone is worth infinity (its task would have to start again)."""
    if not others:
        return math.inf
    return max(0.0, expected_min(others, horizon) - expected_min([copy, *others], horizon))


def value_of_start(wait_s: float, copy: Draw, others: Sequence[Draw], horizon: float = 20.0) -> float:
    """Seconds a waiting container saves by starting now rather than in `wait_s` seconds: for an original
    (no other copy) the wait itself; for a clone, how much sooner its task finishes with the clone started
    now than started after the wait."""
    if not others:
        return max(0.0, wait_s)
    later = Draw(copy.x_m, copy.alpha, copy.worked_s, copy.startup_s + max(0.0, wait_s), copy.left_s)
    return max(0.0, expected_min([later, *others], horizon) - expected_min([copy, *others], horizon))

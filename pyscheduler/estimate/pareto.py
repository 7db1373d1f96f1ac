"""Pareto fit of a task run-time distribution from its mean and SD, and the cloning speedup h(r).

DollyMP (paper 000) Section 3: the run time Theta of a phase's tasks is fitted with a Type-I Pareto
distribution, Pr{Theta > x} = (x_m / x)^alpha (Eq. 2), and r copies of a task finish, in expectation,
h(r) times faster: E[Theta(r)] = theta / h(r) (Eq. 1) with h(r) = (alpha - 1/r) / (alpha - 1) (Eq. 3).
"""

from __future__ import annotations

import math


def fit_pareto(mean: float, sd: float) -> tuple[float, float]:
    """(x_m, alpha) of the Type-I Pareto with this mean and SD.

    For Pareto(x_m, alpha): mean = alpha x_m / (alpha - 1), CV^2 = 1 / (alpha (alpha - 2)), so
    alpha = 1 + sqrt(1 + 1/CV^2) (> 2 always) and x_m = mean (alpha - 1) / alpha.
    sd == 0 (no variation) gives alpha = inf and x_m = mean: cloning cannot help.
    """
    if not (math.isfinite(mean) and math.isfinite(sd)) or mean <= 0 or sd < 0:
        raise ValueError(
            f"fit_pareto: mean must be finite > 0 and sd finite >= 0, got mean={mean!r} sd={sd!r}"
        )
    if sd == 0:
        return mean, math.inf
    cv2 = (sd / mean) ** 2
    alpha = 1.0 + math.sqrt(1.0 + 1.0 / cv2)
    return mean * (alpha - 1.0) / alpha, alpha


def speedup(alpha: float, copies: int) -> float:
    """h(r) of Eq. (3): expected speedup of the fastest of `copies` i.i.d. Pareto copies (h(1) = 1)."""
    if copies < 1:
        raise ValueError(f"speedup: copies must be >= 1, got {copies!r}")
    if math.isinf(alpha):
        return 1.0
    if not alpha > 1:
        raise ValueError(f"speedup: alpha must be > 1, got {alpha!r}")
    return (alpha - 1.0 / copies) / (alpha - 1.0)  # DollyMP Eq. (3)


def straggler_probability(alpha: float) -> float:
    """Dolly's p: a task runs slower than twice the median, Pr{Theta > 2 m} with m = x_m 2^(1/alpha).

    (x_m / (2 m))^alpha = 2^-(alpha + 1) for a Pareto(x_m, alpha) run time (Dolly Section 3.2's definition of
    a straggler: progress at less than half the median task).
    """
    if math.isinf(alpha):
        return 0.0
    return float(2.0 ** (-(alpha + 1.0)))


def quantile_samples(mean: float, sd: float, count: int) -> list[float]:
    """`count` evenly spaced quantiles of the fitted Pareto (deterministic stand-in for observed samples)."""
    if mean <= 0:
        return [0.0] * count
    xm, alpha = fit_pareto(mean, sd)
    if math.isinf(alpha):
        return [mean] * count
    return [xm * (1.0 - (i + 0.5) / count) ** (-1.0 / alpha) for i in range(count)]

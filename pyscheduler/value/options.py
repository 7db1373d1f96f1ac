"""The value model's parameters, validated once (config keys `yield.*`)."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ValueOptions:
    """margin_s: a preemption is made only when the waiting container's value exceeds its victims' summed
    value by more than this (the work a preempted copy loses and the churn of relaunching are not in the
    values). min_wait_s: a container must have waited this long before anything yields to it (the AM's
    reports lag its asks by a poll, so a clone's fresh ask looks like an original's for a moment).
    startup_s: what a copy spends before its work starts, when the service has not learned it.
    horizon: the integral of a survival function is taken up to this many fitted means (the fitted
    Pareto's tail beyond it is cut, as the simulator caps slowdowns)."""

    margin_s: float = 5.0
    min_wait_s: float = 3.0
    startup_s: float = 5.0
    horizon: float = 20.0

    def __post_init__(self) -> None:
        for name in ("margin_s", "min_wait_s", "startup_s"):
            v = getattr(self, name)
            if not (isinstance(v, int | float) and math.isfinite(v) and 0 <= v <= 86_400):
                raise ValueError(f"yield.{name} must be a number of seconds in [0, 86400], got {v!r}")
        if not (
            isinstance(self.horizon, int | float)
            and math.isfinite(self.horizon)
            and 1 <= self.horizon <= 1000
        ):
            raise ValueError(f"yield.horizon must be in [1, 1000] fitted means, got {self.horizon!r}")

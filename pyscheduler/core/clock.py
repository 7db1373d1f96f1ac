"""Clocks injected into the decision loop: wall time (the service), a manual clock (the simulator, tests)."""

from __future__ import annotations

import math
import time
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float: ...


class WallClock:
    """Seconds since the epoch (the live service)."""

    def now(self) -> float:
        return time.time()


class MonotonicClock:
    """Seconds of `time.monotonic()` (the live service's timeouts and rates)."""

    def now(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that only moves when told to (the simulator's event time, tests)."""

    def __init__(self, start: float = 0.0) -> None:
        self._t = self._check(start)

    def now(self) -> float:
        return self._t

    def set(self, t: float) -> None:
        t = self._check(t)
        if t < self._t:
            raise ValueError(f"ManualClock cannot go backwards: {t!r} < {self._t!r}")
        self._t = t

    def advance(self, dt: float) -> None:
        self.set(self._t + dt)

    @staticmethod
    def _check(t: float) -> float:
        if not math.isfinite(t):
            raise ValueError(f"clock time must be finite, got {t!r}")
        return float(t)

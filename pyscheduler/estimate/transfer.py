"""Bandwidth B and contention factor alpha for delay assignment (Dolly Section 4.4), from observed reads."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field


@dataclass(slots=True)
class TransferStats:
    """Observed intermediate-data reads: rate alone gives B, rate under contention over B gives alpha."""

    default_bandwidth: float = 100e6  # bytes/s when nothing was observed
    default_alpha: float = 0.5
    solo: list[float] = field(default_factory=list)
    contended: list[float] = field(default_factory=list)
    window: int = 1000

    def record_read(self, nbytes: float, seconds: float, contended: bool) -> None:
        if not (math.isfinite(nbytes) and nbytes >= 0 and math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"record_read: bytes must be >= 0 and seconds > 0, got {nbytes!r}, {seconds!r}")
        target = self.contended if contended else self.solo
        target.append(nbytes / seconds)
        if len(target) > self.window:
            del target[0]

    def bandwidth(self) -> float:
        return statistics.median(self.solo) if self.solo else self.default_bandwidth

    def alpha(self) -> float:
        if not self.contended:
            return self.default_alpha
        return min(1.0, max(1e-3, statistics.median(self.contended) / self.bandwidth()))

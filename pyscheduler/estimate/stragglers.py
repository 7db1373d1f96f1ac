"""Dolly's cluster-wide straggler probability p, measured from observed task run times (paper 001).

Dolly Sec. 3.2: "The probability of a straggler, p, is calculated every hour, where the straggler progresses
at less than half the median task in the job"; Sec. 2.1 classifies a task as a straggler when its progress
rate is below half the median progress rate of its phase. A phase's tasks do equal work here (the
simulator's model and the traces'), so a straggler is a task whose run time exceeds `factor` (2) times its
phase's median run time, and p is the fraction of such tasks cluster-wide.

Choices:
* samples: one per finished task, the run time of the copy that finished it (its winner), as fed to
  `TaskStatistics.record_task` (the AM helper's report). Dolly measured stragglers on tasks as they
  completed with LATE or Mantri in effect (Sec. 2.1). Copies killed before finishing are censored and not
  counted; a cloned task's winner is the fastest of its copies, which lowers p a little, within Dolly's
  budget beta (5% of the cluster, Sec. 3.2).
* window: the samples that finished in the last `window` seconds (one hour, Dolly's period) of the
  driver's clock, sliding rather than reset each hour so the first hour is measured too; the answer is
  recomputed at most every `refresh` seconds (Dolly recomputes hourly; Sec. 5.3 found its hourly
  statistics insensitive to periods from 30 minutes to 3 hours).
* median: per phase, over that phase's samples in the window; a phase with a single sample in the window
  is not judged (a lone task is its own median).
* `rate` is None until `min_samples` judged samples are in the window: Dolly then uses its prior
  (policies/dolly.py).
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np


class StragglerRate:
    """Fraction of recently finished tasks slower than `factor` x their phase's median (Dolly's p)."""

    def __init__(
        self, window: float = 3600.0, factor: float = 2.0, min_samples: int = 100, refresh: float = 60.0
    ) -> None:
        for name, v in (("window", window), ("factor", factor)):
            if not (math.isfinite(v) and v > 0):
                raise ValueError(f"StragglerRate.{name} must be finite > 0, got {v!r}")
        if not (math.isfinite(refresh) and refresh >= 0):
            raise ValueError(f"StragglerRate.refresh must be finite >= 0, got {refresh!r}")
        if isinstance(min_samples, bool) or not isinstance(min_samples, int) or min_samples < 1:
            raise ValueError(f"StragglerRate.min_samples must be an integer >= 1, got {min_samples!r}")
        self.window, self.factor = float(window), float(factor)
        self.min_samples, self.refresh = min_samples, float(refresh)
        self._at: deque[float] = deque()  # end time of each sample, non-decreasing
        self._phase: deque[int] = deque()
        self._dur: deque[float] = deque()
        self._ids: dict[tuple[str, str], tuple[int, float]] = {}  # phase -> (its id, its last sample's time)
        self._next_id = 0
        self._cached: tuple[float, float | None] | None = None  # (computed at, rate)

    def record(self, phase: tuple[str, str], duration: float, at: float) -> None:
        """A task of `phase` (job id, phase id) finished at time `at` after running `duration` seconds."""
        if not (math.isfinite(duration) and duration >= 0 and math.isfinite(at)):
            raise ValueError(
                f"StragglerRate.record: need finite duration >= 0 and time, got {duration!r}, {at!r}"
            )
        if self._at and at < self._at[-1]:
            at = self._at[-1]  # the clock never runs back; keep the window ordered
        slot = self._ids.get(phase)
        if slot is None:
            pid = self._next_id
            self._next_id += 1
        else:
            pid = slot[0]
        self._ids[phase] = (pid, at)
        self._at.append(at)
        self._phase.append(pid)
        self._dur.append(float(duration))
        self._trim(at)

    def _trim(self, now: float) -> None:
        """Drop the samples that finished more than `window` seconds before `now`."""
        start = now - self.window
        at = self._at
        while at and at[0] < start:
            at.popleft()
            self._phase.popleft()
            self._dur.popleft()

    def __len__(self) -> int:
        return len(self._at)

    def rate(self, now: float) -> float | None:
        """p over the window ending at `now`; None while fewer than `min_samples` tasks can be judged."""
        if not math.isfinite(now):
            return None
        cached = self._cached
        if cached is not None and cached[0] <= now < cached[0] + self.refresh:
            return cached[1]
        self._trim(now)
        start = now - self.window
        if len(self._ids) > 2 * len(self._at) + 1024:  # forget phases with no sample left (memory)
            self._ids = {k: v for k, v in self._ids.items() if v[1] >= start}
        value = straggler_fraction(
            np.fromiter(self._phase, np.int64, len(self._phase)),
            np.fromiter(self._dur, np.float64, len(self._dur)),
            self.factor,
            self.min_samples,
        )
        self._cached = (now, value)
        return value


def straggler_fraction(
    phase: np.ndarray, duration: np.ndarray, factor: float, min_samples: int
) -> float | None:
    """Fraction of the samples of phases with at least two samples whose duration exceeds `factor` x their
    phase's median; None when fewer than `min_samples` such samples."""
    if phase.size == 0:
        return None
    order = np.lexsort((duration, phase))
    ph, dur = phase[order], duration[order]
    starts = np.flatnonzero(np.concatenate(([True], ph[1:] != ph[:-1])))
    counts = np.diff(np.append(starts, ph.size))
    median = 0.5 * (dur[starts + (counts - 1) // 2] + dur[starts + counts // 2])
    judged = np.repeat(counts >= 2, counts)
    n = int(judged.sum())
    if n < min_samples:
        return None
    slow = judged & (dur > factor * np.repeat(median, counts))
    return int(slow.sum()) / n

"""estimate/medians.py against statistics.median of the list built per task."""

from __future__ import annotations

import random
import statistics

from pyscheduler.estimate.medians import LeaveOut


def test_leave_out_median_equals_the_median_of_the_others() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        pairs = [
            (f"t{rng.randrange(6)}", float(rng.choice([1, 2, 2, 3, 5, rng.random()])))
            for _ in range(rng.randrange(1, 14))
        ]
        lo = LeaveOut(pairs)
        for t in {k for k, _ in pairs} | {"absent"}:
            others = [d for u, d in pairs if u != t]
            assert lo.median_without(t) == (statistics.median(others) if others else None), (pairs, t)

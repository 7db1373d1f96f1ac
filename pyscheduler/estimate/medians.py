"""The median of a phase's run times without one task's own: O(k log n) per task, not O(n).

The copy estimates (estimate/copies.py) judge each task against the median run time of the other tasks
of its phase. Built per task from the whole list, that is quadratic in the phase's size: 20,000 reported
attempts of one phase took minutes per report. `LeaveOut` sorts a phase's values once and answers each
task's median from the sorted list by skipping the task's own few values (`statistics.median` semantics:
the middle value, or the mean of the two middle values). Its answers depend on the values alone, not on
the order they came in, so one kept as values come and go (`add`, `remove`: a job's finished run times, kept
as its AM reports them) answers as one built from them afresh.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable


class LeaveOut:
    def __init__(self, pairs: Iterable[tuple[str, float]]) -> None:
        self.own: dict[str, list[float]] = {}
        values: list[float] = []
        for key, v in pairs:
            self.own.setdefault(key, []).append(v)
            values.append(v)
        self.values = sorted(values)

    def add(self, key: str, v: float) -> None:
        self.own.setdefault(key, []).append(v)
        bisect.insort(self.values, v)

    def remove(self, key: str, v: float) -> None:
        """Take back one value `add` gave `key` (ValueError when it has no such value)."""
        mine = self.own[key]
        mine.remove(v)
        if not mine:
            del self.own[key]
        del self.values[bisect.bisect_left(self.values, v)]

    def joined(self, pairs: Iterable[tuple[str, float]]) -> LeaveOut:
        """A LeaveOut of these values and `pairs` (this one is not changed)."""
        out = LeaveOut(())
        out.own = dict(self.own)
        added: list[float] = []
        for key, v in pairs:
            out.own[key] = [*out.own.get(key, ()), v]
            added.append(v)
        out.values = sorted(self.values + added) if added else list(self.values)
        return out

    def median_without(self, key: str) -> float | None:
        """The median of every value but `key`'s; None when no other value is left."""
        mine = sorted(self.own.get(key, ()))
        m = len(self.values) - len(mine)
        if m <= 0:
            return None
        skipped: list[int] = []  # positions in `values` of `key`'s values (equal values: consecutive)
        for v in mine:
            p = bisect.bisect_left(self.values, v)
            while p in skipped:
                p += 1
            skipped.append(p)
        skipped.sort()

        def at(rank: int) -> float:
            pos = rank
            for p in skipped:
                if p <= pos:
                    pos += 1
            return self.values[pos]

        if m % 2:
            return at(m // 2)
        return (at(m // 2 - 1) + at(m // 2)) / 2

"""The simulator's event queue: a heap of distinct event times, and per time the position of its next
unread event followed by its events' (kind, ref) pairs, flattened in the order they were pushed (ties go
first in, first out). Floats compare faster than (time, seq, kind, ref) tuples and the heap holds each
time once (speed; the same order as a heap of such tuples, tests/sim/test_speed_twins.py)."""

from __future__ import annotations

import heapq

ARRIVAL, FINISH, KILL, ROUND, HEARTBEAT, WAKE = 0, 1, 2, 3, 4, 5  # event kinds


class EventQueue:
    """The event-queue part of `Simulation` (a mixin)."""

    def __init__(self) -> None:
        self.events: list[float] = []
        self.at_time: dict[float, list[int]] = {}

    def _push(self, t: float, kind: int, ref: int) -> None:
        same = self.at_time.get(t)
        if same is None:
            self.at_time[t] = [1, kind, ref]
            heapq.heappush(self.events, t)
        else:
            same += (kind, ref)

    def _pop(self) -> tuple[float, int, int]:
        """The earliest event (time, kind, ref); of events at the same time, the first pushed. A time's
        list starts with the position of its next unread event (read in place: popping from the front
        of a long list of equal times was quadratic)."""
        t = self.events[0]
        same = self.at_time[t]
        i = same[0]
        kind, ref = same[i], same[i + 1]
        i += 2
        if i == len(same):
            heapq.heappop(self.events)
            del self.at_time[t]
        else:
            same[0] = i
        return t, kind, ref

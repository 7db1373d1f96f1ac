"""The simulator's running copies: the mutable record of one copy (`RunCopy`, a list), the Attempt a
policy reads (`SimAttempt`, progress from the simulation clock) and Snapshot.attempts built only when read
(`LazyAttempts`, with the copies as numpy columns through sim/running.py)."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, overload

from pyscheduler.core import ManualClock
from pyscheduler.objects import Attempt, Job
from pyscheduler.policies.attempts import AttemptColumns
from pyscheduler.sim.running import RunningColumns


@dataclass(frozen=True, slots=True)
class SimAttempt(Attempt):
    """An Attempt with the progress a task reports (Hadoop's progress score: fraction of its work done), read
    from the simulation clock when asked, so one object serves every round the copy runs."""

    expected_end: float = math.inf
    clock: ManualClock | None = None

    @property
    def progress(self) -> float:
        if self.clock is None:
            return 0.0
        dur = self.expected_end - self.start_time
        return min(1.0, (self.clock.now() - self.start_time) / dur) if dur > 0 else 1.0


# One running copy (mutable, internal) is a list, fields at these positions: a list is built ~8x faster
# than an object with __slots__ and read by unpacking (about two million copies a day of FB-2010: speed).
# `share`: its dominant share of the cluster (resource-second cost); `alive`: False once it ended; `job`:
# the Job (read at the copy's end without a lookup by job index).
UID, JIDX, K, TASK, NODE, START, END, IS_CLONE, CPU, MEM, SHARE, ALIVE, JOB = range(13)
RunCopy = list[Any]  # [uid, jidx, k, task, node, start, end, is_clone, cpu, mem, share, alive, job]


class Copies(Protocol):
    """What LazyAttempts reads of the simulation (engine.py's Simulation): its running copies by uid,
    their columns once a policy read them, and the Attempt of one copy."""

    @property
    def running(self) -> Mapping[int, RunCopy]: ...
    @property
    def columns(self) -> RunningColumns | None: ...
    def attempt_of(self, r: RunCopy) -> Attempt: ...
    def attempt_columns(self, jobs: Sequence[Job]) -> AttemptColumns: ...


class LazyAttempts(Sequence[Attempt]):
    """Snapshot.attempts built only if a policy reads it (most policies never do); `columns` gives them
    as numpy columns without building the objects (policies/attempts.py)."""

    def __init__(self, sim: Copies) -> None:
        self._sim = sim
        self._items: list[Attempt] | None = None
        self._columns: tuple[Sequence[Job], AttemptColumns] | None = None  # the last `columns` answer

    def _build(self) -> list[Attempt]:
        if self._items is None:
            self._items = [self._sim.attempt_of(r) for r in self._sim.running.values()]
        return self._items

    def __len__(self) -> int:
        return len(self._sim.running) if self._items is None else len(self._items)

    @overload
    def __getitem__(self, i: int) -> Attempt: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Attempt]: ...
    def __getitem__(self, i: int | slice) -> Attempt | Sequence[Attempt]:
        sim = self._sim
        if self._items is None and isinstance(i, int) and sim.columns is not None:
            # one copy, found through the column store (AttemptColumns.index), without building the rest
            return sim.attempt_of(sim.running[sim.columns.uid_at(i)])
        return self._build()[i]

    def __iter__(self) -> Iterator[Attempt]:
        return iter(self._build())

    def columns(self, jobs: Sequence[Job]) -> AttemptColumns:
        """The copies as columns; asked again for the same jobs in the same round (late copies, then
        replacements), the same answer (the round's time and copies have not changed)."""
        kept = self._columns
        if kept is None or kept[0] is not jobs:
            kept = self._columns = (jobs, self._sim.attempt_columns(jobs))
        return kept[1]

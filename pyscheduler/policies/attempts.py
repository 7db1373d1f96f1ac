"""Running attempts as numpy columns, for rules that read every running copy each round (policies/late.py).

`Snapshot.attempts` is a sequence of Attempt objects (the live service builds them from the AM's reports).
A driver that keeps its running copies in arrays (the simulator) may hand over a sequence that also has
`columns(jobs) -> AttemptColumns`; `Snapshot.attempt_columns()` uses it, and otherwise builds the same
columns from the objects (`AttemptColumns.from_attempts`). Both list the attempts in the order of
`Snapshot.attempts` (sums over copies, e.g. `residual.fresh_copy_time`, add them in that order), and
`index` gives each one's position there, so a rule that picks a copy from the columns (policies/replace.py)
reads its Attempt object as `Snapshot.attempts[index[i]]` instead of searching for it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from pyscheduler.objects import Job
from pyscheduler.objects.job import Attempt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class AttemptColumns:
    """One entry per running attempt of an active job, in the order of Snapshot.attempts; attempts of
    other jobs, unknown phases or task indices outside their phase are left out."""

    job_pos: IntArray  # position of the attempt's job in Snapshot.jobs
    phase_k: IntArray  # index of its phase in job.phases
    task_index: IntArray
    start_time: FloatArray
    progress: FloatArray  # fraction of its work done (Hadoop's progress score); nan: not reported
    index: IntArray  # position of the attempt in Snapshot.attempts (the object, without a scan)

    def __len__(self) -> int:
        return int(self.job_pos.size)

    @classmethod
    def from_attempts(cls, attempts: Iterable[Attempt], jobs: Sequence[Job]) -> AttemptColumns:
        """The columns of Attempt objects; `progress` is the attempt's attribute of that name if it has
        one (SimAttempt, the service's ReportedAttempt), else nan."""
        pos_of = {j.job_id: i for i, j in enumerate(jobs)}
        pos: list[int] = []
        ks: list[int] = []
        tasks: list[int] = []
        start: list[float] = []
        prog: list[float] = []
        index: list[int] = []
        for i, a in enumerate(attempts):
            p = pos_of.get(a.job_id)
            if p is None:
                continue
            job = jobs[p]
            k = job.phase_index.get(a.phase_id)
            if k is None or not 0 <= a.task_index < job.phases[k].num_tasks:
                continue
            pos.append(p)
            ks.append(k)
            tasks.append(a.task_index)
            start.append(a.start_time)
            x = getattr(a, "progress", None)
            prog.append(math.nan if x is None else float(x))
            index.append(i)
        return cls(
            np.asarray(pos, np.int64),
            np.asarray(ks, np.int64),
            np.asarray(tasks, np.int64),
            np.asarray(start, np.float64),
            np.asarray(prog, np.float64),
            np.asarray(index, np.int64),
        )


@runtime_checkable
class ColumnSource(Protocol):
    """A Snapshot.attempts sequence that can give its attempts as columns directly (the simulator's)."""

    def columns(self, jobs: Sequence[Job]) -> AttemptColumns: ...

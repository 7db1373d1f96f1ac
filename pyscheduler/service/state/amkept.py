"""What one application's attempt reports imply, kept in step with them as the AM reports.

The AM registry (amregistry.py) keeps each attempt as its AM last reported it. An AM plan (round/amplan.py)
and every RM round that reads the application's copies (`AmRegistry.round_view`) need, of a job of 1,000
tasks, what its attempts say as a whole: read afresh, every call and every round walked every attempt
again although a report changes a few. `KeptReports` is told of each attempt stored (`put`) or dropped
(`drop`) and keeps:
* each attempt's estimator record (amreports.py `copy_report`), in the attempts' order;
* the copies of each task as the core's replay counts them (round/amjob.py `replay`, `replay_counted`);
* the attempts RUNNING or WAITING, the only ones a running copy or a waiting clone is read from;
* per phase, the run times of the copies that succeeded (estimate/medians.py `LeaveOut`: a fresh copy's
  time, estimate/copies.py `copy_times_of`);
* the tasks with a copy that succeeded (outcomes.py: a copy killed after that lost the race);
and `version`, bumped by every change: the key of what readers derive from these (`AmRegistry.copy_times`).
Each is what reading every attempt would give, in the same order (tests/rpc/test_am_kept.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from pyscheduler.estimate.copies import CopyReport, Kind, Report
from pyscheduler.estimate.medians import LeaveOut
from pyscheduler.service.state.amreports import copy_report, task_index
from pyscheduler.wire import pb

LIVE = (pb.ATTEMPT_RUNNING, pb.ATTEMPT_WAITING)


def replayed(a: Any) -> int | None:
    """The index of the task an attempt is a copy of when the core replays the job (round/amjob.py
    `replay`): each attempt that had a container, and each clone waiting for one; None for an original
    waiting for its container and for a task id without an index."""
    if a.state == pb.ATTEMPT_WAITING and not a.is_clone:
        return None
    return task_index(a.task_id)


class KeptReports:
    """The module docstring's figures of one application's attempts (its registry's lock guards it)."""

    def __init__(self) -> None:
        self.reports: dict[str, CopyReport] = {}  # attempt id -> its record, in the attempts' order
        # phase id -> task index -> [task index, copies, copies failed or killed, copies succeeded]
        self.counts: dict[str, dict[int, list[int]]] = {}
        self.order: dict[str, int] = {}  # attempt id -> its place among the attempts (when first stored)
        self.live: set[str] = set()  # attempts RUNNING or WAITING
        self.finished: dict[str, LeaveOut] = {}  # phase id -> run times of copies that succeeded, by task
        self.succeeded: dict[str, int] = {}  # task id -> its copies that succeeded
        self.version = 0
        self._places = 0

    def put(self, a: Any, prev: Any | None, first: Report | None) -> None:
        """Attempt `a` stored, in place of `prev` (its last report, None for a new attempt); `first`: its
        first report with progress."""
        if prev is None:
            self.order[a.attempt_id] = self._places
            self._places += 1
        else:
            self._count(prev, self.reports[a.attempt_id], -1)
        r = self.reports[a.attempt_id] = copy_report(a, first)
        self._count(a, r, 1)
        self.version += 1

    def drop(self, a: Any) -> None:
        """Attempt `a` (as last stored) let go of."""
        self._count(a, self.reports.pop(a.attempt_id), -1)
        del self.order[a.attempt_id]
        self.version += 1

    def _count(self, a: Any, r: CopyReport, sign: int) -> None:
        """Add (`sign` 1) or take back (-1) attempt `a`, whose record is `r`."""
        i = replayed(a)
        if i is not None:
            tasks = self.counts.setdefault(a.phase_id, {})
            c = tasks.get(i)
            if c is None:
                c = tasks[i] = [i, 0, 0, 0]
            c[1] += sign
            if a.state in (pb.ATTEMPT_FAILED, pb.ATTEMPT_KILLED):
                c[2] += sign
            elif a.state == pb.ATTEMPT_SUCCEEDED:
                c[3] += sign
            if c[1] == 0:  # (its other counts are 0 too)
                del tasks[i]
        if a.state in LIVE:
            if sign > 0:
                self.live.add(a.attempt_id)
            else:
                self.live.discard(a.attempt_id)
        if r.kind is Kind.SUCCEEDED and r.duration_s > 0:
            times = self.finished.setdefault(r.phase_id, LeaveOut(()))
            if sign > 0:
                times.add(r.task_id, r.duration_s)
            else:
                times.remove(r.task_id, r.duration_s)
        if a.state == pb.ATTEMPT_SUCCEEDED:
            n = self.succeeded.get(a.task_id, 0) + sign
            if n:
                self.succeeded[a.task_id] = n
            else:
                del self.succeeded[a.task_id]

    def live_attempts(self, attempts: Mapping[str, Any]) -> list[Any]:
        """The attempts RUNNING or WAITING of `attempts` (the application's, which these figures follow),
        in their order."""
        return [attempts[k] for k in sorted(self.live, key=self.order.__getitem__)]

    def task_rows(self) -> dict[str, npt.NDArray[np.int64]]:
        """The copies per task, per phase id one row per task [index, copies, failed or killed, succeeded]
        (round/amjob.py `replay_counted`): a copy."""
        return {
            phase_id: np.array(list(tasks.values()), dtype=np.int64).reshape(-1, 4)
            for phase_id, tasks in self.counts.items()
        }

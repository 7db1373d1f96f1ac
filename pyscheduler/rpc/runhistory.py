"""The recurring-job history of applications without an AM helper, as the live service uses it.

Read: the translation (rpc/translate.py) looks up θ and σ of a YARN priority by the application's name
and queue as the RM reports them (`RunHistorySource`; pyscheduler.store.runhistory answers from memory).
Written: when the RM removes an application, the mirror hands over the run times of its containers that
succeeded (`Mirror.take_finished`), and `RecordFinished` folds them into the store, keyed by (name, queue,
YARN priority), unless an AM helper described the application (its phases go to the helper's history by
job name, rpc/amservice.py). The name and queue come from the RM, never from the application itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from pyscheduler.estimate.runtimes import Moments
from pyscheduler.rpc.mirror import FinishedRuns

if TYPE_CHECKING:
    from pyscheduler.store.runhistory import AppRunHistory, RunTimes

log = logging.getLogger("dollymp.runhistory")


class RunHistorySource(Protocol):
    """Where the translation reads a recurring application's earlier run times."""

    def moments(self, app_name: str, queue: str, priority: int) -> Moments | None: ...


class RecordFinished:
    """Folds finished applications' run times into the history (the servicer calls it, off the session
    lock). `described(application_id)`: whether an AM helper reported a job profile for it."""

    def __init__(self, history: AppRunHistory, described: Callable[[str], bool]) -> None:
        self.history = history
        self.described = described
        self.recorded = 0  # (application, priority) pairs folded in so far

    def __call__(self, finished: Sequence[FinishedRuns]) -> None:
        """Fold in the finished applications' run times, all in one transaction."""
        runs: list[RunTimes] = []
        apps: list[str] = []
        for f in finished:
            if self.described(f.application_id):
                continue
            apps.append(f"{f.application_id} ({f.name!r} in {f.queue!r}, priorities {sorted(f.run_times)})")
            runs.extend(
                (f.name, f.queue, priority, rs.count, rs.mean, max(rs.m2, 0.0))
                for priority, rs in sorted(f.run_times.items())
                if rs.count > 0
            )
        self.history.fold_many(runs)
        self.recorded += len(runs)
        if apps:
            log.info("run times recorded in the recurring-job history: %s", "; ".join(apps))

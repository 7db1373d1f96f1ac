"""The recurring-job history and the framework-wide prior of applications without an AM helper, as the live
service uses them (DollyMP Sec. 5.2's first and third sources of θ and σ; estimate/runtimes.py).

Read: the translation (service/round/translate.py) looks up θ and σ of a YARN priority by the application's
name and queue as the RM reports them (`RunHistorySource.moments`), and, when neither that history nor the
application's own containers hold a run time, by its application type and queue (`framework`; the type
as `framework_type` normalises it). pyscheduler.store.runhistory answers both from memory.
Written: when the RM removes an application, the mirror hands over the run times of its containers that
succeeded (`Mirror.take_finished`), and `RecordFinished` folds them into both, keyed by (name, queue,
YARN priority) and (type, queue, YARN priority), unless an AM helper described the application (its
phases go to the helper's history by queue, user and job name, service/rmproxy/amservice.py). The name, type
and queue come from the RM, never from the application itself; the queue in every key keeps one tenant's
runs out of another queue's estimates.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from pyscheduler.estimate.runtimes import Moments
from pyscheduler.service.state.mirror import FinishedRuns

if TYPE_CHECKING:
    from pyscheduler.store.runhistory import AppRunHistory, RunTimes

log = logging.getLogger("dollymp.runhistory")

# YARN's own bound on an application type (the RM truncates longer ones) and its type when none is given.
TYPE_MAX_CHARS = 20
DEFAULT_TYPE = "YARN"


@functools.lru_cache(maxsize=1024)  # read for every unmeasured ask of every round: a few types
def framework_type(raw: str) -> str:
    """The framework key of an application type as the RM reports it: trimmed, upper case (YARN compares
    types without case), at most 20 characters; empty is YARN's default type."""
    t = raw.strip().upper()[:TYPE_MAX_CHARS]
    return t or DEFAULT_TYPE


class RunHistorySource(Protocol):
    """Where the translation reads a recurring application's earlier run times, and its framework's."""

    def moments(self, app_name: str, queue: str, priority: int) -> Moments | None: ...

    def framework(self, app_type: str, queue: str, priority: int) -> Moments | None: ...


class RunHistories:
    """The two histories the service keeps: by application name, and by application type."""

    def __init__(self, apps: AppRunHistory, frameworks: AppRunHistory) -> None:
        self.apps = apps
        self.frameworks = frameworks

    def moments(self, app_name: str, queue: str, priority: int) -> Moments | None:
        return self.apps.moments(app_name, queue, priority)

    def framework(self, app_type: str, queue: str, priority: int) -> Moments | None:
        return self.frameworks.moments(framework_type(app_type), queue, priority)


class RecordFinished:
    """Folds finished applications' run times into the histories (the servicer calls it, off the session
    lock). `described(application_id)`: whether an AM helper reported a job profile for it."""

    def __init__(self, histories: RunHistories, described: Callable[[str], bool]) -> None:
        self.histories = histories
        self.described = described
        self.recorded = 0  # (application, priority) pairs folded in so far

    def __call__(self, finished: Sequence[FinishedRuns]) -> None:
        """Fold in the finished applications' run times, each history in one transaction."""
        runs: list[RunTimes] = []
        types: list[RunTimes] = []
        apps: list[str] = []
        for f in finished:
            if self.described(f.application_id):
                continue
            kind = framework_type(f.application_type)
            prios = sorted(f.run_times)
            apps.append(f"{f.application_id} ({f.name!r}, type {kind} in {f.queue!r}, priorities {prios})")
            for priority, rs in sorted(f.run_times.items()):
                if rs.count > 0 and f.name:  # a nameless application adds to its framework's prior only
                    runs.append((f.name, f.queue, priority, rs.count, rs.mean, max(rs.m2, 0.0)))
                if rs.count > 0:
                    types.append((kind, f.queue, priority, rs.count, rs.mean, max(rs.m2, 0.0)))
        self.histories.apps.fold_many(runs)
        self.histories.frameworks.fold_many(types)
        self.recorded += len(runs)
        if apps:
            log.info("run times recorded in the recurring-job and framework histories: %s", "; ".join(apps))

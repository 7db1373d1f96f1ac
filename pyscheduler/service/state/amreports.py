"""What an AM helper's attempt reports say, read without the core: which attempts are waiting clones or
final, a task's index from its id, each report as the copy estimator's record (estimate/copies.py), and
the stages of a job's profile (its upstream, downstream and last phases). The AM registry keeps the reports
(amregistry.py, what they imply in amkept.py); the round reads them (round/amjob.py, round/amplan.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from pyscheduler.estimate.copies import CopyReport, Kind, Report
from pyscheduler.wire import pb

FINAL = (pb.ATTEMPT_SUCCEEDED, pb.ATTEMPT_FAILED, pb.ATTEMPT_KILLED)


def waiting_clone(a: Any) -> bool:
    """A clone the AM launched that still waits for a container (service/round/clones.py places those
    last)."""
    return bool(a.is_clone) and a.state == pb.ATTEMPT_WAITING


@lru_cache(maxsize=1 << 16)  # every round reads every reported attempt's task id again
def task_index(task_id: str) -> int | None:
    """Hadoop's task ids end in the task's index (task_<cluster>_<app>_m_000003 -> 3)."""
    tail = task_id.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() and len(tail) <= 9 else None  # (no 5,000-digit int parse)


def kind_of(a: Any) -> Kind:
    if waiting_clone(a):
        return Kind.WAITING_CLONE
    if a.state == pb.ATTEMPT_RUNNING and a.container_id:
        return Kind.RUNNING
    if a.state == pb.ATTEMPT_SUCCEEDED:
        return Kind.SUCCEEDED
    if a.state in (pb.ATTEMPT_FAILED, pb.ATTEMPT_KILLED):
        return Kind.ENDED
    return Kind.OTHER


def copy_report(a: Any, first: Report | None) -> CopyReport:
    """The estimator's record of one AttemptReport (`first`: its first report with progress)."""
    return CopyReport(
        a.attempt_id,
        a.task_id,
        a.phase_id,
        kind_of(a),
        bool(a.is_clone),
        a.time_ms / 1000.0,
        (a.launch_time_ms or a.time_ms) / 1000.0,
        a.progress,
        a.duration_s,
        first,
    )


def copy_reports(attempts: Sequence[Any], first: Mapping[str, Report]) -> list[CopyReport]:
    """The estimator's records of `attempts` (the AM registry keeps an application's as its AM reports:
    `KeptReports.reports`, service/state/amkept.py)."""
    return [copy_report(a, first.get(a.attempt_id)) for a in attempts]


def upstream(profile: Any) -> frozenset[str]:
    """Phases some phase waits for: a MapReduce job's maps when it has reduces (`work_progress`)."""
    return frozenset(q for ph in profile.phases for q in ph.parents)


def downstream(profile: Any) -> frozenset[str]:
    """Phases that wait for others: a MapReduce job's reduces (`reduce_work_progress`)."""
    return frozenset(ph.phase_id for ph in profile.phases if ph.parents)


def last_stages(profile: Any) -> frozenset[str]:
    """Phases of the job's last stage: with parents (upstream phases), and no phase waits for them."""
    parents = {q for ph in profile.phases for q in ph.parents}
    return frozenset(ph.phase_id for ph in profile.phases if ph.parents and ph.phase_id not in parents)

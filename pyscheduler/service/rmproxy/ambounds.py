"""Checks of what an ApplicationMaster helper reports (service/rmproxy/amservice.py), made before anything is
kept.

A job profile's phases and tasks, an attempt report's size, durations and reduce copies' map reads
(`limits.map_reads_per_report` in one report, ids and reasons of bounded length), and the attempts kept
per application are bounded by `Limits` (service/limits.py). Past `limits.attempts_per_app`, the oldest
finished attempts (succeeded, failed, killed: insertion order, which is report order) are dropped to make
room; when the live ones alone are over the limit the report is refused, naming the limit, and nothing of
it is kept. Durations are finite and at most `limits.max_duration_s`, so no mean or deviation of them can
overflow.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyscheduler.echo import shown
from pyscheduler.service.limits import Limits, Refusal, at_most
from pyscheduler.service.rmproxy import validate
from pyscheduler.service.rmproxy.validate import InvalidMessage
from pyscheduler.service.round.amjob import job_of
from pyscheduler.service.roundsfirst import EVERY, checkpoint
from pyscheduler.wire import pb

MAX_ID = 1024  # characters of an id in a report (Hadoop's are under 64)
MAX_REASON = 256  # characters of a map read's reason (the reduce copy's words, e.g. "omega elapsed")


def profile(p: Any, limits: Limits, then: Callable[[Any], None]) -> None:
    """Raise InvalidMessage naming the field when the profile is over a limit (before `then`, the
    other checks, walks it)."""
    try:
        at_most(len(p.phases), limits.phases_per_job, "phases", "limits.phases_per_job")
        for i, ph in enumerate(p.phases):
            at_most(ph.tasks, limits.tasks_per_phase, f"phases[{i}].tasks", "limits.tasks_per_phase")
    except Refusal as exc:
        raise InvalidMessage(exc.field, exc.problem) from None
    then(p)


def reports(r: Any, limits: Limits, then: Callable[[Any], None]) -> None:
    try:
        at_most(len(r.attempts), limits.attempts_per_report, "attempts", "limits.attempts_per_report")
        reads = sum(len(a.map_reads) for a in r.attempts)
        at_most(
            reads, limits.map_reads_per_report, "attempts[].map_reads (all)", "limits.map_reads_per_report"
        )
        for i, a in enumerate(r.attempts):
            if i % EVERY == 0:
                checkpoint()  # RM rounds first (service/roundsfirst.py)
            for name in ("task_id", "attempt_id", "phase_id", "container_id", "node_id"):
                at_most(len(getattr(a, name)), MAX_ID, f"attempts[{i}].{name} (length)", "characters")
            if a.duration_s > limits.max_duration_s:  # NaN and inf are refused by the field checks
                at_most(
                    a.duration_s, limits.max_duration_s, f"attempts[{i}].duration_s", "limits.max_duration_s"
                )
            for j, m in enumerate(a.map_reads):
                at = f"attempts[{i}].map_reads[{j}]"
                for name in ("map_task_id", "map_attempt_id"):
                    at_most(len(getattr(m, name)), MAX_ID, f"{at}.{name} (length)", "characters")
                at_most(len(m.reason), MAX_REASON, f"{at}.reason (length)", "characters")
                if m.waited_s > limits.max_duration_s:
                    at_most(m.waited_s, limits.max_duration_s, f"{at}.waited_s", "limits.max_duration_s")
    except Refusal as exc:
        raise InvalidMessage(exc.field, exc.problem) from None
    then(r)


def check_profile(p: Any) -> None:
    """The field checks of a JobProfile (after `profile`'s bounds)."""
    validate.nonempty(p.application_id, "application_id")
    validate.at_least(p.submit_time_ms, 0, "submit_time_ms")
    if not p.phases:
        raise InvalidMessage("phases", "must list at least one phase")
    ids = [ph.phase_id for ph in p.phases]
    for i, ph in enumerate(p.phases):
        at = f"phases[{i}]"
        validate.nonempty(ph.phase_id, f"{at}.phase_id")
        if ph.phase_id in ids[:i]:
            raise InvalidMessage(f"{at}.phase_id", f"duplicate phase {shown(ph.phase_id)}")
        validate.at_least(ph.tasks, 1, f"{at}.tasks")
        validate.resource(ph.demand, f"{at}.demand", ph, "demand")
        if ph.demand.memory_mb == 0 and ph.demand.vcores == 0:
            raise InvalidMessage(f"{at}.demand", "must be non-zero")
        validate.at_least(ph.yarn_priority, 0, f"{at}.yarn_priority")
        for j, parent in enumerate(ph.parents):
            if parent not in ids or parent == ph.phase_id:
                raise InvalidMessage(f"{at}.parents[{j}]", f"unknown phase {shown(parent)}")
    try:  # the core rejects DAG cycles; say which field
        job_of(p, {})
    except ValueError as exc:
        raise InvalidMessage("phases", str(exc)) from None


def check_reports(r: Any) -> None:
    """The field checks of an AttemptReports (after `reports`' bounds)."""
    validate.nonempty(r.application_id, "application_id")
    for i, a in enumerate(r.attempts):
        if i % EVERY == 0:
            checkpoint()  # RM rounds first (service/roundsfirst.py)
        at = f"attempts[{i}]"
        validate.nonempty(a.task_id, f"{at}.task_id")
        validate.nonempty(a.attempt_id, f"{at}.attempt_id")
        validate.nonempty(a.phase_id, f"{at}.phase_id")
        validate.enum_value(a.state, pb.AttemptState, f"{at}.state")
        validate.finite_nonneg(a.duration_s, f"{at}.duration_s")
        validate.at_least(a.time_ms, 0, f"{at}.time_ms")
        validate.finite_nonneg(a.progress, f"{at}.progress")
        if a.progress > 1.0:
            raise InvalidMessage(f"{at}.progress", f"must be at most 1, got {a.progress!r}")
        validate.at_least(a.launch_time_ms, 0, f"{at}.launch_time_ms")
        for j, m in enumerate(a.map_reads):
            check_map_read(m, f"{at}.map_reads[{j}]")


def check_map_read(m: Any, at: str) -> None:
    """The field checks of one MapRead: ids set, the map copy one of the map task's, a known kind."""
    validate.nonempty(m.map_task_id, f"{at}.map_task_id")
    validate.nonempty(m.map_attempt_id, f"{at}.map_attempt_id")
    stem = m.map_task_id.removeprefix("task_")
    if not m.map_attempt_id.startswith(f"attempt_{stem}_"):
        raise InvalidMessage(
            f"{at}.map_attempt_id", f"{shown(m.map_attempt_id)} is no copy of {shown(m.map_task_id)}"
        )
    validate.enum_value(m.kind, pb.MapReadKind, f"{at}.kind")
    validate.finite_nonneg(m.waited_s, f"{at}.waited_s")
    validate.at_least(m.time_ms, 0, f"{at}.time_ms")

"""Task copies' outcomes as the AM helper reports them, logged as `attempt` decisions.

The operator's page (pyscheduler.api.ui) draws an application's timeline and the clone economics from
these: a clone launched (reason `clone_launched`), the copy that finished first (`won`), the copies that
ended after another copy of their task had won (`lost_race`: the AM killed them, or they finished
before the kill reached them and the AM says MapReduce took the other copy), and copies that were
killed or failed otherwise (`killed`, `failed`). Each is logged once, when the AM first reports that
state for the attempt; the inputs carry what the economics need (duration, last progress, clone flag).

A copy's duration is the AM's (finish minus launch). MapReduce shows an attempt as KILLED while its
container is still being cleaned up and sets its finish time only afterwards, so the AM's first report of
a killed copy carries no duration; it is then the report's time minus the launch, the moment the AM saw
the copy end (within its report interval).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping
from typing import Any

from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.service.roundsfirst import EVERY, checkpoint
from pyscheduler.wire import pb

_ENDED = {pb.ATTEMPT_SUCCEEDED: "won", pb.ATTEMPT_FAILED: "failed", pb.ATTEMPT_KILLED: "killed"}


def duration_s(a: Any) -> float:
    """How long an ended copy ran: the AM's duration, else (none given yet) its report time minus its
    launch (module docstring); 0 when neither is known."""
    if a.duration_s > 0 or a.state not in _ENDED or not 0 < a.launch_time_ms < a.time_ms:
        return float(a.duration_s)
    return float(a.time_ms - a.launch_time_ms) / 1000.0


def _inputs(a: Any, prev: Any | None) -> dict[str, Any]:
    progress = a.progress if a.state == pb.ATTEMPT_RUNNING or prev is None else prev.progress
    return {
        "attempt_id": a.attempt_id,
        "phase_id": a.phase_id,
        "is_clone": bool(a.is_clone),
        "duration_s": round(duration_s(a), 3),
        "progress": round(float(progress), 4),
        "launch_ms": int(a.launch_time_ms),
        "time_ms": int(a.time_ms),
        "container_id": a.container_id,
    }


def outcome_records(
    app_id: str,
    reported: Iterable[tuple[Any, Any | None]],
    attempts: Mapping[str, Any],
    now: float | None = None,
    won: Collection[str] | None = None,
) -> list[Decision]:
    """The `attempt` decisions of one report: `reported` holds (attempt now, attempt as last reported or
    None); `attempts` every attempt of the application known after the report (to tell a lost race);
    `won`, when the caller keeps it, the task ids among them with an attempt that succeeded."""
    wall = time.time() if now is None else now
    if won is None:
        won = {a.task_id for a in attempts.values() if a.state == pb.ATTEMPT_SUCCEEDED}
    checkpoint()  # RM rounds first (service/roundsfirst.py), here and in the loop
    out: list[Decision] = []
    for n, (a, prev) in enumerate(reported):
        if n % EVERY == EVERY - 1:
            checkpoint()
        if prev is not None and prev.state == a.state:
            continue
        if a.state == pb.ATTEMPT_RUNNING and a.is_clone:
            reason = "clone_launched"
            detail = f"clone {a.attempt_id} of {a.task_id} runs on {a.node_id or 'a node'}"
        elif a.state in _ENDED:
            reason = _ENDED[a.state]
            if a.state == pb.ATTEMPT_KILLED and a.task_id in won:
                reason = "lost_race"
            elif a.state == pb.ATTEMPT_SUCCEEDED and a.HasField("won") and not a.won:
                reason = "lost_race"  # it finished too, after the copy MapReduce took: its kill came late
            copy = "clone" if a.is_clone else "original"
            detail = f"{copy} {a.attempt_id} of {a.task_id}: {reason} after {duration_s(a):.1f} s"
        else:
            continue
        out.append(about_attempt(wall, DecisionKind.ATTEMPT, reason, app_id, a, detail, _inputs(a, prev)))
    return out


def about_attempt(
    wall: float, kind: DecisionKind, reason: str, app_id: str, a: Any, detail: str, inputs: dict[str, Any]
) -> Decision:
    """A decision about attempt `a` of application `app_id` (its task and node), as the AM reported it."""
    return Decision(
        wall,
        kind,
        reason,
        application_id=app_id,
        job_id=app_id,
        task_id=a.task_id,
        node_id=a.node_id,
        detail=detail,
        inputs=inputs,
    )

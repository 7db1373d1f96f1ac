"""Decision-log records of the tasks a clone plan names on their own (a late copy, the phase tail).

The AM helper's clone plan (service/round/amplan.py) names some tasks per task (`ClonePlan.task_clones`): the
core's late rule (`Decisions.late`: a copy's time left t_rem above a fresh copy's t_new, Mantri's test as
DollyMP applies it), a phase granted for its tail, or the service's own straggler test for a task whose
clones wait (`estimate.copies.slow_waiting`). Such clones go before clones at launch and yield to originals
only (service/round/clones.py, service/round/yielding.py), so which rule named a task, and on what figures,
decides who gets the next free container; with the phase grants alone, a run's log could not tell a late copy
from a phase tail's clone.

One record per task when it is named or its count changes (`NamedLog`), kind clone_grant, reason
`clone_late_copy`, `clone_phase_tail` or `clone_slow_waiting`, with the task's running copies (work
elapsed, progress) and the phase's fresh-copy estimate in its inputs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyscheduler.objects import Attempt, Decision, DecisionKind, Job
from pyscheduler.wire import pb

RULE_CORE = "core"  # named from the core's decisions: Decisions.late or a per-task grant's placement
RULE_SLOW_WAITING = "slow_waiting"  # estimate.copies.slow_waiting

_REASONS = {pb.REASON_CLONE_LATE_COPY: "clone_late_copy", pb.REASON_CLONE_PHASE_TAIL: "clone_phase_tail"}


@dataclass(frozen=True, slots=True)
class Named:
    """A task the plan names on its own: the clones it should have in all, the pb reason, the rule."""

    task_id: str
    phase_id: str
    index: int
    clones: int
    reason: int
    rule: str


@dataclass
class NamedLog:
    """What one application's plans last named per task, so each naming is logged once."""

    last: dict[str, int] = field(default_factory=dict)  # task id -> clones last logged

    def records(
        self,
        now: float,
        app_id: str,
        named: Sequence[Named],
        job: Job,
        running: Sequence[Attempt],
    ) -> list[Decision]:
        """The records of the tasks newly named, or named with another count, in this plan."""
        means: Mapping[str, float] = {ph.phase_id: ph.mean for ph in job.phases}
        out: list[Decision] = []
        for n in named:
            if self.last.get(n.task_id) == n.clones:
                continue
            self.last[n.task_id] = n.clones
            copies = [
                [a.attempt_id, round(now - a.start_time, 1), _finite(getattr(a, "progress", math.nan))]
                for a in running
                if a.phase_id == n.phase_id and a.task_index == n.index and a.node_id
            ]
            reason = "clone_slow_waiting" if n.rule == RULE_SLOW_WAITING else _REASONS.get(n.reason, "clone")
            t_new = means.get(n.phase_id)
            out.append(
                Decision(
                    now,
                    DecisionKind.CLONE_GRANT,
                    reason,
                    application_id=app_id,
                    job_id=app_id,
                    task_id=n.task_id,
                    detail=f"{n.task_id} named on its own ({n.rule}): {n.clones} clone(s) in all",
                    inputs={
                        "clones": n.clones,
                        "rule": n.rule,
                        "phase_id": n.phase_id,
                        "t_new_s": _finite(t_new) if t_new is not None else None,
                        "copies": copies,  # [attempt id, work elapsed s, progress]
                    },
                )
            )
        return out


def _finite(x: float) -> float | None:
    return round(x, 3) if math.isfinite(x) else None

"""A decision: what the scheduler decided, about what, from which inputs, and why.

Every policy output, every placement the service sends and every fallback the shim reports
becomes one of these, and the decision log (pyscheduler.store) stores exactly this record.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


class DecisionKind(enum.StrEnum):
    PRIORITY = "priority"  # a job's priority (DollyMP Algorithm 1)
    PLACEMENT = "placement"  # a task/container placed on a node (Algorithm 2)
    DEFERRAL = "deferral"  # a pending ask not placed this round, with the reason
    CLONE_GRANT = "clone_grant"  # clones granted to a task (Corollary 4.1 / Dolly budget)
    KILL = "kill"  # a losing copy killed
    OMEGA = "omega"  # delay-assignment wait per job (Dolly Section 4.4)
    FALLBACK = "fallback"  # the shim scheduled without the service
    ATTEMPT = "attempt"  # a task copy as the AM helper reports it: clone launched, won, lost the race
    MAP_READ = "map_read"  # which map copy a reduce copy read under delay assignment (Dolly Section 4.4)


@dataclass(frozen=True, slots=True)
class Decision:
    """One decision with its reason. `time` is seconds on the driver's clock (live or simulated)."""

    time: float
    kind: DecisionKind
    reason: str  # machine-readable, e.g. "best_fit", "infeasible"
    application_id: str = ""
    job_id: str = ""
    task_id: str = ""
    node_id: str = ""
    detail: str = ""  # human-readable explanation
    inputs: dict[str, Any] = field(default_factory=dict)  # the inputs that mattered (JSON-able)

    def __post_init__(self) -> None:
        if not math.isfinite(self.time):
            raise ValueError(f"Decision.time must be finite, got {self.time!r}")
        if not self.reason:
            raise ValueError("Decision.reason must be non-empty: every decision carries its reason")


class DecisionRecorder(Protocol):
    """Where decisions go (the decision log in pyscheduler.store): the service's RM rounds and AM plans
    alike hand theirs here."""

    def append(self, decisions: Sequence[Decision]) -> Any: ...


class NullRecorder:
    """A recorder that keeps nothing (tests, tools)."""

    def append(self, decisions: Sequence[Decision]) -> Any:
        return None

"""One decision round's plan as the round functions build it: placements, deferrals, preemptions, and the
further decisions to log (`RoundResult`); the session turns it into the wire Plan
(service/rmproxy/session.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pyscheduler.objects.decision import Decision
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.service.state.records import AskKey
from pyscheduler.service.state.resources import Res


@dataclass(frozen=True, slots=True)
class PlacementChoice:
    key: AskKey
    node_id: str
    capability: Res
    count: int
    reason: int  # pb.DecisionReason
    detail: str


@dataclass(frozen=True, slots=True)
class DeferralChoice:
    key: AskKey
    reason: int  # pb.DecisionReason
    detail: str


@dataclass(frozen=True, slots=True)
class KillChoice:
    """A running container the shim should preempt (service/round/yielding.py), with the reason."""

    container_id: str
    application_id: str
    reason: str  # e.g. "clone_yields"
    detail: str


@dataclass(slots=True)
class RoundResult:
    """One decision round: placements, deferrals, preemptions, and further decisions to log."""

    placements: list[PlacementChoice] = field(default_factory=list)
    deferrals: list[DeferralChoice] = field(default_factory=list)
    records: list[Decision] = field(default_factory=list)
    kills: list[KillChoice] = field(default_factory=list)
    # the running copies the round read (service/state/amview.py; None: clones do not yield), for the queues'
    # reclaim
    copies: list[Copy] | None = None

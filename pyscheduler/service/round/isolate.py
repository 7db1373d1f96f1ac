"""Fault isolation per application: one application's error does not stop a round for the others.

An exception while translating an application (its asks and its AM helper's hints into a core Job) or
while the core decides with it leaves that application out of the round: its asks are deferred with
the reason, a decision-log record (`kind` deferral, reason `excluded`) says why, and the round goes on
for the rest. The exclusion holds while the application's input stays the same (its asks and hints:
the same input fails the same way) and is retried on its next change.

Finding the culprit of a failed decide: the core decides on all jobs at once, so the jobs are halved
until the failing ones are found (a failure is rare; its cost is a few extra decides, log2 of the job
count per culprit). Exclusions are per session (kept in the session's round memory,
service/round/round_memory.py).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from pyscheduler.objects import Job
from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.policies import Decisions, Policy, Snapshot
from pyscheduler.service.round.plan import DeferralChoice
from pyscheduler.service.round.round_memory import RoundMemory
from pyscheduler.service.state.mirror import AskRec, Mirror
from pyscheduler.wire import pb

log = logging.getLogger("dollymp.isolate")
REASON = "excluded"
_DETAIL_MAX = 300  # characters of an exception's text kept in a record


def _why(step: str, exc: BaseException) -> str:
    return f"{step} failed: {type(exc).__name__}: {str(exc)[:_DETAIL_MAX]}"


class Isolation:
    """One round's isolation over a session's mirror (its exclusions persist in the round memory's
    `excluded`)."""

    def __init__(self, mirror: Mirror, memory: RoundMemory) -> None:
        self.mirror = mirror
        self.excluded = memory.excluded
        self.signatures: dict[str, Any] = {}  # this round's input per application
        self.left_out: dict[str, list[AskRec]] = {}  # applications out of this round, with their asks
        self.records: list[Decision] = []  # exclusions that are new this round

    def _exclude(self, app_id: str, asks: list[AskRec], reason: str) -> None:
        self.left_out[app_id] = asks
        self.excluded[app_id] = (self.signatures.get(app_id), reason)
        log.warning("application %s excluded from the round: %s", app_id, reason)
        self.records.append(
            Decision(
                time.time(),
                DecisionKind.DEFERRAL,
                REASON,
                app_id,
                detail=reason,
                inputs={"asks": len(asks), "retried": "on the application's next change"},
            )
        )

    def translate(
        self,
        app_id: str,
        asks: list[AskRec],
        hints: Callable[[str], Any] | None,
        one: Callable[[Any], Any],
    ) -> Any:
        """`one(hint)` for the application, or None when it is (still) excluded."""
        try:
            hint = hints(app_id) if hints is not None else {}
            sig = (
                tuple((a.key, a.num_containers, a.outstanding, a.capability) for a in asks),
                tuple(sorted(hint.items())),
            )
        except Exception as exc:
            self._exclude(app_id, asks, _why("hints", exc))
            return None
        self.signatures[app_id] = sig
        prev = self.excluded.get(app_id)
        if prev is not None:
            if prev[0] == sig:  # unchanged: it would fail again
                self.left_out[app_id] = asks
                return None
            del self.excluded[app_id]  # changed: retried
        try:
            return one(hint)
        except Exception as exc:
            self._exclude(app_id, asks, _why("translation", exc))
            return None

    def decide(self, policy: Policy, snapshot: Snapshot, index: dict[tuple[str, str], AskRec]) -> Decisions:
        """The policy's decisions; when it raises, without the applications that make it raise."""
        try:
            return policy.decide(snapshot)
        except Exception as exc:
            first = exc
        jobs = list(snapshot.jobs)
        bad = self._culprits(policy, snapshot, jobs)
        if not bad:  # it fails with every job but with no part of them: none is decided this round
            bad = jobs
        for j in bad:
            asks = [a for (app, _), a in index.items() if app == j.job_id]
            self._exclude(j.job_id, asks, _why("decision", first))
        rest = [j for j in jobs if j.job_id not in self.left_out]
        try:
            return policy.decide(self._with(snapshot, rest))
        except Exception as exc:  # an interaction between jobs: nothing is decided this round
            for j in rest:
                asks = [a for (app, _), a in index.items() if app == j.job_id]
                self._exclude(j.job_id, asks, _why("decision", exc))
            return policy.decide(self._with(snapshot, []))

    @staticmethod
    def _with(snapshot: Snapshot, jobs: Sequence[Job]) -> Snapshot:
        return Snapshot(
            snapshot.time,
            snapshot.cluster.copy(),
            list(jobs),
            snapshot.attempts,
            snapshot.estimator,
            snapshot.startup_s,
        )

    def _culprits(self, policy: Policy, snapshot: Snapshot, jobs: list[Job]) -> list[Job]:
        try:
            policy.decide(self._with(snapshot, jobs))
            return []
        except Exception:
            if len(jobs) == 1:
                return jobs
        half = len(jobs) // 2
        return self._culprits(policy, snapshot, jobs[:half]) + self._culprits(policy, snapshot, jobs[half:])

    def deferrals(self) -> list[DeferralChoice]:
        """The left-out applications' asks, deferred with the reason (they are on the plan every round)."""
        out: list[DeferralChoice] = []
        for app_id, asks in self.left_out.items():
            reason = self.excluded.get(app_id, (None, "excluded"))[1]
            for a in asks:
                if a.num_containers > a.outstanding:
                    out.append(DeferralChoice(a.key, pb.REASON_INFEASIBLE, f"{REASON}: {reason}"))
        return out

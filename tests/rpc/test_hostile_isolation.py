"""Fault isolation per application, through a real Sync stream: one application whose translation or
decision raises is left out of the round with a logged reason, the others are placed, and it is
retried on its next change.

The faults are INJECTED (a policy that raises for one job, an AM-hint source that raises for one
application): once the bounds hold (tests/rpc/test_hostile_bounds.py), no input we know of makes the
translation or the core raise (the 1e308 durations that overflowed a mean are refused at the door), so
the failure paths are driven by a stand-in that fails on purpose.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import hostile
from rpc_harness import Stream, app, ask, attempt, full_batch, node, register

from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.policies import get_policy
from pyscheduler.service.rmproxy.server import GrpcServer, ServerOptions
from pyscheduler.service.rmproxy.servicer import SchedulerServicer
from pyscheduler.service.rmproxy.session import SessionRegistry
from pyscheduler.service.round.coreround import core_round
from pyscheduler.wire import pb

BAD, HINTLESS = app(2).application_id, app(4).application_id


class Faulty:
    """DollyMP, except that deciding with the job BAD raises while `armed` (an injected fault)."""

    def __init__(self) -> None:
        self.inner = get_policy("dollymp")
        self.name = "faulty"
        self.armed = True
        self.calls_with_bad = 0

    def decide(self, snapshot: Any) -> Any:
        if any(j.job_id == BAD for j in snapshot.jobs):
            self.calls_with_bad += 1
            if self.armed:
                raise ValueError("injected fault for one job")
        return self.inner.decide(snapshot)


def hints(app_id: str) -> dict[int, Any]:
    if app_id == HINTLESS:
        raise KeyError("injected fault in the AM hints")
    return {}


class Recorder:
    def __init__(self) -> None:
        self.decisions: list[Decision] = []

    def append(self, decisions: Sequence[Decision]) -> None:
        self.decisions.extend(decisions)


def _excluded(rec: Recorder) -> dict[str, str]:
    return {
        d.application_id: d.detail
        for d in rec.decisions
        if d.kind is DecisionKind.DEFERRAL and d.reason == "excluded"
    }


def test_a_failing_application_is_excluded_and_retried_on_its_next_change() -> None:
    attack = "fault in one application (injected)"
    policy, rec = Faulty(), Recorder()
    round_fn = core_round(policy, hints)  # type: ignore[arg-type]
    servicer = SchedulerServicer(SessionRegistry(), round_fn, "faulty", rec)
    servicer.before_send = lambda records: [rec.append(r.build()) for r in records] and None  # as the service
    server = GrpcServer(servicer, ServerOptions(port=0))
    server.start()
    try:
        with hostile.connection(server.port) as ch:
            reg = register(ch, "rm-iso")
            s = Stream(ch)
            plan = s.send(
                full_batch(
                    reg.session_id,
                    nodes_upserted=[node(f"h{i}:1", 8192, 8) for i in range(2)],
                    apps_upserted=[app(1), app(2), app(4)],
                    asks=[ask(1, 1, 2), ask(2, 1, 2), ask(4, 1, 2)],
                )
            )
            r = hostile.row(attack)
            r.inputs += 2
            placed = {p.attempt_id for p in plan.placements}
            held = {d.attempt_id: d.detail for d in plan.deferrals}
            assert attempt(1) in placed and attempt(2) not in placed and attempt(4) not in placed
            assert "excluded: decision failed: ValueError: injected fault" in held[attempt(2)]
            assert "excluded: hints failed: KeyError" in held[attempt(4)]
            r.clear_errors += 2
            why = _excluded(rec)
            assert why[BAD].startswith("decision failed") and why[HINTLESS].startswith("hints failed")
            # unchanged: not decided again (not even tried), still deferred with its reason
            before = policy.calls_with_bad
            plan = s.send(
                pb.StateBatch(session_id=reg.session_id, seq=2, apps_upserted=[app(3)], asks=[ask(3, 1, 1)])
            )
            assert policy.calls_with_bad == before
            assert attempt(3) in {p.attempt_id for p in plan.placements}
            assert attempt(2) in {d.attempt_id for d in plan.deferrals}
            # its next change: retried, and placed now that the fault is gone
            policy.armed = False
            plan = s.send(pb.StateBatch(session_id=reg.session_id, seq=3, asks=[ask(2, 1, 3)]))
            assert attempt(2) in {p.attempt_id for p in plan.placements}
            s.close()
    finally:
        server.stop(1.0)
    assert hostile.row(attack).crashes == hostile.row(attack).cross_tenant == 0

"""The AM plan reads the view an RM round publishes (service/round/planview.py), never the live mirror
under the session's lock: the view stays as its round left it while the mirror goes on, the plan
translates the competing jobs from it, and an AM plan is answered while the session's lock is held."""

from __future__ import annotations

import dataclasses
import threading

from am_reports import APP, phase_profile
from rpc_harness import am_session, app, ask, node, two_app_mirror

from pyscheduler.policies import get_policy
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.service.rmproxy.session import Session
from pyscheduler.service.round.amplan import context_of
from pyscheduler.service.round.coreround import core_round
from pyscheduler.service.state.records import AskRec
from pyscheduler.wire import pb


def _session() -> Session:
    m = two_app_mirror(4, [ask(1, 20, 2), ask(2, 20, 3)])
    return Session("sid", "rm-test", 1, 1000, (), mirror=m)


def test_a_view_is_the_state_its_round_left_and_stays_so() -> None:
    s = _session()
    assert s.view is None  # no round yet
    round_fn = core_round(get_policy("fcfs"), clock=lambda: 10.0)
    plan, _ = s.decide(round_fn, 10.0, 30.0)
    view = s.view
    assert view is not None and view.epoch == plan.epoch and view.knows("application_1700000000000_0001")
    placed = sum(p.count for p in plan.placements)
    assert placed == 4  # the node's 4 vcores
    held = {k: a.outstanding for k, a in view.mirror.asks.items()}
    # the round's placements hold their asks' counts: application 1's ask is placed whole, 2 of 3 of 2's
    assert held == {("appattempt_1700000000000_0002_000001", 20, -1): 2}
    free = view.memory.cluster.state.free.copy() if view.memory.cluster else None
    assert free is not None and free.sum(axis=0)[0] == 0.0  # and their room
    # the RM confirms nothing and the placements expire; a new node comes; the next round publishes anew
    s.apply(pb.StateBatch(session_id="sid", seq=1, rm_time_ms=2, nodes_upserted=[node("h2:1", 8192, 8)]))
    s.decide(round_fn, 100.0, 30.0)
    assert s.view is not view
    assert {k: a.outstanding for k, a in view.mirror.asks.items()} == held
    assert view.memory.cluster is not None and (view.memory.cluster.state.free == free).all()
    assert len(view.memory.cluster.state.node_ids) == 1 and view.mirror.layout != s.mirror.layout


def test_the_competing_jobs_come_from_the_view_with_the_reports_of_now() -> None:
    s = _session()
    s.decide(core_round(get_policy("fcfs"), clock=lambda: 10.0), 10.0, 30.0)
    cluster, others = context_of(s.view, "application_1700000000000_0001", lambda app_id: {}, 10.0)
    assert cluster.node_ids == ["h1:1"] and cluster.free.sum() == 0.0  # the placements' room held
    assert [j.job_id for j in others] == ["application_1700000000000_0002"]
    assert [ph.num_tasks for ph in others[0].phases] == [1]  # 3 asked, 2 of them placed this round
    assert context_of(None, APP, lambda app_id: {}, 10.0)[1] == []  # before any round: no competitors


def test_an_am_plan_is_answered_while_the_sessions_lock_is_held(inproc: DecisionService) -> None:
    with am_session(
        inproc.port, nodes_upserted=[node("h0:1", 8192, 8)], apps_upserted=[app(1)], asks=[ask(1, 20, 2)]
    ) as (_reg, _s, am):
        (session,) = inproc.registry.sessions()
        profile = pb.JobProfile(
            application_id=APP, job_name="small", submit_time_ms=1, phases=[phase_profile("map", 2, 20)]
        )
        got: list[object] = []
        with session.lock:  # as a Sync thread applying a batch or deciding a round would
            t = threading.Thread(target=lambda: got.append(am.ReportJobProfile(profile, timeout=20)))
            t.start()
            t.join(20)
        assert got and isinstance(got[0], pb.ClonePlan), "the AM plan waited for the session's lock"


def test_an_ask_copied_for_a_view_keeps_every_field() -> None:
    a = AskRec(("appattempt_1", 1, -1), None, 0, (), True, False, 0)  # type: ignore[arg-type]
    for i, f in enumerate(dataclasses.fields(AskRec)):  # a distinct value in every field, later ones too
        setattr(a, f.name, ("field", i))
    b = a.copied()
    assert b is not a and all(
        getattr(b, f.name) == ("field", i) for i, f in enumerate(dataclasses.fields(AskRec))
    )

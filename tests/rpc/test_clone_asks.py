"""Clone asks (service/round/clones.py): the containers the AM helper asked for clones are placed only in
capacity that no original container of any application can use this round."""

from __future__ import annotations

from round_memories import memory_of
from rpc_harness import am_session, app, ask, attempt, node, res, two_app_mirror

from pyscheduler.policies import get_policy
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.service.round.clones import clone_counts
from pyscheduler.service.round.coreround import core_round
from pyscheduler.service.round.round_memory import RoundMemory
from pyscheduler.service.round.translate import snapshot_and_clones
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.service.state.phasehints import PhaseHint
from pyscheduler.wire import pb

APP1 = "application_1700000000000_0001"
APP2 = "application_1700000000000_0002"


def _mirror(free_cores: int, asks: list[object]) -> Mirror:
    return two_app_mirror(free_cores, asks)  # type: ignore[no-any-return]


def _hints(waiting: dict[str, int]):  # type: ignore[no-untyped-def]
    return lambda app_id: {20: PhaseHint("map", 5.0, 1.0, waiting.get(app_id, 0))}


def _placed(result: object) -> dict[tuple[str, int], int]:
    out: dict[tuple[str, int], int] = {}
    for p in result.placements:  # type: ignore[attr-defined]
        out[(p.key[0], p.reason)] = out.get((p.key[0], p.reason), 0) + p.count
    return out


def test_clone_counts_never_exceed_pending_and_follow_priority() -> None:
    m = _mirror(8, [ask(1, 20, 3), ask(1, 10, 1)])
    got = clone_counts(m.asks.values(), {20: 5, 10: 0})
    assert got == {(attempt(1), 20, -1): 3}


def test_clone_containers_are_left_out_of_the_core_snapshot() -> None:
    m = _mirror(8, [ask(1, 20, 3), ask(2, 20, 2)])
    snap, _, _, clones = snapshot_and_clones(m, memory_of(m), 10.0, _hints({APP1: 1, APP2: 2}))
    assert clones == {(attempt(1), 20, -1): 1, (attempt(2), 20, -1): 2}
    assert [(j.job_id, [p.num_tasks for p in j.phases]) for j in snap.jobs] == [(APP1, [2])]


def test_clones_wait_while_an_original_waits() -> None:
    # 3 free vcores; app 1 has 2 originals + 1 clone, app 2 has 2 originals: 4 originals > 3 cores.
    m = _mirror(3, [ask(1, 20, 3), ask(2, 20, 2)])
    result = core_round(get_policy("dollymp"), _hints({APP1: 1}))(m, memory_of(m))
    placed = _placed(result)
    assert sum(placed.values()) == 3
    assert not any(reason == pb.REASON_CLONE_IDLE_CAPACITY for _, reason in placed)
    clone_deferrals = [d for d in result.deferrals if "clone waits" in d.detail]
    assert [d.key for d in clone_deferrals] == [(attempt(1), 20, -1)]
    assert clone_deferrals[0].reason == pb.REASON_LOWER_PRIORITY


def test_clones_take_idle_capacity_once_every_original_is_placed() -> None:
    m = _mirror(8, [ask(1, 20, 3), ask(2, 20, 2)])
    result = core_round(get_policy("dollymp"), _hints({APP1: 1}))(m, memory_of(m))
    placed = _placed(result)
    assert placed.get((attempt(1), pb.REASON_CLONE_IDLE_CAPACITY)) == 1
    originals = sum(n for (_, reason), n in placed.items() if reason != pb.REASON_CLONE_IDLE_CAPACITY)
    assert originals == 4
    assert not result.deferrals


def test_clones_fill_only_what_is_left_and_defer_the_rest() -> None:
    # 5 cores: 4 originals, then one of app 1's two clones.
    m = _mirror(5, [ask(1, 20, 4), ask(2, 20, 2)])
    result = core_round(get_policy("dollymp"), _hints({APP1: 2}))(m, memory_of(m))
    placed = _placed(result)
    assert placed.get((attempt(1), pb.REASON_CLONE_IDLE_CAPACITY)) == 1
    assert sum(placed.values()) == 5
    assert [d.reason for d in result.deferrals] == [pb.REASON_WAITING_FOR_RESOURCES]


def test_a_late_copy_takes_idle_capacity_before_an_earlier_jobs_clone_at_launch() -> None:
    # 5 cores: 4 originals, then one clone: app 2's, a late task's (waiting_alone), although app 1 came first.
    m = _mirror(5, [ask(1, 20, 3), ask(2, 20, 3)])
    hints = {APP1: PhaseHint("map", 5.0, 1.0, 1), APP2: PhaseHint("map", 5.0, 1.0, 1, waiting_alone=1)}
    result = core_round(get_policy("dollymp"), lambda app_id: {20: hints[app_id]})(m, memory_of(m))
    placed = _placed(result)
    assert placed.get((attempt(2), pb.REASON_CLONE_IDLE_CAPACITY)) == 1, placed
    assert (attempt(1), pb.REASON_CLONE_IDLE_CAPACITY) not in placed, placed
    late = [p for p in result.placements if p.reason == pb.REASON_CLONE_IDLE_CAPACITY]
    assert "late copy or phase tail" in late[0].detail
    # the late mark, not the ask's age, decides: app 1's ask is the newer one here
    newer = _mirror(5, [ask(2, 20, 3), ask(1, 20, 3)])
    hints[APP1] = PhaseHint("map", 5.0, 1.0, 1)
    late2 = core_round(get_policy("dollymp"), lambda app_id: {20: hints[app_id]})(newer, memory_of(newer))
    assert _placed(late2).get((attempt(2), pb.REASON_CLONE_IDLE_CAPACITY)) == 1


def test_clones_at_launch_go_newest_ask_first() -> None:
    """Clones at launch: the ask that appeared last first, whatever the applications' submit order (a
    clone that waited must make up its original's head start; service/round/clones.py)."""
    # 5 cores: 4 originals, then one clone. App 1 (submitted first) asked first: app 2's clone goes.
    m = _mirror(5, [ask(1, 20, 3), ask(2, 20, 3)])
    got = _placed(core_round(get_policy("dollymp"), _hints({APP1: 1, APP2: 1}))(m, memory_of(m)))
    assert got.get((attempt(2), pb.REASON_CLONE_IDLE_CAPACITY)) == 1, got
    assert (attempt(1), pb.REASON_CLONE_IDLE_CAPACITY) not in got, got
    # App 1's reduce asks after app 2's maps: its clone goes first, though app 1 was submitted first.
    m = _mirror(5, [ask(2, 20, 3), ask(1, 10, 3)])
    reduce_hint = {APP1: {10: PhaseHint("reduce", 5.0, 1.0, 1)}, APP2: {20: PhaseHint("map", 5.0, 1.0, 1)}}
    got = _placed(core_round(get_policy("dollymp"), lambda app_id: reduce_hint[app_id])(m, memory_of(m)))
    assert got.get((attempt(1), pb.REASON_CLONE_IDLE_CAPACITY)) == 1, got
    assert (attempt(2), pb.REASON_CLONE_IDLE_CAPACITY) not in got, got
    # An ask whose count fell to 0 leaves the mirror: when its phase asks again, it is the newest.
    m.apply(pb.StateBatch(session_id="s", seq=2, rm_time_ms=2, asks=[ask(2, 20, 0), ask(2, 20, 3)]))
    got = _placed(core_round(get_policy("dollymp"), lambda app_id: reduce_hint[app_id])(m, memory_of(m)))
    assert got.get((attempt(2), pb.REASON_CLONE_IDLE_CAPACITY)) == 1, got
    assert (attempt(1), pb.REASON_CLONE_IDLE_CAPACITY) not in got, got


def test_the_service_places_an_ams_waiting_clone_only_in_idle_capacity(inproc: DecisionService) -> None:
    """Over the real socket: the AM reports a clone waiting for its container (ATTEMPT_WAITING); the
    shim's next batches get that container only once no original of any application waits."""
    with am_session(inproc.port, nodes_upserted=[node("h1:1", 2048, 2)], apps_upserted=[app(1), app(2)]) as (
        reg,
        s,
        am,
    ):
        profile = pb.JobProfile(
            application_id=APP1,
            job_name="j1",
            submit_time_ms=1000,
            phases=[pb.PhaseProfile(phase_id="map", tasks=1, demand=res(1024, 1), yarn_priority=20)],
        )
        am.ReportJobProfile(profile, timeout=10)
        waiting = pb.AttemptReport(
            task_id="task_m_0",
            attempt_id="attempt_m_0_1",
            phase_id="map",
            is_clone=True,
            state=pb.ATTEMPT_WAITING,
            time_ms=5,
        )
        am.ReportAttempts(pb.AttemptReports(application_id=APP1, attempts=[waiting]), timeout=10)
        # 2 cores: app 1's clone + app 2's three originals: one original waits, so the clone waits.
        plan = s.send(pb.StateBatch(session_id=reg.session_id, seq=2, asks=[ask(1, 20, 1), ask(2, 20, 3)]))
        got = {(p.attempt_id, p.reason): p.count for p in plan.placements}
        assert got == {(attempt(2), pb.REASON_PRIORITY_ORDER): 2} or got == {
            (attempt(2), pb.REASON_BEST_FIT): 2
        }, got
        held = [d for d in plan.deferrals if d.attempt_id == attempt(1)]
        assert held and held[0].reason == pb.REASON_LOWER_PRIORITY
        # Once the clone has a container the AM reports it RUNNING and it is no clone ask any more.
        assert not any(p.is_clone for p in plan.placements)
        # App 2 wants no more than it got, and a node joins: the clone takes the idle room.
        plan = s.send(
            pb.StateBatch(
                session_id=reg.session_id,
                seq=3,
                asks=[ask(2, 20, 2)],
                nodes_upserted=[node("h2:1", 2048, 2)],
            )
        )
        clones = [p for p in plan.placements if p.attempt_id == attempt(1)]
        assert [(p.count, p.is_clone, p.reason) for p in clones] == [
            (1, True, pb.REASON_CLONE_IDLE_CAPACITY)
        ], plan
        running = pb.AttemptReport()
        running.CopyFrom(waiting)
        running.state, running.container_id = pb.ATTEMPT_RUNNING, "container_1"
        am.ReportAttempts(pb.AttemptReports(application_id=APP1, attempts=[running]), timeout=10)
        assert inproc.appmaster.hints(APP1)[20].waiting_clones == 0


def test_a_tasks_first_clone_takes_idle_capacity_before_a_newer_asks_third_copy() -> None:
    """`CloneAsks.first`: a clone at launch that would be its task's first running clone goes
    before other clones at launch, whatever the asks' age; a late copy still goes before both."""
    # 5 cores: 4 originals, then one clone. App 1's ask is the newer one.
    m = _mirror(5, [ask(2, 20, 3), ask(1, 20, 3)])
    hints = {APP1: PhaseHint("map", 5.0, 1.0, 1), APP2: PhaseHint("map", 5.0, 1.0, 1, waiting_first=1)}
    result = core_round(get_policy("dollymp"), lambda app_id: {20: hints[app_id]})(m, memory_of(m))
    got = _placed(result)
    assert got.get((attempt(2), pb.REASON_CLONE_IDLE_CAPACITY)) == 1, got
    assert (attempt(1), pb.REASON_CLONE_IDLE_CAPACITY) not in got, got
    first = [p for p in result.placements if p.reason == pb.REASON_CLONE_IDLE_CAPACITY]
    assert "tasks' first clones first" in first[0].detail
    hints[APP2] = PhaseHint("map", 5.0, 1.0, 1)  # without the mark, the newest ask first
    got = _placed(core_round(get_policy("dollymp"), lambda app_id: {20: hints[app_id]})(m, memory_of(m)))
    assert got.get((attempt(1), pb.REASON_CLONE_IDLE_CAPACITY)) == 1, got
    hints[APP1] = PhaseHint("map", 5.0, 1.0, 1, waiting_alone=1)
    hints[APP2] = PhaseHint("map", 5.0, 1.0, 1, waiting_first=1)
    got = _placed(core_round(get_policy("dollymp"), lambda app_id: {20: hints[app_id]})(m, memory_of(m)))
    assert got.get((attempt(1), pb.REASON_CLONE_IDLE_CAPACITY)) == 1, got


def test_late_first_hands_a_late_copy_to_the_core_with_its_jobs_originals() -> None:
    """appmaster.late_first: a clone judged alone (a late copy) goes to the core's round, in its job's
    priority order, instead of waiting until no original of any job waits (service/round/clones.py)."""
    # 3 cores. App 1 (first, larger) has 4 originals waiting; app 2's only pending container is a late copy.
    asks = [ask(1, 20, 4), ask(2, 20, 1)]
    hints = {APP1: PhaseHint("map", 5.0, 1.0, 0), APP2: PhaseHint("map", 5.0, 1.0, 1, waiting_alone=1)}
    hint = lambda app_id: {20: hints[app_id]}  # noqa: E731
    paper = _placed(core_round(get_policy("dollymp"), hint)(_mirror(3, asks), RoundMemory()))
    assert sum(n for (a, _), n in paper.items() if a == attempt(1)) == 3, paper
    assert not any(a == attempt(2) for a, _ in paper), paper  # the paper's Algorithm 2: idle capacity only

    snap, _, _, clones = snapshot_and_clones(_mirror(3, asks), RoundMemory(), 10.0, hint, late_first=True)
    assert dict(clones) == {} and clones.alone == {} and clones.ahead == {(attempt(2), 20, -1): 1}
    assert {j.job_id: [p.num_tasks for p in j.phases] for j in snap.jobs} == {APP1: [4], APP2: [1]}

    ahead = core_round(get_policy("dollymp"), hint, late_first=True)(_mirror(3, asks), RoundMemory())
    got = _placed(ahead)
    assert sum(n for (a, _), n in got.items() if a == attempt(2)) == 1, got  # the small job's copy first
    assert sum(n for (a, _), n in got.items() if a == attempt(1)) == 2, got
    assert not any(r == pb.REASON_CLONE_IDLE_CAPACITY for _, r in got), got

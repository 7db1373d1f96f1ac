"""Clones yield to waiting originals (service/round/yielding.py): which running clones the service asks the
shim to preempt, in what order, how many, and that the plan carries them with a logged reason."""

from __future__ import annotations

from rpc_harness import app, ask, attempt, full_batch, node, res
from yield_rig import (
    APP1,
    NOW_MS,
    completed,
    container,
    kills_once_steady,
    mirror_of,
    rated,
    running_copy,
    two_nodes,
)

from pyscheduler.policies import get_policy
from pyscheduler.service.rmproxy.session import Session
from pyscheduler.service.round.coreround import core_round
from pyscheduler.service.round.waiting import STEADY_S, Waiting
from pyscheduler.service.round.yielding import choose, preemptible
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.service.state.phasehints import PhaseHint
from pyscheduler.service.state.resources import Res
from pyscheduler.wire import pb


def test_the_youngest_clone_that_does_not_lead_its_task_yields_first() -> None:
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "o2", "c2")], [])
    copies = [
        running_copy("o1", "t1", False, 0.5, 40_000),  # finishes at 40 + 60/0.5 = 160 s
        running_copy("c1", "t1", True, 0.0, 80_000),  # young clone, no progress yet
        running_copy("o2", "t2", False, 0.1, 40_000),  # a straggler: finishes at 640 s
        running_copy("c2", "t2", True, 0.5, 70_000),  # its clone leads: finishes at 130 s
    ]
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c1"]


def _held_back_mirror() -> tuple[Mirror, list[Copy]]:
    """8 vcores: a map with a clone at launch (c1), a map with two late copies (c2, c2b), a reduce with two
    clones (c3, c3b), each clone younger than its task's original."""
    ids = ("o1", "c1", "o2", "c2", "c2b", "o3", "c3", "c3b")
    m = mirror_of([container(c, 1) for c in ids], [], cores=8)
    copies = [
        running_copy("o1", "t1", False, 0.5, 40_000),
        running_copy("c1", "t1", True, 0.0, 80_000),
        running_copy("o2", "t2", False, 0.5, 40_000),
        Copy(APP1, "t2", "attempt_c2", "c2", True, 0.0, 90_000, per_task=True),
        Copy(APP1, "t2", "attempt_c2b", "c2b", True, 0.0, 85_000, per_task=True),
        running_copy("o3", "r1", False, 0.5, 40_000),
        Copy(APP1, "r1", "attempt_c3", "c3", True, 0.0, 95_000, last_stage=True),
        Copy(APP1, "r1", "attempt_c3b", "c3b", True, 0.0, 80_000, last_stage=True),
    ]
    return m, copies


def test_clones_named_per_task_and_of_the_last_stage_yield_after_every_clone_at_launch() -> None:
    """A late copy or a phase tail's clone and a reduce clone are held back: they come after the clone at
    launch, though younger (youngest first among themselves), and never leave their task fewer than two
    copies: c2b and c3b stay (on the cluster benchmark: two reduces lost both clones to waiting maps)."""
    m, copies = _held_back_mirror()
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c1", "c3", "c2"]


def test_clones_held_back_yield_to_waiting_originals_but_never_to_a_clone_judged_alone() -> None:
    """On the cluster benchmark: a new job's maps or AM waited 13-28 s while every running clone was a late
    copy, a phase tail's clone or a reduce clone. Now they yield to an original once the clones at launch
    are taken; a waiting clone judged alone gets clones at launch only."""
    one = Res(1024, 1)
    m, copies = _held_back_mirror()
    kills = choose(m, [Waiting(one), Waiting(one), Waiting(one)], copies, NOW_MS)
    assert [k.container_id for k in kills] == ["c1", "c3", "c2"]
    assert "yields to a waiting original" in kills[1].detail
    m, copies = _held_back_mirror()
    kills = choose(m, [Waiting(one, original=False)] * 3, copies, NOW_MS)
    assert [k.container_id for k in kills] == ["c1"]
    assert "yields to a waiting clone judged alone" in kills[0].detail


def test_a_waiting_original_takes_a_clone_at_launch_on_another_node_before_a_clone_held_back() -> None:
    """Per waiting container, the node that gives up the fewest clones held back wins, before the fewest
    clones: h1 holds a young late copy, h2 an older clone at launch."""
    m = two_nodes()
    copies = [
        running_copy("o1", "t1", False, 0.5, 40_000),
        Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 95_000, per_task=True),
        running_copy("o2", "t2", False, 0.5, 40_000),
        running_copy("c2", "t2", True, 0.0, 60_000),
    ]
    assert [k.container_id for k in choose(m, [Res(1024, 1)], copies, NOW_MS)] == ["c2"]


def test_a_clone_its_lead_already_beats_yields_before_a_younger_one_whose_draw_is_unknown() -> None:
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "c1b", "o2", "c2")], [], cores=5)
    copies = [
        running_copy("o1", "t1", False, 0.5, 40_000),  # the lead: finishes at 160 s
        running_copy("c1", "t1", True, 0.1, 60_000),  # beaten: finishes at 460 s
        running_copy("c1b", "t1", True, 0.0, 70_000),  # no progress yet
        running_copy("o2", "t2", False, 0.5, 40_000),
        running_copy("c2", "t2", True, 0.0, 90_000),  # the youngest, no progress yet
    ]
    # c1 first; then t1 and t2 have two copies each: the youngest clone of those, c2, before c1b
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c1", "c2", "c1b"]


def test_a_young_clone_without_a_rate_is_not_beaten_by_a_lead_timed_by_its_rate() -> None:
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "o2", "c2")], [])
    copies = [
        rated("o1", "t1", False, 0.5, 160.0),  # timed by its rate: finishes at 160 s
        running_copy(
            "c1", "t1", True, 0.05, 90_000
        ),  # 10 s old, from its launch: 290 s, its start-up included
        running_copy("o2", "t2", False, 0.0, 40_000),
        running_copy("c2", "t2", True, 0.0, 95_000),  # younger, no estimate at all
    ]
    # c1 is not taken for beaten (before: first, on the cluster benchmark): the younger c2 yields first
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c2", "c1"]
    # once c1 is timed by its rate too, and later than its lead, it is beaten
    timed = [copies[0], rated("c1", "t1", True, 0.3, 300.0), *copies[2:]]
    assert [c.container_id for c in preemptible(timed, m, NOW_MS)] == ["c1", "c2"]


def test_a_task_with_three_copies_gives_up_a_clone_before_a_task_with_two() -> None:
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "o2", "c2", "c2b")], [], cores=5)
    copies = [
        running_copy("o1", "t1", False, 0.0, 40_000),
        running_copy("c1", "t1", True, 0.0, 95_000),  # the youngest, but t1's only clone
        running_copy("o2", "t2", False, 0.0, 40_000),
        running_copy("c2", "t2", True, 0.0, 60_000),
        running_copy("c2b", "t2", True, 0.0, 70_000),
    ]
    # c2b leaves t2 two copies; then c1 and c2 each leave their task one: the younger first
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c2b", "c1", "c2"]


def test_every_task_gives_up_one_clone_before_any_gives_up_its_second() -> None:
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "c1b", "o2", "c2", "c2b")], [], cores=6)
    copies = [
        running_copy("o1", "t1", False, 0.0, 40_000),
        running_copy("c1", "t1", True, 0.0, 90_000),
        running_copy("c1b", "t1", True, 0.0, 95_000),
        running_copy("o2", "t2", False, 0.0, 40_000),
        running_copy("c2", "t2", True, 0.0, 60_000),
        running_copy("c2b", "t2", True, 0.0, 70_000),
    ]
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c1b", "c2b", "c1", "c2"]
    # two waiting originals: one clone of each task yields (before: both of t1's, on the cluster benchmark)
    assert sorted(k.container_id for k in choose(m, [Res(1024, 1)] * 2, copies, NOW_MS)) == ["c1b", "c2b"]


def test_a_clone_whose_task_has_no_other_copy_never_yields() -> None:
    m = mirror_of([container("c1", 1)], [])
    assert preemptible([running_copy("c1", "t1", True)], m, NOW_MS) == []


def test_no_more_preemptions_than_waiting_originals_and_none_asked_twice() -> None:
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "c1b")], [], cores=3)
    copies = [
        running_copy("o1", "t1", False, 0.5),
        running_copy("c1", "t1", True, 0.0, 60_000),
        running_copy("c1b", "t1", True),
    ]
    got = choose(m, [Res(1024, 1)], copies, NOW_MS)
    assert [k.container_id for k in got] == ["c1"]  # launched last
    assert got[0].reason == "clone_yields" and got[0].application_id == APP1
    # the next round, the first preemption still in flight: nothing more for the same waiting original
    assert choose(m, [Res(1024, 1)], copies, NOW_MS + 1000) == []
    # two originals wait: one more
    assert [k.container_id for k in choose(m, [Res(1024, 1)] * 2, copies, NOW_MS + 2000)] == ["c1b"]


def test_a_preemption_in_flight_on_a_node_with_no_clone_left_still_counts_as_room() -> None:
    # two nodes: h1 holds o1 and its clone c1, h2 holds o2 and its clone c2; both full
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[node(f"h{i}:1", mem=2048, cores=2, alloc=(2048, 2)) for i in (1, 2)],
            apps_upserted=[app(1, submit_ms=1000)],
            containers_allocated=[
                pb.ContainerInfo(
                    container_id=c, attempt_id=attempt(1), node_id=h, priority=20, resource=res(1024, 1),
                    start_time_ms=1,
                )
                for c, h in (("o1", "h1:1"), ("c1", "h1:1"), ("o2", "h2:1"), ("c2", "h2:1"))
            ],
        )
    )  # fmt: skip
    copies = [
        running_copy("o1", "t1", False, 0.5),
        running_copy("c1", "t1", True, 0.0, 90_000),
        running_copy("o2", "t2", False, 0.5),
        running_copy("c2", "t2", True, 0.0, 60_000),
    ]
    assert [k.container_id for k in choose(m, [Res(1024, 1)], copies, NOW_MS)] == ["c1"]
    # the next round: c1 is still running (in flight) and h1 has no clone left to preempt; the one
    # waiting container will take c1's room, so c2 stays
    assert choose(m, [Res(1024, 1)], copies, NOW_MS + 100) == []
    # the shim completed c1: gone from the mirror, h1's allocated not yet down (its NodeManager has not
    # reported); h1 still has the room coming, so c2 still stays (before: preempted, on the cluster benchmark)
    completed(m, "c1")
    left = [c for c in copies if c.container_id != "c1"]
    assert choose(m, [Res(1024, 1)], left, NOW_MS + 200) == []


def test_a_preempted_clone_the_shim_reported_gone_still_counts_as_room_until_its_node_reports() -> None:
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "o2", "c2")], [])
    copies = [
        running_copy("o1", "t1", False, 0.5),
        running_copy("c1", "t1", True, 0.0, 90_000),
        running_copy("o2", "t2", False, 0.5),
        running_copy("c2", "t2", True, 0.0, 60_000),
    ]
    assert [k.container_id for k in choose(m, [Res(1024, 1)], copies, NOW_MS)] == ["c1"]
    # the shim completed c1 (preempted): it leaves the mirror, but the node's allocated still holds it
    # until its NodeManager's next heartbeat, so the RM has no room for the waiting original yet
    completed(m, "c1")
    assert "c1" not in m.containers and m.free_of(["h1:1"])["h1:1"] == Res(0, 0)
    left = [c for c in copies if c.container_id != "c1"]
    # the waiting original will take c1's room: c2 stays (before: preempted too, on the cluster benchmark)
    assert choose(m, [Res(1024, 1)], left, NOW_MS + 100) == []
    # a second waiting original still takes c2
    assert [k.container_id for k in choose(m, [Res(1024, 1)] * 2, left, NOW_MS + 200)] == ["c2"]


def test_an_am_container_larger_than_a_clone_takes_two_clones_on_one_node() -> None:
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "c2")], [], cores=3)
    copies = [
        running_copy("o1", "t1", False, 0.5),
        running_copy("c1", "t1", True, 0.0, 60_000),
        running_copy("c2", "t1", True),
    ]
    assert sorted(k.container_id for k in choose(m, [Res(2048, 1)], copies, NOW_MS)) == ["c1", "c2"]


def test_no_clone_yields_when_preempting_every_one_would_not_make_room() -> None:
    m = mirror_of([container("o1", 1), container("c1", 1)], [], cores=2)
    copies = [running_copy("o1", "t1", False, 0.5), running_copy("c1", "t1", True)]
    assert choose(m, [Res(2048, 1)], copies, NOW_MS) == []


def test_a_round_with_a_waiting_original_preempts_a_clone_and_the_plan_says_so() -> None:
    # The node's vcores all taken: app 1's map original + 3 clones, and, when app 2's map phase has
    # started, one of its maps; app 2 waits for 1 more container (`started`) or its first (not).
    for started in (True, False):
        containers = [container(c, 1) for c in ("o1", "c1", "c2", "c3")]
        containers += [container("o2", 2)] if started else []
        m = mirror_of(containers, [ask(2, 20, 1)], cores=len(containers))
        copies = [
            running_copy("o1", "t1", False, 0.5, 40_000),
            running_copy("c1", "t1", True, 0.1, 60_000),
            running_copy("c2", "t1", True, 0.0, 90_000),
            running_copy("c3", "t1", True, 0.0, 95_000),
        ]
        clock = [NOW_MS / 1000.0 - STEADY_S]
        round_fn = core_round(get_policy("dollymp"), clock=lambda c=clock: c[0], copies=lambda c=copies: c)
        session = Session("sid", "rm-test", 1, 1000, (), mirror=m)
        first, first_records = session.decide(round_fn, clock[0], 30.0)
        if started:
            assert not first.kill_container_ids  # the original has not waited STEADY_S yet
            clock[0] = NOW_MS / 1000.0
            plan, records = session.decide(round_fn, clock[0], 30.0)
        else:  # no task of app 2's phase has a container: no clone can be among its waiting containers
            plan, records = first, first_records
        assert list(plan.kill_container_ids) == ["c1"], started  # beaten by o1 (460 s against 160 s)
        kills = [d for d in records.build() if d.kind.value == "kill"]
        assert [(d.reason, d.inputs["container_id"]) for d in kills] == [("clone_yields", "c1")]


def test_a_clone_at_launch_yields_to_a_late_tasks_waiting_clone_but_not_to_another_launch_clone() -> None:
    # 4 vcores all taken by app 1's map original and 3 clones at launch; app 2's only pending container is
    # a clone (waiting_clones 1): of a late task (waiting_alone 1), a clone of app 1 yields to it.
    containers = [container(c, 1) for c in ("o1", "c1", "c2", "c3")]
    copies = [
        running_copy("o1", "t1", False, 0.5, 40_000),
        running_copy("c1", "t1", True, 0.1, 60_000),
        running_copy("c2", "t1", True, 0.0, 90_000),
        running_copy("c3", "t1", True, 0.0, 95_000),
    ]
    for alone, kills in ((1, ["c1"]), (0, [])):  # c1: beaten by o1
        hint = PhaseHint("map", 40.0, 5.0, waiting_clones=1, waiting_alone=alone)
        assert kills_once_steady(containers, hint, copies) == kills, alone

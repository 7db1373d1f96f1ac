"""Clones yield to waiting originals (rpc/yielding.py): which running clones the service asks the shim to
preempt, and that the plan carries them with a logged reason."""

from __future__ import annotations

from pathlib import Path

from rpc_harness import FORMER, am_session, app, ask, attempt, full_batch, in_process_service, node, res

from pyscheduler.policies import get_policy
from pyscheduler.rpc.clones import CloneAsks
from pyscheduler.rpc.coreround import core_round
from pyscheduler.rpc.mirror import AskKey, Mirror
from pyscheduler.rpc.placer import PlacementChoice
from pyscheduler.rpc.res import Res
from pyscheduler.rpc.session import Session
from pyscheduler.rpc.translate import PhaseHint
from pyscheduler.rpc.waiting import STEADY_S, Waiting, steady, waiting_first
from pyscheduler.rpc.yielding import BEATEN_MARGIN_S, Copy, beaten, choose, preemptible
from pyscheduler.wire import pb

APP1 = "application_1700000000000_0001"
APP2 = "application_1700000000000_0002"
NOW_MS = 100_000


def _container(cid: str, n: int, mem: int = 1024, cores: int = 1, am: bool = False) -> object:
    return pb.ContainerInfo(
        container_id=cid, attempt_id=attempt(n), node_id="h1:1", priority=20, resource=res(mem, cores),
        am_container=am, start_time_ms=1,
    )  # fmt: skip


def _mirror(containers: list[object], asks: list[object], cores: int = 4) -> Mirror:
    """One node of `cores` vcores, as many taken as there are `containers` (1 vcore each)."""
    used = len(containers)
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[node("h1:1", mem=cores * 1024, cores=cores, alloc=(used * 1024, used))],
            apps_upserted=[app(1, submit_ms=1000), app(2, submit_ms=2000)],
            asks=asks,
            containers_allocated=containers,
        )
    )
    return m


def _completed(m: Mirror, cid: str) -> None:
    """The shim reports container `cid` completed (e.g. preempted); its node's figures are not updated."""
    m.apply(
        pb.StateBatch(
            session_id="s", seq=2, rm_time_ms=2,
            containers_completed=[pb.ContainerCompletion(container_id=cid, finish_time_ms=2)],
        )
    )  # fmt: skip


def _copy(cid: str, task: str, clone: bool, progress: float = 0.0, launch_ms: int = 50_000) -> Copy:
    return Copy(APP1, task, f"attempt_{cid}", cid, clone, progress, launch_ms)


def test_the_youngest_clone_that_does_not_lead_its_task_yields_first() -> None:
    m = _mirror([_container(c, 1) for c in ("o1", "c1", "o2", "c2")], [])
    copies = [
        _copy("o1", "t1", False, 0.5, 40_000),  # finishes at 40 + 60/0.5 = 160 s
        _copy("c1", "t1", True, 0.0, 80_000),  # young clone, no progress yet
        _copy("o2", "t2", False, 0.1, 40_000),  # a straggler: finishes at 640 s
        _copy("c2", "t2", True, 0.5, 70_000),  # its clone leads: finishes at 130 s
    ]
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c1"]


def _held_back_mirror() -> tuple[Mirror, list[Copy]]:
    """8 vcores: a map with a clone at launch (c1), a map with two late copies (c2, c2b), a reduce with two
    clones (c3, c3b), each clone younger than its task's original."""
    ids = ("o1", "c1", "o2", "c2", "c2b", "o3", "c3", "c3b")
    m = _mirror([_container(c, 1) for c in ids], [], cores=8)
    copies = [
        _copy("o1", "t1", False, 0.5, 40_000),
        _copy("c1", "t1", True, 0.0, 80_000),
        _copy("o2", "t2", False, 0.5, 40_000),
        Copy(APP1, "t2", "attempt_c2", "c2", True, 0.0, 90_000, per_task=True),
        Copy(APP1, "t2", "attempt_c2b", "c2b", True, 0.0, 85_000, per_task=True),
        _copy("o3", "r1", False, 0.5, 40_000),
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


def _two_nodes() -> Mirror:
    """Two full nodes of 2 vcores: o1 and c1 on h1, o2 and c2 on h2 (1 vcore each)."""
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[
                node("h1:1", mem=2048, cores=2, alloc=(2048, 2)),
                node("h2:1", mem=2048, cores=2, alloc=(2048, 2)),
            ],
            apps_upserted=[app(1, submit_ms=1000)],
            containers_allocated=[
                pb.ContainerInfo(
                    container_id=cid,
                    attempt_id=attempt(1),
                    node_id=n,
                    priority=20,
                    resource=res(1024, 1),
                    start_time_ms=1,
                )
                for cid, n in (("o1", "h1:1"), ("c1", "h1:1"), ("o2", "h2:1"), ("c2", "h2:1"))
            ],
        )
    )
    return m


def test_a_waiting_original_takes_a_clone_at_launch_on_another_node_before_a_clone_held_back() -> None:
    """Per waiting container, the node that gives up the fewest clones held back wins, before the fewest
    clones: h1 holds a young late copy, h2 an older clone at launch."""
    m = _two_nodes()
    copies = [
        _copy("o1", "t1", False, 0.5, 40_000),
        Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 95_000, per_task=True),
        _copy("o2", "t2", False, 0.5, 40_000),
        _copy("c2", "t2", True, 0.0, 60_000),
    ]
    assert [k.container_id for k in choose(m, [Res(1024, 1)], copies, NOW_MS)] == ["c2"]


def test_a_clone_its_lead_already_beats_yields_before_a_younger_one_whose_draw_is_unknown() -> None:
    m = _mirror([_container(c, 1) for c in ("o1", "c1", "c1b", "o2", "c2")], [], cores=5)
    copies = [
        _copy("o1", "t1", False, 0.5, 40_000),  # the lead: finishes at 160 s
        _copy("c1", "t1", True, 0.1, 60_000),  # beaten: finishes at 460 s
        _copy("c1b", "t1", True, 0.0, 70_000),  # no progress yet
        _copy("o2", "t2", False, 0.5, 40_000),
        _copy("c2", "t2", True, 0.0, 90_000),  # the youngest, no progress yet
    ]
    # c1 first; then t1 and t2 have two copies each: the youngest clone of those, c2, before c1b
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c1", "c2", "c1b"]


def test_a_young_clone_without_a_rate_is_not_beaten_by_a_lead_timed_by_its_rate() -> None:
    m = _mirror([_container(c, 1) for c in ("o1", "c1", "o2", "c2")], [])
    copies = [
        _rated("o1", "t1", False, 0.5, 160.0),  # timed by its rate: finishes at 160 s
        _copy("c1", "t1", True, 0.05, 90_000),  # 10 s old, from its launch: 290 s, its start-up included
        _copy("o2", "t2", False, 0.0, 40_000),
        _copy("c2", "t2", True, 0.0, 95_000),  # younger, no estimate at all
    ]
    # c1 is not taken for beaten (before: first, on the cluster benchmark): the younger c2 yields first
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c2", "c1"]
    # once c1 is timed by its rate too, and later than its lead, it is beaten
    timed = [copies[0], _rated("c1", "t1", True, 0.3, 300.0), *copies[2:]]
    assert [c.container_id for c in preemptible(timed, m, NOW_MS)] == ["c1", "c2"]


def test_a_task_with_three_copies_gives_up_a_clone_before_a_task_with_two() -> None:
    m = _mirror([_container(c, 1) for c in ("o1", "c1", "o2", "c2", "c2b")], [], cores=5)
    copies = [
        _copy("o1", "t1", False, 0.0, 40_000),
        _copy("c1", "t1", True, 0.0, 95_000),  # the youngest, but t1's only clone
        _copy("o2", "t2", False, 0.0, 40_000),
        _copy("c2", "t2", True, 0.0, 60_000),
        _copy("c2b", "t2", True, 0.0, 70_000),
    ]
    # c2b leaves t2 two copies; then c1 and c2 each leave their task one: the younger first
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c2b", "c1", "c2"]


def test_every_task_gives_up_one_clone_before_any_gives_up_its_second() -> None:
    m = _mirror([_container(c, 1) for c in ("o1", "c1", "c1b", "o2", "c2", "c2b")], [], cores=6)
    copies = [
        _copy("o1", "t1", False, 0.0, 40_000),
        _copy("c1", "t1", True, 0.0, 90_000),
        _copy("c1b", "t1", True, 0.0, 95_000),
        _copy("o2", "t2", False, 0.0, 40_000),
        _copy("c2", "t2", True, 0.0, 60_000),
        _copy("c2b", "t2", True, 0.0, 70_000),
    ]
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c1b", "c2b", "c1", "c2"]
    # two waiting originals: one clone of each task yields (before: both of t1's, on the cluster benchmark)
    assert sorted(k.container_id for k in choose(m, [Res(1024, 1)] * 2, copies, NOW_MS)) == ["c1b", "c2b"]


def test_a_clone_whose_task_has_no_other_copy_never_yields() -> None:
    m = _mirror([_container("c1", 1)], [])
    assert preemptible([_copy("c1", "t1", True)], m, NOW_MS) == []


def test_no_more_preemptions_than_waiting_originals_and_none_asked_twice() -> None:
    m = _mirror([_container(c, 1) for c in ("o1", "c1", "c1b")], [], cores=3)
    copies = [_copy("o1", "t1", False, 0.5), _copy("c1", "t1", True, 0.0, 60_000), _copy("c1b", "t1", True)]
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
        _copy("o1", "t1", False, 0.5),
        _copy("c1", "t1", True, 0.0, 90_000),
        _copy("o2", "t2", False, 0.5),
        _copy("c2", "t2", True, 0.0, 60_000),
    ]
    assert [k.container_id for k in choose(m, [Res(1024, 1)], copies, NOW_MS)] == ["c1"]
    # the next round: c1 is still running (in flight) and h1 has no clone left to preempt; the one
    # waiting container will take c1's room, so c2 stays
    assert choose(m, [Res(1024, 1)], copies, NOW_MS + 100) == []
    # the shim completed c1: gone from the mirror, h1's allocated not yet down (its NodeManager has not
    # reported); h1 still has the room coming, so c2 still stays (before: preempted, on the cluster benchmark)
    _completed(m, "c1")
    left = [c for c in copies if c.container_id != "c1"]
    assert choose(m, [Res(1024, 1)], left, NOW_MS + 200) == []


def test_a_preempted_clone_the_shim_reported_gone_still_counts_as_room_until_its_node_reports() -> None:
    m = _mirror([_container(c, 1) for c in ("o1", "c1", "o2", "c2")], [])
    copies = [
        _copy("o1", "t1", False, 0.5),
        _copy("c1", "t1", True, 0.0, 90_000),
        _copy("o2", "t2", False, 0.5),
        _copy("c2", "t2", True, 0.0, 60_000),
    ]
    assert [k.container_id for k in choose(m, [Res(1024, 1)], copies, NOW_MS)] == ["c1"]
    # the shim completed c1 (preempted): it leaves the mirror, but the node's allocated still holds it
    # until its NodeManager's next heartbeat, so the RM has no room for the waiting original yet
    _completed(m, "c1")
    assert "c1" not in m.containers and m.free_of(["h1:1"])["h1:1"] == Res(0, 0)
    left = [c for c in copies if c.container_id != "c1"]
    # the waiting original will take c1's room: c2 stays (before: preempted too, on the cluster benchmark)
    assert choose(m, [Res(1024, 1)], left, NOW_MS + 100) == []
    # a second waiting original still takes c2
    assert [k.container_id for k in choose(m, [Res(1024, 1)] * 2, left, NOW_MS + 200)] == ["c2"]


def test_an_am_container_larger_than_a_clone_takes_two_clones_on_one_node() -> None:
    m = _mirror([_container(c, 1) for c in ("o1", "c1", "c2")], [], cores=3)
    copies = [_copy("o1", "t1", False, 0.5), _copy("c1", "t1", True, 0.0, 60_000), _copy("c2", "t1", True)]
    assert sorted(k.container_id for k in choose(m, [Res(2048, 1)], copies, NOW_MS)) == ["c1", "c2"]


def test_no_clone_yields_when_preempting_every_one_would_not_make_room() -> None:
    m = _mirror([_container("o1", 1), _container("c1", 1)], [], cores=2)
    copies = [_copy("o1", "t1", False, 0.5), _copy("c1", "t1", True)]
    assert choose(m, [Res(2048, 1)], copies, NOW_MS) == []


def test_a_round_with_a_waiting_original_preempts_a_clone_and_the_plan_says_so() -> None:
    # The node's vcores all taken: app 1's map original + 3 clones, and, when app 2's map phase has
    # started, one of its maps; app 2 waits for 1 more container (`started`) or its first (not).
    for started in (True, False):
        containers = [_container(c, 1) for c in ("o1", "c1", "c2", "c3")]
        containers += [_container("o2", 2)] if started else []
        m = _mirror(containers, [ask(2, 20, 1)], cores=len(containers))
        copies = [
            _copy("o1", "t1", False, 0.5, 40_000),
            _copy("c1", "t1", True, 0.1, 60_000),
            _copy("c2", "t1", True, 0.0, 90_000),
            _copy("c3", "t1", True, 0.0, 95_000),
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
    containers = [_container(c, 1) for c in ("o1", "c1", "c2", "c3")]
    copies = [
        _copy("o1", "t1", False, 0.5, 40_000),
        _copy("c1", "t1", True, 0.1, 60_000),
        _copy("c2", "t1", True, 0.0, 90_000),
        _copy("c3", "t1", True, 0.0, 95_000),
    ]
    for alone, kills in ((1, ["c1"]), (0, [])):  # c1: beaten by o1
        hint = PhaseHint("map", 40.0, 5.0, waiting_clones=1, waiting_alone=alone)
        m = _mirror(containers, [ask(2, 20, 1)])
        clock = [NOW_MS / 1000.0 - STEADY_S]
        round_fn = core_round(
            get_policy("dollymp"),
            hints=lambda app_id, h=hint: {20: h} if app_id == APP2 else {},
            clock=lambda c=clock: c[0],
            copies=lambda: copies,
        )
        assert round_fn(m).kills == []
        clock[0] = NOW_MS / 1000.0
        assert [k.container_id for k in round_fn(m).kills] == kills, alone


def _sizes(m: Mirror, waiting: dict[tuple[str, AskKey], int], now_ms: int) -> list[Res]:
    return [w.res for w in steady(m, waiting, now_ms)]


def test_only_a_container_that_waited_steady_s_counts_and_as_few_as_waited_throughout() -> None:
    m = _mirror([_container("o2", 2)], [ask(2, 20, 3)])  # a task of the phase runs: it may have clones
    key = next(iter(m.asks))
    assert _sizes(m, {("original", key): 3}, 10_000) == []
    assert _sizes(m, {("original", key): 1}, 11_000) == []
    assert _sizes(m, {("original", key): 2}, 13_000) == [Res(1024, 1)]  # 3 s on, at least 1 throughout
    assert _sizes(m, {("original", key): 2}, 15_000) == [Res(1024, 1)]  # 1 from 11 s to 13 s
    assert _sizes(m, {("original", key): 2}, 16_500) == [Res(1024, 1)] * 2  # 2 since 13 s
    assert _sizes(m, {}, 17_000) == []  # placed: the wait ends
    assert _sizes(m, {("original", key): 2}, 17_500) == []  # a new wait starts over
    assert _sizes(m, {("original", key): 2}, 19_000) == []
    assert _sizes(m, {("original", key): 2}, 30_000) == []  # no round for 11 s: a new wait too


def test_an_am_containers_ask_counts_at_once_and_only_as_an_original() -> None:
    """No clone asks for an AM's container, so it need not wait STEADY_S (on the cluster benchmark: 3 to 5 AMs
    of 8 a run waited 3.2-3.8 s behind clones)."""
    m = _mirror([], [ask(2, 0, 1, am=True)])
    key = next(iter(m.asks))
    assert steady(m, {("original", key): 1}, 10_000) == [Waiting(Res(1024, 1), key, True)]
    assert steady(m, {("alone", key): 1}, 10_000) == []


def test_a_phase_with_no_task_container_yet_counts_its_waiting_containers_at_once() -> None:
    """A job's maps as it starts, its reduce as its maps end: no clone can be among them yet (the AM adds
    a clone of a running task only). The job's AM container or another phase's does not start the phase;
    a container of the phase does, and then the wait must last STEADY_S."""
    reduce = pb.ContainerInfo(
        container_id="r2", attempt_id=attempt(2), node_id="h1:1", priority=10, resource=res(1024, 1),
        start_time_ms=1,
    )  # fmt: skip
    for running, counted in (
        ([], 3),
        ([_container("am2", 2, am=True)], 3),
        ([reduce], 3),
        ([_container("o1", 1)], 3),  # another job's
        ([_container("o2", 2)], 0),
    ):
        m = _mirror(running, [ask(2, 20, 3)])
        key = next(iter(m.asks))
        assert len(steady(m, {("original", key): 3}, 10_000)) == counted, running
        assert steady(m, {("alone", key): 3}, 10_000) == []


def _rated(cid: str, task: str, clone: bool, progress: float, finish_s: float, **kw: bool) -> Copy:
    """A copy launched at 50 s whose rate since its work began says it finishes at `finish_s`."""
    return Copy(
        APP1, task, f"attempt_{cid}", cid, clone, progress, 50_000, finish_est_ms=finish_s * 1000, **kw
    )


def test_a_clone_of_a_covered_task_yields_before_a_younger_clone_of_a_task_not_timed_yet() -> None:
    """On the cluster benchmark: a map's only clone yielded within a second of its launch, beside an original
    that drew 603 s, while another job's map clone kept its container though that map's original was timed
    to finish 37 s later. A clone of a task `covered` (a copy timed at its rate finishes within a fresh
    copy's run time) now yields first, and the node that gives one up wins."""
    m = _two_nodes()
    copies = [
        _rated("o1", "t1", False, 0.6, 137.0, covered=True),  # 37 s left
        Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 60_000, covered=True),  # older, draw not known
        _copy("o2", "t2", False, 0.0, 99_000),  # both copies just launched: nothing timed
        _copy("c2", "t2", True, 0.0, 99_500),
    ]
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c1", "c2"]
    assert [k.container_id for k in choose(m, [Res(1024, 1)], copies, NOW_MS)] == ["c1"]
    # without the flag, the youngest clone went first, as before
    plain = [Copy(c.app_id, c.task_id, c.attempt_id, c.container_id, c.is_clone, c.progress, c.launch_ms)
             for c in copies]  # fmt: skip
    assert [c.container_id for c in preemptible(plain, m, NOW_MS)] == ["c2", "c1"]


def test_the_last_clone_of_a_task_not_timed_yet_does_not_yield_to_a_last_stage_clone() -> None:
    """`keeps_company` (on the cluster benchmark: a map's only clone, a 54.3 s draw, yielded 5 s after its
    start to another job's reduce clone, its third copy; the map's original drew 140.1 s). Map t1's copies
    are not timed: its one clone stays for a waiting reduce clone (of the ask of the running reduce r1, YARN
    priority 10), and goes to a late copy's waiting clone or to an original. Once t1 is covered, or
    with a second clone, it gives one up to the reduce clone too."""
    one = Res(1024, 1)
    reduce_ask: AskKey = (attempt(1), 10)

    def mirror(cores: int = 3) -> Mirror:  # every vcore taken
        m = _mirror([_container(c, 1) for c in ("o1", "c1")], [], cores=cores)
        m.apply(
            pb.StateBatch(
                session_id="s", seq=2, rm_time_ms=2,
                containers_allocated=[
                    pb.ContainerInfo(container_id="r1", attempt_id=attempt(1), node_id="h1:1", priority=10,
                                     resource=res(1024, 1), start_time_ms=1)
                ],
            )
        )  # fmt: skip
        return m

    blind = [
        _copy("o1", "t1", False, 0.0, 90_000),
        _copy("c1", "t1", True, 0.0, 96_000),
        Copy(APP1, "r1", "attempt_r1", "r1", False, 0.0, 95_000, last_stage=True),
    ]
    stage = Waiting(one, reduce_ask, original=False)
    assert choose(mirror(), [stage], blind, NOW_MS) == []
    for other in (Waiting(one, original=False), Waiting(one)):  # a late copy's clone; an original
        assert [k.container_id for k in choose(mirror(), [other], blind, NOW_MS)] == ["c1"]
    covered = [Copy(APP1, "t1", "attempt_o1", "o1", False, 0.5, 90_000, covered=True),
               Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 96_000, covered=True), blind[2]]  # fmt: skip
    assert [k.container_id for k in choose(mirror(), [stage], covered, NOW_MS)] == ["c1"]
    m = mirror(cores=4)
    m.apply(pb.StateBatch(session_id="s", seq=3, rm_time_ms=3, containers_allocated=[_container("c1b", 1)]))
    two = [*blind, _copy("c1b", "t1", True, 0.0, 97_000)]
    assert [k.container_id for k in choose(m, [stage], two, NOW_MS)] == ["c1b"]


def test_a_clone_at_launch_clearly_beaten_by_its_tasks_lead_is_released_at_once() -> None:
    m = _mirror([_container(c, 1) for c in ("o1", "c1", "c2", "o2", "c3", "o3", "c4")], [], cores=8)
    copies = [
        _rated("o1", "t1", False, 0.5, 100.0),  # lead of t1: runs 50 s, margin max(10 s, 0.2 x 50 s)
        _rated("c1", "t1", True, 0.3, 100.0 + BEATEN_MARGIN_S + 1),  # clearly later: released
        _rated("c2", "t1", True, 0.3, 100.0 + BEATEN_MARGIN_S - 1),  # near a tie: runs on
        _rated("o2", "t2", False, 0.1, 200.0),  # t2's lead has done too little to be trusted
        _rated("c3", "t2", True, 0.5, 150.0),  # ahead: t2's lead is c3, not o2
        _rated("o3", "t3", False, 0.6, 100.0),
        _rated("c4", "t3", True, 0.1, 400.0),  # t3's clone: too little progress to judge
    ]
    got = beaten(copies, m, NOW_MS)
    assert [(k.container_id, k.reason) for k in got] == [("c1", "clone_beaten")]
    assert "finishes 11.0 s after attempt_o1" in got[0].detail
    assert beaten(copies, m, NOW_MS + 100) == []  # in flight: asked for once
    # and its room counts as coming for a waiting original: nothing more is preempted for one
    assert choose(m, [Res(1024, 1)], copies, NOW_MS + 200) == []


def test_a_known_stragglers_clones_at_launch_do_not_yield_unless_beaten() -> None:
    """A task whose timed copies all straggle keeps its clones at launch (`Copy.straggling`): only its
    beaten ones may yield; another task's clone yields instead (on the cluster benchmark: a 752 s straggler's
    two young clones yielded 3 s after their start, twice)."""
    m = _mirror([_container(c, 1) for c in ("o1", "c1", "c1b", "o2", "c2")], [], cores=5)
    copies = [
        _rated("o1", "t1", False, 0.05, 800.0, straggling=True),
        Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 95_000, straggling=True),  # young, untimed
        _rated("c1b", "t1", True, 0.3, 900.0, straggling=True),  # timed, and later than o1: beaten
        _copy("o2", "t2", False, 0.5, 40_000),
        _copy("c2", "t2", True, 0.0, 90_000),
    ]
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c1b", "c2"]
    got = choose(m, [Res(1024, 1), Res(1024, 1)], copies, NOW_MS)
    assert [k.container_id for k in got] == ["c1b", "c2"]
    # without the mark, c1 (the younger clone of the task with three copies) yields before c2
    unmarked = [Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 95_000), *copies[2:], copies[0]]
    assert [c.container_id for c in preemptible(unmarked, m, NOW_MS)] == ["c1b", "c1", "c2"]


def test_only_clones_at_launch_are_released_when_beaten_and_only_with_a_rate() -> None:
    m = _mirror([_container(c, 1) for c in ("o1", "c1")], [])
    for clone in (
        _rated("c1", "t1", True, 0.5, 300.0, per_task=True),  # a late copy: the AM would launch it again
        _rated("c1", "t1", True, 0.5, 300.0, last_stage=True),  # a reduce
        _copy("c1", "t1", True, 0.5, 50_000),  # no rate since its work began
    ):
        assert beaten([_rated("o1", "t1", False, 0.5, 100.0), clone], m, NOW_MS) == []
    # an original slower than its clone is never released: only clones are
    assert (
        beaten([_rated("o1", "t1", False, 0.5, 300.0), _rated("c1", "t1", True, 0.5, 100.0)], m, NOW_MS) == []
    )


def test_a_round_releases_a_beaten_clone_with_nothing_pending_and_only_when_asked_to() -> None:
    containers = [_container(c, 1) for c in ("o1", "c1")]
    copies = [_rated("o1", "t1", False, 0.5, 100.0), _rated("c1", "t1", True, 0.5, 300.0)]
    for release, kills in ((True, ["c1"]), (False, [])):
        m = _mirror(containers, [])
        round_fn = core_round(
            get_policy("dollymp"),
            clock=lambda: NOW_MS / 1000.0,
            copies=lambda: copies,
            release_beaten=release,
        )
        session = Session("sid", "rm-test", 1, 1000, (), mirror=m)
        plan, records = session.decide(round_fn, NOW_MS / 1000.0, 30.0)
        assert list(plan.kill_container_ids) == kills
        logged = [(d.reason, d.inputs["container_id"]) for d in records.build() if d.kind.value == "kill"]
        assert logged == [("clone_beaten", k) for k in kills]


def test_a_clone_never_yields_to_an_ask_of_its_own_jobs_phase() -> None:
    # app 1's map phase (priority 20) runs o1 and its clone c1; a container of the same ask waits: an
    # unreported clone or Hadoop's replacement of a yielded clone, not an original (placed first)
    m = _mirror([_container(c, 1) for c in ("o1", "c1")], [ask(1, 20, 1), ask(2, 20, 1)], cores=2)
    copies = [_copy("o1", "t1", False, 0.5), _copy("c1", "t1", True)]
    own = next(k for k in m.asks if k[0].endswith("_0001_000001"))
    other = next(k for k in m.asks if k != own)
    assert choose(m, [Waiting(Res(1024, 1), own)], copies, NOW_MS) == []
    assert [k.container_id for k in choose(m, [Waiting(Res(1024, 1), other)], copies, NOW_MS)] == ["c1"]


def test_without_a_copy_source_or_a_waiting_original_nothing_is_preempted() -> None:
    containers = [_container(c, 1) for c in ("o1", "c1", "c2", "c3")]
    copies = [_copy("o1", "t1", False, 0.5), _copy("c3", "t1", True)]
    m = _mirror(containers, [ask(2, 20, 1)])
    assert core_round(get_policy("dollymp"), clock=lambda: 100.0)(m).kills == []
    idle = _mirror(containers, [ask(2, 20, 1)], cores=8)  # room for the original: no preemption
    idle_round = core_round(get_policy("dollymp"), clock=lambda: 100.0, copies=lambda: copies)(idle)
    assert idle_round.kills == []


def test_only_jobs_whose_am_lets_a_preempted_clone_go_offer_their_copies(tmp_path: Path) -> None:
    """Through the real AppMasterService: a job profile with clones_preemptible false (Hadoop's own AM,
    which would replace a preempted clone) keeps its running clones out of the preemptible copies."""
    svc = in_process_service(tmp_path, **{"policy.name": "dollymp-ext", "policy.options": FORMER})
    try:
        with am_session(svc.port, nodes_upserted=[node("h1:1")], apps_upserted=[app(1), app(2)]) as (
            _r,
            _s,
            am,
        ):
            for n, ok in ((1, True), (2, False)):
                app_id = f"application_1700000000000_{n:04d}"
                phase = pb.PhaseProfile(phase_id="map", tasks=1, demand=res(1024, 1), yarn_priority=20)
                am.ReportJobProfile(
                    pb.JobProfile(
                        application_id=app_id,
                        job_name=f"j{n}",
                        phases=[phase],
                        clones_preemptible=ok,
                    ),
                    timeout=10,
                )
                reports = [
                    pb.AttemptReport(
                        task_id=f"task_1700000000000_{n:04d}_m_000000",
                        attempt_id=f"attempt_1700000000000_{n:04d}_m_000000_{k}",
                        phase_id="map",
                        container_id=f"container_{n}_{k}",
                        is_clone=k > 0,
                        state=pb.ATTEMPT_RUNNING,
                        time_ms=5,
                    )
                    for k in (0, 1)
                ]
                am.ReportAttempts(pb.AttemptReports(application_id=app_id, attempts=reports), timeout=10)
            copies = svc.appmaster.running_copies()
            assert sorted(c.container_id for c in copies) == ["container_1_0", "container_1_1"]
            assert [c.is_clone for c in sorted(copies, key=lambda c: c.container_id)] == [False, True]
    finally:
        svc.stop()


def test_only_a_clone_worth_the_least_yields_to_a_waiting_tasks_first_clone() -> None:
    """`cheap` (on the cluster benchmark: three jobs' first map clones started 13-20 s after their
    originals while other jobs' clones held the room): a clone at launch of a covered task, or beaten by
    its lead, yields to a waiting clone that would be its task's first running one (`Waiting.first`);
    a clone of a task not timed yet, or held back, does not."""
    m = _two_nodes()
    first = Waiting(Res(1024, 1), original=False, first=True)
    blind = [
        _copy("o1", "t1", False, 0.0, 90_000),
        _copy("c1", "t1", True, 0.0, 96_000),
        _copy("o2", "t2", False, 0.0, 90_000),
        _copy("c2", "t2", True, 0.0, 97_000),
    ]
    assert choose(m, [first], blind, NOW_MS) == []
    assert [k.container_id for k in choose(_two_nodes(), [Waiting(Res(1024, 1))], blind, NOW_MS)] == ["c2"]
    covered = [
        _rated("o1", "t1", False, 0.6, 137.0, covered=True),
        Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 96_000, covered=True),
        *blind[2:],
    ]
    kills = choose(_two_nodes(), [first], covered, NOW_MS)
    assert [k.container_id for k in kills] == ["c1"]
    assert "task's first clone" in kills[0].detail
    beaten_clone = [*blind[:2], _rated("o2", "t2", False, 0.6, 137.0), _rated("c2", "t2", True, 0.3, 190.0)]
    assert [k.container_id for k in choose(_two_nodes(), [first], beaten_clone, NOW_MS)] == ["c2"]
    held = [*blind[:2], blind[2], Copy(APP1, "t2", "attempt_c2", "c2", True, 0.0, 97_000, per_task=True)]
    held[1] = Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 96_000, covered=True, last_stage=True)
    assert choose(_two_nodes(), [first], held, NOW_MS) == []


def test_a_round_counts_a_waiting_first_clone_only_past_its_asks_placements_and_late_clones() -> None:
    """`waiting_first`: of an ask's clones not placed this round, those not judged alone, at most its
    first ones; and a round with one preempts a covered clone of another job for it."""
    key: AskKey = (attempt(2), 20)
    clones = CloneAsks()
    clones[key] = 3
    clones.first[key] = 2
    assert waiting_first(clones, {}, []) == {key: 2}
    assert waiting_first(clones, {key: 1}, []) == {key: 2}
    assert waiting_first(clones, {key: 2}, []) == {key: 1}
    placed = [PlacementChoice(key, "h1:1", Res(1024, 1), 2, pb.REASON_CLONE_IDLE_CAPACITY, "")]
    assert waiting_first(clones, {}, placed) == {key: 1}
    assert waiting_first(clones, {key: 1}, placed) == {}
    containers = [_container(c, 1) for c in ("o1", "c1", "o3", "c3")]
    copies = [
        _rated("o1", "t1", False, 0.6, 137.0, covered=True),
        Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 96_000, covered=True),
        _copy("o3", "t3", False, 0.0, 90_000),
        _copy("c3", "t3", True, 0.0, 97_000),
    ]
    for n_first, kills in ((1, ["c1"]), (0, [])):
        hint = PhaseHint("map", 40.0, 5.0, waiting_clones=1, waiting_first=n_first)
        m = _mirror(containers, [ask(2, 20, 1)])
        clock = [NOW_MS / 1000.0 - STEADY_S]
        round_fn = core_round(
            get_policy("dollymp"),
            hints=lambda app_id, h=hint: {20: h} if app_id == APP2 else {},
            clock=lambda c=clock: c[0],
            copies=lambda: copies,
        )
        assert round_fn(m).kills == []
        clock[0] = NOW_MS / 1000.0
        assert [k.container_id for k in round_fn(m).kills] == kills, n_first

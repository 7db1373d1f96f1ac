"""Clones yield to waiting originals (service/round/yielding.py, service/round/waiting.py), timed: which
waiting containers count (steady for STEADY_S, AM asks at once), clones timed at their rate or beaten by their
task's lead, and rounds that release them."""

from __future__ import annotations

from pathlib import Path

from round_memories import memory_of
from rpc_harness import FORMER, am_session, app, ask, attempt, in_process_service, node, res
from yield_rig import (
    APP1,
    NOW_MS,
    container,
    kills_once_steady,
    mirror_of,
    rated,
    running_copy,
    two_nodes,
)

from pyscheduler.policies import get_policy
from pyscheduler.service.rmproxy.session import Session
from pyscheduler.service.round.clones import CloneAsks
from pyscheduler.service.round.coreround import core_round
from pyscheduler.service.round.plan import PlacementChoice
from pyscheduler.service.round.waiting import Waiting, steady, waiting_first
from pyscheduler.service.round.yielding import BEATEN_MARGIN_S, BeatenRule, beaten, choose, preemptible
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.service.state.mirror import AskKey, Mirror
from pyscheduler.service.state.phasehints import PhaseHint
from pyscheduler.service.state.resources import Res
from pyscheduler.wire import pb


def _sizes(m: Mirror, waiting: dict[tuple[str, AskKey], int], now_ms: int) -> list[Res]:
    return [w.res for w in steady(m, memory_of(m), waiting, now_ms)]


def test_only_a_container_that_waited_steady_s_counts_and_as_few_as_waited_throughout() -> None:
    m = mirror_of([container("o2", 2)], [ask(2, 20, 3)])  # a task of the phase runs: it may have clones
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
    m = mirror_of([], [ask(2, 0, 1, am=True)])
    key = next(iter(m.asks))
    assert steady(m, memory_of(m), {("original", key): 1}, 10_000) == [Waiting(Res(1024, 1), key, True)]
    assert steady(m, memory_of(m), {("alone", key): 1}, 10_000) == []


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
        ([container("am2", 2, am=True)], 3),
        ([reduce], 3),
        ([container("o1", 1)], 3),  # another job's
        ([container("o2", 2)], 0),
    ):
        m = mirror_of(running, [ask(2, 20, 3)])
        key = next(iter(m.asks))
        assert len(steady(m, memory_of(m), {("original", key): 3}, 10_000)) == counted, running
        assert steady(m, memory_of(m), {("alone", key): 3}, 10_000) == []


def test_a_clone_of_a_covered_task_yields_before_a_younger_clone_of_a_task_not_timed_yet() -> None:
    """On the cluster benchmark: a map's only clone yielded within a second of its launch, beside an original
    that drew 603 s, while another job's map clone kept its container though that map's original was timed
    to finish 37 s later. A clone of a task `covered` (a copy timed at its rate finishes within a fresh
    copy's run time) now yields first, and the node that gives one up wins."""
    m = two_nodes()
    copies = [
        rated("o1", "t1", False, 0.6, 137.0, covered=True),  # 37 s left
        Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 60_000, covered=True),  # older, draw not known
        running_copy("o2", "t2", False, 0.0, 99_000),  # both copies just launched: nothing timed
        running_copy("c2", "t2", True, 0.0, 99_500),
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
        m = mirror_of([container(c, 1) for c in ("o1", "c1")], [], cores=cores)
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
        running_copy("o1", "t1", False, 0.0, 90_000),
        running_copy("c1", "t1", True, 0.0, 96_000),
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
    m.apply(pb.StateBatch(session_id="s", seq=3, rm_time_ms=3, containers_allocated=[container("c1b", 1)]))
    two = [*blind, running_copy("c1b", "t1", True, 0.0, 97_000)]
    assert [k.container_id for k in choose(m, [stage], two, NOW_MS)] == ["c1b"]


def test_a_clone_at_launch_clearly_beaten_by_its_tasks_lead_is_released_at_once() -> None:
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "c2", "o2", "c3", "o3", "c4")], [], cores=8)
    copies = [
        rated("o1", "t1", False, 0.5, 100.0),  # lead of t1: runs 50 s, margin max(10 s, 0.2 x 50 s)
        rated("c1", "t1", True, 0.3, 100.0 + BEATEN_MARGIN_S + 1),  # clearly later: released
        rated("c2", "t1", True, 0.3, 100.0 + BEATEN_MARGIN_S - 1),  # near a tie: runs on
        rated("o2", "t2", False, 0.1, 200.0),  # t2's lead has done too little to be trusted
        rated("c3", "t2", True, 0.5, 150.0),  # ahead: t2's lead is c3, not o2
        rated("o3", "t3", False, 0.6, 100.0),
        rated("c4", "t3", True, 0.1, 400.0),  # t3's clone: too little progress to judge
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
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "c1b", "o2", "c2")], [], cores=5)
    copies = [
        rated("o1", "t1", False, 0.05, 800.0, straggling=True),
        Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 95_000, straggling=True),  # young, untimed
        rated("c1b", "t1", True, 0.3, 900.0, straggling=True),  # timed, and later than o1: beaten
        running_copy("o2", "t2", False, 0.5, 40_000),
        running_copy("c2", "t2", True, 0.0, 90_000),
    ]
    assert [c.container_id for c in preemptible(copies, m, NOW_MS)] == ["c1b", "c2"]
    got = choose(m, [Res(1024, 1), Res(1024, 1)], copies, NOW_MS)
    assert [k.container_id for k in got] == ["c1b", "c2"]
    # without the mark, c1 (the younger clone of the task with three copies) yields before c2
    unmarked = [Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 95_000), *copies[2:], copies[0]]
    assert [c.container_id for c in preemptible(unmarked, m, NOW_MS)] == ["c1b", "c1", "c2"]


def test_only_clones_at_launch_are_released_when_beaten_and_only_with_a_rate() -> None:
    m = mirror_of([container(c, 1) for c in ("o1", "c1")], [])
    for clone in (
        rated("c1", "t1", True, 0.5, 300.0, per_task=True),  # a late copy: the AM would launch it again
        rated("c1", "t1", True, 0.5, 300.0, last_stage=True),  # a reduce
        running_copy("c1", "t1", True, 0.5, 50_000),  # no rate since its work began
    ):
        assert beaten([rated("o1", "t1", False, 0.5, 100.0), clone], m, NOW_MS) == []
    # an original slower than its clone is never released: only clones are
    assert (
        beaten([rated("o1", "t1", False, 0.5, 300.0), rated("c1", "t1", True, 0.5, 100.0)], m, NOW_MS) == []
    )


def test_a_round_releases_a_beaten_clone_with_nothing_pending_and_only_when_asked_to() -> None:
    containers = [container(c, 1) for c in ("o1", "c1")]
    copies = [rated("o1", "t1", False, 0.5, 100.0), rated("c1", "t1", True, 0.5, 300.0)]
    for release, kills in ((True, ["c1"]), (False, [])):
        m = mirror_of(containers, [])
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
    m = mirror_of([container(c, 1) for c in ("o1", "c1")], [ask(1, 20, 1), ask(2, 20, 1)], cores=2)
    copies = [running_copy("o1", "t1", False, 0.5), running_copy("c1", "t1", True)]
    own = next(k for k in m.asks if k[0].endswith("_0001_000001"))
    other = next(k for k in m.asks if k != own)
    assert choose(m, [Waiting(Res(1024, 1), own)], copies, NOW_MS) == []
    assert [k.container_id for k in choose(m, [Waiting(Res(1024, 1), other)], copies, NOW_MS)] == ["c1"]


def test_without_a_copy_source_or_a_waiting_original_nothing_is_preempted() -> None:
    containers = [container(c, 1) for c in ("o1", "c1", "c2", "c3")]
    copies = [running_copy("o1", "t1", False, 0.5), running_copy("c3", "t1", True)]
    m = mirror_of(containers, [ask(2, 20, 1)])
    assert core_round(get_policy("dollymp"), clock=lambda: 100.0)(m, memory_of(m)).kills == []
    idle = mirror_of(containers, [ask(2, 20, 1)], cores=8)  # room for the original: no preemption
    idle_round = core_round(get_policy("dollymp"), clock=lambda: 100.0, copies=lambda: copies)(
        idle, memory_of(idle)
    )
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
    m = two_nodes()
    first = Waiting(Res(1024, 1), original=False, first=True)
    blind = [
        running_copy("o1", "t1", False, 0.0, 90_000),
        running_copy("c1", "t1", True, 0.0, 96_000),
        running_copy("o2", "t2", False, 0.0, 90_000),
        running_copy("c2", "t2", True, 0.0, 97_000),
    ]
    assert choose(m, [first], blind, NOW_MS) == []
    assert [k.container_id for k in choose(two_nodes(), [Waiting(Res(1024, 1))], blind, NOW_MS)] == ["c2"]
    covered = [
        rated("o1", "t1", False, 0.6, 137.0, covered=True),
        Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 96_000, covered=True),
        *blind[2:],
    ]
    kills = choose(two_nodes(), [first], covered, NOW_MS)
    assert [k.container_id for k in kills] == ["c1"]
    assert "task's first clone" in kills[0].detail
    beaten_clone = [*blind[:2], rated("o2", "t2", False, 0.6, 137.0), rated("c2", "t2", True, 0.3, 190.0)]
    assert [k.container_id for k in choose(two_nodes(), [first], beaten_clone, NOW_MS)] == ["c2"]
    held = [*blind[:2], blind[2], Copy(APP1, "t2", "attempt_c2", "c2", True, 0.0, 97_000, per_task=True)]
    held[1] = Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 96_000, covered=True, last_stage=True)
    assert choose(two_nodes(), [first], held, NOW_MS) == []


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
    containers = [container(c, 1) for c in ("o1", "c1", "o3", "c3")]
    copies = [
        rated("o1", "t1", False, 0.6, 137.0, covered=True),
        Copy(APP1, "t1", "attempt_c1", "c1", True, 0.0, 96_000, covered=True),
        running_copy("o3", "t3", False, 0.0, 90_000),
        running_copy("c3", "t3", True, 0.0, 97_000),
    ]
    for n_first, kills in ((1, ["c1"]), (0, [])):
        hint = PhaseHint("map", 40.0, 5.0, waiting_clones=1, waiting_first=n_first)
        assert kills_once_steady(containers, hint, copies) == kills, n_first


def test_a_tighter_beaten_rule_releases_near_ties_and_earlier() -> None:
    """`BeatenRule` (appmaster.beaten_margin_s, _frac, _min_progress): the same copies under a 2 s margin
    and 0.1 progress release the near tie c2 and t3's clone c4 as well; the lead itself never."""
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "c2", "o3", "c4")], [], cores=8)
    copies = [
        rated("o1", "t1", False, 0.5, 100.0),
        rated("c1", "t1", True, 0.3, 100.0 + BEATEN_MARGIN_S + 1),
        rated("c2", "t1", True, 0.3, 100.0 + BEATEN_MARGIN_S - 1),
        rated("o3", "t3", False, 0.6, 100.0),
        rated("c4", "t3", True, 0.1, 400.0),
    ]
    assert [k.container_id for k in beaten(copies, m, NOW_MS)] == ["c1"]
    m = mirror_of([container(c, 1) for c in ("o1", "c1", "c2", "o3", "c4")], [], cores=8)
    tight = BeatenRule(margin_s=2.0, margin_frac=0.05, min_progress=0.1)
    got = beaten(copies, m, NOW_MS, tight)
    assert sorted(k.container_id for k in got) == ["c1", "c2", "c4"]
    assert all("margin 2.5 s" in k.detail for k in got if k.container_id in ("c1", "c2"))


def test_an_original_clearly_beaten_by_a_clone_is_released_only_when_asked() -> None:
    """appmaster.release_beaten_originals: t1's lead is its clone c1, and its original o1 finishes 30 s
    later at its rate; t2's original o2 leads, so its clone c2 is the one beaten. By default only c2 goes;
    with `originals`, o1 goes too, under its own reason, and the lead c1 never."""
    cids = ("o1", "c1", "o2", "c2")
    copies = [
        rated("o1", "t1", False, 0.3, 130.0),
        rated("c1", "t1", True, 0.5, 100.0),
        rated("o2", "t2", False, 0.5, 100.0),
        rated("c2", "t2", True, 0.3, 130.0),
    ]
    got = beaten(copies, mirror_of([container(c, 1) for c in cids], [], cores=8), NOW_MS)
    assert [(k.container_id, k.reason) for k in got] == [("c2", "clone_beaten")]
    rule = BeatenRule(originals=True)
    got = beaten(copies, mirror_of([container(c, 1) for c in cids], [], cores=8), NOW_MS, rule)
    assert sorted((k.container_id, k.reason) for k in got) == [
        ("c2", "clone_beaten"),
        ("o1", "original_beaten"),
    ]
    assert "after attempt_c1" in next(k.detail for k in got if k.container_id == "o1")

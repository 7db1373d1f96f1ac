"""The policy's late_first on the live path (rpc/translate.py `late_first`, rpc/clones.py `after_core`):
late tasks' clones go in the core's first pass with their job's class, ahead of other jobs' originals, as
the simulator's DollyMP places a late task's copy; without it, and for other clones judged alone (the
phase tail, the last stage), they wait for idle capacity."""

from __future__ import annotations

from rpc_harness import app, ask, attempt, full_batch, node, two_app_mirror

from pyscheduler.policies import get_policy
from pyscheduler.rpc.clones import CloneAsks, after_core
from pyscheduler.rpc.coreround import core_round
from pyscheduler.rpc.mirror import Mirror
from pyscheduler.rpc.placer import PlacementChoice
from pyscheduler.rpc.translate import PhaseHint
from pyscheduler.wire import pb

APP1 = "application_1700000000000_0001"
APP2 = "application_1700000000000_0002"
# app 1: a large job with 6 originals waiting; app 2: a small job whose one waiting container is the
# late copy of its straggling map (every original runs)
LATE = PhaseHint("map", 20.0, 5.0, 1, waiting_alone=1, waiting_late=1)
TAIL = PhaseHint("map", 20.0, 5.0, 1, waiting_alone=1)  # judged alone, not late (the phase tail)


def _mirror(free_cores: int) -> Mirror:
    return two_app_mirror(free_cores, [ask(1, 20, 6), ask(2, 20, 1)])  # type: ignore[no-any-return]


def _round(policy: str, app2: PhaseHint = LATE, **options: object):  # type: ignore[no-untyped-def]
    hints = {APP1: PhaseHint("map", 20.0, 5.0), APP2: app2}
    return core_round(get_policy(policy, **options), lambda app_id: {20: hints[app_id]})(_mirror(2))


def _placed(result: object) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in result.placements:  # type: ignore[attr-defined]
        out[p.key[0]] = out.get(p.key[0], 0) + p.count
    return out


def test_without_late_first_a_late_copy_waits_behind_every_original() -> None:
    for result in (_round("dollymp"), _round("dollymp-ext", TAIL), _round("dollymp-ext", late_first=False)):
        assert _placed(result) == {attempt(1): 2}
        waits = [d for d in result.deferrals if d.key == (attempt(2), 20, -1)]
        assert waits and "clone waits for idle capacity" in waits[0].detail


def test_with_late_first_a_late_copy_goes_ahead_of_a_larger_jobs_originals() -> None:
    for policy, options in (("dollymp", {"late": True, "late_first": True}), ("dollymp-ext", {})):
        result = _round(policy, **options)
        assert _placed(result) == {attempt(1): 1, attempt(2): 1}, policy
        mine = [p for p in result.placements if p.key[0] == attempt(2)]
        assert mine[0].reason != pb.REASON_CLONE_IDLE_CAPACITY  # the core's first pass placed it
        # placed once: the clone pass does not place it again, and nothing of app 2 is left deferred
        assert not [d for d in result.deferrals if d.key[0] == attempt(2)]


def test_after_core_counts_an_asks_originals_first() -> None:
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[node("h1:1", mem=8192, cores=8)],
            apps_upserted=[app(1, submit_ms=1000)],
            asks=[ask(1, 20, 5)],  # 2 originals, 3 clones (2 of them judged alone)
        )
    )
    key = (attempt(1), 20, -1)
    clones = CloneAsks()
    clones[key] = 3
    clones.alone[key] = 2
    clones.late[key] = 2
    clones.first[key] = 1

    def placed(n: int) -> list[PlacementChoice]:
        return [PlacementChoice(key, "h1:1", m.asks[key].capability, n, pb.REASON_BEST_FIT, "")]

    assert after_core(m, clones, placed(2)) == {key: 3}  # the originals took both
    left = after_core(m, clones, placed(3))
    assert left == {key: 2} and left.alone == left.late == {key: 1} and left.first == {key: 1}
    left = after_core(m, clones, placed(4))
    assert left == {key: 1} and left.alone == left.late == {} and left.first == {key: 1}
    assert clones == {key: 3} and clones.alone == {key: 2}  # the round's own counts are not changed

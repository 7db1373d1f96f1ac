"""The `attempt` decisions logged from the AM helper's reports (pyscheduler.service.state.outcomes): a clone's
launch once, the winner, a loser killed after its task was won (`lost_race`) apart from one killed
otherwise."""

from __future__ import annotations

from typing import Any

from rpc_harness import attempt_report

from pyscheduler.objects.decision import DecisionKind
from pyscheduler.service.state.outcomes import outcome_records
from pyscheduler.wire import pb

APP = "application_1700000000000_0001"


def _a(task: int, copy: int, state: int, clone: bool = False, progress: float = 0.0) -> Any:
    duration = 12.5 if state != pb.ATTEMPT_RUNNING else 0.0
    return attempt_report("map", task, copy, state, clone=clone, progress=progress, duration=duration)


def test_each_state_change_is_logged_once_with_the_losers_told_apart() -> None:
    orig, clone = _a(0, 0, pb.ATTEMPT_RUNNING, progress=0.4), _a(0, 1, pb.ATTEMPT_RUNNING, clone=True)
    other = _a(1, 0, pb.ATTEMPT_RUNNING, progress=0.2)
    first = outcome_records(APP, [(orig, None), (clone, None), (other, None)], {}, now=5.0)
    assert [(d.reason, d.inputs["attempt_id"][-8:]) for d in first] == [("clone_launched", "000000_1")]
    assert first[0].kind is DecisionKind.ATTEMPT and first[0].time == 5.0 and first[0].task_id == orig.task_id
    again = outcome_records(APP, [(clone, clone)], {}, now=6.0)
    assert again == []  # same state as last reported: nothing new

    won, killed = _a(0, 1, pb.ATTEMPT_SUCCEEDED, clone=True), _a(0, 0, pb.ATTEMPT_KILLED)
    killed_alone = _a(1, 0, pb.ATTEMPT_KILLED)
    attempts = {a.attempt_id: a for a in (won, killed, killed_alone)}
    ended = outcome_records(APP, [(won, clone), (killed, orig), (killed_alone, other)], attempts, now=7.0)
    assert [d.reason for d in ended] == ["won", "lost_race", "killed"]
    lost = ended[1].inputs
    assert lost["progress"] == 0.4 and lost["duration_s"] == 12.5 and lost["is_clone"] is False
    assert ended[0].inputs["is_clone"] is True and "won after 12.5 s" in ended[0].detail


def test_a_copy_reported_killed_before_its_finish_time_is_timed_from_launch_to_the_report() -> None:
    # MapReduce reports KILLED during the container's clean-up, before the attempt's finish time is set:
    # the AM's duration is 0, so the copy ran from its launch until the report that showed it ended.
    won = attempt_report("map", 0, 1, pb.ATTEMPT_SUCCEEDED, clone=True, duration=20.0, launch_ms=1_000)
    loser = attempt_report("map", 0, 0, pb.ATTEMPT_KILLED, launch_ms=1_000)
    loser.time_ms = 43_500
    running = attempt_report("map", 0, 0, pb.ATTEMPT_RUNNING, progress=0.5, launch_ms=1_000)
    attempts = {a.attempt_id: a for a in (won, loser)}
    ended = outcome_records(APP, [(won, None), (loser, running)], attempts, now=44.0)
    assert [(d.reason, d.inputs["duration_s"]) for d in ended] == [("won", 20.0), ("lost_race", 42.5)]
    assert "lost_race after 42.5 s" in ended[1].detail
    # No launch time known, or a report older than the launch: no guess, 0 as the AM said.
    for launch, at in ((0, 43_500), (50_000, 43_500)):
        odd = attempt_report("map", 1, 0, pb.ATTEMPT_KILLED, launch_ms=launch)
        odd.time_ms = at
        assert outcome_records(APP, [(odd, None)], {}, now=44.0)[0].inputs["duration_s"] == 0.0


def test_two_copies_that_both_succeed_have_one_winner_the_one_the_am_names() -> None:
    # A second copy can finish before its kill reaches it: MapReduce took the other, and the AM says so.
    took, late = _a(0, 0, pb.ATTEMPT_SUCCEEDED), _a(0, 1, pb.ATTEMPT_SUCCEEDED, clone=True)
    took.won, late.won = True, False
    attempts = {a.attempt_id: a for a in (took, late)}
    ended = outcome_records(APP, [(late, None), (took, None)], attempts, now=9.0)
    assert [(d.reason, d.inputs["attempt_id"][-8:]) for d in ended] == [
        ("lost_race", "000000_1"),
        ("won", "000000_0"),
    ]
    # An AM that does not say (the field unset) has every succeeded copy counted as won, as before.
    unsaid = _a(1, 1, pb.ATTEMPT_SUCCEEDED, clone=True)
    assert not unsaid.HasField("won")
    assert [d.reason for d in outcome_records(APP, [(unsaid, None)], {}, now=9.0)] == ["won"]

"""The `attempt` decisions logged from the AM helper's reports (pyscheduler.rpc.outcomes): a clone's launch
once, the winner, a loser killed after its task was won (`lost_race`) apart from one killed otherwise."""

from __future__ import annotations

from typing import Any

from rpc_harness import attempt_report

from pyscheduler.objects.decision import DecisionKind
from pyscheduler.rpc.outcomes import outcome_records
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

"""What clones cost while originals wait (metrics.CLONE_SECONDS_WHILE_ORIGINALS_WAIT): each round that
leaves an original waiting for room charges the clones then running for the time until the next round;
a round where no original waits, or no clone runs, charges nothing."""

from __future__ import annotations

import pytest
from rpc_harness import ask, two_app_mirror

from pyscheduler import metrics
from pyscheduler.service.rmproxy.session import Session
from pyscheduler.service.round.plan import DeferralChoice, RoundResult
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.wire import pb


def _copy(n: int, clone: bool) -> Copy:
    return Copy("application_1", f"task_{n}", f"attempt_{n}_{int(clone)}", f"container_{n}", clone, 0.5, 1)


def _round(waiting: bool, clones: int) -> RoundResult:
    reason = pb.REASON_WAITING_FOR_RESOURCES if waiting else pb.REASON_LOWER_PRIORITY
    deferrals = [DeferralChoice(("appattempt_1", 20, 0), reason, "")]
    copies = [_copy(i, True) for i in range(clones)] + [_copy(9, False)]
    return RoundResult(deferrals=deferrals, copies=copies)


def test_clones_are_charged_only_for_the_time_an_original_waits() -> None:
    s = Session("sid", "rm-test", 1, 1000, (), mirror=two_app_mirror(2, [ask(1, 20, 1)]))
    counter = metrics.CLONE_SECONDS_WHILE_ORIGINALS_WAIT

    def total() -> float:
        return counter._value.get()  # type: ignore[attr-defined]

    start = total()
    rounds = [
        (10.0, _round(True, 2)),  # an original waits, 2 clones run: charged until the next round
        (12.5, _round(True, 3)),  # +2 x 2.5 s
        (13.0, _round(False, 3)),  # +3 x 0.5 s; the original was placed: nothing from here
        (20.0, _round(True, 0)),  # nothing for 13..20; waits, but no clone runs
        (21.0, _round(True, 1)),  # nothing for 20..21 (no clone ran)
        (22.0, _round(False, 0)),  # + 1 x 1 s (a clone waiting for idle capacity is no original)
    ]
    for now, result in rounds:
        s._charge_clones(now, result)
    assert total() - start == pytest.approx(2 * 2.5 + 3 * 0.5 + 1 * 1.0)

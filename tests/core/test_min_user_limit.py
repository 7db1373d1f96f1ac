"""minimum-user-limit-percent and the per-user AM limit (pyscheduler/core/queue_limits.py), as
CapacityScheduler computes them: with n users with pending asks, one user may hold at most the queue's
current capacity x max(1/n, m/100), within the user-limit-factor's limit; one user's AMs at most the
queue's AM limit x max(1/n, m/100) x the factor. m = 100 (the default) changes nothing."""

from __future__ import annotations

import pytest

from pyscheduler.core.queue_limits import REASON_AM_LIMIT, REASON_USER_LIMIT, LimitTracker, limited
from pyscheduler.core.queues import Candidate, QueueBook, QueueShare, book_of_wire
from pyscheduler.wire import pb

CAP = (100.0, 100.0)


def _q(mulp: float, ulf: float = 2.0, am: float = 0.0) -> QueueShare:
    return QueueShare("root.a", 0.5, 1.0, ulf, am, min_user_limit_percent=mulp)


def _tracker(q: QueueShare, alice: float, queue: float, active: int, alice_ams: float = 0.0) -> LimitTracker:
    return LimitTracker(
        QueueBook([q, QueueShare("root.b", 0.5, 1.0)]),
        CAP,
        {"root.a": (queue, queue)},
        {("root.a", "alice"): (alice, alice)},
        {"root.a": (alice_ams, alice_ams)},
        {("root.a", "alice"): (alice_ams, alice_ams)},
        {"root.a": active},
    )


def _cand(n: float, am: bool = False) -> Candidate:
    return Candidate("root.a", (n, n), False, "alice", am)


def test_with_several_active_users_each_is_held_to_its_part_of_the_queue() -> None:
    q = _q(25.0)
    assert limited(QueueBook([_q(25.0, ulf=-1.0)]))
    # 2 active users, queue below its guarantee (0.5): alice may reach 0.5 x max(1/2, 0.25) = 0.25
    assert _tracker(q, alice=20, queue=30, active=2).check(q, _cand(5)) is None
    reason, detail = _tracker(q, alice=20, queue=30, active=2).check(q, _cand(6)) or ("", "")
    assert reason == REASON_USER_LIMIT
    assert (
        "above the user limit 0.250" in detail and "2 active users, minimum-user-limit-percent 25" in detail
    )
    # 8 active users: 1/8 < 25%, so the floor holds, 25% of the queue (0.125), not 1/8 of it
    assert _tracker(q, alice=10, queue=30, active=8).check(q, _cand(2.5)) is None
    assert _tracker(q, alice=10, queue=30, active=8).check(q, _cand(3)) is not None
    # above its guarantee the queue's current capacity is its use plus the container: 0.7 x 1/2 = 0.35
    assert _tracker(q, alice=30, queue=65, active=2).check(q, _cand(5)) is None
    assert _tracker(q, alice=30, queue=65, active=2).check(q, _cand(6)) is not None


def test_the_default_100_percent_or_one_active_user_leaves_the_factor_alone() -> None:
    for q, active in ((_q(100.0, ulf=1.5), 5), (_q(25.0, ulf=1.5), 1)):
        assert _tracker(q, alice=70, queue=70, active=active).check(q, _cand(5)) is None  # 0.75 = 1.5 x 0.5
        assert (
            _tracker(q, alice=70, queue=70, active=active).check(q, _cand(6)) is not None
        )  # past the factor


def test_one_users_ams_stop_at_the_user_am_limit_one_always_allowed() -> None:
    q = _q(25.0, ulf=1.0, am=0.4)  # queue AM limit 0.4 x 1.0 usable = 0.4; with 4 users alice's is 0.1
    assert _tracker(q, alice=0, queue=0, active=4).check(q, _cand(20, am=True)) is None  # her first AM
    t = _tracker(q, alice=8, queue=8, active=4, alice_ams=8)
    assert t.check(q, _cand(2, am=True)) is None
    reason, detail = t.check(q, _cand(3, am=True)) or ("", "")
    assert reason == REASON_AM_LIMIT and "user alice's ApplicationMasters would hold 0.110" in detail
    assert "above the user AM limit 0.100" in detail


def test_the_wire_value_is_bounded_and_zero_means_the_default() -> None:
    q = pb.QueueShareInfo(path="root.a", guaranteed=0.5, maximum=1.0)
    assert book_of_wire([q]).leaves["root.a"].min_user_limit_percent == 100.0
    q.minimum_user_limit_percent = 101.0
    with pytest.raises(ValueError, match=r"queues\[0\].*minimum_user_limit_percent must be in \(0, 100\]"):
        book_of_wire([q])

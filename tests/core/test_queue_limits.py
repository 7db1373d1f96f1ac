"""User limits and the ApplicationMaster share per leaf queue (pyscheduler/core/queue_limits.py), judged by
admit() before the shares: user-limit-factor caps one user at guaranteed x factor (never above the maximum,
-1: none), a user's first container is always allowed, clones count; maximum-am-resource-percent caps a
queue's AMs at that fraction of its usable share, one AM always allowed; other queues and users unaffected."""

from __future__ import annotations

import pytest

from pyscheduler.core.queue_limits import (
    REASON_AM_LIMIT,
    REASON_USER_LIMIT,
    LimitTracker,
    am_usable,
    limited,
    user_limit,
)
from pyscheduler.core.queues import (
    REASON_BELOW_GUARANTEE,
    Candidate,
    QueueBook,
    QueueShare,
    Verdict,
    admit,
    book_of_wire,
)
from pyscheduler.wire import pb

CAP = (100.0, 100.0)


def _c(queue: str, n: float, user: str = "", *, clone: bool = False, am: bool = False) -> Candidate:
    return Candidate(queue, (n, n), clone, user, am)


def _judge(
    book: QueueBook,
    usage: dict[str, tuple[float, float]],
    users: dict[tuple[str, str], tuple[float, float]],
    ams: dict[str, tuple[float, float]],
    cands: list[Candidate],
) -> list[Verdict]:
    """admit() with the limits; only root.a has work waiting (b's guarantee is not held back for it)."""
    limits = LimitTracker(book, CAP, usage, users, ams)
    return admit(book, CAP, usage, {"root.a": True}, cands, limits)


def test_user_limit_is_the_guarantee_times_the_factor_capped_at_the_maximum() -> None:
    assert user_limit(QueueShare("root.a", 0.3, 0.6, 1.0)) == pytest.approx(0.3)
    assert user_limit(QueueShare("root.a", 0.3, 0.6, 1.5)) == pytest.approx(0.45)
    assert user_limit(QueueShare("root.a", 0.3, 0.6, 3.0)) is None  # capped at the maximum: the maximum rules
    assert user_limit(QueueShare("root.a", 0.3, 0.6, -1.0)) is None  # -1: no user limit
    assert user_limit(QueueShare("root.a", 0.3, 0.6, 0.0)) is None  # not sent by an older shim
    assert not limited(
        QueueBook([QueueShare("root.default", 1.0, 1.0, 1.0)])
    )  # the stock tree: nothing to do
    assert limited(QueueBook([QueueShare("root.default", 1.0, 1.0, 1.0, 0.1)]))


def test_one_user_stops_at_its_limit_while_another_user_of_the_queue_goes_on() -> None:
    book = QueueBook([QueueShare("root.a", 0.5, 1.0, 0.5), QueueShare("root.b", 0.5, 1.0, 1.0)])
    usage = {"root.a": (20.0, 20.0), "root.b": (10.0, 10.0)}
    users = {("root.a", "alice"): (20.0, 20.0), ("root.b", "alice"): (10.0, 10.0)}
    cands = [
        _c("root.a", 5, "alice"),
        _c("root.a", 5, "alice"),
        _c("root.a", 10, "bob"),
        _c("root.b", 10, "alice"),
    ]
    v = _judge(book, usage, users, {}, cands)
    assert [x.admitted for x in v] == [True, False, True, True]
    assert v[1].reason == REASON_USER_LIMIT
    assert v[1].detail.startswith("user alice in root.a would hold 0.300")
    assert "user limit 0.250" in v[1].detail and "user-limit-factor 0.5" in v[1].detail
    assert v[2].reason == REASON_BELOW_GUARANTEE  # bob, in the same queue, is not limited by alice's use
    assert v[3].admitted  # alice in another queue: that queue's own limit (0.5) applies


def test_a_user_holding_nothing_may_take_one_container_whatever_the_limit() -> None:
    book = QueueBook([QueueShare("root.a", 0.0, 1.0, 1.0), QueueShare("root.b", 1.0, 1.0)])
    v = _judge(
        book, {}, {}, {}, [_c("root.a", 10, "alice"), _c("root.a", 10, "alice"), _c("root.a", 10, "bob")]
    )
    assert [x.admitted for x in v] == [True, False, True]
    assert "user limit 0.000" in v[1].detail


def test_a_clone_of_a_user_at_the_limit_is_not_placed() -> None:
    book = QueueBook([QueueShare("root.a", 0.4, 1.0, 1.0), QueueShare("root.b", 0.6, 1.0)])
    usage = {"root.a": (40.0, 40.0)}
    users = {("root.a", "alice"): (30.0, 30.0), ("root.a", "bob"): (10.0, 10.0)}
    cands = [_c("root.a", 10, "alice", clone=True), _c("root.a", 10, "bob", clone=True)]
    v = _judge(book, usage, users, {}, cands)
    assert [x.admitted for x in v] == [True, True]  # alice reaches 0.4 exactly, bob 0.2
    v = _judge(book, usage, {("root.a", "alice"): (40.0, 40.0)}, {}, [_c("root.a", 5, "alice", clone=True)])
    assert not v[0].admitted and v[0].reason == REASON_USER_LIMIT and "with this clone" in v[0].detail


def test_a_queues_ams_stop_at_its_percent_of_its_usable_share() -> None:
    book = QueueBook([QueueShare("root.a", 0.5, 1.0, -1.0, 0.2), QueueShare("root.b", 0.5, 1.0)])
    # an idle cluster: a could reach its maximum (1.0), so its AMs may hold 0.2
    assert am_usable(book.leaves["root.a"], 0.2, 0.8) == pytest.approx(1.0)
    usage, ams = {"root.a": (20.0, 20.0)}, {"root.a": (10.0, 10.0)}
    cands = [_c("root.a", 5, am=True), _c("root.a", 5, am=True), _c("root.a", 5, am=True), _c("root.a", 5)]
    v = _judge(book, usage, {}, ams, cands)
    assert [x.admitted for x in v] == [True, True, False, True]  # AMs to 0.2; a task is not an AM
    assert v[2].reason == REASON_AM_LIMIT
    assert v[2].detail.startswith("root.a: its ApplicationMasters would hold 0.250")
    assert "AM limit 0.200 (maximum-am-resource-percent 0.2 of 1.000)" in v[2].detail
    # b holds 0.4: a could reach 0.2 + 0.4 idle, so its AM limit falls to 0.2 x 0.6
    busy = {"root.a": (20.0, 20.0), "root.b": (40.0, 40.0)}
    v = _judge(book, busy, {}, ams, [_c("root.a", 5, am=True), _c("root.b", 5, am=True)])
    assert [x.admitted for x in v] == [False, True]  # b has no AM limit
    assert "AM limit 0.120" in v[0].detail and "of 0.600" in v[0].detail
    # b holds 0.7: a's usable share is its guarantee (0.5), never less
    v = _judge(book, {"root.a": (20.0, 20.0), "root.b": (70.0, 70.0)}, {}, ams, [_c("root.a", 1, am=True)])
    assert not v[0].admitted and "AM limit 0.100" in v[0].detail and "of 0.500" in v[0].detail


def test_one_am_is_always_allowed_in_a_queue_running_none() -> None:
    book = QueueBook([QueueShare("root.a", 0.5, 1.0, -1.0, 0.01), QueueShare("root.b", 0.5, 1.0)])
    v = _judge(book, {}, {}, {}, [_c("root.a", 10, am=True), _c("root.a", 10, am=True)])
    assert [x.admitted for x in v] == [True, False]


def test_bad_limits_are_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match="user_limit_factor must be -1 or in"):
        QueueShare("root.a", 0.5, 1.0, -2.0)
    with pytest.raises(ValueError, match="maximum_am_resource_percent must be in"):
        QueueShare("root.a", 0.5, 1.0, 1.0, 1.5)
    with pytest.raises(ValueError, match=r"queues\[0\]: .*maximum_am_resource_percent"):
        book_of_wire(
            [pb.QueueShareInfo(path="root.a", guaranteed=0.5, maximum=1.0, maximum_am_resource_percent=-0.1)]
        )
    book = book_of_wire(
        [
            pb.QueueShareInfo(
                path="root.a",
                guaranteed=1.0,
                maximum=1.0,
                user_limit_factor=2,
                maximum_am_resource_percent=0.3,
            )
        ]
    )
    assert (book.leaves["root.a"].user_limit_factor, book.leaves["root.a"].am_percent) == (
        2.0,
        pytest.approx(0.3),
    )

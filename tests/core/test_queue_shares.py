"""The queue-share step (pyscheduler/core/queues.py): guarantees first, idle room lent up to each queue's
maximum but not the room a waiting queue below its guarantee is owed, reclaim by clones only."""

from __future__ import annotations

import pytest

from pyscheduler.core.queues import (
    REASON_BELOW_GUARANTEE,
    REASON_LENT,
    REASON_MAX_CAPACITY,
    REASON_RESERVED,
    Candidate,
    QueueBook,
    QueueShare,
    Running,
    admit,
    book_of_wire,
    reclaim,
)
from pyscheduler.wire import pb

CAP = (100.0, 100.0)
BOOK = QueueBook([QueueShare("root.a", 0.5, 1.0), QueueShare("root.b", 0.5, 0.6)])


def _c(queue: str, n: float, clone: bool = False) -> Candidate:
    return Candidate(queue, (n, n), clone)


def test_a_queue_below_its_guarantee_is_served_before_a_borrower() -> None:
    # a already holds 50 (its guarantee); the policy ranked a's placements first, b waits with nothing
    cands = [_c("root.a", 10), _c("root.a", 10), _c("root.b", 20), _c("root.b", 20)]
    v = admit(BOOK, CAP, {"root.a": (50.0, 50.0)}, {"root.a": True, "root.b": True}, cands)
    assert [x.admitted for x in v] == [False, False, True, True]
    assert v[0].reason == REASON_RESERVED and "owed" in v[0].detail
    assert v[2].reason == REASON_BELOW_GUARANTEE


def test_idle_capacity_is_lent_when_no_queue_below_its_guarantee_waits() -> None:
    cands = [_c("root.a", 30), _c("root.a", 30)]
    v = admit(BOOK, CAP, {"root.a": (40.0, 40.0)}, {"root.a": True}, cands)
    assert [x.admitted for x in v] == [True, True]  # work-conserving: a borrows b's idle share
    assert v[1].reason == REASON_LENT


def test_no_queue_goes_above_its_maximum() -> None:
    v = admit(BOOK, CAP, {"root.b": (50.0, 50.0)}, {"root.b": True}, [_c("root.b", 10), _c("root.b", 5)])
    assert [x.admitted for x in v] == [True, False]
    assert v[1].reason == REASON_MAX_CAPACITY and "0.600" in v[1].detail


def test_short_names_and_unknown_queues_resolve_as_the_rm_names_them() -> None:
    book = QueueBook([QueueShare("root.eng.batch", 0.7, 1.0), QueueShare("root.default", 0.3, 0.3)])
    assert book.resolve("batch") is book.leaves["root.eng.batch"]
    assert book.resolve("nosuch") is book.leaves["root.default"]
    assert not QueueBook([QueueShare("root.default", 1.0, 1.0)]).active


def test_reclaim_preempts_clones_of_queues_above_their_guarantee_only() -> None:
    running = [
        Running("c1", "root.a", (10.0, 10.0), False),  # an original: never
        Running("c2", "root.a", (10.0, 10.0), True),
        Running("c3", "root.a", (10.0, 10.0), True),
        Running("c4", "root.b", (10.0, 10.0), True),  # b is below its guarantee: never
    ]
    usage = {"root.a": (80.0, 80.0), "root.b": (10.0, 10.0)}
    chosen = reclaim(BOOK, CAP, usage, {"root.b": (15.0, 15.0)}, running)
    assert [r.container_id for r, _ in chosen] == ["c3", "c2"]  # newest first, until 15 are freed
    assert "above its guarantee" in chosen[0][1]
    assert reclaim(BOOK, CAP, usage, {"root.b": (5.0, 5.0)}, running)[0][0].container_id == "c3"
    assert reclaim(BOOK, CAP, {"root.a": (50.0, 50.0)}, {"root.b": (15.0, 15.0)}, running) == []


def test_invalid_books_are_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match=r"sum to 1\.2"):
        QueueBook([QueueShare("root.a", 0.6, 1.0), QueueShare("root.b", 0.6, 1.0)])
    with pytest.raises(ValueError, match=r"queues\[1\]: .*maximum 0.1 is below guaranteed 0.5"):
        book_of_wire(
            [
                pb.QueueShareInfo(path="root.a", guaranteed=0.5, maximum=1.0),
                pb.QueueShareInfo(path="root.b", guaranteed=0.5, maximum=0.1),
            ]
        )
    with pytest.raises(ValueError, match="guaranteed must be in"):
        QueueShare("root.a", float("nan"), 1.0)

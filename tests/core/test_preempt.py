"""Preempting originals for queues below their guarantee (pyscheduler/core/preempt.py): only where
preemption is on, only after the owed queue waited the victim queue's time, newest first, never an AM,
never below the victim's guarantee, at most the per-round share, and no more than owed."""

from __future__ import annotations

import pytest

from pyscheduler.core.preempt import reclaim_originals
from pyscheduler.core.queues import QueueBook, QueueShare, Running

CAP = (12 * 512.0, 12.0)  # 12 slots of (512 MB, 1 vcore)
SLOT = (512.0, 1.0)


def _book(after_s: float, b_after_s: float = 0.0) -> QueueBook:
    return QueueBook(
        [
            QueueShare("root.a", 0.5, 1.0, preempt_after_s=after_s),
            QueueShare("root.b", 0.5, 1.0, preempt_after_s=b_after_s),
        ]
    )


def _a_holds_all(am_first: bool = True) -> list[Running]:
    """Queue a's 12 containers, started at 1..12 s; the first runs a's AM."""
    return [
        Running(f"c{i}", "root.a", SLOT, start_s=float(i), is_am=am_first and i == 1) for i in range(1, 13)
    ]


def _slots(n: int) -> tuple[float, float]:
    return (512.0 * n, float(n))


def test_nothing_is_preempted_where_preemption_is_off_or_before_the_wait() -> None:
    usage = {"root.a": _slots(12)}
    unmet = {"root.b": _slots(6)}
    assert reclaim_originals(_book(0.0), CAP, usage, unmet, {"root.b": 100.0}, _a_holds_all()) == []
    assert reclaim_originals(_book(15.0), CAP, usage, unmet, {"root.b": 14.0}, _a_holds_all()) == []


def test_newest_originals_first_within_the_per_round_share_then_until_owed() -> None:
    usage = {"root.a": _slots(12)}
    unmet = {"root.b": _slots(6)}
    got = reclaim_originals(_book(15.0), CAP, usage, unmet, {"root.b": 15.0}, _a_holds_all())
    # one slot is 1/12 of the cluster: within the 0.1 per round, one container a round
    assert [o.container_id for o, _ in got] == ["c12"]
    assert "root.b waited 15.0 s" in got[0][1] and "root.a is above its guarantee 0.500" in got[0][1]
    got = reclaim_originals(_book(15.0), CAP, usage, unmet, {"root.b": 15.0}, _a_holds_all(), per_round=1.0)
    assert [o.container_id for o, _ in got] == ["c12", "c11", "c10", "c9", "c8", "c7"]  # b's 6, no more


def test_never_an_am_never_below_the_victims_guarantee_and_what_clones_freed_counts() -> None:
    usage = {"root.a": _slots(8), "root.b": _slots(2)}  # a holds 8 (its guarantee is 6); b is owed 4
    unmet = {"root.b": _slots(10)}
    originals = [Running(f"c{i}", "root.a", SLOT, start_s=float(i), is_am=i >= 7) for i in range(1, 9)]
    got = reclaim_originals(_book(1.0), CAP, usage, unmet, {"root.b": 5.0}, originals, per_round=1.0)
    assert [o.container_id for o, _ in got] == ["c6", "c5"]  # c7, c8 run AMs; then a is at its guarantee
    got = reclaim_originals(
        _book(1.0), CAP, usage, unmet, {"root.b": 5.0}, originals, freed=_slots(3), per_round=1.0
    )
    assert [o.container_id for o, _ in got] == ["c6"]  # clones freed 3 of the 4 owed


def test_a_queue_is_not_preempted_for_itself_nor_for_a_queue_above_its_guarantee() -> None:
    usage = {"root.a": _slots(12)}
    assert (
        reclaim_originals(_book(1.0), CAP, usage, {"root.a": _slots(4)}, {"root.a": 9.0}, _a_holds_all())
        == []
    )
    usage = {"root.a": _slots(5), "root.b": _slots(7)}  # b above its guarantee wants more: owed nothing
    assert (
        reclaim_originals(_book(1.0, 1.0), CAP, usage, {"root.b": _slots(2)}, {"root.b": 9.0}, _a_holds_all())
        == []
    )


def test_the_wire_setting_is_bounded_and_named() -> None:
    from pyscheduler.core.queues import book_of_wire
    from pyscheduler.wire import pb

    ok = pb.QueueShareInfo(path="root.a", guaranteed=0.5, maximum=1.0, preempt_originals_after_ms=15_000)
    assert book_of_wire([ok]).leaves["root.a"].preempt_after_s == 15.0
    for bad in (-1, 86_400_001):
        q = pb.QueueShareInfo(path="root.a", guaranteed=0.5, maximum=1.0, preempt_originals_after_ms=bad)
        with pytest.raises(
            ValueError, match=r"queues\[0\].*preempt_originals_after_ms must be in \[0, 86400000\]"
        ):
            book_of_wire([q])

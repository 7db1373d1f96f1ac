"""The decision log against a real SQLite file and a real PostgreSQL server (store_url is parametrised)."""

from __future__ import annotations

import math
import threading

import pytest

from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store import MAX_PAGE, DecisionLog, StoreError, open_store


def _d(i: int, kind: DecisionKind = DecisionKind.PLACEMENT, **kw: object) -> Decision:
    fields: dict[str, object] = {
        "application_id": f"app{i % 4}",
        "job_id": f"job{i % 4}",
        "task_id": f"t{i}",
        "node_id": f"node{i % 5}",
    }
    fields.update(kw)
    return Decision(time=float(i), kind=kind, reason="best_fit", **fields)  # type: ignore[arg-type]


@pytest.fixture
def store(store_url: str) -> DecisionLog:
    s = open_store(store_url)
    yield s  # type: ignore[misc]
    s.close()


def test_append_returns_increasing_ids_and_round_trips(store: DecisionLog) -> None:
    d1 = Decision(
        time=1.5,
        kind=DecisionKind.CLONE_GRANT,
        reason="corollary_4_1",
        application_id="application_1_0001",
        job_id="j1",
        task_id="m_000001",
        node_id="",
        detail="two clones: idle capacity",
        inputs={"clones": 2, "beta": 1.5, "nested": {"list": [1, "a"]}},
    )
    d2 = Decision(time=2.0, kind=DecisionKind.FALLBACK, reason="service_unreachable")
    ids = store.append([d1, d2])
    assert ids[1] == ids[0] + 1
    assert store.append([]) == []
    got1, got2 = store.get(ids[0]), store.get(ids[1])
    assert got1 is not None and got1.decision == d1
    assert got2 is not None and got2.decision == d2
    more = store.append([_d(3)])
    assert more[0] > ids[1]
    assert store.latest_id() == more[0]
    assert store.count() == 3
    assert store.get(10**9) is None


def test_non_finite_inputs_are_stored_as_strings(store: DecisionLog) -> None:
    (ident,) = store.append([_d(1, inputs={"x": math.nan, "y": -math.inf, "k": DecisionKind.KILL})])
    got = store.get(ident)
    assert got is not None
    assert got.decision.inputs == {"x": "nan", "y": "-inf", "k": "kill"}


def test_append_refuses_non_decisions(store: DecisionLog) -> None:
    with pytest.raises(TypeError, match=r"decisions\[1\]"):
        store.append([_d(1), "not a decision"])  # type: ignore[list-item]
    assert store.count() == 0


def test_filters(store: DecisionLog) -> None:
    decisions = [_d(i, DecisionKind.KILL if i % 3 == 0 else DecisionKind.PLACEMENT) for i in range(60)]
    decisions.append(Decision(time=100.0, kind=DecisionKind.FALLBACK, reason="stale_plan"))
    store.append(decisions)

    def ids(**kw: object) -> list[int]:
        return [s.id for s in store.query(limit=MAX_PAGE, **kw).items]  # type: ignore[arg-type]

    def times(**kw: object) -> list[float]:
        return [s.decision.time for s in store.query(limit=MAX_PAGE, **kw).items]  # type: ignore[arg-type]

    assert len(ids()) == 61
    assert times(application_id="app1") == [float(i) for i in range(60) if i % 4 == 1]
    assert times(job_id="job2") == [float(i) for i in range(60) if i % 4 == 2]
    assert times(node_id="node3") == [float(i) for i in range(60) if i % 5 == 3]
    assert times(task_id="t7") == [7.0]
    assert times(kinds=[DecisionKind.KILL]) == [float(i) for i in range(60) if i % 3 == 0]
    assert len(ids(kinds=[DecisionKind.KILL, DecisionKind.FALLBACK])) == 21
    assert times(since=10, until=20) == [float(i) for i in range(10, 20)]
    assert times(node_id="node0", kinds=[DecisionKind.KILL], since=30) == [30.0, 45.0]
    assert times(application_id="") == [100.0]  # empty string: decisions about no application
    assert times(application_id="nope") == []


def test_keyset_pagination_is_stable_while_appending(store: DecisionLog) -> None:
    store.append([_d(i) for i in range(50)])
    seen: list[int] = []
    cursor = None
    pages = 0
    while True:
        page = store.query(cursor=cursor, limit=7)
        seen.extend(s.id for s in page.items)
        pages += 1
        if pages == 2:
            store.append([_d(i) for i in range(50, 55)])  # new rows land after the cursor
        if page.next_cursor is None:
            break
        cursor = page.next_cursor
    assert len(seen) == 55 and seen == sorted(seen) and len(set(seen)) == 55
    assert pages == 8


def test_newest_first_pagination(store: DecisionLog) -> None:
    store.append([_d(i) for i in range(20)])
    first = store.query(order="desc", limit=8, application_id="app0")
    assert [s.decision.time for s in first.items] == [16.0, 12.0, 8.0, 4.0, 0.0]
    assert first.next_cursor is None
    page1 = store.query(order="desc", limit=15)
    page2 = store.query(order="desc", limit=15, cursor=page1.next_cursor)
    got = [s.decision.time for s in page1.items + page2.items]
    assert got == [float(i) for i in reversed(range(20))]


@pytest.mark.parametrize("limit", [0, -1, MAX_PAGE + 1])
def test_limit_is_checked(store: DecisionLog, limit: int) -> None:
    with pytest.raises(ValueError, match="limit"):
        store.query(limit=limit)


def test_order_is_checked(store: DecisionLog) -> None:
    with pytest.raises(ValueError, match="order"):
        store.query(order="sideways")  # type: ignore[arg-type]


def test_readers_and_writer_in_parallel(store: DecisionLog) -> None:
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            last = 0
            while not stop.is_set():
                n = store.count()
                assert n >= last  # a reader never sees the log shrink or half a batch
                assert n % 10 == 0
                last = n
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for b in range(30):
        store.append([_d(b * 10 + i) for i in range(10)])
    stop.set()
    for t in threads:
        t.join()
    assert not errors
    assert store.count() == 300


def test_reopen_keeps_everything(store_url: str) -> None:
    with open_store(store_url) as s:
        ids = s.append([_d(i) for i in range(5)])
    with open_store(store_url) as s:
        assert [x.id for x in s.query().items] == ids
        assert s.append([_d(9)])[0] == ids[-1] + 1
        # names (application, job, node) resolve from the database after a restart, never duplicated
        assert [x.decision.task_id for x in s.query(application_id="app1").items] == ["t1", "t9"]
        with s.db.read() as cur:
            cur.execute("SELECT COUNT(*), COUNT(DISTINCT name) FROM names")
            total, distinct = cur.fetchone()
        assert total == distinct == 4 + 4 + 5  # app0..3, job0..3, node0..4


def test_closed_store_refuses(store_url: str) -> None:
    s = open_store(store_url)
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.append([_d(1)])

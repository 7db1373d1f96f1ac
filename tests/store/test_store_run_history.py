"""The recurring-job history of applications without an AM helper (pyscheduler.store.runhistory), on
SQLite and PostgreSQL: moments per (name, queue, YARN priority), bounded in keys and in weight, kept
across a reopen, and bad arguments refused by name."""

from __future__ import annotations

import statistics

import pytest

from pyscheduler import config
from pyscheduler.store import AppRunHistory, open_store
from pyscheduler.store.runhistory import FRAMEWORKS, AppRunMoments, RunHistoryWriter


def _m2(xs: list[float]) -> float:
    mu = statistics.fmean(xs)
    return sum((x - mu) ** 2 for x in xs)


def test_runs_fold_per_name_queue_and_priority_and_survive_a_reopen(store_url: str) -> None:
    a, b = [10.0, 20.0], [30.0]
    with open_store(store_url) as s:
        h = AppRunHistory(s.db)
        h.fold("etl", "root.a", 20, len(a), statistics.fmean(a), _m2(a))
        got = h.fold("etl", "root.a", 20, len(b), statistics.fmean(b), _m2(b))
        assert (got.runs, got.count) == (2, 3) and got.mean == pytest.approx(20.0)
        assert got.sd == pytest.approx(statistics.stdev(a + b))
        # another queue, another priority, another name: keys of their own
        assert h.moments("etl", "root.b", 20) is None
        assert h.moments("etl", "root.a", 10) is None
        assert h.moments("etl2", "root.a", 20) is None
    with open_store(store_url) as s:  # a restarted service reads what the last one wrote
        again = AppRunHistory(s.db).moments("etl", "root.a", 20)
        assert again == got


def test_fold_many_folds_in_order_in_one_transaction_or_not_at_all(store_url: str) -> None:
    with open_store(store_url) as s:
        h = AppRunHistory(s.db)
        got = h.fold_many(
            [("etl", "q", 1, 2, 15.0, 50.0), ("etl", "q", 1, 1, 30.0, 0.0), ("etl", "q", 2, 1, 3.0, 0.0)]
        )
        assert [(g.runs, g.count) for g in got] == [(1, 2), (2, 3), (1, 1)]
        assert got[1].mean == pytest.approx(20.0) and h.moments("etl", "q", 1) == got[1]
        with pytest.raises(ValueError, match="count"):
            h.fold_many([("new", "q", 1, 1, 1.0, 0.0), ("bad", "q", 1, 0, 1.0, 0.0)])
        assert h.moments("new", "q", 1) is None and AppRunHistory(s.db).moments("new", "q", 1) is None
        assert h.fold_many([]) == []


def test_keys_are_bounded_the_least_recently_updated_forgotten(store_url: str) -> None:
    with open_store(store_url) as s:
        h = AppRunHistory(s.db, max_keys=3)
        for i in range(3):
            h.fold(f"job{i}", "q", 1, 1, float(i + 1), 0.0)
        h.fold("job0", "q", 1, 1, 1.0, 0.0)  # job0 updated last: job1 is now the oldest
        h.fold("job3", "q", 1, 1, 4.0, 0.0)
        assert len(h) == 3
        assert h.moments("job1", "q", 1) is None
        assert all(h.moments(f"job{i}", "q", 1) is not None for i in (0, 2, 3))
        with s.db.read() as cur:
            cur.execute("SELECT COUNT(*) FROM app_run_times WHERE app_name = 'job1'")
            assert cur.fetchone()[0] == 0
        assert len(AppRunHistory(s.db, max_keys=3)) == 3


def test_a_queue_flooding_names_pushes_out_its_own_history_not_another_queues(store_url: str) -> None:
    with open_store(store_url) as s:
        h = AppRunHistory(s.db, max_keys=4)
        h.fold("nightly", "root.b", 1, 5, 30.0, 0.0)  # the oldest key of all
        for i in range(10):
            h.fold(f"flood{i}", "root.a", 1, 1, 1.0, 0.0)
        assert h.moments("nightly", "root.b", 1) is not None
        assert [i for i in range(10) if h.moments(f"flood{i}", "root.a", 1) is not None] == [7, 8, 9]
        # a store written with a larger bound is trimmed at the next fold: the largest queue down to the
        # others' size first, then, among queues of equal size, the one holding the oldest key
        small = AppRunHistory(s.db, max_keys=2)
        small.fold("late", "root.c", 1, 1, 2.0, 0.0)
        with s.db.read() as cur:
            cur.execute("SELECT queue, app_name FROM app_run_times ORDER BY queue")
            assert cur.fetchall() == [("root.a", "flood9"), ("root.c", "late")]
        assert len(small) == 2 and small.moments("nightly", "root.b", 1) is None


def test_each_key_weighs_at_most_max_samples_run_times(store_url: str) -> None:
    with open_store(store_url) as s:
        h = AppRunHistory(s.db, max_samples=10)
        first = h.fold("etl", "q", 5, 8, 10.0, 7.0 * 4.0)  # 8 run times, variance 4
        assert first.count == 8
        # 6 more at 40 s: the 8 earlier ones count as 4, so the mean moves further than 8:6 would
        got = h.fold("etl", "q", 5, 6, 40.0, 0.0)
        assert got.count == 10 and got.runs == 2
        assert got.mean == pytest.approx((4 * 10.0 + 6 * 40.0) / 10)
        # a run larger than the bound alone: counted as max_samples, the earlier runs weigh nothing
        big = h.fold("etl", "q", 5, 500, 7.0, 499.0)
        assert big.count == 10 and big.mean == pytest.approx(7.0) and big.sd == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (("", "q", 1, 1, 1.0, 0.0), "app_name"),
        (("a", None, 1, 1, 1.0, 0.0), "queue"),
        (("a", "q", True, 1, 1.0, 0.0), "priority"),
        (("a", "q", 1, 0, 1.0, 0.0), "count"),
        (("a", "q", 1, 1, float("nan"), 0.0), "mean"),
        (("a", "q", 1, 1, 1.0, -1.0), "m2"),
    ],
)
def test_bad_arguments_are_refused_by_name(tmp_path: object, args: tuple[object, ...], names: str) -> None:
    with open_store(f"sqlite:///{tmp_path}/d.db") as s:
        h = AppRunHistory(s.db)
        with pytest.raises(ValueError, match=names):
            h.fold(*args)  # type: ignore[arg-type]
        assert len(h) == 0
        with pytest.raises(ValueError, match="max_keys must be an integer >= 1"):
            AppRunHistory(s.db, max_keys=0)


@pytest.mark.parametrize("key", ["store.run_history_max_keys", "store.run_history_max_samples"])
def test_config_bounds_name_the_key_and_the_limit(key: str) -> None:
    for bad in (0, 1_000_001):
        with pytest.raises(config.ConfigError) as err:
            config.load(None, env={}, overrides={key: bad})
        assert err.value.key == key and "must be in 1..1000000" in str(err.value)
    env = {"DOLLYMP_" + key.upper().replace(".", "_"): "-5"}
    with pytest.raises(config.ConfigError, match=key.replace(".", r"\.")):
        config.load(None, env=env)
    assert config.load(None, env={}, overrides={key: 7})[key] == 7


def test_the_framework_prior_is_a_table_of_its_own_bounded_the_same_way(store_url: str) -> None:
    """FRAMEWORKS keeps moments by application type: the same key in both tables stays apart, the bound on
    keys evicts within the flooding queue, and errors name the type's column."""
    with open_store(store_url) as s:
        apps, kinds = AppRunHistory(s.db), AppRunHistory(s.db, max_keys=3, table=FRAMEWORKS)
        apps.fold("SPARK", "root.a", 1, 1, 10.0, 0.0)
        kinds.fold("SPARK", "root.a", 1, 2, 40.0, 8.0)
        assert apps.moments("SPARK", "root.a", 1) == AppRunMoments(1, 1, 10.0, 0.0)
        assert kinds.moments("SPARK", "root.a", 1) == AppRunMoments(1, 2, 40.0, 8.0)
        for t in ("T1", "T2", "T3"):  # root.b floods types: its own oldest goes, root.a's stays
            kinds.fold(t, "root.b", 1, 1, 1.0, 0.0)
        assert kinds.moments("SPARK", "root.a", 1) is not None and kinds.moments("T1", "root.b", 1) is None
        with pytest.raises(ValueError, match="app_type must be a non-empty string"):
            kinds.fold("", "root.a", 1, 1, 1.0, 0.0)
    with open_store(store_url) as s:
        again = AppRunHistory(s.db, table=FRAMEWORKS).moments("SPARK", "root.a", 1)
        assert again == AppRunMoments(1, 2, 40.0, 8.0)


def test_with_a_writer_folds_are_read_from_memory_at_once_and_committed_in_the_background(
    store_url: str,
) -> None:
    """`dollymp serve`'s mode (RunHistoryWriter): a fold is in memory when `fold` returns, and in the
    database once the writer has flushed, with the same keys evicted: a reopened history reads what memory
    held."""
    keys = [("nightly", "root.b", 1)] + [(f"flood{i}", "root.a", 1) for i in range(10)]
    with open_store(store_url) as s:
        writer = RunHistoryWriter()
        h = AppRunHistory(s.db, max_keys=4, writer=writer)
        h.fold("nightly", "root.b", 1, 5, 30.0, 0.0)
        for i in range(10):
            h.fold(f"flood{i}", "root.a", 1, 1, 1.0, 0.0)
        got = h.fold("nightly", "root.b", 1, 1, 60.0, 0.0)
        assert (got.runs, got.count, got.mean) == (2, 6, pytest.approx(35.0))
        assert h.moments("nightly", "root.b", 1) == got
        assert [i for i in range(10) if h.moments(f"flood{i}", "root.a", 1) is not None] == [7, 8, 9]
        assert writer.flush(30) and writer.depth == 0
        again = AppRunHistory(s.db, max_keys=4)
        assert {k: again.moments(*k) for k in keys} == {k: h.moments(*k) for k in keys}
        assert len(again) == len(h) == 4
        assert writer.close(30)
        with pytest.raises(RuntimeError, match="closed"):
            h.fold("late", "root.c", 1, 1, 1.0, 0.0)

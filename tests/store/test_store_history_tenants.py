"""The statistics history per tenant (issue 57 item 2), on SQLite and PostgreSQL: keyed by queue, user and
job name; shared across queues only when asked; bounded per user and per queue, each tenant evicting its
own rows; and the migration from the name-only schema (version 4) dropping the unattributable rows."""

from __future__ import annotations

import pytest

from pyscheduler.store import open_store
from pyscheduler.store.db import Database
from pyscheduler.store.history import SHARED_QUEUE, JobKey, StatisticsHistory
from pyscheduler.store.schema import LATEST_VERSION, current_version, migrate

ADHOC = JobKey("root.adhoc", "alice", "wordcount")
PROD = JobKey("root.prod", "alice", "wordcount")
BOB = JobKey("root.prod", "bob", "wordcount")


def test_history_is_keyed_by_queue_user_and_name(store_url: str) -> None:
    with open_store(store_url) as s:
        h = s.history
        h.record(ADHOC, "map", [3e7] * 200)
        h.record_run(ADHOC)
        assert h.moments(PROD, "map") is None and h.moments(BOB, "map") is None
        assert h.samples(PROD, "map") == [] and h.phases(PROD) == {} and h.runs(PROD) == 0
        h.record(PROD, "map", [30.0, 32.0])
        h.record(BOB, "map", [5.0])
        prod, adhoc = h.moments(PROD, "map"), h.moments(ADHOC, "map")
        assert prod is not None and (prod.count, prod.mean, prod.max) == (2, 31.0, 32.0)
        assert adhoc is not None and (adhoc.count, adhoc.mean) == (200, 3e7)
        assert h.samples(BOB, "map") == [5.0] and h.runs(ADHOC) == 1
        assert h.job_keys() == [ADHOC, PROD, BOB]  # by queue, user, name
        assert set(h.all_moments()) == {(ADHOC, "map"), (PROD, "map"), (BOB, "map")}


def test_sharing_across_queues_is_the_operators_choice(store_url: str) -> None:
    with open_store(store_url) as s:
        shared = StatisticsHistory(s.db, share_across_queues=True)
        shared.record(ADHOC, "map", [50.0])
        shared.record_run(ADHOC)
        m = shared.moments(PROD, "map")  # another queue, the same user and name: shared
        assert m is not None and m.mean == 50.0 and shared.runs(PROD) == 1
        assert shared.samples(PROD, "map") == [50.0]
        assert shared.moments(BOB, "map") is None  # never across users
        # stored under the shared queue: a history that does not share reads none of it
        assert s.history.moments(ADHOC, "map") is None and s.history.moments(PROD, "map") is None
        assert s.history.job_keys() == [JobKey(SHARED_QUEUE, "alice", "wordcount")]


def test_each_tenant_is_bounded_and_evicts_its_own_oldest_rows(store_url: str) -> None:
    with open_store(store_url) as s:
        h = StatisticsHistory(s.db, max_rows_per_queue=3, max_rows_per_user=2)
        victim = JobKey("root.prod", "carol", "etl")
        h.record(victim, "map", [7.0])
        # one user's flood of job names in another queue: its own oldest rows go, carol's stay
        for i in range(5):
            h.record(JobKey("root.adhoc", "mallory", f"j{i}"), "map", [1.0, 2.0])
        assert [k.job_name for k in h.job_keys() if k.queue == "root.adhoc"] == ["j3", "j4"]
        assert h.samples(JobKey("root.adhoc", "mallory", "j0"), "map") == []  # its samples went with it
        # within one queue: a user is bounded alone, then the queue's least recently updated row goes
        h.record(JobKey("root.adhoc", "trent", "t0"), "map", [1.0])
        assert [k.job_name for k in h.job_keys() if k.queue == "root.adhoc"] == ["j3", "j4", "t0"]
        h.record(JobKey("root.adhoc", "trent", "t1"), "map", [1.0])
        assert [k.job_name for k in h.job_keys() if k.queue == "root.adhoc"] == ["j4", "t0", "t1"]
        # an update of an existing row adds none: nothing is evicted, its row is now the newest
        h.record(JobKey("root.adhoc", "mallory", "j4"), "map", [3.0])
        h.record(JobKey("root.adhoc", "walter", "w0"), "map", [1.0])
        assert [k.job_name for k in h.job_keys() if k.queue == "root.adhoc"] == ["j4", "t1", "w0"]
        m = h.moments(victim, "map")
        assert m is not None and m.count == 1 and h.samples(victim, "map") == [7.0]
        # phases are rows too (an AM names its phases), and job runs are bounded alike
        for p in ("a", "b", "c"):
            h.record(victim, p, [1.0])
        assert sorted(h.phases(victim)) == ["b", "c"]
        for i in range(4):
            h.record_run(JobKey("root.adhoc", "mallory", f"r{i}"))
        assert [h.runs(JobKey("root.adhoc", "mallory", f"r{i}")) for i in range(4)] == [0, 0, 1, 1]


def test_kept_reads_follow_the_histories_own_writes_and_trims(store_url: str) -> None:
    with open_store(store_url) as s:
        h = StatisticsHistory(s.db, max_rows_per_queue=2, max_rows_per_user=2, cache_reads=True)
        assert h.moments(PROD, "map") is None
        h.record(PROD, "map", [30.0])
        m = h.moments(PROD, "map")
        assert m is not None and m.count == 1
        h.record(PROD, "map", [32.0])  # the phase written: read again
        m = h.moments(PROD, "map")
        assert m is not None and (m.count, m.mean) == (2, 31.0)
        h.record(PROD, "reduce", [5.0])
        assert h.moments(PROD, "reduce") is not None and h.moments(PROD, "map") is not None
        h.record(PROD, "sort", [1.0])  # a third row of the queue: its least recently updated goes
        assert h.moments(PROD, "map") is None and h.moments(PROD, "sort") is not None


def test_bounds_are_checked() -> None:
    for bad in ({"max_rows_per_queue": 0}, {"max_rows_per_user": -1}, {"max_samples": True}):
        with pytest.raises(ValueError, match=next(iter(bad))):
            StatisticsHistory(None, **bad)  # type: ignore[arg-type]


def test_migration_drops_the_name_only_history(store_url: str) -> None:
    db = Database(store_url)
    assert migrate(db, target=4) == 4
    with db.write() as cur:  # version 2's shape: keyed by job name alone
        cur.execute(
            db.sql(
                "INSERT INTO phase_moments (job_name, phase_id, count, mean, m2, min, max, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            ),
            ("wordcount", "map", 200, 3e7, 0.0, 3e7, 3e7, 1.0),
        )
        cur.execute(
            db.sql("INSERT INTO phase_samples (job_name, phase_id, duration) VALUES (?, ?, ?)"),
            ("wordcount", "map", 3e7),
        )
        runs = "INSERT INTO job_runs (job_name, runs, last_run_at) VALUES (?, ?, ?)"
        cur.execute(db.sql(runs), ("wordcount", 3, 1.0))
        cur.execute(  # the history of applications without an AM helper (version 3) is kept
            db.sql(
                "INSERT INTO app_run_times (app_name, queue, priority, runs, count, mean, m2, updated_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            ),
            ("etl", "root.a", 5, 1, 2, 15.0, 50.0, 1.0),
        )
    db.close()
    with open_store(store_url) as s:
        assert current_version(s.db) == LATEST_VERSION == 5
        h = s.history
        assert h.all_moments() == {} and h.job_keys() == []
        for key in (ADHOC, PROD, JobKey("root.default", "u", "wordcount")):
            assert h.moments(key, "map") is None and h.samples(key, "map") == [] and h.runs(key) == 0
        with s.db.read() as cur:
            cur.execute("SELECT COUNT(*) FROM phase_samples")
            assert int(cur.fetchone()[0]) == 0
            cur.execute("SELECT app_name, queue, mean FROM app_run_times")
            assert [tuple(r) for r in cur.fetchall()] == [("etl", "root.a", 15.0)]
        m = h.record(PROD, "map", [30.0])  # the new tables work
        assert m is not None and h.moments(PROD, "map") == m and h.record_run(PROD) == 1
    with open_store(store_url) as s:  # reopening applies nothing twice and keeps the new rows
        assert s.history.job_keys() == [PROD]


def test_the_framework_prior_pools_the_queues_recent_jobs_of_the_phase(store_url: str) -> None:
    """StatisticsHistory.framework: the phase's moments pooled over the queue's most recently updated
    recurring jobs (every user's), exactly as if their durations were one sample; never another queue's."""
    with open_store(store_url) as s:
        h = s.history
        assert h.framework("root.prod", "map") is None
        h.record(ADHOC, "map", [3e7] * 20)
        h.record(PROD, "map", [30.0, 32.0])
        h.record(BOB, "map", [5.0, 7.0, 9.0])
        h.record(BOB, "reduce", [100.0])
        m = h.framework("root.prod", "map")
        values = [30.0, 32.0, 5.0, 7.0, 9.0]
        mean = sum(values) / 5
        assert m is not None and (m.count, m.min, m.max) == (5, 5.0, 32.0)
        assert m.mean == pytest.approx(mean)
        assert m.variance == pytest.approx(sum((v - mean) ** 2 for v in values) / 4)
        assert h.framework("root.adhoc", "map").mean == pytest.approx(3e7)  # type: ignore[union-attr]
        assert h.framework("root.other", "map") is None
        # bounded: the newest job only (BOB's rows were updated last)
        newest = h.framework("root.prod", "map", jobs=1)
        assert newest is not None and (newest.count, newest.mean) == (3, pytest.approx(7.0))
        for bad in (("", "map"), ("root.prod", "")):
            with pytest.raises(ValueError):
                h.framework(*bad)
        with pytest.raises(ValueError, match="jobs"):
            h.framework("root.prod", "map", jobs=0)

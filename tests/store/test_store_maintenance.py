"""Schema migrations, retention and URL handling, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store import StoreError, open_store
from pyscheduler.store.db import Database
from pyscheduler.store.history import JobKey
from pyscheduler.store.log import DecisionLog
from pyscheduler.store.schema import LATEST_VERSION, MIGRATIONS, current_version, migrate


def _batch(n: int, start: int = 0) -> list[Decision]:
    return [
        Decision(time=float(start + i), kind=DecisionKind.PLACEMENT, reason="best_fit", node_id=f"n{i}")
        for i in range(n)
    ]


def test_migrations_go_forward_from_an_older_schema(store_url: str) -> None:
    db = Database(store_url)
    assert migrate(db, target=1) == 1
    assert current_version(db) == 1
    # the history tables of version 2 do not exist yet
    with db.read() as cur, pytest.raises(Exception, match="phase_moments"):
        cur.execute("SELECT * FROM phase_moments")
    db.close()
    with DecisionLog(store_url, migrate_schema=False) as old:
        old.append(_batch(3))  # a version-1 store is a working decision log
    with open_store(store_url) as s:
        assert current_version(s.db) == LATEST_VERSION
        assert s.count() == 3
        s.history.record(JobKey("root.a", "u", "wc"), "map", [1.0])
        with s.db.read() as cur:
            cur.execute("SELECT version, description FROM schema_version ORDER BY version")
            rows = [tuple(r) for r in cur.fetchall()]
        assert rows == [(m.version, m.description) for m in MIGRATIONS]
    with open_store(store_url) as s:  # reopening applies nothing twice
        assert current_version(s.db) == LATEST_VERSION


def test_newer_schema_is_refused(store_url: str) -> None:
    with open_store(store_url) as s, s.db.write() as cur:
        cur.execute(
            s.db.sql("INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)"),
            (LATEST_VERSION + 1, "from the future", 0.0),
        )
    with pytest.raises(StoreError, match=f"version {LATEST_VERSION + 1} is newer"):
        open_store(store_url)


def test_migrate_target_is_checked(tmp_path: Path) -> None:
    db = Database(tmp_path / "x.db")
    with pytest.raises(StoreError, match="target version"):
        migrate(db, target=LATEST_VERSION + 1)
    db.close()


def test_retention_by_age_deletes_whole_old_batches(store_url: str) -> None:
    with open_store(store_url) as s:
        old = s.append(_batch(10))
        with s.db.write() as cur:  # make the first batch two hours old
            cur.execute(s.db.sql("UPDATE decision_commits SET committed_at = committed_at - 7200"))
        new = s.append(_batch(5, start=10))
        assert s.prune(max_age_s=3600) == 10
        assert [x.id for x in s.query().items] == new
        assert s.get(old[0]) is None
        assert s.prune(max_age_s=3600) == 0
        # ids are never reused, even when the newest rows were deleted
        assert s.prune(max_age_s=0, now=10**12) == 5
        assert s.count() == 0
        assert s.append(_batch(1))[0] == new[-1] + 1


def test_retention_by_size_keeps_newest_within_budget(store_url: str) -> None:
    with open_store(store_url) as s:
        batches = [s.append(_batch(20, start=100 * b)) for b in range(10)]
        total = s.logical_bytes()
        per_batch = total / 10
        budget = int(per_batch * 3.5)
        deleted = s.prune(max_bytes=budget)
        assert deleted == 7 * 20
        assert s.logical_bytes() <= budget
        assert [x.id for x in s.query().items] == [i for b in batches[7:] for i in b]
        assert s.prune(max_bytes=budget) == 0


def test_retention_deletes_names_no_decision_refers_to(store_url: str) -> None:
    def placed(app: str, node: str, t: float) -> Decision:
        return Decision(t, DecisionKind.PLACEMENT, "best_fit", app, app, node_id=node)

    with open_store(store_url) as s, open_store(store_url) as other:
        s.append([placed("app_old", "n1", 1.0), placed("app_old", "n_old", 2.0)])
        with s.db.write() as cur:  # the first batch is two hours old
            cur.execute(s.db.sql("UPDATE decision_commits SET committed_at = committed_at - 7200"))
        other.append([placed("app_new", "n1", 3.0)])  # a second writer: caches its own ids
        assert s.name_count() == 4  # app_old, n1, n_old, app_new (the job ids are the application ids)
        assert other.prune(max_age_s=3600) == 2
        assert s.name_count() == 2 and other.names_pruned == 2  # app_new and n1 are still referred to
        # Both writers cached ids of names that are gone now: appending them again stores them anew.
        s.append([placed("app_old", "n_old", 4.0)])
        other.append([placed("app_old", "n1", 5.0)])
        got = [(x.decision.application_id, x.decision.node_id) for x in s.query().items]
        assert got == [("app_new", "n1"), ("app_old", "n_old"), ("app_old", "n1")]
        assert s.query(application_id="app_old").items[-1].decision.node_id == "n1"


def test_retention_arguments_are_checked(store_url: str) -> None:
    with open_store(store_url) as s:
        with pytest.raises(ValueError, match="max_age_s"):
            s.prune(max_age_s=-1)
        with pytest.raises(ValueError, match="max_bytes"):
            s.prune(max_bytes=-5)


def test_sqlite_file_shrinks_after_retention(tmp_path: Path) -> None:
    path = tmp_path / "log.db"
    with open_store(path) as s:
        for b in range(20):
            s.append(_batch(500, start=b * 500))
        before = s.disk_bytes()
        s.prune(max_bytes=s.logical_bytes() // 10)
        assert s.disk_bytes() < before / 3
    assert os.path.getsize(path) < before / 3


def test_sqlite_is_wal_with_full_sync_by_default(tmp_path: Path) -> None:
    with open_store(f"sqlite:///{tmp_path}/a.db") as s, s.db.read() as cur:
        cur.execute("PRAGMA journal_mode")
        assert cur.fetchone()[0] == "wal"
        cur.execute("PRAGMA synchronous")
        assert cur.fetchone()[0] == 2  # FULL
    # the writer connection carries the setting
    with open_store(f"sqlite:///{tmp_path}/b.db?synchronous=normal") as s, s.db.write() as cur:
        cur.execute("PRAGMA synchronous")
        assert cur.fetchone()[0] == 1
    conn = sqlite3.connect(tmp_path / "a.db")
    assert conn.execute("SELECT COUNT(*) FROM decisions").fetchone()[0] == 0
    conn.close()


def test_relative_sqlite_url_and_plain_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with open_store("sqlite:///rel.db") as s:
        s.append(_batch(1))
    assert (tmp_path / "rel.db").exists()
    with open_store(str(tmp_path / "rel.db")) as s:
        assert s.count() == 1


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "empty"),
        ("mysql://x/y", "unknown scheme 'mysql'"),
        ("sqlite://host/x.db", "expected sqlite:///path"),
        ("sqlite:///x.db?journal=off", "unknown sqlite option 'journal'"),
        ("sqlite:///x.db?synchronous=off", "synchronous must be one of"),
        ("sqlite:////no/such/dir/x.db", "does not exist"),
        ("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2", "cannot connect to PostgreSQL"),
    ],
)
def test_bad_urls_are_named(url: str, message: str) -> None:
    with pytest.raises(StoreError, match=message):
        open_store(url)

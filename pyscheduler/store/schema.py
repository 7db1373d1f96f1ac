"""Schema migrations: a version table and forward-only migrations, one transaction each.

`schema_version` holds one row per applied migration. Opening a store applies every migration newer than
the highest recorded version; a database whose version is newer than this program knows is refused
(an older service must not write into a schema it does not understand). On PostgreSQL an advisory lock
serialises concurrent openers; on SQLite `BEGIN IMMEDIATE` does.

To change the schema, append a `Migration` with the next version; never edit a released one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from pyscheduler.store.db import Cursor, Database, Dialect, StoreError

# Arbitrary constant key for pg_advisory_xact_lock (schema changes and decision appends).
PG_LOCK_MIGRATE = 0x444D5031  # "DMP1"
PG_LOCK_APPEND = 0x444D5032  # "DMP2"


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    sqlite: tuple[str, ...]
    postgresql: tuple[str, ...]

    def statements(self, dialect: Dialect) -> tuple[str, ...]:
        return self.sqlite if dialect == "sqlite" else self.postgresql


def _indexes(table: str, columns: tuple[str, ...]) -> tuple[str, ...]:
    # Partial indexes: empty fields are stored as NULL and left out, which keeps the log small; a filter
    # `col = ?` implies `col IS NOT NULL`, so both SQLite and PostgreSQL use them.
    return tuple(
        f"CREATE INDEX {table}_{col} ON {table} ({col}, id) WHERE {col} IS NOT NULL" for col in columns
    )


# application, job and node are ids into `names` (each distinct string stored once): they repeat in
# every row and in their indexes, and as integers they take a few bytes instead of ~30.
# task_id is stored inline and not indexed (a filter by task scans the log).
_DECISION_COLUMNS = """
    time DOUBLE PRECISION NOT NULL,
    kind TEXT NOT NULL,
    reason TEXT NOT NULL,
    application BIGINT,
    job BIGINT,
    task_id TEXT,
    node BIGINT,
    detail TEXT,
    inputs TEXT
"""
_COMMON_V1 = (
    *_indexes("decisions", ("application", "job", "node")),
    "CREATE INDEX decisions_kind ON decisions (kind, id)",
    "CREATE INDEX decisions_time ON decisions (time)",
)

# pyscheduler.store.runhistory: moments only (no samples), bounded in keys by evicting, from the queue with
# the most keys, its least recently updated one
_APP_RUN_TIMES = (
    "CREATE TABLE app_run_times (app_name TEXT NOT NULL, queue TEXT NOT NULL, priority INTEGER NOT NULL, "
    "runs {count} NOT NULL, count {count} NOT NULL, mean DOUBLE PRECISION NOT NULL, "
    "m2 DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL, "
    "PRIMARY KEY (app_name, queue, priority))"
)
_APP_RUN_TIMES_INDEX = "CREATE INDEX app_run_times_queue ON app_run_times (queue, updated_at)"
# The same shape keyed by application type: DollyMP Sec. 5.2's framework-wide prior (store/runhistory.py)
_FRAMEWORK_RUN_TIMES = (
    "CREATE TABLE framework_run_times (app_type TEXT NOT NULL, queue TEXT NOT NULL, "
    "priority INTEGER NOT NULL, runs {count} NOT NULL, count {count} NOT NULL, "
    "mean DOUBLE PRECISION NOT NULL, m2 DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL, "
    "PRIMARY KEY (app_type, queue, priority))"
)
_FRAMEWORK_RUN_TIMES_INDEX = (
    "CREATE INDEX framework_run_times_queue ON framework_run_times (queue, updated_at)"
)

# pyscheduler.store.history per tenant (issue 57): the RM's queue and user join the job name in every key.
# Version 2's rows were keyed by job name alone, written by any application of that name in any queue
# (a hostile tenant's durations among them) and cannot be attributed to a tenant: version 5 drops them
# with their tables (each recurring job's history starts again with its next run).
_TENANT = "queue TEXT NOT NULL, user_name TEXT NOT NULL, job_name TEXT NOT NULL"


def _tenant_history(count: str, identity: str) -> tuple[str, ...]:
    return (
        "DROP TABLE phase_samples",
        "DROP TABLE phase_moments",
        "DROP TABLE job_runs",
        f"CREATE TABLE job_runs ({_TENANT}, runs {count} NOT NULL, last_run_at DOUBLE PRECISION NOT NULL, "
        "PRIMARY KEY (queue, user_name, job_name))",
        "CREATE INDEX job_runs_tenant ON job_runs (queue, user_name, last_run_at)",
        "CREATE INDEX job_runs_queue ON job_runs (queue, last_run_at)",
        f"CREATE TABLE phase_moments ({_TENANT}, phase_id TEXT NOT NULL, count {count} NOT NULL, "
        "mean DOUBLE PRECISION NOT NULL, m2 DOUBLE PRECISION NOT NULL, min DOUBLE PRECISION NOT NULL, "
        "max DOUBLE PRECISION NOT NULL, updated_at DOUBLE PRECISION NOT NULL, "
        "PRIMARY KEY (queue, user_name, job_name, phase_id))",
        "CREATE INDEX phase_moments_tenant ON phase_moments (queue, user_name, updated_at)",
        "CREATE INDEX phase_moments_queue ON phase_moments (queue, updated_at)",
        f"CREATE TABLE phase_samples (id {identity}, {_TENANT}, phase_id TEXT NOT NULL, "
        "duration DOUBLE PRECISION NOT NULL)",
        "CREATE INDEX phase_samples_key ON phase_samples (queue, user_name, job_name, phase_id, id)",
    )


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "decision log",
        sqlite=(
            # AUTOINCREMENT: ids are never reused, even after retention deleted the newest rows.
            f"CREATE TABLE decisions (id INTEGER PRIMARY KEY AUTOINCREMENT, {_DECISION_COLUMNS})",
            "CREATE TABLE names (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)",
            # One row per committed batch: its wall-clock commit time and logical bytes, for retention.
            "CREATE TABLE decision_commits (last_id INTEGER PRIMARY KEY, "
            "committed_at DOUBLE PRECISION NOT NULL, bytes BIGINT NOT NULL)",
            *_COMMON_V1,
        ),
        postgresql=(
            "CREATE TABLE decisions (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
            f"{_DECISION_COLUMNS})",
            "CREATE TABLE names (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
            "name TEXT NOT NULL UNIQUE)",
            "CREATE TABLE decision_commits (last_id BIGINT PRIMARY KEY, "
            "committed_at DOUBLE PRECISION NOT NULL, bytes BIGINT NOT NULL)",
            *_COMMON_V1,
        ),
    ),
    Migration(
        2,
        "statistics history of recurring jobs",
        sqlite=(
            "CREATE TABLE job_runs (job_name TEXT PRIMARY KEY, runs INTEGER NOT NULL, "
            "last_run_at DOUBLE PRECISION NOT NULL)",
            "CREATE TABLE phase_moments (job_name TEXT NOT NULL, phase_id TEXT NOT NULL, "
            "count INTEGER NOT NULL, mean DOUBLE PRECISION NOT NULL, m2 DOUBLE PRECISION NOT NULL, "
            "min DOUBLE PRECISION NOT NULL, max DOUBLE PRECISION NOT NULL, "
            "updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (job_name, phase_id))",
            "CREATE TABLE phase_samples (id INTEGER PRIMARY KEY AUTOINCREMENT, job_name TEXT NOT NULL, "
            "phase_id TEXT NOT NULL, duration DOUBLE PRECISION NOT NULL)",
            "CREATE INDEX phase_samples_key ON phase_samples (job_name, phase_id, id)",
        ),
        postgresql=(
            "CREATE TABLE job_runs (job_name TEXT PRIMARY KEY, runs BIGINT NOT NULL, "
            "last_run_at DOUBLE PRECISION NOT NULL)",
            "CREATE TABLE phase_moments (job_name TEXT NOT NULL, phase_id TEXT NOT NULL, "
            "count BIGINT NOT NULL, mean DOUBLE PRECISION NOT NULL, m2 DOUBLE PRECISION NOT NULL, "
            "min DOUBLE PRECISION NOT NULL, max DOUBLE PRECISION NOT NULL, "
            "updated_at DOUBLE PRECISION NOT NULL, PRIMARY KEY (job_name, phase_id))",
            "CREATE TABLE phase_samples (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
            "job_name TEXT NOT NULL, phase_id TEXT NOT NULL, duration DOUBLE PRECISION NOT NULL)",
            "CREATE INDEX phase_samples_key ON phase_samples (job_name, phase_id, id)",
        ),
    ),
    Migration(
        3,
        "run times of applications without an AM helper, by name, queue and YARN priority",
        sqlite=(_APP_RUN_TIMES.format(count="INTEGER"), _APP_RUN_TIMES_INDEX),
        postgresql=(_APP_RUN_TIMES.format(count="BIGINT"), _APP_RUN_TIMES_INDEX),
    ),
    Migration(
        4,
        "framework-wide run times of applications without an AM helper, by type, queue and YARN priority",
        sqlite=(_FRAMEWORK_RUN_TIMES.format(count="INTEGER"), _FRAMEWORK_RUN_TIMES_INDEX),
        postgresql=(_FRAMEWORK_RUN_TIMES.format(count="BIGINT"), _FRAMEWORK_RUN_TIMES_INDEX),
    ),
    Migration(
        5,
        "statistics history per tenant: keyed by queue, user and job name (name-only rows dropped)",
        sqlite=_tenant_history("INTEGER", "INTEGER PRIMARY KEY AUTOINCREMENT"),
        postgresql=_tenant_history("BIGINT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"),
    ),
)

LATEST_VERSION = MIGRATIONS[-1].version


def _current(cur: Cursor) -> int:
    cur.execute("SELECT COALESCE(MAX(version), 0) FROM schema_version")
    return int(cur.fetchone()[0])


def current_version(db: Database) -> int:
    with db.read() as cur:
        return _current(cur)


def migrate(db: Database, target: int | None = None) -> int:
    """Bring the schema forward to `target` (default: the latest); return the version reached."""
    goal = LATEST_VERSION if target is None else target
    if not 0 <= goal <= LATEST_VERSION:
        raise StoreError(f"schema target version {goal} is not between 0 and {LATEST_VERSION}")
    with db.write() as cur:
        db.lock(cur, PG_LOCK_MIGRATE)
        cur.execute(
            "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, "
            "description TEXT NOT NULL, applied_at DOUBLE PRECISION NOT NULL)"
        )
        found = _current(cur)
    if found > LATEST_VERSION:
        raise StoreError(
            f"store schema version {found} is newer than this program understands ({LATEST_VERSION}); "
            "upgrade dollymp before opening this store"
        )
    for migration in MIGRATIONS:
        if migration.version > goal:
            break
        with db.write() as cur:
            db.lock(cur, PG_LOCK_MIGRATE)
            if _current(cur) >= migration.version:
                continue  # applied meanwhile by another opener
            for statement in migration.statements(db.dialect):
                cur.execute(statement)
            cur.execute(
                db.sql("INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)"),
                (migration.version, migration.description, time.time()),
            )
    return max(found, goal)

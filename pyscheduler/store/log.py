"""The decision log: append batches of decisions durably, query them with keyset pagination, prune.

A decision is *committed* once `DecisionLog.append` has returned (or `BackgroundWriter.flush`, which
calls it): the batch is one transaction, and on SQLite (WAL, synchronous=FULL by default) the WAL has
been fsynced; see pyscheduler.store.db for the durability of each setting.

Ids increase monotonically in commit order and are never reused (SQLite AUTOINCREMENT; on PostgreSQL
appends hold an advisory lock while they take ids from the sequence, so concurrent writers cannot commit
ids out of order). Keyset pagination on the id is therefore stable while new decisions arrive and while
retention deletes old ones.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pyscheduler import metrics
from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.store import codec
from pyscheduler.store.db import CHECKPOINT_COMMITS, WAL_MAX_BYTES, Database, StoreError
from pyscheduler.store.history import StatisticsHistory
from pyscheduler.store.names import NameTable
from pyscheduler.store.schema import PG_LOCK_APPEND, migrate

MAX_PAGE = 10_000
_DELETE_CHUNK = 20_000
# Stored columns after `id`: application, job and node hold ids into `names` (pyscheduler.store.names).
_STORED = ("time", "kind", "reason", "application", "job", "task_id", "node", "detail", "inputs")
_NAMED = (3, 4, 6)  # positions in a codec row of the columns kept in `names`
_SELECT = (
    "SELECT d.id, d.time, d.kind, d.reason, a.name, j.name, d.task_id, n.name, d.detail, d.inputs "
    "FROM decisions d LEFT JOIN names a ON a.id = d.application LEFT JOIN names j ON j.id = d.job "
    "LEFT JOIN names n ON n.id = d.node"
)

Order = Literal["asc", "desc"]


@dataclass(frozen=True, slots=True)
class StoredDecision:
    """A committed decision with its log id."""

    id: int
    decision: Decision


@dataclass(frozen=True, slots=True)
class Page:
    """One page of a query. Pass `next_cursor` back as `cursor` for the next page; None: no more rows."""

    items: list[StoredDecision]
    next_cursor: int | None


def _named(row: codec.Row, names: dict[str, int]) -> tuple[Any, ...]:
    """A codec row with application, job and node (_NAMED) replaced by their ids in `names`."""
    time_, kind, reason, app, job, task, node, detail, inputs = row
    return (
        time_,
        kind,
        reason,
        None if app is None else names[app],
        None if job is None else names[job],
        task,
        None if node is None else names[node],
        detail,
        inputs,
    )


class DecisionLog:
    """The decision log and statistics history of one store (SQLite file or PostgreSQL database)."""

    def __init__(
        self,
        target: str | Path,
        *,
        migrate_schema: bool = True,
        checkpoint_commits: int = CHECKPOINT_COMMITS,
        wal_max_bytes: int = WAL_MAX_BYTES,
    ) -> None:
        """`checkpoint_commits`, `wal_max_bytes`: when the SQLite WAL is checkpointed (store.db)."""
        self.db = Database(target, checkpoint_commits=checkpoint_commits, wal_max_bytes=wal_max_bytes)
        try:
            if migrate_schema:
                migrate(self.db)
        except BaseException:
            self.db.close()
            raise
        self.history = StatisticsHistory(self.db)
        self._names = NameTable(self.db)
        self.names_pruned = 0  # names deleted by retention since this store was opened

    # -- writing -------------------------------------------------------------------------------------------
    def append(self, decisions: Sequence[Decision]) -> list[int]:
        """Store `decisions` in one transaction; return their ids. Durable (committed) when it returns."""
        if not decisions:
            return []
        for i, d in enumerate(decisions):
            if not isinstance(d, Decision):
                raise TypeError(f"decisions[{i}] is {type(d).__name__}, not Decision")
        rows = [codec.encode(d) for d in decisions]
        size = codec.rows_bytes(rows)
        n = len(rows)
        db = self.db
        with db.write() as cur:
            db.lock(cur, PG_LOCK_APPEND)  # before resolving names: a names prune holds it too
            names = self._names.resolve(cur, {str(r[i]) for r in rows for i in _NAMED if r[i] is not None})
            stored = [_named(r, names) for r in rows]
            if db.dialect == "postgresql":
                cur.execute(
                    db.sql(
                        "SELECT nextval(pg_get_serial_sequence('decisions', 'id')) FROM generate_series(1, ?)"
                    ),
                    (n,),
                )
                ids = [int(r[0]) for r in cur.fetchall()]
                pg: Any = cur
                with pg.copy("COPY decisions (id, " + ", ".join(_STORED) + ") FROM STDIN") as copy:
                    for ident, row in zip(ids, stored, strict=True):
                        copy.write_row((ident, *row))
            else:
                cur.execute("SELECT seq FROM sqlite_sequence WHERE name = 'decisions'")
                found = cur.fetchone()
                base = int(found[0]) if found else 0
                ids = list(range(base + 1, base + n + 1))
                cur.executemany(
                    "INSERT INTO decisions (id, "
                    + ", ".join(_STORED)
                    + ") VALUES (?"
                    + ", ?" * len(_STORED)
                    + ")",
                    [(ident, *row) for ident, row in zip(ids, stored, strict=True)],
                )
            cur.execute(
                db.sql("INSERT INTO decision_commits (last_id, committed_at, bytes) VALUES (?, ?, ?)"),
                (ids[-1], time.time(), size),
            )
        self._names.remember(names)
        for kind, count in collections.Counter(r[1] for r in rows).items():
            metrics.DECISIONS_LOGGED.labels(kind=kind).inc(count)
        return ids

    # -- reading -------------------------------------------------------------------------------------------
    def query(
        self,
        *,
        application_id: str | None = None,
        job_id: str | None = None,
        task_id: str | None = None,
        node_id: str | None = None,
        kinds: Sequence[DecisionKind] = (),
        since: float | None = None,
        until: float | None = None,
        cursor: int | None = None,
        limit: int = 100,
        order: Order = "asc",
    ) -> Page:
        """Decisions matching every given filter, ordered by id (`asc`: oldest first).

        `since` <= time < `until` (decision time, the driver's clock). `cursor` is the `next_cursor` of
        the previous page with the same filters and order. `limit` is 1..MAX_PAGE.
        """
        sql, params = self._query_sql(
            application_id, job_id, task_id, node_id, kinds, since, until, cursor, limit, order
        )
        with self.db.read() as cur:
            cur.execute(self.db.sql(sql), params)
            rows = cur.fetchall()
        items = [StoredDecision(*codec.decode(r)) for r in rows[:limit]]
        more = len(rows) > limit
        return Page(items, items[-1].id if more else None)

    def _query_sql(
        self,
        application_id: str | None,
        job_id: str | None,
        task_id: str | None,
        node_id: str | None,
        kinds: Sequence[DecisionKind],
        since: float | None,
        until: float | None,
        cursor: int | None,
        limit: int,
        order: Order,
    ) -> tuple[str, list[Any]]:
        if not 1 <= limit <= MAX_PAGE:
            raise ValueError(f"limit must be between 1 and {MAX_PAGE}, got {limit}")
        if order not in ("asc", "desc"):
            raise ValueError(f"order must be 'asc' or 'desc', got {order!r}")
        where: list[str] = []
        params: list[Any] = []
        for column, value, named in (
            ("d.application", application_id, True),
            ("d.job", job_id, True),
            ("d.task_id", task_id, False),
            ("d.node", node_id, True),
        ):
            if value is not None:
                if value == "":
                    where.append(f"{column} IS NULL")
                elif named:
                    where.append(f"{column} = (SELECT id FROM names WHERE name = ?)")
                    params.append(value)
                else:
                    where.append(f"{column} = ?")
                    params.append(value)
        if kinds:
            where.append("d.kind IN (" + ", ".join("?" * len(kinds)) + ")")
            params.extend(DecisionKind(k).value for k in kinds)
        if since is not None:
            where.append("d.time >= ?")
            params.append(float(since))
        if until is not None:
            where.append("d.time < ?")
            params.append(float(until))
        if cursor is not None:
            where.append("d.id > ?" if order == "asc" else "d.id < ?")
            params.append(int(cursor))
        sql = _SELECT + (" WHERE " + " AND ".join(where) if where else "")
        sql += f" ORDER BY d.id {'ASC' if order == 'asc' else 'DESC'} LIMIT ?"
        params.append(limit + 1)
        return sql, params

    def query_plan(self, **filters: Any) -> list[str]:
        """SQLite's EXPLAIN QUERY PLAN of `query(**filters)`, one line per step (tests use it to show a
        page is served from an index, not a full scan). PostgreSQL: its EXPLAIN lines."""
        f = {"kinds": (), "limit": 100, "order": "asc", **filters}
        sql, params = self._query_sql(
            f.get("application_id"),
            f.get("job_id"),
            f.get("task_id"),
            f.get("node_id"),
            f["kinds"],
            f.get("since"),
            f.get("until"),
            f.get("cursor"),
            f["limit"],
            f["order"],
        )
        prefix = "EXPLAIN QUERY PLAN " if self.db.dialect == "sqlite" else "EXPLAIN "
        with self.db.read() as cur:
            cur.execute(self.db.sql(prefix + sql), params)
            return [str(r[-1]) for r in cur.fetchall()]

    def get(self, ident: int) -> StoredDecision | None:
        with self.db.read() as cur:
            cur.execute(self.db.sql(_SELECT + " WHERE d.id = ?"), (int(ident),))
            row = cur.fetchone()
        return StoredDecision(*codec.decode(row)) if row else None

    def latest_id(self) -> int:
        """The highest committed id (0 for an empty log)."""
        with self.db.read() as cur:
            cur.execute("SELECT COALESCE(MAX(id), 0) FROM decisions")
            return int(cur.fetchone()[0])

    def first_id_since(self, since: float) -> int | None:
        """The lowest id of a decision with time >= `since` (the `decisions_time` index), None if none."""
        with self.db.read() as cur:
            cur.execute(self.db.sql("SELECT MIN(id) FROM decisions WHERE time >= ?"), (float(since),))
            found = cur.fetchone()[0]
        return None if found is None else int(found)

    def count(self) -> int:
        with self.db.read() as cur:
            cur.execute("SELECT COUNT(*) FROM decisions")
            return int(cur.fetchone()[0])

    def name_count(self) -> int:
        """Rows in the `names` dictionary (application, job and node ids)."""
        with self.db.read() as cur:
            cur.execute("SELECT COUNT(*) FROM names")
            return int(cur.fetchone()[0])

    def logical_bytes(self) -> int:
        """Logical bytes of the stored decisions (codec.row_bytes summed): what size retention bounds."""
        with self.db.read() as cur:
            cur.execute("SELECT COALESCE(SUM(bytes), 0) FROM decision_commits")
            return int(cur.fetchone()[0])

    def disk_bytes(self) -> int:
        """Bytes on disk in use: SQLite pages in use (file minus free pages, WAL excluded); PostgreSQL
        the decision tables with their indexes and TOAST."""
        with self.db.read() as cur:
            if self.db.dialect == "sqlite":
                cur.execute("PRAGMA page_count")
                pages = int(cur.fetchone()[0])
                cur.execute("PRAGMA freelist_count")
                free = int(cur.fetchone()[0])
                cur.execute("PRAGMA page_size")
                return (pages - free) * int(cur.fetchone()[0])
            cur.execute(
                "SELECT pg_total_relation_size('decisions') + pg_total_relation_size('decision_commits')"
            )
            return int(cur.fetchone()[0])

    # -- retention -----------------------------------------------------------------------------------------
    def prune(
        self, *, max_age_s: float | None = None, max_bytes: int | None = None, now: float | None = None
    ) -> int:
        """Delete the oldest committed batches: those committed more than `max_age_s` seconds before `now`
        (wall clock), then as many more as needed for `logical_bytes()` <= `max_bytes`. Whole batches
        are deleted (a batch is one `append`). Returns the number of decisions deleted.

        Deletion runs in chunks, each its own short transaction, so the writer is never held up long.
        On SQLite the freed pages are returned to the file system (auto_vacuum=INCREMENTAL). The names
        that no remaining decision refers to are deleted too (pyscheduler.store.names).
        """
        if max_age_s is not None and not max_age_s >= 0:
            raise ValueError(f"max_age_s must be >= 0, got {max_age_s!r}")
        if max_bytes is not None and max_bytes < 0:
            raise ValueError(f"max_bytes must be >= 0, got {max_bytes!r}")
        cutoff = 0
        with self.db.read() as cur:
            if max_age_s is not None:
                limit_time = (time.time() if now is None else now) - max_age_s
                cur.execute(
                    self.db.sql(
                        "SELECT COALESCE(MAX(last_id), 0) FROM decision_commits WHERE committed_at < ?"
                    ),
                    (limit_time,),
                )
                cutoff = int(cur.fetchone()[0])
            if max_bytes is not None:
                cur.execute(
                    self.db.sql(
                        "SELECT last_id, bytes FROM decision_commits WHERE last_id > ? ORDER BY last_id DESC"
                    ),
                    (cutoff,),
                )
                kept = 0
                for last_id, size in cur.fetchall():
                    kept += int(size)
                    if kept > max_bytes:
                        cutoff = max(cutoff, int(last_id))
                        break
        return self._delete_through(cutoff) if cutoff else 0

    def _delete_through(self, cutoff: int) -> int:
        with self.db.read() as cur:
            cur.execute(self.db.sql("SELECT MIN(id) FROM decisions WHERE id <= ?"), (cutoff,))
            first = cur.fetchone()[0]
        deleted = 0
        low = int(first) - 1 if first is not None else cutoff
        while low < cutoff:
            high = min(low + _DELETE_CHUNK, cutoff)
            with self.db.write() as cur:
                cur.execute(self.db.sql("DELETE FROM decisions WHERE id > ? AND id <= ?"), (low, high))
                deleted += max(int(cur.rowcount), 0)
            low = high
        with self.db.write() as cur:
            cur.execute(self.db.sql("DELETE FROM decision_commits WHERE last_id <= ?"), (cutoff,))
        with self.db.write() as cur:
            self.db.lock(cur, PG_LOCK_APPEND)
            self.names_pruned += self._names.prune(cur)
        if self.db.dialect == "sqlite":
            # Give the freed pages back, then move the shrink from the WAL into the file now.
            self.db.sqlite_script("PRAGMA incremental_vacuum; PRAGMA wal_checkpoint(PASSIVE);")
        return deleted

    # -- lifetime ------------------------------------------------------------------------------------------
    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> DecisionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(target: str | Path) -> DecisionLog:
    """Open (creating and migrating as needed) the store at a path, `sqlite:///path`, or `postgresql://...`."""
    if isinstance(target, str) and not target.strip():
        raise StoreError("store URL is empty")
    return DecisionLog(target)

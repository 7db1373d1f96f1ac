"""One database behind the store: SQLite (a file, the default) or PostgreSQL (a connection URL).

The rest of the store writes SQL once with `?` placeholders; `Database.sql` rewrites them for psycopg.
Writes go through one writer connection guarded by a lock (`Database.write()`, one transaction per
call); reads borrow a connection from a small pool (`Database.read()`), so the HTTP API's threads read
while the background writer commits (SQLite WAL: readers never block the writer, nor it them).

Durability (SQLite): journal_mode=WAL with synchronous=FULL by default: every commit fsyncs the WAL, so
a transaction that `write()` returned from survives kill -9 *and* power loss. `?synchronous=normal` in
the URL trades power-loss durability for speed: in WAL mode a commit is then written to the OS but not
fsynced until the next checkpoint, which still survives kill -9 of the process (the OS holds the pages)
but not a crash of the machine. PostgreSQL commits are durable when COMMIT returns (the server's
synchronous_commit setting, on by default, governs it).

WAL checkpoints (SQLite, issue 57 item 6): SQLite's own automatic checkpoint is PASSIVE and never makes
the `-wal` file smaller, so on a full disk the file keeps what it grew to, and space freed by an operator
is taken again by the WAL. The writer therefore checkpoints itself (`Database.checkpoint`): TRUNCATE
(copy every frame into the database file and cut the WAL to zero bytes) every `checkpoint_commits`
commits and whenever the WAL file has grown past `wal_max_bytes`; and after a failed write, before the
next one, so a writer recovering from a full disk first gives back what the WAL holds.
`journal_size_limit` = `wal_max_bytes` also makes SQLite cut the file whenever it resets the WAL. A
checkpoint waits at most CHECKPOINT_BUSY_MS for readers; a busy one is simply tried again later. The
checkpoint never loses a commit: it only moves committed frames into the database file.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import parse_qs, unquote

Dialect = Literal["sqlite", "postgresql"]
log = logging.getLogger(__name__)
CHECKPOINT_COMMITS = 1000  # commits between two TRUNCATE checkpoints of the WAL
WAL_MAX_BYTES = 4 << 20  # a WAL file larger than this is checkpointed (TRUNCATE) after the commit
CHECKPOINT_BUSY_MS = 1000  # how long a checkpoint waits for readers
_BUSY_MS = 30_000


class StoreError(Exception):
    """The store cannot be opened or used as asked (bad URL, newer schema, missing driver)."""


class Cursor(Protocol):
    """The DB-API cursor subset both sqlite3 and psycopg provide."""

    @property
    def rowcount(self) -> int: ...

    def execute(self, sql: Any, params: Any = ..., /) -> Any: ...
    def executemany(self, sql: Any, params: Any, /) -> Any: ...
    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


_SYNC_MODES = ("full", "normal", "extra")
_MAX_IDLE_READERS = 8


def _parse_sqlite(target: str) -> tuple[str, str]:
    """Return (path, synchronous) from a plain path or sqlite:///relative or sqlite:////absolute URL.

    The URL form follows the common convention: three slashes then the path, so an absolute path
    gives four slashes (sqlite:////var/lib/dollymp/log.db). Option: ?synchronous=full|normal|extra.
    """
    synchronous = "full"
    path = target
    if target.startswith("sqlite:"):
        if not target.startswith("sqlite:///"):
            raise StoreError(f"store URL: expected sqlite:///path, got {target!r}")
        rest = target[len("sqlite:///") :]
        path, _, query_text = rest.partition("?")
        path = unquote(path)
        query = parse_qs(query_text, keep_blank_values=True)
        for key in query:
            if key != "synchronous":
                raise StoreError(f"store URL: unknown sqlite option {key!r} (known: synchronous)")
        if "synchronous" in query:
            synchronous = query["synchronous"][-1].lower()
            if synchronous not in _SYNC_MODES:
                raise StoreError(f"store URL: synchronous must be one of {_SYNC_MODES}, got {synchronous!r}")
    if not path:
        raise StoreError("store URL: empty SQLite path")
    return path, synchronous


class Database:
    """Connections to one SQLite file or PostgreSQL database, with a writer lock and a reader pool."""

    def __init__(
        self,
        target: str | Path,
        *,
        checkpoint_commits: int = CHECKPOINT_COMMITS,
        wal_max_bytes: int = WAL_MAX_BYTES,
    ) -> None:
        if checkpoint_commits < 1:
            raise ValueError(f"checkpoint_commits must be >= 1, got {checkpoint_commits}")
        if wal_max_bytes < 0:
            raise ValueError(f"wal_max_bytes must be >= 0, got {wal_max_bytes}")
        self.checkpoint_commits = checkpoint_commits
        self.wal_max_bytes = wal_max_bytes
        self.checkpoints = 0  # TRUNCATE checkpoints that completed
        self._since_checkpoint = 0  # commits since the last one
        self._write_failed = False  # the last write failed: checkpoint before the next
        text = str(target)
        self.url = text
        self.dialect: Dialect
        self._closed = False
        self._write_lock = threading.RLock()
        self._readers: queue.LifoQueue[Any] = queue.LifoQueue()
        if text.startswith(("postgresql://", "postgres://")):
            self.dialect = "postgresql"
            self._pg_url = text
            self.path: Path | None = None
            self._synchronous = ""
        elif "://" in text and not text.startswith("sqlite:"):
            scheme = text.split("://", 1)[0]
            raise StoreError(
                f"store URL: unknown scheme {scheme!r} (use sqlite:///path, a path, or postgresql://)"
            )
        else:
            self.dialect = "sqlite"
            path, self._synchronous = _parse_sqlite(text)
            self.path = Path(path)
            if not self.path.parent.exists():
                raise StoreError(f"store URL: directory {str(self.path.parent)!r} does not exist")
        self._writer = self._connect()
        if self.dialect == "sqlite":
            self._writer.execute(f"PRAGMA journal_size_limit={int(wal_max_bytes)}")

    # -- connections -------------------------------------------------------------------------------------
    def _connect(self) -> Any:
        if self.dialect == "postgresql":
            try:
                import psycopg
            except ImportError as exc:  # pragma: no cover - depends on the installed extras
                raise StoreError("PostgreSQL store needs psycopg: pip install 'dollymp[postgres]'") from exc
            try:
                return psycopg.connect(self._pg_url, autocommit=True)
            except psycopg.Error as exc:
                raise StoreError(f"cannot connect to PostgreSQL: {exc}") from exc
        assert self.path is not None
        try:
            conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=_BUSY_MS / 1000
            )
            # auto_vacuum only takes effect on a new file (before the first table); it lets retention give
            # freed pages back to the file system with `PRAGMA incremental_vacuum`.
            conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
            mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            conn.execute(f"PRAGMA synchronous={self._synchronous.upper()}")
            conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store {str(self.path)!r}: {exc}") from exc
        if str(mode).lower() != "wal":
            raise StoreError(f"SQLite store {str(self.path)!r} refused WAL mode (got {mode!r})")
        return conn

    def sql(self, statement: str) -> str:
        """Rewrite `?` placeholders for the driver (psycopg uses %s)."""
        return statement.replace("?", "%s") if self.dialect == "postgresql" else statement

    def lock(self, cur: Cursor, key: int) -> None:
        """Serialise writers across processes on PostgreSQL (a transaction-scoped advisory lock). SQLite
        needs nothing: `BEGIN IMMEDIATE` already holds the database's single write lock."""
        if self.dialect == "postgresql":
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (key,))

    def sqlite_script(self, script: str) -> None:
        """Run SQLite statements to completion on the writer, outside any transaction (maintenance
        pragmas such as incremental_vacuum free one page per step, so they must run to the end)."""
        self._check_open()
        with self._write_lock:
            self._writer.executescript(script)

    # -- transactions ------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def write(self) -> Iterator[Cursor]:
        """One write transaction on the writer connection; committed (durably) when the block exits."""
        self._check_open()
        with self._write_lock:
            conn = self._writer
            if self.dialect == "postgresql":
                with conn.transaction(), conn.cursor() as cur:
                    yield cur
                return
            if self._write_failed:  # recovering (e.g. from a full disk): give the WAL's space back first
                self.checkpoint()
            cur = conn.cursor()
            try:
                cur.execute("BEGIN IMMEDIATE")
                try:
                    yield cur
                    cur.execute("COMMIT")
                except BaseException:
                    if conn.in_transaction:
                        conn.rollback()
                    raise
            except sqlite3.Error:
                self._write_failed = True
                raise
            finally:
                cur.close()
            self._write_failed = False
            self._since_checkpoint += 1
            if self._since_checkpoint >= self.checkpoint_commits or self.wal_bytes() > self.wal_max_bytes:
                self.checkpoint()

    def wal_bytes(self) -> int:
        """Size of the SQLite WAL file (0 without one, and on PostgreSQL)."""
        if self.path is None:
            return 0
        try:
            return os.stat(f"{self.path}-wal").st_size
        except OSError:
            return 0

    def checkpoint(self) -> bool:
        """Checkpoint the SQLite WAL (TRUNCATE): every committed frame into the database file, the WAL
        cut to zero bytes. True if it completed; False if readers kept it busy or it failed (logged;
        tried again after the next commit). PostgreSQL: nothing to do, True."""
        if self.dialect != "sqlite":
            return True
        self._check_open()
        with self._write_lock:
            conn = self._writer
            try:
                conn.execute(f"PRAGMA busy_timeout={CHECKPOINT_BUSY_MS}")
                busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            except sqlite3.Error as exc:
                log.warning("decision log: WAL checkpoint failed: %s", exc)
                return False
            finally:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute(f"PRAGMA busy_timeout={_BUSY_MS}")
            if busy:
                return False
            self._since_checkpoint = 0
            self.checkpoints += 1
            return True

    @contextlib.contextmanager
    def read(self) -> Iterator[Cursor]:
        """A cursor on a pooled connection in autocommit mode: each statement sees the latest commit."""
        self._check_open()
        try:
            conn = self._readers.get_nowait()
        except queue.Empty:
            conn = self._connect()
        ok = False
        try:
            cur = conn.cursor()
            try:
                yield cur
            finally:
                cur.close()
            ok = True
        finally:
            if ok and not self._closed and self._readers.qsize() < _MAX_IDLE_READERS:
                self._readers.put(conn)
            else:
                conn.close()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("store is closed")

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._write_lock:
            self._writer.close()
        while True:
            try:
                self._readers.get_nowait().close()
            except queue.Empty:
                break

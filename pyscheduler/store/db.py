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
"""

from __future__ import annotations

import contextlib
import queue
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import parse_qs, unquote

Dialect = Literal["sqlite", "postgresql"]


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

    def __init__(self, target: str | Path) -> None:
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
            conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
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
            cur = conn.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                yield cur
            except BaseException:
                conn.rollback()
                raise
            else:
                cur.execute("COMMIT")
            finally:
                cur.close()

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

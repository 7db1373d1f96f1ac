"""The `names` dictionary: application, job and node ids are stored once and referred to by number.

Resolution runs inside the append transaction (insert the new names, then read all ids back), and
the in-memory cache learns them only after that transaction committed, so a rolled-back append never
leaves a cached id that the database does not have.

Retention (DecisionLog.prune) deletes the names no remaining decision refers to (`prune`), so the table
does not grow with every application a long-running cluster has seen. A cached id may therefore be
gone, deleted by this process or, on PostgreSQL, by another writer: `resolve` checks that the cached
ids it uses still exist (one primary-key lookup per distinct name in the batch) and resolves the
missing ones again. Pruning and appending hold the same append lock, so nothing is deleted between
that check and the append's commit.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from pyscheduler.store.db import Cursor, Database

# Names cached at most (then the cache starts again; a miss costs one lookup in the append). A busy
# cluster adds two names (application, job) per application: ~60 per second under `dollymp bench
# service`; 200,000 such names and ids take ~28 MB (tracemalloc), reached in about an hour, mostly
# finished applications'. 50,000 (~7 MB) still holds every live node and application of a
# 10,000-node cluster several times over.
_CACHE_MAX = 50_000
_CHUNK = 500  # names per IN (...) lookup, well under SQLite's parameter limit


class NameTable:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._cache: dict[str, int] = {}
        self._lock = threading.Lock()

    def resolve(self, cur: Cursor, names: Iterable[str]) -> dict[str, int]:
        """Ids of `names` (creating missing ones) within the caller's write transaction."""
        with self._lock:
            found = {n: self._cache[n] for n in names if n in self._cache}
        if found:
            ids = sorted(set(found.values()))
            alive: set[int] = set()
            for start in range(0, len(ids), _CHUNK):
                batch = ids[start : start + _CHUNK]
                marks = ", ".join("?" * len(batch))
                cur.execute(self.db.sql(f"SELECT id FROM names WHERE id IN ({marks})"), batch)
                alive.update(int(row[0]) for row in cur.fetchall())
            if len(alive) < len(ids):  # pruned since they were cached
                found = {n: i for n, i in found.items() if i in alive}
        missing = sorted({n for n in names if n not in found})
        for start in range(0, len(missing), _CHUNK):
            chunk = missing[start : start + _CHUNK]
            cur.executemany(
                self.db.sql("INSERT INTO names (name) VALUES (?) ON CONFLICT (name) DO NOTHING"),
                [(n,) for n in chunk],
            )
            marks = ", ".join("?" * len(chunk))
            cur.execute(self.db.sql(f"SELECT name, id FROM names WHERE name IN ({marks})"), chunk)
            found.update((str(name), int(ident)) for name, ident in cur.fetchall())
        return found

    def prune(self, cur: Cursor) -> int:
        """Delete the names no decision refers to (within the caller's write transaction, which holds
        the append lock); returns how many. Forget the cache: it is refilled on use."""
        cur.execute(
            "DELETE FROM names WHERE "
            "NOT EXISTS (SELECT 1 FROM decisions WHERE application = names.id) AND "
            "NOT EXISTS (SELECT 1 FROM decisions WHERE job = names.id) AND "
            "NOT EXISTS (SELECT 1 FROM decisions WHERE node = names.id)"
        )
        with self._lock:
            self._cache.clear()
        return max(int(cur.rowcount), 0)

    def remember(self, mapping: dict[str, int]) -> None:
        """Cache ids after their transaction committed."""
        with self._lock:
            if len(self._cache) + len(mapping) > _CACHE_MAX:
                self._cache.clear()
            self._cache.update(mapping)

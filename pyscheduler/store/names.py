"""The `names` dictionary: application, job and node ids are stored once and referred to by number.

Resolution runs inside the append transaction (insert the new names, then read all ids back), and
the in-memory cache learns them only after that transaction committed, so a rolled-back append never
leaves a cached id that the database does not have. Names are never deleted (retention removes
decisions only); a cluster has few distinct applications and nodes compared with decisions.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

from pyscheduler.store.db import Cursor, Database

_CACHE_MAX = 200_000
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

    def remember(self, mapping: dict[str, int]) -> None:
        """Cache ids after their transaction committed."""
        with self._lock:
            if len(self._cache) + len(mapping) > _CACHE_MAX:
                self._cache.clear()
            self._cache.update(mapping)

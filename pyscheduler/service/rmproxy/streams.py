"""How many Sync streams may be open: per client connection and in all.

Each open Sync stream holds one gRPC worker thread for its whole life. Without a bound, idle streams
from one client take every worker and Register (a unary call waiting for a worker) times out, so the
ResourceManager cannot even reconnect. `StreamGate` admits a stream only while its connection has fewer
than `limits.streams_per_peer` open and all connections fewer than `Limits.max_streams` (the workers
minus a reserve for unary calls); a refused stream ends at once with RESOURCE_EXHAUSTED naming the
limit, freeing its worker. Idle streams are closed after `limits.sync_idle_s` (servicer.py).
"""

from __future__ import annotations

import threading

from pyscheduler.service.limits import Limits


class StreamGate:
    def __init__(self, limits: Limits, workers: int) -> None:
        self.per_peer = limits.streams_per_peer
        self.total = limits.max_streams(workers)
        self._lock = threading.Lock()
        self._open: dict[str, int] = {}
        self.refused = 0

    def enter(self, peer: str) -> str | None:
        """Admit a stream from `peer` (None), or why not (the refusal, naming the limit)."""
        with self._lock:
            mine = self._open.get(peer, 0)
            if mine >= self.per_peer:
                self.refused += 1
                return (
                    f"streams: {mine} Sync streams already open from this connection, "
                    f"limit {self.per_peer} (limits.streams_per_peer)"
                )
            if sum(self._open.values()) >= self.total:
                self.refused += 1
                return (
                    f"streams: {self.total} Sync streams open in all, limit {self.total} "
                    "(grpc.max_workers minus limits.stream_reserve)"
                )
            self._open[peer] = mine + 1
            return None

    def leave(self, peer: str) -> None:
        with self._lock:
            left = self._open.get(peer, 0) - 1
            if left > 0:
                self._open[peer] = left
            else:
                self._open.pop(peer, None)

    def open_streams(self) -> int:
        with self._lock:
            return sum(self._open.values())

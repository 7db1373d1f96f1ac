"""Counters of the Sync service, read by the bench and the HTTP metrics."""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass, field

from pyscheduler.service.rmproxy.gcpace import GcPacer


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank `q`th percentile of `values` (the bench's and the load generator's round times)."""
    ordered = sorted(values)
    idx = min(len(ordered) - 1, max(0, round(q / 100.0 * (len(ordered) - 1))))
    return ordered[idx]


@dataclass
class ServiceStats:
    """Counters read by the bench and the HTTP metrics; updated under `lock`."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    batches: int = 0
    node_updates: int = 0
    rounds: int = 0
    placements: int = 0
    rejected_batches: int = 0
    max_queue_depth: int = 0
    max_coalesced: int = 0
    # CPU seconds of the threads doing each step (thread_time: excludes waiting for a core)
    validate_cpu_s: float = 0.0
    apply_cpu_s: float = 0.0
    decide_cpu_s: float = 0.0
    # Per round, from taking its batches off the queue to its plan: wall time, and CPU time of the
    # handler thread (apply + decide; what the round costs without waiting for a core).
    round_ms: collections.deque[float] = field(default_factory=lambda: collections.deque(maxlen=100_000))
    round_cpu_ms: collections.deque[float] = field(default_factory=lambda: collections.deque(maxlen=100_000))
    gc: GcPacer | None = None  # the collector's pauses, when the service paces it

    def reset_window(self) -> None:
        """Start a new measurement window: zero the counters, forget the round times."""
        with self.lock:
            self.batches = self.node_updates = self.rounds = self.placements = self.rejected_batches = 0
            self.max_queue_depth = self.max_coalesced = 0
            self.validate_cpu_s = self.apply_cpu_s = self.decide_cpu_s = 0.0
            self.round_ms.clear()
            self.round_cpu_ms.clear()
            if self.gc is not None:
                self.gc.pauses_ms.clear()
                self.gc.pauses_cpu_ms.clear()

    def summary(self) -> dict[str, float | int]:
        """Counters and round-time percentiles (ms) as one JSON-able dict."""
        with self.lock:
            wall, cpu = sorted(self.round_ms), sorted(self.round_cpu_ms)
            out: dict[str, float | int] = {
                "batches": self.batches,
                "rounds": self.rounds,
                "node_updates": self.node_updates,
                "placements": self.placements,
                "rejected_batches": self.rejected_batches,
                "max_coalesced": self.max_coalesced,
                "validate_cpu_s": round(self.validate_cpu_s, 3),
                "apply_cpu_s": round(self.apply_cpu_s, 3),
                "decide_cpu_s": round(self.decide_cpu_s, 3),
            }
        for name, values in (("round", wall), ("round_cpu", cpu)):
            for q in (50, 99):
                out[f"{name}_p{q}_ms"] = (
                    round(values[min(len(values) - 1, len(values) * q // 100)], 2) if values else 0
                )
        if self.gc is not None:
            out.update(self.gc.summary())
        return out

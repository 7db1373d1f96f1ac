"""Keeping CPython's cycle collector off the decision path of `dollymp serve`.

Why: the mirror of a 10,000-node cluster is ~10^6 small long-lived objects and a busy round allocates
tens of thousands more. With automatic collection a generation-0/1 collection starts whenever the
allocation counter says so, i.e. in the middle of the busiest rounds (measured under
`dollymp bench service`: gen-0/1 collections of 10-60 ms inside rounds, several per burst round), and
objects that survive long enough are re-examined by every older-generation collection.

What: automatic collection is switched off and the service collects at points of its choosing:
- after start-up and every `full_every_s`: a full collection, then `gc.freeze()` moves every survivor to
  the permanent generation, so the next collection only walks objects created since. Its cost is
  proportional to what survived since the last freeze, so it runs often (default every second: a few
  ms; every 10 s made pauses of ~50-100 ms CPU under the 10,000-node bench's commit waves);
- except when more than `max_young` objects were created since (a commit wave: 10^4-10^5 container
  records in a second, ~2.4 us each to walk, so 136 ms CPU measured for one such collection): then they
  are frozen without a collection, an O(1) step; what cyclic garbage was among them waits for the thaw;
- every `young_every_s` (when shorter than `full_every_s`): a generation-0 collection in between;
- every `thaw_every_s`: `gc.unfreeze()` then a full collection and a new freeze, so that cycles which
  became garbage after they were frozen are collected too (the only full-heap walk; rare);
- every `trim_every_s` (0: never), after a collection: glibc's `malloc_trim(0)`, which hands the free
  pages inside the C heap back to the system. Without it, memory that a busy stretch allocated and
  freed (batches, plans, the decision log's rows) stays resident, since `free()` only gives back the
  top of the heap: measured under `dollymp bench service`, 5-6 MB of the service's resident memory was
  such free heap after 30 s, and one trim took ~1 ms (ctypes releases the GIL while it runs). Not on a
  C library without `malloc_trim` (then `trims` stays 0).
Collections run in `between_rounds()`, which the Sync handler calls after a plan went out and before it
waits for the next batch, so they fall in the gap between rounds; a keeper thread runs them when no
round has come for a while (an idle service still collects). After a full resync (a whole cluster's
records just built) the handler asks for the full collection and freeze at once (`settle=True`), in
the resync's own slow round, instead of paying for it in a steady-state gap later.
`pauses_ms` keeps how long each took.
"""

from __future__ import annotations

import collections
import ctypes
import ctypes.util
import gc
import threading
import time
from collections.abc import Callable


def _find_malloc_trim() -> Callable[[int], int] | None:
    """glibc's malloc_trim, or None (another C library, or none found)."""
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


MALLOC_TRIM = _find_malloc_trim()


class GcPacer:
    def __init__(
        self,
        young_every_s: float = 1.0,
        full_every_s: float = 1.0,
        thaw_every_s: float = 600.0,
        max_young: int = 20_000,
        trim_every_s: float = 5.0,
    ) -> None:
        if not 0 < young_every_s <= full_every_s <= thaw_every_s:
            raise ValueError("GcPacer needs 0 < young_every_s <= full_every_s <= thaw_every_s")
        if trim_every_s < 0:
            raise ValueError("GcPacer needs trim_every_s >= 0")
        self.trim_every_s = trim_every_s
        self.trims = 0  # malloc_trim calls
        self.young_every_s = young_every_s
        self.full_every_s = full_every_s
        self.thaw_every_s = thaw_every_s
        self.max_young = max_young
        self.frozen_uncollected = 0  # collections skipped for a wave (their objects frozen as they were)
        self.pauses_ms: collections.deque[float] = collections.deque(maxlen=10_000)
        self.pauses_cpu_ms: collections.deque[float] = collections.deque(maxlen=10_000)  # thread CPU
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        now = time.monotonic()
        self._young = self._full = self._thaw = self._trimmed = now
        self._was_enabled = gc.isenabled()

    def start(self) -> None:
        """Collect and freeze what start-up built, switch automatic collection off, start the keeper."""
        gc.collect()
        gc.freeze()
        gc.disable()
        self._young = self._full = self._thaw = time.monotonic()
        self._thread = threading.Thread(target=self._keep, name="gc-pacer", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5.0)
        if self._was_enabled:
            gc.enable()

    def between_rounds(self, settle: bool = False) -> None:
        """Run whatever collection is due (non-blocking: another thread may be collecting);
        `settle`: a full collection and freeze now (after a full resync)."""
        if not settle and time.monotonic() - self._young < self.young_every_s:
            return
        if not self._lock.acquire(blocking=settle):  # a settle waits for a collection in progress
            return
        try:
            self._collect(time.monotonic(), settle)
        finally:
            self._lock.release()

    def _collect(self, now: float, settle: bool = False) -> None:
        start, start_cpu = time.perf_counter(), time.thread_time()
        if now - self._thaw >= self.thaw_every_s:
            gc.unfreeze()
            gc.collect()
            gc.freeze()
            self._thaw = self._full = now
        elif settle or now - self._full >= self.full_every_s:
            if settle or gc.get_count()[0] <= self.max_young:
                gc.collect()
            else:
                self.frozen_uncollected += 1
            gc.freeze()
            self._full = now
        elif gc.get_count()[0] <= self.max_young:
            gc.collect(0)
        if MALLOC_TRIM is not None and 0 < self.trim_every_s <= now - self._trimmed:
            MALLOC_TRIM(0)
            self.trims += 1
            self._trimmed = now
        self._young = now
        self.pauses_ms.append((time.perf_counter() - start) * 1000.0)
        self.pauses_cpu_ms.append((time.thread_time() - start_cpu) * 1000.0)

    def _keep(self) -> None:
        idle_s = 5 * self.young_every_s
        while not self._stop.wait(self.young_every_s):
            now = time.monotonic()
            if now - self._young >= idle_s:  # no round for a while: collect from here
                with self._lock:
                    self._collect(now)

    def summary(self) -> dict[str, float]:
        pauses, cpu = sorted(self.pauses_ms), sorted(self.pauses_cpu_ms)
        if not pauses:
            return {"gc_collections": 0}
        return {
            "gc_collections": len(pauses),
            "gc_pause_p50_ms": round(pauses[len(pauses) // 2], 2),
            "gc_pause_max_ms": round(pauses[-1], 2),
            "gc_pause_total_ms": round(sum(pauses), 1),
            "gc_pause_cpu_max_ms": round(cpu[-1], 2) if cpu else 0.0,
            "gc_frozen_uncollected": self.frozen_uncollected,
            "malloc_trims": self.trims,
        }

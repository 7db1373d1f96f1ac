"""The AM helpers' share of the service's time, costed and budgeted per application and per queue.

Every AM call (ReportJobProfile, ReportAttempts, GetClonePlan) runs on a gRPC worker thread beside the RM
rounds, and CPython runs one thread at a time: a call's CPU is time the rounds wait (issue 57: one AM
within every bound, 1000-phase x 100,000-task profiles and 10,000-attempt reports, took ~0.4 s of CPU a
call and raised every tenant's round p99 from 7 ms to 170 ms). So each call is costed, after it ran, by
the CPU time of its thread (`time.thread_time`), and charged to its application and to its queue (the
queue the RM knows the application by; "" for one the RM does not know). Each has a bucket refilled at
`appmaster.app_cpu_ms_per_s` / `appmaster.queue_cpu_ms_per_s` up to `appmaster.cpu_burst_s` (10)
seconds' worth; a call is run when both buckets are not in debt, and its cost may put them in debt (one
call is never cut short). A cycle collection that starts inside a call is not the call's: CPython runs it in
whichever thread's allocation crossed the threshold and its cost is the whole heap's, so its CPU is left
out (`call_cpu_s`). `dollymp serve` collects between rounds only (gcpace.py); a service with automatic
collection (a test process whose heap other tests grew) saw one honest AM's first calls charged ~1.1 s.

A call that arrives while its application or its queue is in debt is deferred, not refused: it is
answered at once with the application's last plan (or a plan of no clones, for its first), whose
`detail` says why and when the budget returns (`deferred: ...`); its report is kept (a profile replaces
the kept one; attempts are merged by attempt id, at most `limits.attempts_per_app`) and applied first
by the application's next call in budget, whose plan is then fresh. A kept report that turns out invalid
then is dropped with a warning in the log (its call was answered already). Calls of other applications
and queues are not delayed by it: the budgets are per application and per queue, not a queue of calls.

Only the gRPC path of a service on real time is gated (`AppMasterServicer` wraps its handlers; a
DecisionService given a clock, as the simulator's pyscheduler/sim/live gives its manual one, has no gate):
on simulated time a call's real CPU is not what is simulated, and the plans must not depend on it.
"""

from __future__ import annotations

import gc
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyscheduler.service.roundsfirst import EVERY, checkpoint

MAX_KEYS = 10_000  # applications (and queues) with a bucket at once; the longest idle is forgotten
# A bucket holds this many seconds' worth of its rate (appmaster.cpu_burst_s): an AM's few calls in a
# row (a profile, then a report and its plan) run at once; what it spends beyond the rate it waits for.
BURST_S = 10.0
PACE_MAX_S = 1.0  # a deferred call is answered after its budget's wait, at most this long
PACED_CALLS = 8  # deferred calls waiting to be answered at once, all applications (a worker thread each)


class _GcCpu(threading.local):
    """CPU seconds this thread spent in the cycle collector (gc.callbacks run in the collecting thread)."""

    total = 0.0
    began = 0.0


_GC_CPU = _GcCpu()


def _on_gc(phase: str, _info: dict[str, int]) -> None:
    if phase == "start":
        _GC_CPU.began = time.thread_time()
    else:
        _GC_CPU.total += time.thread_time() - _GC_CPU.began


def call_cpu_s() -> float:
    """This thread's CPU seconds outside the cycle collector: the difference of two readings is what
    the code between them cost."""
    if _on_gc not in gc.callbacks:
        gc.callbacks.append(_on_gc)
    return time.thread_time() - _GC_CPU.total


@dataclass(slots=True)
class _Bucket:
    level: float  # CPU seconds available (negative: the debt of the last call)
    at: float  # when last refilled (monotonic seconds)


@dataclass(slots=True)
class Kept:
    """What deferred calls of one application left to apply: the last profile, the attempts by id."""

    profile: Any = None
    attempts: dict[str, Any] = field(default_factory=dict)
    deferred: int = 0  # calls answered without their work


class CpuBudgets:
    """Token buckets of CPU seconds per key, refilled at `rate` per second up to BURST_S seconds' worth."""

    def __init__(
        self, rate_s: float, clock: Callable[[], float] = time.monotonic, burst_s: float = BURST_S
    ) -> None:
        self.rate = rate_s
        self.burst = rate_s * burst_s
        self.clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def _get(self, key: str, now: float) -> _Bucket:
        b = self._buckets.get(key)
        if b is None:
            b = self._buckets[key] = _Bucket(self.burst, now)
            while len(self._buckets) > MAX_KEYS:
                self._buckets.popitem(last=False)
        else:
            b.level = min(self.burst, b.level + (now - b.at) * self.rate)
            b.at = now
            self._buckets.move_to_end(key)
        return b

    def wait_s(self, key: str) -> float:
        """Seconds until `key`'s bucket is out of debt (0: it may run now)."""
        b = self._get(key, self.clock())
        return 0.0 if b.level >= 0 else -b.level / self.rate

    def used_s(self, key: str) -> float:
        """CPU seconds `key` is in debt by (0 when it is not)."""
        return max(0.0, -self._get(key, self.clock()).level)

    def charge(self, key: str, cost_s: float) -> None:
        self._get(key, self.clock()).level -= max(0.0, cost_s)


class AmGate:
    """The budgets of the module docstring; `queue_of` names an application's queue (the RM's)."""

    def __init__(
        self,
        app_cpu_ms_per_s: float,
        queue_cpu_ms_per_s: float,
        queue_of: Callable[[str], str],
        clock: Callable[[], float] = time.monotonic,
        burst_s: float = BURST_S,
    ) -> None:
        self.apps = CpuBudgets(app_cpu_ms_per_s / 1000.0, clock, burst_s)
        self.queues = CpuBudgets(queue_cpu_ms_per_s / 1000.0, clock, burst_s)
        self.app_rate_ms = app_cpu_ms_per_s
        self.queue_rate_ms = queue_cpu_ms_per_s
        self.queue_of = queue_of
        self.lock = threading.Lock()
        self.kept: OrderedDict[str, Kept] = OrderedDict()
        self.deferred = 0  # calls answered deferred, all applications
        self._pacing: set[str] = set()  # applications with a deferred call waiting to be answered
        self.dropped = 0  # kept reports found invalid when applied

    def admit(self, app_id: str) -> tuple[str, str | None, float]:
        """(the application's queue, why its call is deferred (None: run it now), the seconds until its
        budgets are out of debt)."""
        queue = self.queue_of(app_id)
        with self.lock:
            app_wait = self.apps.wait_s(app_id)
            queue_wait = self.queues.wait_s(queue)
            if app_wait <= 0 and queue_wait <= 0:
                return queue, None, 0.0
            self.deferred += 1
            if app_wait >= queue_wait:
                used = self.apps.used_s(app_id) * 1000.0
                why = (
                    f"deferred: application {app_id}'s AM calls are {used:.0f} ms of CPU over its budget, "
                    f"{self.app_rate_ms:g} ms/s (appmaster.app_cpu_ms_per_s)"
                )
            else:
                used = self.queues.used_s(queue) * 1000.0
                why = (
                    f"deferred: queue {queue or '(unknown)'}'s AM calls are {used:.0f} ms of CPU over its "
                    f"budget, {self.queue_rate_ms:g} ms/s (appmaster.queue_cpu_ms_per_s)"
                )
            wait = max(app_wait, queue_wait)
            return queue, f"{why}; its report is kept and applied in about {wait:.1f} s", wait

    def pace(self, app_id: str, wait_s: float) -> None:
        """Answer a deferred call later: after `wait_s` (at most PACE_MAX_S), so that a deferred AM's
        calls come about once a second, not as fast as it can send them. One paced call per application
        at a time (a worker thread each): the others are answered at once."""
        with self.lock:
            if app_id in self._pacing or len(self._pacing) >= PACED_CALLS:
                return
            self._pacing.add(app_id)
        try:
            time.sleep(min(PACE_MAX_S, max(0.0, wait_s)))
        finally:
            with self.lock:
                self._pacing.discard(app_id)

    def charge(self, app_id: str, queue: str, cost_s: float) -> None:
        with self.lock:
            self.apps.charge(app_id, cost_s)
            self.queues.charge(queue, cost_s)

    def keep(self, app_id: str, profile: Any = None, attempts: Any = (), limit: int = 0) -> bool:
        """Keep a deferred call's report; False when its attempts would pass `limit` (nothing kept)."""
        with self.lock:
            k = self.kept.get(app_id)
            if k is None:
                k = self.kept[app_id] = Kept()
                while len(self.kept) > MAX_KEYS:
                    self.kept.popitem(last=False)
            new = set()
            for n, a in enumerate(attempts):
                if n % EVERY == EVERY - 1:
                    checkpoint()  # RM rounds first (service/roundsfirst.py): rounds never take this lock
                if a.attempt_id not in k.attempts:
                    new.add(a.attempt_id)
            if limit and len(k.attempts) + len(new) > limit:
                return False
            if profile is not None:
                k.profile = profile
            for n, a in enumerate(attempts):
                if n % EVERY == EVERY - 1:
                    checkpoint()
                k.attempts[a.attempt_id] = a
            k.deferred += 1
            return True

    def take(self, app_id: str) -> Kept | None:
        """What deferred calls of `app_id` left (forgotten here)."""
        with self.lock:
            return self.kept.pop(app_id, None)

"""Placements reach the decision log before the plan that carries them is sent; stopping never hangs.

`LogFirst` is the servicer's `before_send`: it hands a round's decisions to the background writer and,
when the round placed something, waits (at most `limits.log_wait_s`) until they are committed; only then
is the plan sent, so a plan the shim received survives kill -9 of the service in the log. While the log
cannot be written (a full or unwritable disk, a blocked writer: the writer's last commit failed, or a
wait ran out) the round does not wait: the cluster keeps being scheduled, each plan sent before its
placements were committed is counted (`unlogged_plans`, with an error in the service's log), and
readiness (`/readyz`) says not ready with the reason (`log_problem`) until the writer has caught up.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any

from pyscheduler.service.rmproxy.session import RoundRecords

log = logging.getLogger("dollymp.durable")


class LogFirst:
    def __init__(self, writer: Any, recorder: Any, wait_s: float) -> None:
        self.writer = writer
        self.recorder = recorder  # service._WriterRecorder: submits, counts drops
        self.wait_s = wait_s
        self.unlogged_plans = 0
        self.stalled = False  # a wait ran out; cleared by the next commit that succeeds in time
        self._lock = threading.Lock()

    def __call__(self, records: Sequence[RoundRecords]) -> None:
        decisions = [d for r in records for d in r.build()]
        if not decisions:
            return
        self.recorder.append(decisions)
        if not any(r.placed for r in records):
            return
        stuck = self.log_problem() is not None
        try:  # a log known to be stuck gets a glance (has it caught up?), not the full wait
            self.writer.flush(timeout=min(0.05, self.wait_s) if stuck else self.wait_s)
            self.stalled = False
        except Exception as exc:
            with self._lock:
                self.unlogged_plans += 1
                self.stalled = True
            if not stuck:
                log.error("decision log: a plan is sent before its placements were committed: %s", exc)

    def log_problem(self) -> str | None:
        """Why decisions cannot be written now (None: they can)."""
        err = self.writer.last_error
        if err is not None:
            return f"decision log cannot be written: {type(err).__name__}: {str(err)[:200]}"
        if self.stalled and self.writer.depth == 0:  # caught up
            self.stalled = False
        if self.stalled:
            return f"decision log commits take longer than {self.wait_s:g} s (limits.log_wait_s)"
        if getattr(self.recorder, "dropped", 0) and self.writer.depth >= self.writer.max_queue:
            return "decision log queue full"
        return None

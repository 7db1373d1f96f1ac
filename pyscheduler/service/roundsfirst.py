"""RM rounds first: AM work pauses at its checkpoints while an RM round runs.

CPython runs one thread at a time, and an AM call's work (validating a report of 10,000 attempts, a plan
for a job of 1,000 phases) shares the interpreter with the RM rounds, which the whole cluster waits for.
The Sync handler marks each round it runs (`round_running`: from the batches it took to the plan it
sent); AM work calls `checkpoint()` between its steps and inside its long loops, and there waits, without
spinning, until no round runs (at most MAX_PAUSE_S, so that AM work always progresses). A checkpoint
costs one read when no round runs, and never waits in the thread running a round (code that AM calls and
rounds share checkpoints for both). The AM calls' budgets (service/rmproxy/amgate.py) bound how much AM
work there is; this keeps what there is out of the rounds' way.

A round that starts between two checkpoints shares the interpreter with the AM call until the call
reaches the next one (CPython hands over every 5 ms), so what matters is the longest stretch of AM work
without one. Measured (`dollymp bench tenants`' flood: a 1000-phase profile, 10,000-attempt reports, CPU
time between a call's checkpoints): before the loops of the report's field checks, its outcome records,
the copies' reports, `replay`, `running`, the deferred reports' merge (amgate.py) and the steps after the
policy checkpointed, stretches of 35 to 180 ms; since, at most ~25 ms (the policy's `decide` for the
whole job, one step), the rest a few ms.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

MAX_PAUSE_S = 0.05  # a checkpoint waits at most this long for the rounds
EVERY = 256  # loops over attempts check once per this many

_lock = threading.Lock()
_running = 0
_paused = 0  # threads waiting at a checkpoint now
_idle = threading.Event()
_idle.set()


class _InRound(threading.local):
    depth = 0  # rounds this thread is running


_here = _InRound()


@contextmanager
def round_running() -> Iterator[None]:
    """Mark an RM round as running (rounds of several sessions may overlap)."""
    global _running
    with _lock:
        _running += 1
        _idle.clear()
    _here.depth += 1
    try:
        yield
    finally:
        _here.depth -= 1
        with _lock:
            _running -= 1
            if _running == 0:
                _idle.set()


def checkpoint() -> None:
    """Wait while an RM round runs in another thread (at most MAX_PAUSE_S)."""
    global _paused
    if _running and not _here.depth:
        with _lock:
            _paused += 1
        try:
            _idle.wait(MAX_PAUSE_S)
        finally:
            with _lock:
                _paused -= 1


def am_paused() -> bool:
    """Whether some thread waits at a checkpoint now (for the round to end, holding what it holds)."""
    return _paused > 0

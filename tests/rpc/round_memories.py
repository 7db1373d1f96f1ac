"""The round memory of a test's mirror, as the mirror's session holds it (service/rmproxy/session.py):
the same one for every round a test runs on that mirror, so what a round keeps for the next (the jobs
built, the waiting seen) is kept as in the service."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TypeVar

from pyscheduler.service.round.round_memory import RoundMemory
from pyscheduler.service.state.mirror import Mirror

_MEMORIES: weakref.WeakKeyDictionary[Mirror, RoundMemory] = weakref.WeakKeyDictionary()
T = TypeVar("T")


def memory_of(m: Mirror) -> RoundMemory:
    mem = _MEMORIES.get(m)
    if mem is None:
        mem = _MEMORIES[m] = RoundMemory()
    return mem


def run_round(round_fn: Callable[[Mirror, RoundMemory], T], m: Mirror) -> T:
    """One round on `m` with its memory."""
    return round_fn(m, memory_of(m))

"""Policies the service can decide with, by name: each a round function mirror -> choices.

The service-side FCFS is the skeleton policy of issue 2. Policies from the decision core
(pyscheduler.policies) are reached through pyscheduler.rpc.translate when they are registered there.
"""

from __future__ import annotations

from pyscheduler.rpc.mirror import Mirror
from pyscheduler.rpc.placer import DeferralChoice, PlacementChoice, fcfs_order, place
from pyscheduler.rpc.session import RoundFn
from pyscheduler.wire import pb


def _fcfs_round(mirror: Mirror) -> tuple[list[PlacementChoice], list[DeferralChoice]]:
    return place(mirror, fcfs_order(mirror), pb.REASON_FCFS_ORDER)


_BUILTIN: dict[str, RoundFn] = {"fcfs": _fcfs_round}


def available() -> list[str]:
    return sorted(_BUILTIN)


def round_for(name: str) -> RoundFn:
    """The round function for a policy name; ValueError naming the known ones otherwise."""
    fn = _BUILTIN.get(name)
    if fn is None:
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(available())}")
    return fn

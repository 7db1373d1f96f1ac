"""Policies the service can decide with, by name: each a round function mirror -> RoundResult.

Names are those of the decision core's registry (pyscheduler.policies: "fcfs", "dollymp", ...),
reached through pyscheduler.service.round.coreround, plus "yarn-fcfs": the service-side
first-come-first-served placer of the skeleton (issue 2), which also honours YARN locality preferences.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyscheduler import policies
from pyscheduler.service.limits import DEFAULTS, Limits
from pyscheduler.service.round.coreround import core_round
from pyscheduler.service.round.placer import fcfs_order, place
from pyscheduler.service.round.plan import RoundResult
from pyscheduler.service.round.queueshare import with_queue_shares
from pyscheduler.service.round.round_memory import RoundMemory
from pyscheduler.service.round.yielding import BEATEN_RULE, BeatenRule
from pyscheduler.service.state.amcopies import CopySource
from pyscheduler.service.state.amview import AmSource
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.service.state.phasehints import HintSource
from pyscheduler.service.state.runhistory import RunHistorySource
from pyscheduler.wire import pb

RoundFn = Callable[[Mirror, RoundMemory], RoundResult]
YARN_FCFS = "yarn-fcfs"

# Options the live service sets unless `policy.options` says otherwise. The AM helper acts on both kinds
# of clones the core decides (service/round/amplan.py): clones at launch per phase, and per-task clones of
# late copies, judged by the progress the AM reports, as in the simulator. It does not kill a copy the core
# names (the ClonePlan has no kill; the only kills the shim carries out are the service's preemptions of
# clones for waiting originals, service/round/yielding.py), so the core's replacement of an all-late task's
# slowest copy (policies/replace.py, an extension `dollymp-ext` turns on) is off: the decision log
# would record kills nobody carries out.
LIVE_DEFAULTS: dict[str, dict[str, Any]] = {"dollymp-ext": {"replace": False}}


def _yarn_fcfs_round(mirror: Mirror, memory: RoundMemory) -> RoundResult:
    """YARN's FCFS: the placer alone (it keeps nothing between rounds)."""
    return place(mirror, fcfs_order(mirror), pb.REASON_FCFS_ORDER)


def available() -> list[str]:
    return sorted([*policies.policy_names(), YARN_FCFS])


def resolve(name: str, options: dict[str, Any] | None = None) -> policies.Policy | None:
    """The core policy for `name` (None for yarn-fcfs); ValueError naming the problem otherwise."""
    if name == YARN_FCFS:
        if options:
            raise ValueError(f"policy {YARN_FCFS!r} takes no options, got {sorted(options)}")
        return None
    if name not in policies.policy_names():
        raise ValueError(f"unknown policy {name!r}; known: {', '.join(available())}")
    return policies.get_policy(name, **{**LIVE_DEFAULTS.get(name, {}), **(options or {})})


def round_for(name: str, options: dict[str, Any] | None = None, hints: HintSource | None = None) -> RoundFn:
    return round_with(resolve(name, options), hints)


def round_with(
    policy: policies.Policy | None,
    hints: HintSource | None = None,
    copies: CopySource | None = None,
    release_beaten: bool = True,
    limits: Limits = DEFAULTS,
    beaten_rule: BeatenRule = BEATEN_RULE,
    history: RunHistorySource | None = None,
    clock: Callable[[], float] | None = None,
    am: AmSource | None = None,
    late_first: bool = False,
) -> RoundFn:
    """`clock`: the rounds' time, epoch seconds (default wall time; a simulator passes its own). `am`: the
    AM helpers' reports, read once per round (service/state/amview.py), in place of `hints` and `copies`."""
    # Every policy runs under the RM's queue shares (a no-op without a queue tree):
    # service/round/queueshare.py
    if policy is None:
        return with_queue_shares(_yarn_fcfs_round)
    core = core_round(
        policy,
        hints,
        copies=copies,
        release_beaten=release_beaten,
        beaten_rule=beaten_rule,
        limits=limits,
        scoped=copies is not None or am is not None,
        history=history,
        clock=clock,
        am=am,
        late_first=late_first,
    )
    return with_queue_shares(core)

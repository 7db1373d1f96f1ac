"""What a session's rounds carry from one round to the next: typed fields, each written by one module.

A round reads the mirror (the RM's state as last reported) and this memory, and leaves in the memory only
what the next round needs to avoid work or repeated records: the cluster's arrays as one ClusterState,
each application's core Job while its asks do not change, which jobs' priorities were last logged, the
applications left out of rounds and how long containers have waited. The session owns it beside its
mirror (`Session.memory`, a new one with each registration) and hands it to each round with the mirror;
the mirror holds only what the RM reported and what was sent to it (its placements and preemptions in
flight). An AM plan's translation works on a copy (`for_plan`) of the memory a round's view froze
(service/round/planview.py), so it never writes a round's memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from pyscheduler.objects import ClusterState
from pyscheduler.service.state.records import AskKey

if TYPE_CHECKING:
    from pyscheduler.service.state.phasehints import PhaseHint


@dataclass(slots=True)
class ClusterCache:
    """The running nodes as one ClusterState kept across rounds, and each row's row in the mirror's
    NodeArrays; rebuilt when the set of rows changes, its figures rewritten from the arrays each round."""

    layout: int
    dims: tuple[str, ...]
    state: ClusterState
    rows: npt.NDArray[np.intp]


@dataclass
class RoundMemory:
    """A session's memory between rounds (module docstring). Each field names the module that owns it."""

    # service/round/clusterview.py: the running nodes' ClusterState, rebuilt when the node set changes.
    cluster: ClusterCache | None = None
    # service/round/translate.py: per application, the signature of its asks and the core Job built from them.
    jobs: dict[str, tuple[Any, Any, Any]] = field(default_factory=dict)
    # service/round/translate.py, this round: each ask's θ/σ source (None: the prior), read by the decisions'
    # detail.
    theta_sources: dict[AskKey, PhaseHint | None] = field(default_factory=dict)
    # service/round/translate.py, this round: containers of an ask beyond its bound (service/limits.py),
    # deferred.
    clamped: dict[AskKey, int] = field(default_factory=dict)
    # service/round/coreround.py: each job's (priority, rank, reason) as last logged; only changes are logged.
    priorities: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    # service/round/isolate.py: applications left out of rounds: their input when excluded, and why.
    excluded: dict[str, tuple[Any, str]] = field(default_factory=dict)
    # service/round/waiting.py: per (kind, ask), the (time ms, count) of waiting containers over the steady
    # window.
    waiting_seen: dict[tuple[str, AskKey], list[tuple[int, int]]] = field(default_factory=dict)

    def for_plan(self) -> RoundMemory:
        """A copy for an AM plan's translation (service/round/amplan.py): the jobs the rounds built, kept
        while their asks do not change, and the cluster's arrays, read; what the translation writes (new
        jobs, this translation's θ/σ sources and clamped asks) goes to the copy, not to the rounds'."""
        return RoundMemory(cluster=self.cluster, jobs=dict(self.jobs))

"""The AM plan's view of one RM session: what the translation reads of its mirror and its rounds' memory,
frozen once a round is done.

Each RM round publishes one (`publish`, called by the session once the round's placements are held on the
mirror, service/rmproxy/session.py); an AM plan (service/round/amplan.py) translates the jobs its job
competes with from the latest view of the session that owns the application, with the AM reports of its
own moment and at its own time, and never takes the session's lock: the Sync thread goes on applying
batches to the live mirror meanwhile, and no RM round waits for an AM plan.

What is copied, and why it suffices:
* the asks with containers still to place, each record copied (`outstanding` is rewritten in place as
  placements are confirmed), and the run times of their applications (`RunningStats` grow in place);
* the applications and the further resource types (records replaced on change: a shallow copy);
* the cluster as the round left it, its dirty rows read again first (the round's placements hold room),
  copied: the live ClusterState's arrays are rewritten in place by the next round; the view's `layout`
  matches the copy's and it has no dirty rows, so the translation never reads the mirror's node arrays;
* the rounds' core Jobs (replaced when their asks change, never rewritten): each use translates on its own
  copy (`RoundMemory.for_plan`), so concurrent AM plans share nothing they write.

Staleness: one round at most. A view is what the mirror held when its round ended; batches applied since
reach an AM plan with the next round's view (the RM's heartbeat interval, `tick_ms`). Between a round and
the next batch (the order in which the live simulator calls, sim/live/run.py) the view and the live mirror
are the same state, so the plans are those of a translation under the lock.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from pyscheduler.service.round.clusterview import cluster_of
from pyscheduler.service.round.round_memory import ClusterCache, RoundMemory
from pyscheduler.service.state.mirror import Mirror, application_of_attempt


@dataclass(frozen=True, slots=True)
class PlanView:
    """One session's state after one of its rounds (module docstring); never written once published."""

    mirror: Mirror  # the part of the mirror the translation reads, copied
    memory: RoundMemory  # the cluster after the round and the rounds' jobs; use `for_plan()`, never this
    epoch: int  # the epoch of the round's plan
    now_s: float  # the round's time

    def knows(self, app_id: str) -> bool:
        return app_id in self.mirror.apps


def publish(mirror: Mirror, memory: RoundMemory, epoch: int, now_s: float) -> PlanView:
    """The view of `mirror` and `memory` now (module docstring). The caller holds the session's lock;
    the rounds' cluster cache is brought up to date, as the next round's translation would."""
    state = cluster_of(mirror, memory)
    c = memory.cluster
    assert c is not None  # cluster_of keeps one
    frozen = state.copy()
    view = Mirror()
    view.apps = dict(mirror.apps)
    view.resource_types = set(mirror.resource_types)
    view.layout = mirror.layout
    view.asks = {k: a.copied() for k, a in mirror.asks.items() if a.num_containers > a.outstanding}
    apps = {application_of_attempt(k[0]) for k in view.asks}
    view.run_times = {k: copy.copy(v) for k, v in mirror.run_times.items() if k[0] in apps}
    kept = RoundMemory(cluster=ClusterCache(c.layout, c.dims, frozen, c.rows), jobs=dict(memory.jobs))
    return PlanView(view, kept, epoch, now_s)

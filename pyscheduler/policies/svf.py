"""SVF: smallest remaining volume first, volume = sum_k n_k(t) theta_k d_k (DollyMP Eq. 10/16, sigma = 0).
No redundancy."""

from __future__ import annotations

from pyscheduler.policies.base import Decisions, Snapshot, register_policy
from pyscheduler.policies.baseline_common import order_by, place_in_classes, remaining_volume


@register_policy("svf")
class SvfPolicy:
    name = "svf"
    timer_driven = False  # acts on arrivals and ends of copies only

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        total = snapshot.cluster.total_capacity()
        key = [remaining_volume(j, total, snapshot) for j in jobs]
        place_in_classes(snapshot, out, [[p] for p in order_by(jobs, key)], best_fit=True)
        return out

"""FIFO: jobs in arrival order, first fit, no redundancy (Hadoop's original JobQueue order)."""

from __future__ import annotations

from pyscheduler.policies.base import Decisions, Snapshot, register_policy
from pyscheduler.policies.baseline_common import order_by, place_in_classes


@register_policy("fifo")
class FifoPolicy:
    name = "fifo"
    timer_driven = False  # acts on arrivals and ends of copies only

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        order = order_by(jobs, [j.arrival for j in jobs])
        place_in_classes(snapshot, out, [[p] for p in order], best_fit=False)
        return out

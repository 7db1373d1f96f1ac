"""SRPT: the job with the shortest remaining processing time first (DollyMP Sec. 4.2), where a DAG job's
remaining processing time is its remaining critical path of mean task times. No redundancy."""

from __future__ import annotations

from pyscheduler.policies.base import Decisions, Snapshot, register_policy
from pyscheduler.policies.baseline_common import order_by, place_in_classes, remaining_critical_path


@register_policy("srpt")
class SrptPolicy:
    name = "srpt"
    timer_driven = False  # acts on arrivals and ends of copies only

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        key = [remaining_critical_path(j, snapshot) for j in jobs]
        place_in_classes(snapshot, out, [[p] for p in order_by(jobs, key)], best_fit=True)
        return out

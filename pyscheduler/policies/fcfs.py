"""FCFS: jobs in arrival order, every ready phase's tasks placed first-fit in node order, no clones."""

from __future__ import annotations

from pyscheduler.policies.base import Decisions, Priority, Snapshot, register_policy
from pyscheduler.policies.common import (
    REASON_FIRST_FIT,
    defer_unplaced,
    engine_for,
    kill_losers,
    original_entry,
    ready_pending_phases,
    record,
)


@register_policy("fcfs")
class FcfsPolicy:
    """First come, first served by job arrival (ties by job id); first fit; no cloning."""

    name = "fcfs"

    def decide(self, snapshot: Snapshot) -> Decisions:
        snapshot.validate()
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        order = sorted(range(len(jobs)), key=lambda i: (jobs[i].arrival, jobs[i].job_id))
        engine = engine_for(snapshot)
        placed: dict[tuple[int, int], int] = {}
        entries = []
        for rank, pos in enumerate(order):
            job = jobs[pos]
            out.priorities.append(Priority(job.job_id, rank, rank, "arrival_order"))
            for k in ready_pending_phases(job):
                entry = original_entry(job, pos, k)
                entries.append(entry)
                if not engine.feasible(entry.demand):
                    continue
                got = engine.place_group([entry], best_fit=False)[0]
                record(out, entry, got, False, REASON_FIRST_FIT)
                placed[(pos, k)] = len(got.tasks)
        defer_unplaced(out, jobs, entries, placed, engine)
        kill_losers(out, snapshot)
        return out

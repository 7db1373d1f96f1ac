"""DRF (Ghodsi et al., NSDI'11): offer resources to the job whose dominant share of what it holds is lowest.

Progressive filling in batches: the job with the lowest dominant share of its running copies' resources
gets up to `batch` tasks placed, its share is updated, and it re-enters the queue. No redundancy.
"""

from __future__ import annotations

import heapq

import numpy as np

from pyscheduler.policies.base import Decisions, Priority, Snapshot, register_policy
from pyscheduler.policies.common import (
    REASON_BEST_FIT,
    defer_unplaced,
    engine_for,
    original_entry,
    ready_pending_phases,
    record,
)
from pyscheduler.policies.placement import Entry


@register_policy("drf")
class DrfPolicy:
    name = "drf"
    timer_driven = False  # acts on arrivals and ends of copies only

    def __init__(self, batch: int = 4) -> None:
        if batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch!r}")
        self.batch = batch

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        total = snapshot.cluster.total_capacity()
        engine = engine_for(snapshot)
        heap: list[tuple[float, float, int]] = []
        held: list[float] = []
        for pos, job in enumerate(jobs):
            use = np.zeros(len(total))
            for p in job.phases:
                use += p.demand.as_array() * float(p.copies.sum())
            share = float((use / total).max())
            held.append(share)
            heapq.heappush(heap, (share, job.arrival, pos))
            out.priorities.append(Priority(job.job_id, 0, pos, "dominant_share"))
        entries: list[Entry] = []
        placed: dict[tuple[int, int], int] = {}
        exhausted: set[int] = set()
        while heap and engine.cand.size:
            share, arr, pos = heapq.heappop(heap)
            job = jobs[pos]
            got_any = 0
            for k in ready_pending_phases(job):
                e = original_entry(job, pos, k)
                if pos not in exhausted:
                    entries.append(e)
                done = placed.get((pos, k), 0)
                e = Entry(pos, k, e.demand, e.tasks[done : done + self.batch - got_any])
                if not len(e.tasks) or not engine.feasible(e.demand):
                    continue
                got = engine.place_group([e], best_fit=True)[0]
                record(out, e, got, False, REASON_BEST_FIT)
                placed[(pos, k)] = done + len(got.tasks)
                got_any += len(got.tasks)
                share += float((e.demand * len(got.tasks) / total).max())
                if got_any >= self.batch:
                    break
            exhausted.add(pos)
            if got_any:
                heapq.heappush(heap, (share, arr, pos))
        defer_unplaced(out, jobs, _dedupe(entries), placed, engine)
        return out


def _dedupe(entries: list[Entry]) -> list[Entry]:
    seen: dict[tuple[int, int], Entry] = {}
    for e in entries:
        seen.setdefault((e.job_pos, e.phase_k), e)
    return list(seen.values())

"""Shared machinery for the papers' baselines: ordered placement by priority class, job size measures,
speculative copies and clones of running tasks. Each baseline file only says how it orders and clones.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from pyscheduler.objects import Job, TaskState
from pyscheduler.policies.base import Decisions, Deferral, IntArray, Priority, Snapshot
from pyscheduler.policies.common import (
    REASON_BEST_FIT,
    REASON_FIRST_FIT,
    REASON_WAITING,
    Unplaced,
    defer_unplaced,
    engine_for,
    original_entry,
    ready_pending_phases,
    record,
)
from pyscheduler.policies.placement import Entry, PlacementEngine


def dominant_share(job: Job, k: int, total: np.ndarray) -> float:
    """d_j^k: the largest share of the cluster total one task of phase k asks for (DollyMP Eq. 15)."""
    return float(
        max(v / t for v, t in zip(job.phases[k].demand.values, total.tolist(), strict=True) if t > 0)
    )


def remaining_volume(job: Job, total: np.ndarray, snapshot: Snapshot, lam: float = 0.0) -> float:
    """sum_k n_k(t) (theta_k + lam sigma_k) d_k: DollyMP Eq. 16 (lam = 0: SVF's volume, Eq. 10)."""
    v = 0.0
    for k, p in enumerate(job.phases):
        if p.num_remaining:
            th, sg = snapshot.theta_sigma(job, p)
            v += p.num_remaining * (th + lam * sg) * dominant_share(job, k, total)
    return v


def remaining_workload(job: Job, snapshot: Snapshot, lam: float) -> float:
    """Upsilon_j(t) = sum_z n_z(t) (E_z + lam sigma_z): SREW+C Eq. 25 generalised to any phases."""
    v = 0.0
    for p in job.phases:
        if p.num_remaining:
            th, sg = snapshot.theta_sigma(job, p)
            v += p.num_remaining * (th + lam * sg)
    return v


def remaining_critical_path(job: Job, snapshot: Snapshot) -> float:
    """Remaining processing time: longest path of unfinished phases by mean task time (Eq. 17, sigma = 0)."""
    longest: dict[int, float] = {}
    for k in job.topo:
        p = job.phases[k]
        own = 0.0 if p.finished else snapshot.theta_sigma(job, p)[0]
        longest[k] = own + max((longest[q] for q in job.parent_idx[k]), default=0.0)
    return max(longest.values(), default=0.0)


def place_in_classes(
    snapshot: Snapshot,
    out: Decisions,
    classes: Sequence[Sequence[int]],
    best_fit: bool,
    engine: PlacementEngine | None = None,
) -> PlacementEngine:
    """Place pending originals class by class (each class a list of job positions, best first).

    Once no node has room left, or (a class of one job) none for its phases' demands, the waiting phases are
    deferred without building their placement entries (the same deferral records, computed cheaply)."""
    jobs = snapshot.jobs
    engine = engine or engine_for(snapshot)
    placed: dict[tuple[int, int], int] = {}
    entries: list[Entry | Unplaced] = []
    rank = 0
    reason = REASON_BEST_FIT if best_fit else REASON_FIRST_FIT
    for level, cls in enumerate(classes):
        group: list[Entry] = []
        for pos in cls:
            job = jobs[pos]
            out.priorities.append(Priority(job.job_id, level, rank, "baseline_order"))
            rank += 1
            if not any(p.num_pending for p in job.phases):
                continue
            ready = ready_pending_phases(job)
            if (
                len(cls) == 1
                and engine.cand.size
                and all(engine.is_full(job.phases[k].demand.values) for k in ready)
            ):
                # a class of one job none of whose phases any node has room for: what placing them would
                # find, without listing their tasks
                entries.extend(
                    Unplaced(pos, k, job.phases[k].demand.values, job.phases[k].num_pending) for k in ready
                )
                continue
            for k in ready:
                if not engine.cand.size:
                    out.deferrals.append(
                        Deferral(
                            job.job_id, job.phases[k].phase_id, job.phases[k].num_pending, REASON_WAITING
                        )
                    )
                    continue
                e = original_entry(job, pos, k)
                entries.append(e)
                if engine.feasible(e.demand):
                    group.append(e)
        if group and engine.cand.size:
            for e, got in zip(group, engine.place_group(group, best_fit=best_fit), strict=True):
                record(out, e, got, False, reason)
                placed[(e.job_pos, e.phase_k)] = len(got.tasks)
    defer_unplaced(out, jobs, entries, placed, engine)
    return engine


def running_tasks(job: Job, k: int, max_copies: int) -> IntArray:
    """Tasks of phase k that are running with fewer than `max_copies` copies (candidates for a clone)."""
    p = job.phases[k]
    return np.flatnonzero((p.state == TaskState.RUNNING) & (p.copies < max_copies)).astype(np.int64)


def room_for_copies(jobs: Sequence[Job], engine: PlacementEngine) -> bool:
    """Some node has room for one more copy of a running task of `jobs` (else a copy rule can skip its
    scan of the running copies: nothing it picks would be placed)."""
    return engine.room_for_any(
        {p.demand.values for j in jobs for p in j.phases if p.num_tasks - p.num_pending - p.num_finished}
    )


def place_copies(
    out: Decisions, engine: PlacementEngine, job: Job, pos: int, k: int, tasks: IntArray, reason: str
) -> int:
    """Place one extra copy of each of `tasks` where it fits; returns how many were placed."""
    if not len(tasks) or not engine.cand.size:
        return 0
    e = Entry(pos, k, job.phases[k].demand.as_array(), tasks)
    got = engine.place_group([e], best_fit=True)[0]
    record(out, e, got, True, reason)
    return len(got.tasks)


def order_by(jobs: Sequence[Job], key: Sequence[float]) -> list[int]:
    return sorted(range(len(jobs)), key=lambda i: (key[i], jobs[i].arrival, jobs[i].job_id))

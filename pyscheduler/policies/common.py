"""Helpers shared by policies: which tasks want a copy, deferral and kill decisions, reason codes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from pyscheduler.objects import Job, TaskState
from pyscheduler.policies.base import Decisions, Deferral, IntArray, Kill, Snapshot
from pyscheduler.policies.placement import Assigned, Entry, PlacementEngine

# Machine-readable reasons (the decision log's `reason` column).
REASON_BEST_FIT = "best_fit"
REASON_FIRST_FIT = "first_fit"
REASON_CLONE = "clone_idle_capacity"
REASON_WAITING = "waiting_for_resources"
REASON_INFEASIBLE = "infeasible"
REASON_LOST_RACE = "first_copy_finished"


@dataclass(slots=True)
class Unplaced:
    """Pending originals of one (job, phase) that no node has room for, kept without listing the tasks."""

    job_pos: int
    phase_k: int
    demand: tuple[float, ...]
    count: int


def pending_tasks(job: Job, k: int) -> IntArray:
    return np.flatnonzero(job.phases[k].state == TaskState.PENDING).astype(np.int64)


def ready_pending_phases(job: Job) -> list[int]:
    """Phases (topological order) whose parents finished and which have tasks without a running copy."""
    return [k for k in job.topo if job.phases[k].num_pending > 0 and job.ready(k)]


def engine_for(snapshot: Snapshot) -> PlacementEngine:
    c = snapshot.cluster
    return PlacementEngine(c.capacity, c.free, c.active)


def original_entry(job: Job, job_pos: int, k: int) -> Entry:
    return Entry(job_pos, k, job.phases[k].demand.as_array(), pending_tasks(job, k))


def record(decisions: Decisions, entry: Entry, got: Assigned, is_clone: bool, reason: str) -> None:
    n = len(got.tasks)
    if n:
        decisions.add_placements(
            np.full(n, entry.job_pos, np.int64),
            np.full(n, entry.phase_k, np.int64),
            got.tasks,
            got.nodes,
            np.full(n, is_clone, bool),
            reason,
        )


def defer_unplaced(
    decisions: Decisions,
    jobs: Sequence[Job],
    entries: Iterable[Entry | Unplaced],
    placed: dict[tuple[int, int], int],
    engine: PlacementEngine,
) -> None:
    """One deferral per (job, phase) whose pending originals were not all placed, with the reason."""
    for e in entries:
        wanted = e.count if isinstance(e, Unplaced) else len(e.tasks)
        left = wanted - placed.get((e.job_pos, e.phase_k), 0)
        if left <= 0:
            continue
        job = jobs[e.job_pos]
        pid = job.phases[e.phase_k].phase_id
        if not engine.feasible(e.demand):
            decisions.deferrals.append(
                Deferral(
                    job.job_id,
                    pid,
                    left,
                    REASON_INFEASIBLE,
                    f"demand {[float(v) for v in e.demand]} exceeds every node's capacity",
                )
            )
        else:
            decisions.deferrals.append(Deferral(job.job_id, pid, left, REASON_WAITING))


def _has_losers(job: Job, spare_upstream: bool) -> bool:
    """Some finished task of `job` still has a running copy that kill_losers would kill."""
    for k, p in enumerate(job.phases):
        if p.num_losers and not (spare_upstream and any(k in ps for ps in job.parent_idx)):
            return True
    return False


def kill_losers(decisions: Decisions, snapshot: Snapshot, spare_upstream: bool = False) -> None:
    """Copies still running for a task that already finished lost the race (first copy wins).

    With `spare_upstream` (policies that clone), losers of a phase that has downstream phases are left to
    the AM's delay assignment (Dolly 4.4): a downstream clone may still take an exclusive copy from them
    within omega, and the AM kills whatever is unfinished when omega ends.
    """
    if not any(_has_losers(j, spare_upstream) for j in snapshot.jobs):
        return  # nothing to kill: skip the attempts (the simulator builds them lazily)
    if not snapshot.attempts:
        return
    by_id = {j.job_id: j for j in snapshot.jobs}
    upstream: dict[str, set[int]] = {}
    for a in snapshot.attempts:
        job = by_id.get(a.job_id)
        if job is None or a.phase_id not in job.phase_index:
            continue
        k = job.phase_index[a.phase_id]
        phase = job.phases[k]
        if not (0 <= a.task_index < phase.num_tasks and phase.state[a.task_index] == TaskState.FINISHED):
            continue
        if spare_upstream:
            if job.job_id not in upstream:
                upstream[job.job_id] = {q for ps in job.parent_idx for q in ps}
            if k in upstream[job.job_id]:
                continue
        decisions.kills.append(
            Kill(a.attempt_id, a.job_id, a.phase_id, a.task_index, a.node_id, REASON_LOST_RACE)
        )

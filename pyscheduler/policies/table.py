"""Array-native view of the active jobs for one decision round: one row per phase, flat task arrays.

`PhaseTable` holds what does not change while the job set stays the same (built once and reused while
the list of job objects is unchanged); `RoundView` adds what changes every round (finished and pending
counts, readiness, the flat state/copies of every task of a ready phase) and builds the kernel's input.
Eq. 14-17 of DollyMP are computed here for all jobs at once (scalar twins in policies/model.py, which the
tests compare against).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from pyscheduler.objects import Job, Phase, TaskState
from pyscheduler.objects.resources import FloatArray
from pyscheduler.policies.base import BoolArray, IntArray


class PhaseTable:
    """Static per-phase columns of a list of jobs; rows grouped by job, in each job's topological order.

    A job's phases, their demands, task counts and DAG edges are fixed when the Job is built, so they are
    read once per job list; task states, finished counts and statistics are read every round (RoundView).
    """

    def __init__(self, jobs: Sequence[Job]) -> None:
        self.key = tuple(map(id, jobs))
        self.jobs = jobs
        rows = [(pos, k) for pos, j in enumerate(jobs) for k in j.topo]
        self.phases: list[Phase] = [jobs[pos].phases[k] for pos, k in rows]
        p = len(rows)
        self.row_job: IntArray = np.fromiter((r[0] for r in rows), np.int64, p)
        self.job_ids: list[str] = [jobs[pos].job_id for pos, _ in rows]  # per row
        self.phase_ids: list[str] = [ph.phase_id for ph in self.phases]  # per row
        self.row_k: IntArray = np.fromiter((r[1] for r in rows), np.int64, p)
        self.n_tasks: IntArray = np.fromiter((ph.num_tasks for ph in self.phases), np.int64, p)
        dims = jobs[0].phases[0].demand.dims if jobs else 0
        self.dims = dims
        self.demand: FloatArray = np.array(
            [ph.demand.values for ph in self.phases], dtype=np.float64
        ).reshape(p, max(dims, 1))
        # distinct demand vectors ("shapes") and each row's shape, computed once per job set
        if p:
            shapes, inv = np.unique(self.demand, axis=0, return_inverse=True)
        else:
            shapes, inv = self.demand, np.zeros(0, np.int64)
        self.shapes: FloatArray = shapes
        self.row_shape: IntArray = inv.reshape(-1).astype(np.int64)
        self.job_ptr: IntArray = np.zeros(len(jobs) + 1, np.int64)
        np.cumsum([len(j.phases) for j in jobs], out=self.job_ptr[1:])
        self.arrival: FloatArray = np.fromiter((j.arrival for j in jobs), np.float64, len(jobs))
        # DAG edges as row numbers, and rows by depth for the critical path
        row_of: dict[tuple[int, int], int] = {r: i for i, r in enumerate(rows)}
        child, parent = [], []
        depth = np.zeros(p, np.int64)
        for i, (pos, k) in enumerate(rows):
            for q in jobs[pos].parent_idx[k]:
                child.append(i)
                parent.append(row_of[(pos, q)])
                depth[i] = max(depth[i], depth[row_of[(pos, q)]] + 1)
        self.edge_child: IntArray = np.asarray(child, np.int64)
        self.edge_parent: IntArray = np.asarray(parent, np.int64)
        self.has_parent: BoolArray = np.zeros(p, bool)
        self.has_parent[self.edge_child] = True
        child_depth = depth[self.edge_child]
        # edges grouped by the depth of their child: processing them level by level gives longest paths
        self.levels = [np.flatnonzero(child_depth == d) for d in range(1, int(depth.max(initial=0)) + 1)]


class RoundView:
    """Dynamic state of one round over a PhaseTable."""

    def __init__(
        self, table: PhaseTable, theta_sigma: Callable[[Job, Phase], tuple[float, float]] | None
    ) -> None:
        self.t = table
        ph = table.phases
        p = len(ph)
        self.n_finished: IntArray = np.fromiter((x.num_finished for x in ph), np.int64, p)
        self.n_pending: IntArray = np.fromiter((x.num_pending for x in ph), np.int64, p)
        if theta_sigma is None:  # read each round: drivers may refresh a phase's declared statistics
            self.theta = np.fromiter((x.mean for x in ph), np.float64, p)
            self.sigma = np.fromiter((x.sd for x in ph), np.float64, p)
        else:
            est = [theta_sigma(table.jobs[j], x) for j, x in zip(table.row_job.tolist(), ph, strict=True)]
            self.theta = np.fromiter((a for a, _ in est), np.float64, p)
            self.sigma = np.fromiter((b for _, b in est), np.float64, p)
        self.finished: BoolArray = self.n_finished >= table.n_tasks
        blocked = np.zeros(p, np.int64)
        if table.edge_child.size:
            np.add.at(blocked, table.edge_child, ~self.finished[table.edge_parent])
        self.ready: BoolArray = blocked == 0  # every parent phase finished (Eq. 7)

    def measures(self, total: FloatArray, sigma_factor: float) -> tuple[FloatArray, FloatArray, float]:
        """(v_j(t), e_j(t)) for every job and max dominant share (Eq. 14-17, vectorised)."""
        t = self.t
        e = self.theta + sigma_factor * self.sigma  # effective processing time of each phase
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(t.demand > 0, t.demand / np.where(total > 0, total, 0.0), 0.0)
        share = ratio.max(axis=1) if ratio.size else np.zeros(0)  # Eq. 15
        unfinished = ~self.finished
        vol = np.where(unfinished, (t.n_tasks - self.n_finished) * e * share, 0.0)  # Eq. 16 terms
        n_jobs = len(t.jobs)
        volume: FloatArray = np.bincount(t.row_job, weights=vol, minlength=n_jobs).astype(np.float64)
        longest = np.where(unfinished, e, 0.0)
        for level in t.levels:  # longest path through unfinished phases (Eq. 17)
            ch, pa = t.edge_child[level], t.edge_parent[level]
            best = np.zeros(longest.size)
            np.maximum.at(best, ch, longest[pa])
            kids = np.unique(ch)
            longest[kids] += best[kids]
        times: FloatArray = np.maximum.reduceat(longest, t.job_ptr[:-1]) if n_jobs else np.zeros(0)
        dmax = float(share[unfinished].max(initial=0.0))
        self.share = share
        return volume, times, dmax

    def flat_tasks(self, rows: IntArray) -> FlatTasks:
        return FlatTasks(self.t, rows)


class FlatTasks:
    """State and running copies of every task of the given phase rows, concatenated."""

    def __init__(self, table: PhaseTable, rows: IntArray) -> None:
        self.table = table
        self.rows = rows
        ph = [table.phases[r] for r in rows.tolist()]
        sizes = table.n_tasks[rows]
        self.offset: IntArray = np.zeros(rows.size + 1, np.int64)
        np.cumsum(sizes, out=self.offset[1:])
        empty8 = np.empty(0, np.int8)
        self.state: npt.NDArray[np.int8] = np.concatenate([x.state for x in ph]) if ph else empty8
        self.copies: IntArray = (np.concatenate([x.copies for x in ph]) if ph else empty8).astype(np.int64)
        self.owner: IntArray = np.repeat(np.arange(rows.size, dtype=np.int64), sizes)  # index into rows

    def pending(self) -> BoolArray:
        result: BoolArray = self.state == TaskState.PENDING
        return result

    def clone_candidates(self, have: int, allowed: IntArray) -> BoolArray:
        """Tasks running with exactly `have` copies whose phase may have more than `have` copies."""
        result: BoolArray = (
            (self.copies == have) & (self.state != TaskState.FINISHED) & (allowed[self.owner] > have)
        )
        return result

    def started(self, flat: IntArray) -> None:
        np.add.at(self.copies, flat, 1)
        self.state[flat] = np.where(
            self.state[flat] == TaskState.PENDING, TaskState.RUNNING, self.state[flat]
        )


def pass_input(
    flat: FlatTasks, mask: BoolArray, row_class: IntArray, row_rank: IntArray, row_shape: IntArray
) -> tuple[IntArray, IntArray, IntArray, FloatArray, IntArray, IntArray, IntArray]:
    """Kernel input for the tasks in `mask`: entries (one per phase row), grouped by class, shape and rank.

    `row_class`, `row_rank`, `row_shape` are indexed like `flat.rows`. Returns (class_ptr, shape_ptr,
    task_ptr, shape_demand, tasks, entry_rows, entry_counts); entry_rows index `flat.rows`.
    """
    pos = np.flatnonzero(mask)
    owner = flat.owner[pos]
    counts = np.bincount(owner, minlength=flat.rows.size)
    entry_rows = np.flatnonzero(counts)
    if entry_rows.size == 0:
        z = np.zeros(1, np.int64)
        return (
            z,
            z,
            z,
            np.zeros((0, flat.table.shapes.shape[1])),
            np.empty(0, np.int64),
            entry_rows,
            entry_rows,
        )
    shape_id = row_shape[entry_rows]
    cls = row_class[entry_rows]
    order = np.lexsort((entry_rows, row_rank[entry_rows], shape_id, cls))
    entry_rows = entry_rows[order]
    cls, shape_id = cls[order], shape_id[order]
    entry_counts = counts[entry_rows]
    task_ptr = np.zeros(entry_rows.size + 1, np.int64)
    np.cumsum(entry_counts, out=task_ptr[1:])
    # `pos` is grouped by owner row (ascending); gather each entry's segment in entry order
    seg_start = np.zeros(flat.rows.size + 1, np.int64)
    np.cumsum(counts, out=seg_start[1:])
    gather = np.repeat(seg_start[entry_rows] - task_ptr[:-1], entry_counts) + np.arange(task_ptr[-1])
    tasks = pos[gather]
    new_shape = np.ones(entry_rows.size, bool)
    new_shape[1:] = (cls[1:] != cls[:-1]) | (shape_id[1:] != shape_id[:-1])
    shape_start = np.flatnonzero(new_shape)
    shape_ptr = np.append(shape_start, entry_rows.size).astype(np.int64)
    shape_cls = cls[shape_start]
    new_class = np.ones(shape_start.size, bool)
    new_class[1:] = shape_cls[1:] != shape_cls[:-1]
    class_ptr = np.append(np.flatnonzero(new_class), shape_start.size).astype(np.int64)
    shape_demand = np.ascontiguousarray(flat.table.shapes[shape_id[shape_start]])
    return class_ptr, shape_ptr, task_ptr, shape_demand, tasks, entry_rows, entry_counts

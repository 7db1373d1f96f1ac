"""Array-native view of the active jobs for one decision round: one row per phase, flat task arrays.

`PhaseTable` holds what does not change while the job set stays the same (built once and reused while
the list of job objects is unchanged); `RoundView` adds what changes every round (finished and pending
counts, readiness, the flat state/copies of every task of a ready phase) and builds the kernel's input.
Eq. 14-17 of DollyMP are computed here for all jobs at once (scalar twins in policies/model.py, which the
tests compare against).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import chain, compress

import numpy as np
import numpy.typing as npt

from pyscheduler.objects import Job, Phase, TaskState
from pyscheduler.objects.resources import FloatArray
from pyscheduler.policies import jit
from pyscheduler.policies.base import BoolArray, IntArray, Snapshot
from pyscheduler.policies.table_kernel import extend_columns

_PENDING, _RUNNING, _FINISHED = int(TaskState.PENDING), int(TaskState.RUNNING), int(TaskState.FINISHED)


class PhaseTable:
    """Static per-phase columns of a list of jobs; rows grouped by job, in each job's topological order.

    A job's phases, their demands, task counts and DAG edges are fixed when the Job is built, so they are
    read once per job list; task states, finished counts and statistics are read every round (RoundView).
    `PhaseTable.following(prev, jobs)` builds the same table from the previous round's when the new list
    is the old one with some jobs gone and new ones appended (what drivers send round after round).
    """

    key: tuple[int, ...]
    jobs: Sequence[Job]
    phases: list[Phase]
    row_job: IntArray
    job_ids: list[str]  # per row
    phase_ids: list[str]  # per row
    row_k: IntArray
    n_tasks: IntArray
    dims: int
    demand: FloatArray
    shapes: FloatArray  # distinct demand vectors ("shapes"), sorted as np.unique sorts them
    row_shape: IntArray
    job_ptr: IntArray
    arrival: FloatArray
    depth: IntArray  # longest chain of parents above each row
    edge_child: IntArray  # DAG edges as row numbers, in row order
    edge_parent: IntArray
    has_parent: BoolArray
    levels: list[IntArray]
    _row_of: IntArray | None  # row_index(), built on first use

    def __init__(self, jobs: Sequence[Job], derive: bool = True) -> None:
        """The table of `jobs`; derive=False leaves out key, has_parent and levels (`_derive`): the columns
        of jobs that `_extend` appends to another table, which derives them for the whole (speed)."""
        rows = [(pos, k) for pos, j in enumerate(jobs) for k in j.topo]
        phases = [jobs[pos].phases[k] for pos, k in rows]
        p = len(rows)
        self.dims = jobs[0].phases[0].demand.dims if jobs else 0
        demand = np.array([ph.demand.values for ph in phases], dtype=np.float64).reshape(p, max(self.dims, 1))
        row_of: dict[tuple[int, int], int] = {r: i for i, r in enumerate(rows)}
        child, parent = [], []
        depth = np.zeros(p, np.int64)
        for i, (pos, k) in enumerate(rows):
            for q in jobs[pos].parent_idx[k]:
                child.append(i)
                parent.append(row_of[(pos, q)])
                depth[i] = max(depth[i], depth[row_of[(pos, q)]] + 1)
        # distinct demand vectors ("shapes") and each row's shape, computed once per job set
        shapes, inv = _unique_rows(demand)
        job_ptr = np.zeros(len(jobs) + 1, np.int64)
        np.cumsum([len(j.phases) for j in jobs], out=job_ptr[1:])
        self.jobs, self.phases = jobs, phases
        self.job_ids = [jobs[pos].job_id for pos, _ in rows]
        self.phase_ids = [ph.phase_id for ph in phases]
        self.row_job = np.fromiter((r[0] for r in rows), np.int64, p)
        self.row_k = np.fromiter((r[1] for r in rows), np.int64, p)
        self.n_tasks = np.fromiter((ph.num_tasks for ph in phases), np.int64, p)
        self.demand, self.shapes, self.row_shape = demand, shapes, inv.reshape(-1).astype(np.int64)
        self.job_ptr = job_ptr
        self.arrival = np.fromiter((j.arrival for j in jobs), np.float64, len(jobs))
        self.depth = depth
        self.edge_child, self.edge_parent = np.asarray(child, np.int64), np.asarray(parent, np.int64)
        if derive:
            self._derive()

    def _derive(self) -> None:
        """key, has_parent and levels from the other columns."""
        self.key = tuple(map(id, self.jobs))
        self._row_of = None
        self.has_parent = np.zeros(len(self.phases), bool)
        self.has_parent[self.edge_child] = True
        child_depth = self.depth[self.edge_child]
        # edges grouped by the depth of their child: processing them level by level gives longest paths
        top = int(self.depth.max(initial=0))
        self.levels = [np.flatnonzero(child_depth == d) for d in range(1, top + 1)]

    def row_index(self) -> IntArray:
        """Table row of (job position, phase index) at [job_ptr[pos] + k] (built once per table)."""
        if self._row_of is None:
            inv = np.empty(len(self.phases), np.int64)
            inv[self.job_ptr[self.row_job] + self.row_k] = np.arange(len(self.phases))
            self._row_of = inv
        return self._row_of

    @classmethod
    def following(cls, prev: PhaseTable | None, jobs: Sequence[Job]) -> PhaseTable:
        """The table of `jobs`, equal column by column to PhaseTable(jobs), reusing `prev` when `jobs` is
        prev.jobs with some jobs removed (order kept) and new jobs appended; else built afresh."""
        if prev is None or not prev.jobs or not jobs:
            return cls(jobs)
        old_pos = {id(j): i for i, j in enumerate(prev.jobs)}
        kept: list[int] = []
        for j in jobs:
            pos = old_pos.get(id(j))
            if pos is None:
                break
            if kept and pos <= kept[-1]:
                return cls(jobs)
            kept.append(pos)
        added = jobs[len(kept) :]
        if any(id(j) in old_pos for j in added) or (added and added[0].phases[0].demand.dims != prev.dims):
            return cls(jobs)
        if not added:
            if len(kept) == len(prev.jobs):
                return prev
            return cls._extend(prev, jobs, np.asarray(kept, np.int64), None)
        return cls._extend(prev, jobs, np.asarray(kept, np.int64), cls(added, derive=False))

    @classmethod
    def _extend(
        cls, prev: PhaseTable, jobs: Sequence[Job], kept: IntArray, part: PhaseTable | None
    ) -> PhaseTable:
        """prev's rows of the `kept` jobs (positions in prev.jobs, increasing), then `part`'s rows."""
        add = part if part is not None else _no_rows(prev.demand.shape[1])
        # the index arithmetic in one compiled pass (policies/table_kernel.py states its numpy twin)
        t = cls.__new__(cls)
        (
            keep_row,
            t.row_job,
            t.row_k,
            t.n_tasks,
            t.demand,
            t.depth,
            t.job_ptr,
            t.arrival,
            t.edge_child,
            t.edge_parent,
            used,
            kept_shape,
        ) = extend_columns(
            prev.row_job,
            prev.row_k,
            prev.n_tasks,
            prev.demand,
            prev.depth,
            prev.job_ptr,
            prev.arrival,
            prev.edge_child,
            prev.edge_parent,
            prev.row_shape,
            len(prev.shapes),
            kept,
            add.row_job,
            add.row_k,
            add.n_tasks,
            add.demand,
            add.depth,
            add.job_ptr,
            add.arrival,
            add.edge_child,
            add.edge_parent,
        )
        flags = keep_row.tolist()
        t.jobs, t.dims = jobs, prev.dims
        t.phases = list(compress(prev.phases, flags)) + add.phases
        t.job_ids = list(compress(prev.job_ids, flags)) + add.job_ids
        t.phase_ids = list(compress(prev.phase_ids, flags)) + add.phase_ids
        # np.unique over every row's demand gives the sorted distinct rows; those of the kept rows are the
        # shapes prev's kept rows use, so re-number them and merge in part's shapes
        if part is None:
            shapes = prev.shapes[used]
            old_map = np.cumsum(used) - 1
            t.shapes, t.row_shape = shapes, old_map[kept_shape]
        else:
            n_used = int(used.sum())
            shapes, inv = _unique_rows(np.concatenate([prev.shapes[used], part.shapes]))
            old_map = np.full(len(prev.shapes), -1, np.int64)
            old_map[used] = inv[:n_used]
            t.shapes = shapes
            t.row_shape = np.concatenate([old_map[kept_shape], inv[n_used:][part.row_shape]])
        t.row_shape = t.row_shape.astype(np.int64)
        t._derive()
        return t


def _no_rows(dims: int) -> PhaseTable:
    """The columns of no jobs (what `_extend` appends when no job arrived)."""
    t = PhaseTable.__new__(PhaseTable)
    t.phases, t.job_ids, t.phase_ids = [], [], []
    t.row_job = t.row_k = t.n_tasks = t.depth = t.edge_child = t.edge_parent = np.zeros(0, np.int64)
    t.demand, t.arrival, t.job_ptr = np.zeros((0, dims)), np.zeros(0), np.zeros(1, np.int64)
    return t


def _unique_rows(a: FloatArray) -> tuple[FloatArray, IntArray]:
    """np.unique(a, axis=0, return_inverse=True) for finite rows: the distinct rows in lexicographic
    order and each row's index among them (Python tuples sort the same way; much faster for few rows)."""
    if not a.shape[0]:
        return a, np.zeros(0, np.int64)
    rows = list(map(tuple, a.tolist()))
    distinct = sorted(set(rows))
    index = {r: i for i, r in enumerate(distinct)}
    shapes = np.array(distinct, dtype=np.float64).reshape(len(distinct), a.shape[1])
    return shapes, np.fromiter(map(index.__getitem__, rows), np.int64, len(rows))


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
            self.theta, self.sigma = _estimates(table, theta_sigma)
        self.finished: BoolArray = self.n_finished >= table.n_tasks
        # unfinished parents per row: np.add.at's count as a bincount of the edges to them (speed)
        blocked = np.bincount(table.edge_child[~self.finished[table.edge_parent]], minlength=p)
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
            kids = np.zeros(longest.size, bool)  # np.unique(ch) as a mask (the same rows; speed)
            kids[ch] = True
            longest[kids] += best[kids]
        times: FloatArray = np.maximum.reduceat(longest, t.job_ptr[:-1]) if n_jobs else np.zeros(0)
        dmax = float(share[unfinished].max(initial=0.0))
        self.share = share
        return volume, times, dmax

    def flat_tasks(self, rows: IntArray) -> FlatTasks:
        return FlatTasks(self.t, rows)


def _estimates(
    table: PhaseTable, theta_sigma: Callable[[Job, Phase], tuple[float, float]]
) -> tuple[FloatArray, FloatArray]:
    """(theta, sigma) of every row. For Snapshot.theta_sigma the estimator is asked directly and its
    answers checked all at once; any bad value goes back through theta_sigma, which raises naming it."""
    jobs, ph = table.jobs, table.phases
    p = len(ph)
    owner = getattr(theta_sigma, "__self__", None)
    estimator = owner.estimator if isinstance(owner, Snapshot) else None
    if estimator is None:
        pairs = [theta_sigma(jobs[j], x) for j, x in zip(table.row_job.tolist(), ph, strict=True)]
    else:
        pairs = [estimator.estimate(jobs[j], x) for j, x in zip(table.row_job.tolist(), ph, strict=True)]
    both = np.fromiter(chain.from_iterable(pairs), np.float64, 2 * p).reshape(p, 2)
    if estimator is not None and not (np.isfinite(both).all() and (both >= 0).all()):
        # the checked path: raises SnapshotError naming the first bad estimate
        pairs = [theta_sigma(jobs[j], x) for j, x in zip(table.row_job.tolist(), ph, strict=True)]
        both = np.fromiter(chain.from_iterable(pairs), np.float64, 2 * p).reshape(p, 2)
    return both[:, 0].copy(), both[:, 1].copy()


class FlatTasks:
    """State and running copies of every task of the given phase rows, concatenated."""

    def __init__(self, table: PhaseTable, rows: IntArray) -> None:
        self.table = table
        self.rows = rows
        ph = [table.phases[r] for r in rows.tolist()]
        sizes = table.n_tasks[rows]
        self.offset: IntArray = np.zeros(rows.size + 1, np.int64)
        np.add.accumulate(sizes, out=self.offset[1:])  # np.cumsum without its wrapper (speed)
        empty8 = np.empty(0, np.int8)
        self.state: npt.NDArray[np.int8] = np.concatenate([x.state for x in ph]) if ph else empty8
        self.copies: IntArray = (np.concatenate([x.copies for x in ph]) if ph else empty8).astype(np.int64)
        self.owner: IntArray = np.arange(rows.size, dtype=np.int64).repeat(sizes)  # index into rows

    def running_rows(self) -> IntArray:
        """Indices into `rows` of the phases with a copy running: np.unique(owner[copies > 0]) in one
        linear pass (every row has at least one task, so no segment is empty)."""
        if not self.rows.size:
            return np.zeros(0, np.int64)
        return np.flatnonzero(np.logical_or.reduceat(self.copies > 0, self.offset[:-1])).astype(np.int64)

    def pending(self) -> BoolArray:
        result: BoolArray = self.state == TaskState.PENDING
        return result

    def clone_candidates(self, have: int, allowed: IntArray) -> BoolArray:
        """Tasks running with exactly `have` copies whose phase may have more than `have` copies."""
        if allowed.dtype == np.int64 and isinstance(have, int):  # one compiled pass (policies/jit.py)
            return jit.clone_candidates(self.copies, self.state, allowed, self.owner, have, _FINISHED)
        result: BoolArray = (
            (self.copies == have) & (self.state != TaskState.FINISHED) & (allowed[self.owner] > have)
        )
        return result

    def started(self, flat: IntArray) -> None:
        """One more copy of each task in `flat` (repeats count); pending ones become running."""
        jit.started(self.copies, self.state, flat, _PENDING, _RUNNING)


def pass_input(
    flat: FlatTasks, mask: BoolArray, row_class: IntArray, row_rank: IntArray, row_shape: IntArray
) -> tuple[IntArray, IntArray, IntArray, FloatArray, IntArray, IntArray, IntArray]:
    """Kernel input for the tasks in `mask`: entries (one per phase row), grouped by class, shape and rank.

    `row_class`, `row_rank`, `row_shape` are indexed like `flat.rows`. Returns (class_ptr, shape_ptr,
    task_ptr, shape_demand, tasks, entry_rows, entry_counts); entry_rows index `flat.rows`.
    """
    pos = mask.nonzero()[0]  # np.flatnonzero of a 1-d mask, without its wrappers (speed)
    owner = flat.owner[pos]
    counts = np.bincount(owner, minlength=flat.rows.size)
    entry_rows = counts.nonzero()[0]
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
    np.add.accumulate(entry_counts, out=task_ptr[1:])
    # `pos` is grouped by owner row (ascending); gather each entry's segment in entry order
    seg_start = np.zeros(flat.rows.size + 1, np.int64)
    np.add.accumulate(counts, out=seg_start[1:])
    gather = (seg_start[entry_rows] - task_ptr[:-1]).repeat(entry_counts) + np.arange(task_ptr[-1])
    tasks = pos[gather]
    new_shape = np.ones(entry_rows.size, bool)
    new_shape[1:] = (cls[1:] != cls[:-1]) | (shape_id[1:] != shape_id[:-1])
    shape_start = new_shape.nonzero()[0]
    shape_ptr = np.append(shape_start, entry_rows.size).astype(np.int64)
    shape_cls = cls[shape_start]
    new_class = np.ones(shape_start.size, bool)
    new_class[1:] = shape_cls[1:] != shape_cls[:-1]
    class_ptr = np.append(new_class.nonzero()[0], shape_start.size).astype(np.int64)
    shape_demand = np.ascontiguousarray(flat.table.shapes[shape_id[shape_start]])
    return class_ptr, shape_ptr, task_ptr, shape_demand, tasks, entry_rows, entry_counts

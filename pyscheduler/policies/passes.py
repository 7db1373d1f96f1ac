"""Algorithm 2's passes for DollyMP (paper 000, Sec. 5; the compiled per-server loop is policies/kernel.py):
one pass over a set of flat tasks, the deferrals it leaves, and the round's nodes and feasible shapes."""

from __future__ import annotations

import numpy as np

from pyscheduler.policies import jit
from pyscheduler.policies.base import Decisions, Deferral, IntArray
from pyscheduler.policies.common import REASON_CLONE, REASON_INFEASIBLE, REASON_WAITING
from pyscheduler.policies.kernel import place_pass
from pyscheduler.policies.late import late_first_by_time_left
from pyscheduler.policies.table import FlatTasks, PhaseTable


def record_late(out: Decisions, flat: FlatTasks, late: np.ndarray) -> None:
    """Decisions.late: the flat tasks of `late` as (job id, phase id, task index)."""
    t = flat.table
    for i in np.flatnonzero(late).tolist():
        owner = int(flat.owner[i])
        row = int(flat.rows[owner])
        out.late.append((t.job_ids[row], t.phase_ids[row], i - int(flat.offset[owner])))


def place_pass_of(
    out: Decisions,
    flat: FlatTasks,
    mask: np.ndarray,
    cls: IntArray,
    rnk: IntArray,
    shape: IntArray,
    free: np.ndarray,
    nodes: IntArray,
    is_clone: bool,
    reason: str,
    originals: np.ndarray | None = None,
    by_left: tuple[np.ndarray, np.ndarray] | None = None,
) -> tuple[IntArray, IntArray, IntArray, np.ndarray]:
    """One kernel pass over the tasks in `mask`. Returns (entry rows, tasks per entry, placed per
    entry, entries that got a clone). With `originals` (the pending tasks) the counts are of originals
    only and the tasks of `mask` that already run get a clone (recorded with REASON_CLONE). With
    `by_left` (late, time left per flat task) an entry's late tasks are tried longest time left first."""
    # table.pass_input's answer, compiled (policies/jit.py)
    class_ptr, shape_ptr, task_ptr, shape_demand, tasks, entry_rows, entry_counts = jit.pass_input_compiled(
        mask, flat.owner, flat.rows.size, cls, rnk, shape, flat.table.shapes
    )
    if by_left is not None:
        late_first_by_time_left(tasks, task_ptr, *by_left)
    got_task, got_node, got_entry = place_pass(
        free, nodes, class_ptr, shape_ptr, shape_demand, task_ptr, tasks
    )
    clone = flat.copies[got_task] > 0 if originals is not None else np.full(got_task.size, is_clone)
    owner = flat.owner[got_task]
    table_rows = flat.rows[owner]
    t = flat.table
    for sel, why in ((~clone, reason), (clone, REASON_CLONE)):
        if sel.any():
            out.add_placements(
                t.row_job[table_rows[sel]],
                t.row_k[table_rows[sel]],
                got_task[sel] - flat.offset[owner[sel]],
                got_node[sel],
                clone[sel],
                why,
            )
    flat.started(got_task)
    placed = np.bincount(got_entry[~clone], minlength=entry_rows.size)
    got_clone = np.bincount(got_entry[clone], minlength=entry_rows.size) > 0
    if originals is not None:
        entry_counts = np.bincount(flat.owner[mask & originals], minlength=flat.rows.size)[entry_rows]
    return entry_rows, entry_counts, placed, got_clone


def defer(
    out: Decisions,
    table: PhaseTable,
    flat: FlatTasks,
    entry_rows: IntArray,
    entry_counts: IntArray,
    placed: IntArray,
    feasible: np.ndarray,
) -> None:
    jobs = table.jobs
    for e in np.flatnonzero(entry_counts > placed).tolist():
        row = int(flat.rows[entry_rows[e]])
        out.deferrals.append(
            Deferral(
                jobs[table.row_job[row]].job_id,
                table.phases[row].phase_id,
                int(entry_counts[e] - placed[e]),
                REASON_WAITING,
            )
        )
    for r in np.flatnonzero(~feasible).tolist():
        row = int(flat.rows[r])
        ph = table.phases[row]
        if ph.num_pending:
            out.deferrals.append(
                Deferral(
                    jobs[table.row_job[row]].job_id,
                    ph.phase_id,
                    ph.num_pending,
                    REASON_INFEASIBLE,
                    f"demand {list(ph.demand.values)} exceeds every node's capacity",
                )
            )


def nodes_with_room(free: np.ndarray, active: np.ndarray) -> IntArray:
    """Active nodes with some free resource: np.flatnonzero(active & (free > 1e-9).any(axis=1)), one
    column at a time (numpy's reduction along a short inner axis is several times slower; speed)."""
    room = active.copy()
    if free.shape[1]:
        some = free[:, 0] > 1e-9
        for d in range(1, free.shape[1]):
            some |= free[:, d] > 1e-9
        room &= some
    else:
        room[:] = False
    return room.nonzero()[0].astype(np.int64)


def feasible(shapes: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Per shape: some node's capacity (distinct capacity vectors given) holds it in every dimension."""
    fits = np.all(capacity[None, :, :] + 1e-9 >= shapes[:, None, :], axis=2)
    result: np.ndarray = np.any(fits, axis=1)
    return result

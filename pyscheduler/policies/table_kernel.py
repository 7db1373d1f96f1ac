"""`PhaseTable._extend`'s index arithmetic in one compiled pass (speed: the simulator's job set changes
almost every round, and the numpy version paid some thirty calls' overhead on arrays of a few hundred rows).

`extend_columns` equals this numpy composition (`prev`: the previous table's columns, `kept`: positions of
the jobs kept, increasing; `part`: the columns of the jobs appended, empty when none):

    keep_row = isin(prev.row_job, kept); new_row = cumsum(keep_row) - 1; new_pos[kept] = arange(kept.size)
    row_job = concat(new_pos[prev.row_job[keep_row]], part.row_job + kept.size)
    row_k, n_tasks, demand, depth = concat(prev.<column>[keep_row], part.<column>)
    job_ptr = [0, cumsum(concat(diff(prev.job_ptr)[kept], diff(part.job_ptr)))...]
    arrival = concat(prev.arrival[kept], part.arrival)
    kept edges (child kept): edge_child/edge_parent = concat(new_row[prev.edge_*[kept edges]],
                                                              part.edge_* + keep_row.sum())
    used[prev.row_shape[keep_row]] = True; kept_shape = prev.row_shape[keep_row]

(tests/sim/test_speed_equivalence.py checks the table it builds against PhaseTable built from scratch).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def extend_columns(
    row_job: IntArray,
    row_k: IntArray,
    n_tasks: IntArray,
    demand: FloatArray,
    depth: IntArray,
    job_ptr: IntArray,
    arrival: FloatArray,
    edge_child: IntArray,
    edge_parent: IntArray,
    row_shape: IntArray,
    n_shapes: int,
    kept: IntArray,
    p_row_job: IntArray,
    p_row_k: IntArray,
    p_n_tasks: IntArray,
    p_demand: FloatArray,
    p_depth: IntArray,
    p_job_ptr: IntArray,
    p_arrival: FloatArray,
    p_edge_child: IntArray,
    p_edge_parent: IntArray,
) -> tuple[
    BoolArray,
    IntArray,
    IntArray,
    IntArray,
    FloatArray,
    IntArray,
    IntArray,
    FloatArray,
    IntArray,
    IntArray,
    BoolArray,
    IntArray,
]:
    """(keep_row, row_job, row_k, n_tasks, demand, depth, job_ptr, arrival, edge_child, edge_parent,
    used shapes, kept rows' old shape) of the extended table (module docstring)."""
    nk = kept.shape[0]
    new_pos = np.full(job_ptr.shape[0] - 1, -1, np.int64)
    for i in range(nk):
        new_pos[kept[i]] = i
    rows = row_job.shape[0]
    keep_row = np.zeros(rows, np.bool_)
    new_row = np.empty(rows, np.int64)
    m = 0
    for r in range(rows):
        if new_pos[row_job[r]] >= 0:
            keep_row[r] = True
            m += 1
        new_row[r] = m - 1
    q, dims = p_row_job.shape[0], demand.shape[1]
    o_job = np.empty(m + q, np.int64)
    o_k = np.empty(m + q, np.int64)
    o_tasks = np.empty(m + q, np.int64)
    o_depth = np.empty(m + q, np.int64)
    o_demand = np.empty((m + q, dims), np.float64)
    kept_shape = np.empty(m, np.int64)
    used = np.zeros(n_shapes, np.bool_)
    j = 0
    for r in range(rows):
        if keep_row[r]:
            o_job[j], o_k[j], o_tasks[j], o_depth[j] = new_pos[row_job[r]], row_k[r], n_tasks[r], depth[r]
            for d in range(dims):
                o_demand[j, d] = demand[r, d]
            kept_shape[j] = row_shape[r]
            used[row_shape[r]] = True
            j += 1
    for i in range(q):
        o_job[m + i], o_k[m + i], o_tasks[m + i] = p_row_job[i] + nk, p_row_k[i], p_n_tasks[i]
        o_depth[m + i] = p_depth[i]
        for d in range(dims):
            o_demand[m + i, d] = p_demand[i, d]
    n_part = p_job_ptr.shape[0] - 1
    o_ptr = np.zeros(nk + n_part + 1, np.int64)
    o_arrival = np.empty(nk + n_part, np.float64)
    acc = 0
    for i in range(nk):
        a = kept[i]
        acc += job_ptr[a + 1] - job_ptr[a]
        o_ptr[i + 1] = acc
        o_arrival[i] = arrival[a]
    for i in range(n_part):
        acc += p_job_ptr[i + 1] - p_job_ptr[i]
        o_ptr[nk + i + 1] = acc
        o_arrival[nk + i] = p_arrival[i]
    ne = 0
    for e in range(edge_child.shape[0]):
        if keep_row[edge_child[e]]:
            ne += 1
    pe = p_edge_child.shape[0]
    o_child = np.empty(ne + pe, np.int64)
    o_parent = np.empty(ne + pe, np.int64)
    j = 0
    for e in range(edge_child.shape[0]):
        c = edge_child[e]
        if keep_row[c]:
            o_child[j], o_parent[j] = new_row[c], new_row[edge_parent[e]]
            j += 1
    for e in range(pe):
        o_child[ne + e], o_parent[ne + e] = p_edge_child[e] + m, p_edge_parent[e] + m
    return (
        keep_row,
        o_job,
        o_k,
        o_tasks,
        o_demand,
        o_depth,
        o_ptr,
        o_arrival,
        o_child,
        o_parent,
        used,
        kept_shape,
    )

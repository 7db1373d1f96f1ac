"""The placement kernel of Algorithm 2 (DollyMP, paper 000), compiled with numba.

One call is one pass of Algorithm 2 over the servers: for each server with free resources (in node order),
for each priority class in increasing order, repeatedly take the entry whose demand has the largest inner
product with the server's free vector among the entries that fit (Algorithm 2 lines 11-15), one task at a
time, re-scoring after every task; then the next class. Pass 1 places originals; passes 2 and 3 are further
calls with clone entries on the free resources left.

Entries are (job, phase) pairs with a list of candidate tasks (CSR into `tasks`); within a class they are
sorted by shape (identical demand vectors), then by rank, so the kernel scores shapes, not entries: the
first entry of a shape with tasks left is the one served (ties in fit go to the higher-priority job).
Only free >= demand in every dimension counts as fitting (line 13 writes a strict '<'; with integral YARN
resources a task that exactly fills a server must fit, so we use '<=').
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

_EPS = 1e-9


@njit(cache=True, nogil=True)  # type: ignore[untyped-decorator,misc,unused-ignore]
def _place_pass(
    free: FloatArray,
    nodes: IntArray,
    class_ptr: IntArray,
    shape_ptr: IntArray,
    shape_demand: FloatArray,
    task_ptr: IntArray,
    tasks: IntArray,
    out_task: IntArray,
    out_node: IntArray,
    out_entry: IntArray,
) -> int:
    n_classes = class_ptr.shape[0] - 1
    n_shapes = shape_ptr.shape[0] - 1
    dims = free.shape[1]
    # current entry of every shape and tasks placed per entry
    cur = np.empty(n_shapes, np.int64)
    for s in range(n_shapes):
        cur[s] = shape_ptr[s]
    placed = np.zeros(task_ptr.shape[0] - 1, np.int64)
    shape_left = np.zeros(n_shapes, np.int64)
    class_left = np.zeros(n_classes, np.int64)
    class_min = np.full((n_classes, dims), np.inf)
    all_min = np.full(dims, np.inf)  # a server below this in some dimension can take nothing
    total = 0
    for c in range(n_classes):
        for s in range(class_ptr[c], class_ptr[c + 1]):
            for e in range(shape_ptr[s], shape_ptr[s + 1]):
                shape_left[s] += task_ptr[e + 1] - task_ptr[e]
            class_left[c] += shape_left[s]
            for d in range(dims):
                if shape_demand[s, d] < class_min[c, d]:
                    class_min[c, d] = shape_demand[s, d]
                if shape_demand[s, d] < all_min[d]:
                    all_min[d] = shape_demand[s, d]
        total += class_left[c]
    # classes with tasks left, as a linked list in priority order (exhausted classes are unlinked)
    nxt = np.empty(n_classes + 1, np.int64)  # nxt[n_classes] is the head
    for c in range(n_classes):
        nxt[c] = c + 1
    nxt[n_classes] = 0
    n_out = 0
    for i in nodes:
        if total == 0:
            break
        skip = False
        for d in range(dims):
            if free[i, d] + _EPS < all_min[d]:
                skip = True
                break
        if skip:
            continue
        prev = n_classes
        c = nxt[n_classes]
        while c < n_classes:
            if class_left[c] == 0:
                nxt[prev] = nxt[c]  # unlink
                c = nxt[c]
                continue
            ok = True
            for d in range(dims):
                if free[i, d] + _EPS < class_min[c, d]:
                    ok = False
                    break
            if not ok:
                prev = c
                c = nxt[c]
                continue
            while class_left[c] > 0:
                best = -1
                best_score = -np.inf
                for s in range(class_ptr[c], class_ptr[c + 1]):
                    if shape_left[s] == 0:
                        continue
                    score = 0.0
                    fits = True
                    for d in range(dims):
                        if free[i, d] + _EPS < shape_demand[s, d]:
                            fits = False
                            break
                        score += free[i, d] * shape_demand[s, d]
                    if fits and score > best_score:
                        best_score = score
                        best = s
                if best < 0:
                    break
                e = cur[best]
                while task_ptr[e] + placed[e] >= task_ptr[e + 1]:
                    e += 1
                cur[best] = e
                out_task[n_out] = tasks[task_ptr[e] + placed[e]]
                out_node[n_out] = i
                out_entry[n_out] = e
                n_out += 1
                placed[e] += 1
                shape_left[best] -= 1
                class_left[c] -= 1
                total -= 1
                for d in range(dims):
                    free[i, d] -= shape_demand[best, d]
            prev = c
            c = nxt[c]
    return n_out


def place_pass(
    free: FloatArray,
    nodes: IntArray,
    class_ptr: IntArray,
    shape_ptr: IntArray,
    shape_demand: FloatArray,
    task_ptr: IntArray,
    tasks: IntArray,
) -> tuple[IntArray, IntArray, IntArray]:
    """Run one pass over `nodes` (rows, in order); mutates `free`. Returns (task ids, node rows, entry ids).

    Class c owns shapes class_ptr[c]:class_ptr[c+1]; shape s (demand shape_demand[s]) owns entries
    shape_ptr[s]:shape_ptr[s+1]; entry e owns the candidate tasks tasks[task_ptr[e]:task_ptr[e+1]] (in order).
    """
    n = int(tasks.shape[0])
    out_task = np.empty(n, np.int64)
    out_node = np.empty(n, np.int64)
    out_entry = np.empty(n, np.int64)
    if n == 0 or nodes.shape[0] == 0:
        return out_task[:0], out_node[:0], out_entry[:0]
    k = _place_pass(
        free, nodes, class_ptr, shape_ptr, shape_demand, task_ptr, tasks, out_task, out_node, out_entry
    )
    return out_task[:k], out_node[:k], out_entry[:k]


_warm = False


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernel now, so the first decision round does not pay it."""
    global _warm
    if _warm:
        return
    free = np.ones((1, 1))
    one = np.zeros(1, np.int64)
    ptr = np.array([0, 1], np.int64)
    place_pass(free, one, ptr, ptr, np.ones((1, 1)), ptr, one)
    _warm = True

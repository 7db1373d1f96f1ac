"""Tetris (Grandl et al., SIGCOMM'14, Sec. 3): each machine with free resources is offered in turn (a node
heartbeat), and takes, again and again while anything fits, the pending task with the best score for it;
every task-machine pair is scored (DollyMP Sec. 6.1: "a weighted score for each of the mapping pairs between
the available server and unscheduled tasks. Then, Tetris assigns a task with the highest score to the
available servers").

* Packing: the alignment a of a task and a machine is the dot product of the task's demand and the
  machine's free resources, both normalised by the machine's capacity; only tasks whose demand fits the
  machine in every dimension are scored.
* Remaining work (SRTF): a job's remaining work W is the sum over its unfinished tasks of duration x
  resource demand; here theta (the estimator's mean) x dominant share, DollyMP Eq. 16 with lambda = 0
  (`remaining_volume`). The term is -W, so jobs with less work left score higher.
* Combined score: a + epsilon (-W), with epsilon = m x a_bar / W_bar so the two terms are comparable: a_bar
  the mean alignment over the round's feasible task-machine pairs, W_bar the mean remaining work of the jobs
  with tasks to place; option m = 1.
* Fairness knob f: at each placement only the ceil((1 - f) J) of the J jobs with a task that fits the
  machine and are furthest from their fair share are considered -- with equal shares, those holding the
  least dominant share of the cluster (DRF, as policies/drf.py; ties all kept). f = 0: every job (packing
  and SRTF only); f -> 1: the job furthest from its share only. Default f = 0.25 (Tetris's evaluation).
No redundancy; no remote-read penalty (the simulator has no data locality). The tasks of one (job, phase)
share demand and job term; tasks of one demand vector (a shape) share their alignment on a machine, so a
shape's best task is its eligible one with the highest job term, and a machine's choice is the best shape.
"""

from __future__ import annotations

import math

import numpy as np

from pyscheduler.objects import Job
from pyscheduler.objects.resources import FloatArray
from pyscheduler.policies.base import Decisions, IntArray, Priority, Snapshot, register_policy
from pyscheduler.policies.baseline_common import order_by, remaining_volume
from pyscheduler.policies.common import defer_unplaced, engine_for, original_entry, ready_pending_phases
from pyscheduler.policies.placement import Entry

REASON_TETRIS = "tetris_score"
_EPS = 1e-9


@register_policy("tetris")
class TetrisPolicy:
    """Options: fairness (the knob f, default 0.25), m (epsilon's multiplier, default 1)."""

    name = "tetris"
    timer_driven = False  # acts on arrivals and ends of copies only

    def __init__(self, fairness: float = 0.25, m: float = 1.0) -> None:
        if not (isinstance(fairness, int | float) and 0 <= fairness <= 1):
            raise ValueError(f"tetris option fairness must be in [0, 1], got {fairness!r}")
        if not (isinstance(m, int | float) and math.isfinite(m) and m >= 0):
            raise ValueError(f"tetris option m must be finite >= 0, got {m!r}")
        self.fairness, self.m = float(fairness), float(m)

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        c = snapshot.cluster
        out = Decisions(snapshot.time, jobs, c.node_ids)
        total = c.total_capacity()
        work = [remaining_volume(j, total, snapshot) for j in jobs]
        for rank, pos in enumerate(order_by(jobs, work)):
            out.priorities.append(Priority(jobs[pos].job_id, 0, rank, "tetris_remaining_work"))
        engine = engine_for(snapshot)
        entries: list[Entry] = [
            original_entry(job, pos, k)
            for pos, job in enumerate(jobs)
            if any(p.num_pending for p in job.phases)
            for k in ready_pending_phases(job)
        ]
        placed: dict[tuple[int, int], int] = {}
        if entries and engine.cand.size:
            nodes = engine.cand
            demand = np.array([e.demand for e in entries], dtype=np.float64)
            owner = np.array([e.job_pos for e in entries], np.int64)
            held = np.array([_dominant_held(j, total) for j in jobs])
            by_arrival = np.lexsort((np.arange(len(jobs)), np.array([j.arrival for j in jobs], np.float64)))
            first_come = np.empty(len(jobs), np.int64)
            first_come[by_arrival] = np.arange(len(jobs))
            picks = pack(
                engine.free[nodes],
                c.capacity[nodes],
                demand,
                np.array([len(e.tasks) for e in entries], np.int64),
                owner,
                np.asarray(work, dtype=np.float64),
                held,
                total,
                first_come,
                self.fairness,
                self.m,
            )
            taken = np.zeros(len(entries), np.int64)
            task = np.empty(len(picks), np.int64)
            for i, e in enumerate(picks[:, 0].tolist()):
                task[i] = entries[e].tasks[taken[e]]
                taken[e] += 1
            if len(picks):
                out.add_placements(
                    owner[picks[:, 0]],
                    np.array([e.phase_k for e in entries], np.int64)[picks[:, 0]],
                    task,
                    nodes[picks[:, 1]],
                    np.zeros(len(picks), bool),
                    REASON_TETRIS,
                )
            placed = {(e.job_pos, e.phase_k): int(n) for e, n in zip(entries, taken.tolist(), strict=True)}
        defer_unplaced(out, jobs, entries, placed, engine)
        return out


def _dominant_held(job: Job, total: FloatArray) -> float:
    """The job's dominant share of the cluster held by its running copies (DRF, policies/drf.py)."""
    use = np.zeros(len(total))
    for p in job.phases:
        use += p.demand.as_array() * float(p.copies.sum())
    return float(np.max(np.where(total > 0, use / np.where(total > 0, total, 1.0), 0.0), initial=0.0))


def pack(
    free: FloatArray,
    capacity: FloatArray,
    demand: FloatArray,
    count: IntArray,
    owner: IntArray,
    work: FloatArray,
    held: FloatArray,
    total: FloatArray,
    rank: IntArray,
    fairness: float,
    m: float = 1.0,
) -> IntArray:
    """Tetris's placement loop (module docstring). `free`, `capacity`: (N x D) of the machines with room, in
    the order they are offered; `demand` (E x D), `count` (E): per entry (the pending tasks of one job phase)
    its demand and how many tasks wait; `owner` (E): the entry's job; per job: `work` (W), `held` (dominant
    share of the cluster `total` it holds), `rank` (arrival order, the tie-break). Returns (placements x 2):
    entry and machine of each placement, in placement order."""
    free = np.array(free, dtype=np.float64, copy=True)
    inv2 = np.where(capacity > 0, 1.0 / np.where(capacity > 0, capacity, 1.0) ** 2, 0.0)
    shapes, shape_of = np.unique(demand, axis=0, return_inverse=True)
    shape_of = shape_of.reshape(-1)
    # epsilon from the round's feasible task-machine pairs (each task of a shape counts once per machine)
    align = shapes @ (free * inv2).T  # (S x N)
    fits = (shapes[:, None, :] <= free[None, :, :] + _EPS).all(axis=2)
    pairs = fits * np.bincount(shape_of, weights=count, minlength=len(shapes))[:, None]
    a_bar = float((pairs * align).sum() / pairs.sum()) if pairs.sum() > 0 else 0.0
    w_bar = float(work[np.unique(owner)].mean()) if owner.size else 0.0
    epsilon = m * a_bar / w_bar if w_bar > 0 else 0.0
    # entries sorted by shape, then best job term (least W), then arrival: a shape's first eligible entry is
    # its best task for any machine (the tasks of a shape share their alignment there)
    term = -epsilon * work[owner]
    order = np.lexsort((np.arange(owner.size), rank[owner], -term, shape_of))
    owner_s, shape_s, term_s = owner[order], shape_of[order], term[order]
    left = count[order].astype(np.int64)
    share_s = (demand[order] / np.where(total > 0, total, np.inf)).max(axis=1, initial=0.0)
    seg_lo, seg_hi = (
        np.searchsorted(shape_s, np.arange(len(shapes))),
        np.searchsorted(shape_s, np.arange(len(shapes)), "right"),
    )
    held = held.astype(np.float64, copy=True)
    picks: list[tuple[int, int]] = []
    smallest = _smallest(shapes, shape_s, left)
    for n in range(free.shape[0]):  # each machine with room, as its heartbeat offers it (Tetris Sec. 3)
        while smallest is not None and (free[n] + _EPS >= smallest).all():  # (a quick skip: speed)
            fit = (shapes <= free[n] + _EPS).all(axis=1)
            ok = (left > 0) & fit[shape_s]  # the tasks that fit this machine
            if not ok.any():
                break
            cand = np.bincount(owner_s[ok], minlength=held.size) > 0
            if fairness > 0:  # the knob: the ceil((1 - f) J) candidate jobs furthest from fair share
                shares = held[cand]
                k = max(1, math.ceil((1.0 - fairness) * shares.size - 1e-9))
                cand &= held <= np.partition(shares, k - 1)[k - 1]
            valid = np.flatnonzero(ok & cand[owner_s])  # not empty: the least-share candidate is in
            first = np.searchsorted(valid, seg_lo)
            at = valid[np.minimum(first, valid.size - 1)]
            has = (first < valid.size) & (at < seg_hi)
            score = np.where(has, shapes @ (free[n] * inv2[n]) + term_s[at], -np.inf)
            i = int(at[int(np.argmax(score))])
            picks.append((int(order[i]), n))
            left[i] -= 1
            held[owner_s[i]] += share_s[i]
            free[n] -= demand[order[i]]
            if not left[i]:
                smallest = _smallest(shapes, shape_s, left)
    return np.array(picks, np.int64).reshape(-1, 2)


def _smallest(shapes: FloatArray, shape_s: IntArray, left: IntArray) -> FloatArray | None:
    """Per dimension, the least demand of the shapes with tasks left (a machine with less holds none)."""
    alive = shapes[np.unique(shape_s[left > 0])]
    return alive.min(axis=0) if alive.size else None

"""DollyMP (paper 000, Sections 4-5): Algorithm 1 priorities, Algorithm 2 placement, clones, delay assignment.

Round: (1) v_j(t), e_j(t) of every job (Eq. 15-17, policies/table.py) and the size classes p_j of
Algorithm 1 (policies/model.py), recomputed when a job arrives as in Section 5 (option
recompute="every_round" recomputes each round); (2) pass 1 of Algorithm 2 (policies/kernel.py): per server,
classes in increasing order, best fit; originals, and (late_first, default) one more copy of each late
task in its job's class (policies/late.py); (3) passes 2..1+max_clones: one more copy of running
tasks per pass, same order, only with what pass 1 left; (4) delay assignment's omega for jobs whose
downstream phase got clones; (5) kills of copies whose task already finished (losers in upstream phases
are left to the AM's delay assignment, which kills whatever is unfinished when omega ends, Dolly 4.4).

Clone rules (option clone_rule; the paper leaves which running tasks get clones, and when, open):
* "residual" (default): once every task of a phase has been scheduled (Section 5), a running task gets one
  more copy when it is late (policies/late.py): by default when LATE's time-left estimate from each copy's
  reported progress reaches progress_factor x a fresh copy's expected time, else (no progress reported, as
  on the live path today) when its expected remaining time under the fitted Pareto of Eq. 2-3 reaches
  residual_factor x a fresh copy's (policies/residual.py); the round asks to be woken (Decisions.wake_at)
  when the next task may become late. Choice (progress_factor 1.0, was 1.5): a copy is late once a fresh
  copy is expected to finish first (residual.py, f = 1); f = 1.5 left tasks slowed ~2.5x uncloned. With
  replace (below) handing back the slowest copies' containers, all resources stay within DollyMP0's + 5%
  (FB-2010 +1.8%, Alibaba -9%, load 0.8, seed 1).
  Choice (late_first): a late task's copy is placed in pass 1 with its job's class, not after every
  original of every job: its time left is work its job still waits for, as a pending task's is (at high
  load on FB-2010, clones waited behind lower classes' originals while the cluster was full).
  Choice (late_copies_per_round, default 1): how many new copies a late task may get in one round, within
  the copy cap; the first goes in pass 1 (late_first), the others in the clone passes, from idle capacity
  only. Under the heavy tail one late clone is itself slow with good odds (Pareto alpha = 1.5: a fresh
  copy's median is 1.59 x its minimum), while the first of two fresh copies is the least of two draws
  (alpha doubles: median 1.26 x), DollyMP Eq. 1's speedup of r copies launched together. The simulator
  and the cluster bench keep 1: the bench measured 2 at 0.869 of CapacityScheduler's flowtime against
  0.844-0.867 with 1 (bench-cluster runs b34, b36, b37), no gain beyond the machine's noise.
  Choice (small_job_clones, default 10): the tasks of a job of at most that many tasks (Dolly's small jobs,
  Dolly Sec. 2.2) get up to max_clones clones at launch, in the clone passes, so only from capacity every
  original of every job left idle: their tasks are too short for a late copy to be judged in time, and
  their clones cost little (FB-2010 slice at load 0.8: 0.92 of the flowtime for +0.4% resources).
  Choice (phase_tail, default on): once a phase of a larger job has no task waiting and at most tail_tasks
  (default: small_job_clones) unfinished tasks, those tasks get up to max_clones clones from idle capacity,
  as a small job's do: the job ends with them, they are few (Dolly's argument for cloning small jobs, Dolly
  Sec. 2.2, applied to what is left of a phase), and a phase of at most that many tasks is cloned when it
  launches (Dolly 3.2 runs Pseudocode 1 per phase). Not capped by upstream copies, as late copies are not:
  the job's delay-assignment omega (Dolly 4.4) is set whenever a downstream phase gets clones (Alibaba
  slice, load 0.8, seed 2: 101.7 -> 96.6 s; capped by Dolly 3.2: 99.4 s).
  Choice (replace, default on): a late task that already runs 1 + max_clones copies, every one of them
  late, has its slowest copy killed and a fresh copy placed in pass 1 (policies/replace.py; paper 003's
  relaunch, Mantri's kill-restart), so the cap of two clones holds and an all-straggling task still
  draws afresh (FB-2010 / Alibaba slices at load 0.8, seed 1: 0.85 / 0.94 of the flowtime without it).
* "paper": "residual" plus Corollary 4.1's clones at launch, granted only when r_j v_j fits the slack of
  Algorithm 1's level-(l-1) knapsack and no original waits for room (policies/model.py).
* "idle": Algorithm 2 read literally, up to max_clones clones of every running task whenever capacity is
  idle; "corollary": Corollary 4.1 alone; "dolly": Dolly's budget (Pseudocode 1).

Choices: every ready phase with waiting tasks is available (for chain DAGs, the common case, that is the
single "first available phase" of Section 5; for parallel branches it lets a later branch use what an
earlier one cannot, so an original never waits behind a clone while it fits). Jobs of one class are
ordered by arrival, then by their position in the snapshot. The "dolly" policy (policies/dolly.py) is
this loop with arrival order and Dolly's budgeted cloning; its clones, like DollyMP's, go in the passes
after the round's originals (Dolly's admission control, not placement order, limits them).
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from pyscheduler.estimate.pareto import quantile_samples
from pyscheduler.estimate.transfer import TransferStats
from pyscheduler.objects import Job, TaskState
from pyscheduler.policies import jit
from pyscheduler.policies.base import (
    CloneGrant,
    Decisions,
    Deferral,
    IntArray,
    OmegaDecision,
    Priority,
    Snapshot,
    register_policy,
)
from pyscheduler.policies.cloning import (
    REASON_COROLLARY,
    REASON_IDLE,
    REASON_NO_ROOM,
    REASON_UPSTREAM,
    REASON_WAITING_ORIGINALS,
    dolly_grant,
)
from pyscheduler.policies.common import (
    REASON_BEST_FIT,
    REASON_CLONE,
    REASON_INFEASIBLE,
    REASON_WAITING,
    kill_losers,
)
from pyscheduler.policies.delay import choose_omega, sample_pairs
from pyscheduler.policies.dolly import DollyBudget
from pyscheduler.policies.kernel import place_pass, warm_up
from pyscheduler.policies.late import LateTasks, late_first_by_time_left
from pyscheduler.policies.model import corollary_grants, transient_priorities
from pyscheduler.policies.replace import Replacements
from pyscheduler.policies.residual import REASON_PROGRESS, REASON_RESIDUAL
from pyscheduler.policies.table import FlatTasks, PhaseTable, RoundView

REASON_SMALL_JOB = "small_job_idle_capacity"
REASON_PHASE_TAIL = "phase_tail_idle_capacity"
# Grants that name a phase but are carried out per task, by the clones the core places this round (late
# copies, the phase tail), not by cloning every task of the phase at its launch. The live AM plan
# (rpc/appmaster.py) must not turn them into clones per phase.
PER_TASK_REASONS = frozenset({REASON_RESIDUAL, REASON_PROGRESS, REASON_PHASE_TAIL})
_RUNNING = int(TaskState.RUNNING)  # enum attribute access is slow in hot loops
_PENDING, _FINISHED = int(TaskState.PENDING), int(TaskState.FINISHED)
CLONE_RULES = ("residual", "paper", "idle", "corollary", "dolly")


def _record_late(out: Decisions, flat: FlatTasks, late: np.ndarray) -> None:
    """Decisions.late: the flat tasks of `late` as (job id, phase id, task index)."""
    t = flat.table
    for i in np.flatnonzero(late).tolist():
        owner = int(flat.owner[i])
        row = int(flat.rows[owner])
        out.late.append((t.job_ids[row], t.phase_ids[row], i - int(flat.offset[owner])))


@register_policy("dollymp")
class DollyMPPolicy:
    """Options: max_clones 0..3 (DollyMP0..3), clone_rule (see the module docstring); late tasks
    (policies/late.py): late_by, progress_factor, progress_after, residual_factor, late_upstream_cap,
    late_first, late_copies_per_round; small_job_clones; phase_tail, tail_tasks; replace
    (policies/replace.py); sigma_factor, recompute ("arrival" | "every_round"), order ("size_class" |
    "arrival"), Dolly's beta/tau/epsilon/straggler_p, delay assignment's output_bytes (per upstream
    task) and transfer statistics."""

    name = "dollymp"
    timer_driven = False  # its one timer (late tasks, policies/residual.py) is Decisions.wake_at

    def __init__(
        self,
        max_clones: int = 2,
        clone_rule: str = "residual",
        sigma_factor: float = 1.0,
        recompute: str = "arrival",
        order: str = "size_class",
        beta: float = 0.05,
        tau: float = 0.95,
        epsilon: float = 0.05,
        straggler_p: float | None = None,
        output_bytes: float = 64e6,
        transfer: TransferStats | None = None,
        omega_samples: int = 32,
        residual_factor: float = 2.0,
        late_by: str = "progress",
        progress_factor: float = 1.0,
        progress_after: float = 10.0,
        late_upstream_cap: bool = False,
        late_first: bool = True,
        late_copies_per_round: int = 1,
        small_job_clones: int = 10,
        tail_tasks: int | None = None,
        replace: bool = True,
        phase_tail: bool = True,
    ) -> None:
        if isinstance(max_clones, bool) or max_clones not in (0, 1, 2, 3):
            raise ValueError(f"dollymp option max_clones must be 0, 1, 2 or 3, got {max_clones!r}")
        _choice("clone_rule", clone_rule, CLONE_RULES)
        _choice("recompute", recompute, ("arrival", "every_round"))
        _choice("order", order, ("size_class", "arrival"))
        self.late = LateTasks(
            max_clones, residual_factor, progress_factor, progress_after, late_by, bool(late_upstream_cap)
        )
        self.late_first = bool(late_first)
        self.late_per_round = _count("late_copies_per_round", late_copies_per_round, 1)
        self.replace = bool(replace)
        self.phase_tail = bool(phase_tail)
        self.small_job_clones = _count("small_job_clones", small_job_clones, 0)
        if tail_tasks is not None:
            _count("tail_tasks", tail_tasks, 0)
        self.tail_tasks = small_job_clones if tail_tasks is None else tail_tasks
        if not (isinstance(sigma_factor, int | float) and math.isfinite(sigma_factor) and sigma_factor >= 0):
            raise ValueError(f"dollymp option sigma_factor must be finite >= 0, got {sigma_factor!r}")
        if not (math.isfinite(output_bytes) and output_bytes >= 0):
            raise ValueError(f"dollymp option output_bytes must be finite >= 0, got {output_bytes!r}")
        if omega_samples < 2:
            raise ValueError(f"dollymp option omega_samples must be >= 2, got {omega_samples!r}")
        DollyBudget(beta, tau, epsilon, straggler_p)  # validates the Dolly options
        self.max_clones, self.clone_rule, self.sigma_factor = max_clones, clone_rule, float(sigma_factor)
        self.recompute, self.order = recompute, order
        self.dolly = (beta, tau, epsilon, straggler_p)
        self.output_bytes = output_bytes
        self.transfer = transfer or TransferStats()
        self.omega_samples = omega_samples
        warm_up()  # compile the Algorithm 2 kernel at construction, not in the first round
        self._lock = threading.Lock()
        self._tables: dict[tuple[int, ...], PhaseTable] = {}  # the last two job sets (service + AM plans)
        self._prio: dict[str, int] = {}
        self._omega_cache: dict[tuple[float, ...], float] = {}
        self._omega_of: dict[tuple[object, ...], float] = {}  # omega_for's exact inputs -> omega
        # the last _feasible answer with the shapes (their bytes) and capacities (the cluster's cached
        # array, replaced when capacities change) it was for: shapes rarely change (speed)
        self._fits: tuple[tuple[tuple[int, ...], bytes], np.ndarray, np.ndarray] | None = None
        self.placement_reason = REASON_BEST_FIT

    def _table_for(self, snapshot: Snapshot) -> PhaseTable:
        key = tuple(map(id, snapshot.jobs))  # the cached table holds the jobs, so ids are not reused
        with self._lock:
            table = self._tables.get(key)
        if table is None:
            snapshot.validate()  # a new job set: check it once (objects validate themselves otherwise)
            with self._lock:
                prev = next(reversed(self._tables.values()), None)
            table = PhaseTable.following(prev, snapshot.jobs)  # reuses the last table's rows (speed)
            with self._lock:
                while len(self._tables) >= 2:
                    self._tables.pop(next(iter(self._tables)))
                self._tables[key] = table
        elif not math.isfinite(snapshot.time):
            snapshot.validate()
        if table.dims and table.dims != len(snapshot.cluster.dims):
            snapshot.validate()  # raises, naming the job whose demand does not match the cluster
        return table

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs, cluster = snapshot.jobs, snapshot.cluster
        table = self._table_for(snapshot)
        out = Decisions(snapshot.time, jobs, cluster.node_ids)
        view = RoundView(table, snapshot.theta_sigma if snapshot.estimator is not None else None)
        total = cluster.total_capacity()
        prio, times, volume = self._priorities(view, total, jobs)
        order = np.lexsort((np.arange(len(jobs)), table.arrival, prio))
        rank = np.empty(len(jobs), np.int64)
        rank[order] = np.arange(len(jobs))
        why = "size_class" if self.order == "size_class" else "arrival_order"
        pl = prio.tolist()
        out.priorities = [Priority(jobs[p].job_id, pl[p], r, why) for r, p in enumerate(order.tolist())]

        rows = np.flatnonzero(view.ready & ~view.finished)
        flat = FlatTasks(table, rows)
        free = np.array(cluster.free, dtype=np.float64)
        free[~cluster.active] = 0.0
        nodes = _nodes_with_room(free, cluster.active)
        row_job = table.row_job[rows]
        cls, rnk, shape = prio[row_job], rank[row_job], table.row_shape[rows]
        feasible = self._feasible_shapes(table.shapes, cluster.distinct_capacities())[shape]

        late_rule = self.max_clones > 0 and self.clone_rule in ("paper", "residual")
        late_reasons: dict[int, tuple[int, str]] = {}
        late = None
        by_left = None  # late tasks of a phase take room longest time left first (policies/late.py)
        if late_rule:  # late tasks (policies/residual.py), judged on the round's state before placing
            late, out.wake_at, left = self.late.judge(snapshot, view, flat, late_reasons)
            by_left = (late, left)
            _record_late(out, flat, late)
        swap, repl = None, None
        if late_rule and self.replace:  # late tasks at the copy cap (policies/replace.py)
            repl = Replacements(1 + self.max_clones, self.late.progress_factor, self.late.progress_after)
            swap, wake = repl.judge(snapshot, view, flat)
            out.wake_at = min(out.wake_at, wake)
        at_start = flat.copies.copy()
        # pass 1: originals (and, with late_first, one more copy of each late task in its job's class;
        # a fresh copy of each task whose slowest copy is replaced)
        pending = flat.pending() & feasible[flat.owner]
        mask = pending | late if late is not None and self.late_first else pending
        if swap is not None:
            mask = mask | swap
        entry_rows, entry_counts, placed, got_clone = self._pass(
            out, flat, mask, cls, rnk, shape, free, nodes, False, self.placement_reason, pending, by_left
        )
        if repl is not None and swap is not None and swap.any():
            out.kills.extend(repl.kills_for(swap & (flat.copies > at_start)))
        self._defer(out, table, flat, entry_rows, entry_counts, placed, feasible)
        # passes 2..1+max_clones: clones
        if self.max_clones > 0:
            waiting = bool((entry_counts > placed).any())  # originals that found no room this round
            allowed, reasons = self._allowed(snapshot, view, flat, prio, (times, volume), total, waiting)
            for row, (clones, why) in late_reasons.items():
                if why == REASON_UPSTREAM or reasons.get(row, (self.max_clones, REASON_IDLE))[0] < clones:
                    reasons[row] = (clones, why)
            cloned_rows: set[int] = set(entry_rows[got_clone].tolist())
            late_at = np.flatnonzero(late) if late is not None else None  # few: index them, not all tasks
            for have in range(1, self.max_clones + 1):
                mask = flat.clone_candidates(have, allowed)
                if late_at is not None:  # at most late_copies_per_round new copies of a late task
                    new = flat.copies[late_at] - at_start[late_at]
                    mask[late_at[(flat.copies[late_at] == have) & (new < self.late_per_round)]] = True
                entry_rows, _, _, got_clone = self._pass(
                    out, flat, mask, cls, rnk, shape, free, nodes, True, REASON_CLONE, None, by_left
                )
                cloned_rows.update(entry_rows[got_clone].tolist())
            self._grants_and_omegas(out, snapshot, flat, sorted(cloned_rows), allowed, reasons)
        kill_losers(out, snapshot, spare_upstream=self.max_clones > 0)
        return out

    def _feasible_shapes(self, shapes: np.ndarray, capacity: np.ndarray) -> np.ndarray:
        """_feasible(shapes, capacity), kept for equal shapes and the same capacity array (never written
        in place: ClusterState.distinct_capacities)."""
        key = (shapes.shape, shapes.tobytes())
        with self._lock:
            fits = self._fits
        if fits is None or fits[0] != key or fits[1] is not capacity:
            fits = (key, capacity, _feasible(shapes, capacity))
            with self._lock:
                self._fits = fits
        return fits[2]

    def _priorities(
        self, view: RoundView, total: np.ndarray, jobs: Any
    ) -> tuple[IntArray, np.ndarray, np.ndarray]:
        """(p_j, e_j(t), v_j(t)) of every job (Algorithm 1; Eq. 16-17)."""
        volume, times, dmax = view.measures(total, self.sigma_factor)
        n = len(jobs)
        if self.order == "arrival":  # strict arrival order: every job is its own class
            prio = np.empty(n, np.int64)
            prio[np.lexsort((np.arange(n), view.t.arrival))] = np.arange(n)
            return prio, times, volume
        if self.recompute == "every_round" or any(j.job_id not in self._prio for j in jobs):
            ok = np.isfinite(volume) & np.isfinite(times)
            prio = np.full(n, 1 << 20, np.int64)  # jobs that can never run go last (they are deferred)
            prio[ok] = transient_priorities(volume[ok], times[ok], dmax if math.isfinite(dmax) else 1.0)
            self._prio = {j.job_id: p for j, p in zip(jobs, prio.tolist(), strict=True)}
            return prio, times, volume
        return np.fromiter((self._prio[j.job_id] for j in jobs), np.int64, n), times, volume

    @staticmethod
    def _pass(
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
        class_ptr, shape_ptr, task_ptr, shape_demand, tasks, entry_rows, entry_counts = (
            jit.pass_input_compiled(mask, flat.owner, flat.rows.size, cls, rnk, shape, flat.table.shapes)
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

    @staticmethod
    def _defer(
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

    def _allowed(
        self,
        snapshot: Snapshot,
        view: RoundView,
        flat: FlatTasks,
        prio: IntArray,
        measures: tuple[np.ndarray, np.ndarray],
        total: np.ndarray,
        waiting: bool = False,
    ) -> tuple[IntArray, dict[int, tuple[int, str]]]:
        """Copies allowed per task of each row (1 + clones granted) and, per table row, (clones, reason).

        Rule "paper" grants Corollary 4.1's clones at launch only when no original waits for room this
        round (Section 5: clones start "when the cluster can not schedule any new task" because the tasks
        have all been scheduled); late tasks' clones (`_late`) do not wait for that."""
        t = flat.table
        allowed = np.zeros(flat.rows.size, np.int64)  # 0: not considered (nothing runs)
        reasons: dict[int, tuple[int, str]] = {}  # local: decide() may run on several threads
        running = flat.running_rows()
        allowed[running] = 1
        if self.clone_rule == "idle":
            allowed[running] = 1 + self.max_clones
            todo = running[t.has_parent[flat.rows[running]]].tolist()
        else:
            todo = running.tolist()
        budget = self._budget(snapshot, view, flat, total) if self.clone_rule == "dolly" else None
        job_copies = (
            self._corollary(view, flat, running, prio, *measures)
            if self.clone_rule in ("corollary", "paper")
            else None
        )
        small_job, tail = self._small_and_tail(flat, bool(todo))
        for r in todo:
            row = int(flat.rows[r])
            pos = int(t.row_job[row])
            job = t.jobs[pos]
            clones, reason = self.max_clones, REASON_IDLE
            if self.clone_rule == "residual" and small_job[pos]:
                clones, reason = self.max_clones, REASON_SMALL_JOB
            elif self.clone_rule == "residual" and self.phase_tail and tail[r]:
                # not capped by upstream copies, as late copies (policies/late.py): delay assignment's
                # omega (Dolly 4.4) is set for every job whose downstream phase gets clones
                reasons[row] = (self.max_clones, REASON_PHASE_TAIL)
                allowed[r] = 1 + self.max_clones
                continue
            elif self.clone_rule == "residual":  # no clones at launch; late tasks only (LateTasks)
                clones, reason = 0, REASON_NO_ROOM
            elif job_copies is not None:
                clones = int(job_copies[t.row_job[row]]) - 1
                reason = REASON_COROLLARY if clones else REASON_NO_ROOM
                if clones and waiting and self.clone_rule == "paper":
                    clones, reason = 0, REASON_WAITING_ORIGINALS
            elif budget is not None:
                clones, reason = dolly_grant(
                    job,
                    int(t.row_k[row]),
                    budget,
                    float(view.share[row]),
                    float(view.theta[row]),
                    float(view.sigma[row]),
                    self.max_clones,
                )
            if t.has_parent[row]:  # downstream copies never exceed upstream copies (Dolly 3.2)
                limit = min(job.phases[q].peak_min() for q in job.parent_idx[int(t.row_k[row])]) - 1
                if limit < clones:
                    clones, reason = max(0, limit), REASON_UPSTREAM
            allowed[r] = 1 + clones
            reasons[row] = (clones, reason)
        return allowed, reasons

    def _small_and_tail(self, flat: FlatTasks, any_rows: bool) -> tuple[list[bool], list[bool]]:
        """For rule "residual": per job of the table, at most `small_job_clones` tasks; per phase of
        `flat`, `_in_tail`. Empty lists when not needed."""
        if self.clone_rule != "residual" or not any_rows:
            return [], []
        t = flat.table
        small: list[bool] = (np.add.reduceat(t.n_tasks, t.job_ptr[:-1]) <= self.small_job_clones).tolist()
        return small, _in_tail(flat, self.tail_tasks) if self.phase_tail else []

    def _corollary(
        self,
        view: RoundView,
        flat: FlatTasks,
        running: IntArray,
        prio: IntArray,
        times: np.ndarray,
        volume: np.ndarray,
    ) -> IntArray:
        """Copies per task of every job by Corollary 4.1 with its Step-6 packing condition
        (policies/model.py `corollary_grants`); the job's (theta, sigma) are those of its first running
        phase in topological order (the phase its clones would copy)."""
        t = flat.table
        n = len(t.jobs)
        stats: list[tuple[float, float] | None] = [None] * n
        for r in running.tolist():
            row = int(flat.rows[r])
            pos = int(t.row_job[row])
            if stats[pos] is None:
                stats[pos] = (float(view.theta[row]), float(view.sigma[row]))
        ok = np.isfinite(volume) & np.isfinite(times) & (prio < (1 << 20))
        copies = np.ones(n, np.int64)
        idx = np.flatnonzero(ok)
        if idx.size:
            copies[idx] = corollary_grants(
                prio[idx], volume[idx], times[idx], [stats[i] for i in idx.tolist()], 1 + self.max_clones
            )
        return copies

    def _budget(self, snapshot: Snapshot, view: RoundView, flat: FlatTasks, total: np.ndarray) -> DollyBudget:
        """B_U: dominant share held by running clones (copies beyond the first, before this round's clones);
        U: the cluster's dominant utilisation with this round's originals (Dolly 3.3 admits a phase when its
        first task is to run); p: measured (policies/dolly.py `DollyBudget.observed_p`) unless given."""
        beta, tau, eps, p = self.dolly
        c = snapshot.cluster
        started = view.n_pending[flat.rows] - np.bincount(
            flat.owner[flat.state == _PENDING], minlength=flat.rows.size
        )
        used = total - c.free[c.active].sum(axis=0) + started @ flat.table.demand[flat.rows]
        util = float(np.max(np.where(total > 0, used / np.where(total > 0, total, 1.0), 0.0), initial=0.0))
        extra = np.bincount(flat.owner, weights=np.maximum(flat.copies - 1, 0), minlength=flat.rows.size)
        in_use = float(extra @ view.share[flat.rows]) if flat.rows.size else 0.0
        p = DollyBudget.observed_p(snapshot) if p is None else p
        return DollyBudget(beta, tau, eps, p, used_by_clones=in_use, utilization=util)

    def _grants_and_omegas(
        self,
        out: Decisions,
        snapshot: Snapshot,
        flat: FlatTasks,
        cloned: list[int],
        allowed: IntArray,
        reasons: dict[int, tuple[int, str]],
    ) -> None:
        """A CloneGrant per phase that runs tasks; omega per job whose downstream phase got clones."""
        t = flat.table
        sel = np.flatnonzero(allowed > 0)
        job_ids, phase_ids = t.job_ids, t.phase_ids
        default = (allowed[sel] - 1).tolist()
        out.clone_grants.extend(
            CloneGrant(job_ids[row], phase_ids[row], *(reasons.get(row) or (c, REASON_IDLE)))
            for row, c in zip(flat.rows[sel].tolist(), default, strict=True)
        )
        cloned_rows = flat.rows[np.asarray(cloned, dtype=np.int64)]
        done: set[int] = set()
        for row in cloned_rows[t.has_parent[cloned_rows]].tolist():
            pos = int(t.row_job[row])
            if pos not in done:
                done.add(pos)
                job = t.jobs[pos]
                omega = self.omega_for(snapshot, job, int(t.row_k[row]))
                out.omegas.append(OmegaDecision(job.job_id, omega, "delay_assignment"))

    def omega_for(self, snapshot: Snapshot, job: Job, k: int) -> float:
        """Delay assignment's omega for phase k reading its first parent's outputs (policies/delay.py)."""
        up, down = job.phases[job.parent_idx[k][0]], job.phases[k]
        tu, su = snapshot.theta_sigma(job, up)
        td, sd = snapshot.theta_sigma(job, down)
        bw, alpha = self.transfer.bandwidth(), self.transfer.alpha()
        est = snapshot.estimator
        obs_up: list[float] = list(getattr(est, "samples", lambda *_: [])(job, up)) if est is not None else []
        obs_down: list[float] = (
            list(getattr(est, "samples", lambda *_: [])(job, down)) if est is not None else []
        )
        key = tuple(float(f"{x:.3g}") for x in (tu, su, td, sd, bw, alpha, self.output_bytes))
        if not obs_up and not obs_down and key in self._omega_cache:
            return self._omega_cache[key]
        # the same inputs give the same omega (sample_pairs is seeded): computed once (speed)
        inputs = (tuple(obs_up), tuple(obs_down), tu, su, td, sd, bw, alpha, self.output_bytes)
        omega = self._omega_of.get(inputs)
        if omega is None:
            n = self.omega_samples
            ups = obs_up if len(obs_up) >= 2 else quantile_samples(tu, su, n)
            downs = obs_down if len(obs_down) >= 2 else quantile_samples(td, sd, n)
            m = min(len(ups), len(downs))
            gaps, c1, c2 = sample_pairs(ups[:m], downs[:m])
            omega, _ = choose_omega(self.output_bytes, bw, alpha, gaps, c1, c2)
            if len(self._omega_of) > 4096:
                self._omega_of.clear()
            self._omega_of[inputs] = omega
        if len(self._omega_cache) > 4096:
            self._omega_cache.clear()
        self._omega_cache[key] = omega
        return omega


def _in_tail(flat: FlatTasks, small: int) -> list[bool]:
    """Per phase of `flat` (after this round's originals): it has no task waiting and at most `small` (a
    small job's task count) unfinished tasks (every phase has a task: no segment is empty)."""
    lo = flat.offset[:-1]
    left = np.add.reduceat((flat.state != _FINISHED).astype(np.int64), lo)
    waiting = np.logical_or.reduceat(flat.state == _PENDING, lo)
    result: list[bool] = ((left > 0) & (left <= small) & ~waiting).tolist()
    return result


def _nodes_with_room(free: np.ndarray, active: np.ndarray) -> IntArray:
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


def _feasible(shapes: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Per shape: some node's capacity (distinct capacity vectors given) holds it in every dimension."""
    fits = np.all(capacity[None, :, :] + 1e-9 >= shapes[:, None, :], axis=2)
    result: np.ndarray = np.any(fits, axis=1)
    return result


def _count(option: str, value: Any, least: int) -> int:
    """`value` if it is an integer (not a bool) >= `least`; else a ValueError naming the option."""
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise ValueError(f"dollymp option {option} must be an integer >= {least}, got {value!r}")
    return value


def _choice(option: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"dollymp option {option} must be one of {allowed}, got {value!r}")


@register_policy("dolly")
def dolly_policy(**options: Any) -> DollyMPPolicy:
    """Dolly: arrival order, Pseudocode 1's budgeted cloning (beta, tau, epsilon, straggler_p options;
    defaults the paper's, policies/dolly.py)."""
    options.setdefault("max_clones", 2)
    options.setdefault("tau", DollyBudget().tau)  # Dolly 5.2's 80% (DollyMPPolicy's own default differs)
    policy = DollyMPPolicy(clone_rule="dolly", order="arrival", **options)
    policy.name = "dolly"
    return policy

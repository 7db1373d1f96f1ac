"""DollyMP (paper 000, Sections 4-5), as the paper defines it, and the project's extensions by name.

The policy `dollymp` with its defaults is the paper, step by step:
1. Job measures (Sec. 5, Eq. 14-17; policies/table.py, policies/model.py): per phase the dominant share
   d_j^k (Eq. 15) and the effective processing time e_j^k = theta + r sigma with r = `sigma_factor`
   (default 1.5, the value of Sec. 6.1 and 6.3); theta and sigma come from the snapshot's estimator, which
   follows Sec. 5.2 (estimate/stats.py: recurring-job history, then the phase's first tasks, then a
   framework-wide prior); v_j(t) (Eq. 16) and e_j(t) along the remaining critical path (Eq. 17).
2. Priorities (Algorithm 1, Sec. 4.2): size classes p_j by the knapsack over 2^l (policies/model.py),
   recomputed when a job arrives (Sec. 5, Algorithm 2 lines 1-5); option recompute="every_round".
3. Pass 1 of Algorithm 2 (lines 6-15; policies/kernel.py): per server, classes in increasing order, inside
   a class the task with the best fit (inner product of demand and free capacity, as Tetris), originals of
   every ready phase.
4. Passes 2..1+max_clones (Algorithm 2 line 16, "repeat Step 9 twice"): one more copy of running tasks per
   pass, same order, only with what pass 1 left (Sec. 5: clones "if there still exist extra idle
   resources"), at most two clones per task (Sec. 5; max_clones 0..3 give DollyMP0..3 of Sec. 6).
5. How many clones a task may have (clone_rule="paper"): Corollary 4.1, r_j = min{r : 2^l h_j(r) >= theta_j},
   (r_j - 1) clones "if the corresponding resources can be packed in Step 6" (policies/model.py
   `corollary_grants`, with h from the Pareto fit of Eq. 1-3).
6. Delay assignment (Sec. 5.2, Dolly Sec. 4.4): omega for jobs whose downstream phase got clones
   (policies/delay.py); downstream copies may outnumber upstream ones (Sec. 5.2: the first finished upstream
   copy then feeds every downstream copy).
7. Copies of a finished task are killed (Sec. 5.2: the AM keeps one copy and kills the rest); losing
   upstream copies are left to delay assignment while omega runs.

Other clone rules: "idle" (every running task gets max_clones clones wherever capacity is idle: Algorithm
2's passes without Corollary 4.1), "none" (no clones at launch: only extensions add copies), "dolly"
(Dolly's budget, Pseudocode 1, with Dolly 3.2's limit of downstream copies to upstream copies).

Extensions (none is in the papers; each is off by default, named, and measured against the paper in the
ablation of docs/reproduction.md; policy `dollymp-ext` turns them all on but the last):
* `late`: LATE-style late copies (policies/late.py): once every task of a phase has been scheduled, a
  running task whose every copy's time left (from reported progress, judged after `progress_after` seconds,
  the lag) reaches `progress_factor` x a fresh copy's expected time gets one more copy in the clone passes.
* `late_first` (needs `late`): a late task's copy is placed in pass 1 with its job's class, ahead of other
  jobs' originals.
* `late_first_worth` = w > 0 (needs `late_first`): the late tasks of a phase go in pass 1 only when their
  copies together are expected to bring the phase's end forward by at least w x the slot-seconds they hold
  (policies/late.py `phase_gain`, under the phase's Pareto fit: a phase ends with its last task, so
  copies of many similar late tasks gain little); otherwise they get their copies from idle capacity in
  the clone passes.
* `replace` (needs `late`): kill-and-restart: a late task at the copy cap has its slowest copy killed and
  a fresh copy placed in pass 1 (policies/replace.py; Mantri's kill-restart, paper 003's relaunch).
* `small_job_clones` = n > 0: jobs of at most n tasks (Dolly's small jobs) get max_clones clones at launch,
  from idle capacity.
* `phase_tail`: once a phase has no task waiting and at most `tail_tasks` unfinished tasks, those get
  max_clones clones from idle capacity.
* `order="size_class_volume"`: jobs of one size class are ranked smallest volume v_j(t) first (Eq. 16,
  the knapsack's own order) instead of by arrival, so among tasks of equal fit in Algorithm 2's pass 1
  the smaller job's go first. Algorithm 1 leaves the order inside a class open ("all jobs within the
  same category are treated equally", Sec. 4.2); the paper's row ranks them by arrival. `dollymp-ext`
  leaves it off; the ablation measures it alone and as dollymp-ext(order=size_class_volume).
* `order="volume"`: jobs are served smallest remaining volume v_j(t) first (Eq. 16), each job its own
  class in Algorithm 2's passes, as SVF orders (SREW+C Eq. 10); Algorithm 1's classes still set the clone
  counts (Corollary 4.1). It drops the paper's admission of a job to class l only once e_j fits 2^l; the
  report's ordering scenario measures it against the paper and against Tetris.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy as np

from pyscheduler.estimate.transfer import TransferStats
from pyscheduler.objects import TaskState
from pyscheduler.policies.base import (
    CloneGrant,
    Decisions,
    IntArray,
    OmegaDecision,
    Priority,
    Snapshot,
    register_policy,
)
from pyscheduler.policies.cloning import (
    REASON_IDLE,
    REASON_PHASE_TAIL,
    REASON_UPSTREAM,
    CloneAllowance,
)
from pyscheduler.policies.common import (
    REASON_BEST_FIT,
    REASON_CLONE,
    kill_losers,
)
from pyscheduler.policies.dolly import DollyBudget
from pyscheduler.policies.kernel import warm_up
from pyscheduler.policies.late import LateTasks, phase_gain
from pyscheduler.policies.model import job_order, transient_priorities
from pyscheduler.policies.omega import OmegaChooser
from pyscheduler.policies.optioncheck import choice as _choice
from pyscheduler.policies.optioncheck import count as _count
from pyscheduler.policies.optioncheck import flag as _flag
from pyscheduler.policies.passes import defer, feasible, nodes_with_room, place_pass_of, record_late
from pyscheduler.policies.replace import Replacements
from pyscheduler.policies.residual import REASON_PROGRESS, REASON_RESIDUAL
from pyscheduler.policies.table import FlatTasks, PhaseTable, RoundView

# Grants that name a phase but are carried out per task, by the clones the core places this round (late
# copies, the phase tail), not by cloning every task of the phase at its launch. The live AM plan
# (service/round/amplan.py) must not turn them into clones per phase.
PER_TASK_REASONS = frozenset({REASON_RESIDUAL, REASON_PROGRESS, REASON_PHASE_TAIL})
_RUNNING = int(TaskState.RUNNING)  # enum attribute access is slow in hot loops
CLONE_RULES = ("paper", "idle", "none", "dolly")
TAIL_TASKS = 10  # phase_tail's default: a small job's task count (Dolly Sec. 2.2)


@register_policy("dollymp")
class DollyMPPolicy:
    """Options (module docstring): max_clones 0..3 (DollyMP0..3), clone_rule, sigma_factor (r), recompute
    ("arrival" | "every_round"), order ("size_class" | "arrival" | "size_class_volume" | "volume"); Dolly's
    beta/tau/epsilon/straggler_p for clone_rule "dolly"; delay assignment's output_bytes (per upstream
    task), transfer statistics and omega_samples. Extensions, all off by default: late (with late_by,
    progress_factor, progress_after, residual_factor, late_upstream_cap, late_copies_per_round),
    late_first (with late_first_worth), replace, small_job_clones, phase_tail (with tail_tasks),
    order="size_class_volume" or "volume"."""

    name = "dollymp"
    timer_driven = False  # its one timer (the late extension, policies/residual.py) is Decisions.wake_at

    def __init__(
        self,
        max_clones: int = 2,
        clone_rule: str = "paper",
        sigma_factor: float = 1.5,
        recompute: str = "arrival",
        order: str = "size_class",
        beta: float = 0.05,
        tau: float = 0.95,
        epsilon: float = 0.05,
        straggler_p: float | None = None,
        output_bytes: float = 64e6,
        transfer: TransferStats | None = None,
        omega_samples: int = 32,
        late: bool = False,
        residual_factor: float = 2.0,
        late_by: str = "progress",
        progress_factor: float = 1.0,
        progress_after: float = 10.0,
        late_upstream_cap: bool = False,
        late_first: bool = False,
        late_first_worth: float = 0.0,
        late_copies_per_round: int = 1,
        small_job_clones: int = 0,
        tail_tasks: int = TAIL_TASKS,
        replace: bool = False,
        phase_tail: bool = False,
    ) -> None:
        if isinstance(max_clones, bool) or max_clones not in (0, 1, 2, 3):
            raise ValueError(f"dollymp option max_clones must be 0, 1, 2 or 3, got {max_clones!r}")
        _choice("clone_rule", clone_rule, CLONE_RULES)
        _choice("recompute", recompute, ("arrival", "every_round"))
        _choice("order", order, ("size_class", "arrival", "size_class_volume", "volume"))
        for option, flag in (("late", late), ("late_first", late_first), ("replace", replace)):
            _flag(option, flag)
        _flag("phase_tail", phase_tail)
        for option, flag in (("late_first", late_first), ("replace", replace)):
            if flag and not late:
                raise ValueError(f"dollymp option {option} extends the late extension: set late=true too")
        self.late = LateTasks(
            max_clones, residual_factor, progress_factor, progress_after, late_by, bool(late_upstream_cap)
        )
        self.late_on = bool(late)
        self.late_first = bool(late_first)
        if not (isinstance(late_first_worth, int | float) and 0 <= late_first_worth < math.inf):
            raise ValueError(f"dollymp option late_first_worth must be finite >= 0, got {late_first_worth!r}")
        if late_first_worth and not late_first:
            raise ValueError("dollymp option late_first_worth extends late_first: set late_first=true too")
        self.late_first_worth = float(late_first_worth)
        self.late_per_round = _count("late_copies_per_round", late_copies_per_round, 1)
        self.replace = bool(replace)
        self.phase_tail = bool(phase_tail)
        self.small_job_clones = _count("small_job_clones", small_job_clones, 0)
        self.tail_tasks = _count("tail_tasks", tail_tasks, 0)
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
        self.allowance = CloneAllowance(
            max_clones, clone_rule, self.dolly, self.small_job_clones, self.phase_tail, self.tail_tasks
        )
        self.omegas = OmegaChooser(output_bytes, transfer or TransferStats(), omega_samples)
        warm_up()  # compile the Algorithm 2 kernel at construction, not in the first round
        self._lock = threading.Lock()
        self._tables: dict[tuple[int, ...], PhaseTable] = {}  # the last two job sets (service + AM plans)
        self._prio: dict[str, int] = {}
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
        by_volume = self.order == "volume"  # the extension: one class, smallest volume first
        ties = volume if self.order in ("size_class_volume", "volume") else None
        app = np.array([j.app_priority for j in jobs], np.int64)
        order = job_order(np.zeros_like(prio) if by_volume else prio, table.arrival, app, ties)
        rank = np.empty(len(jobs), np.int64)
        rank[order] = np.arange(len(jobs))
        why = "arrival_order" if self.order == "arrival" else self.order  # size_class[_volume], volume
        pl = prio.tolist()
        out.priorities = [Priority(jobs[p].job_id, pl[p], r, why) for r, p in enumerate(order.tolist())]

        rows = np.flatnonzero(view.ready & ~view.finished)
        flat = FlatTasks(table, rows)
        free = np.array(cluster.free, dtype=np.float64)
        free[~cluster.active] = 0.0
        nodes = nodes_with_room(free, cluster.active)
        row_job = table.row_job[rows]
        cls, rnk, shape = (rank if by_volume else prio)[row_job], rank[row_job], table.row_shape[rows]
        feasible = self._feasible_shapes(table.shapes, cluster.distinct_capacities())[shape]

        late_rule = self.max_clones > 0 and self.late_on
        late_reasons: dict[int, tuple[int, str]] = {}
        late, left = None, np.zeros(0)
        by_left = None  # late tasks of a phase take room longest time left first (policies/late.py)
        if late_rule:  # late tasks (policies/residual.py), judged on the round's state before placing
            late, out.wake_at, left = self.late.judge(snapshot, view, flat, late_reasons)
            by_left = (late, left)
            record_late(out, flat, late)
        swap, repl = None, None
        if late_rule and self.replace:  # late tasks at the copy cap (policies/replace.py)
            repl = Replacements(1 + self.max_clones, self.late.progress_factor, self.late.progress_after)
            swap, wake = repl.judge(snapshot, view, flat)
            out.wake_at = min(out.wake_at, wake)
        at_start = flat.copies.copy()
        # pass 1: originals (and, with late_first, one more copy of each late task in its job's class;
        # a fresh copy of each task whose slowest copy is replaced)
        pending = flat.pending() & feasible[flat.owner]
        mask = pending | self._first(snapshot, view, flat, late, left) if late is not None else pending
        if swap is not None:
            mask = mask | swap
        entry_rows, entry_counts, placed, got_clone = place_pass_of(
            out, flat, mask, cls, rnk, shape, free, nodes, False, self.placement_reason, pending, by_left
        )
        if repl is not None and swap is not None and swap.any():
            out.kills.extend(repl.kills_for(swap & (flat.copies > at_start)))
        defer(out, table, flat, entry_rows, entry_counts, placed, feasible)
        # passes 2..1+max_clones: clones
        if self.max_clones > 0:
            allowed, reasons = self.allowance.allowed(snapshot, view, flat, prio, (times, volume), total)
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
                entry_rows, _, _, got_clone = place_pass_of(
                    out, flat, mask, cls, rnk, shape, free, nodes, True, REASON_CLONE, None, by_left
                )
                cloned_rows.update(entry_rows[got_clone].tolist())
            self._grants_and_omegas(out, snapshot, flat, sorted(cloned_rows), allowed, reasons)
        kill_losers(out, snapshot, spare_upstream=self.max_clones > 0)
        return out

    def _first(
        self, snapshot: Snapshot, view: RoundView, flat: FlatTasks, late: np.ndarray, left: np.ndarray
    ) -> np.ndarray:
        """The late tasks whose copy goes in pass 1: none without late_first; with late_first_worth, those
        worth it, phase by phase (policies/late.py `phase_gain`: a phase's late tasks go first together
        when their copies are expected to bring its end forward by at least late_first_worth x the
        slot-seconds they hold); else every late task."""
        if not self.late_first:
            return np.zeros_like(late)
        if not self.late_first_worth:
            return late
        first = np.zeros_like(late)
        at = np.flatnonzero(late)
        owner = flat.owner[at]
        for o in np.unique(owner).tolist():  # the phases with a late task (few)
            lo, hi = int(flat.offset[o]), int(flat.offset[o + 1])
            mine = at[owner == o]
            others = left[lo:hi].copy()
            others[mine - lo] = np.nan  # the phase's other running tasks (nan: no copy listed)
            running = others[~np.isnan(others)]
            rest = float(running.max()) if running.size else 0.0
            row = int(flat.rows[o])
            gain, held = phase_gain(
                left[mine], rest, float(view.theta[row]), float(view.sigma[row]), snapshot.startup_s
            )
            first[mine] = gain >= self.late_first_worth * held
        return first

    def _feasible_shapes(self, shapes: np.ndarray, capacity: np.ndarray) -> np.ndarray:
        """feasible(shapes, capacity), kept for equal shapes and the same capacity array (never written
        in place: ClusterState.distinct_capacities)."""
        key = (shapes.shape, shapes.tobytes())
        with self._lock:
            fits = self._fits
        if fits is None or fits[0] != key or fits[1] is not capacity:
            fits = (key, capacity, feasible(shapes, capacity))
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
                omega = self.omegas.omega_for(snapshot, job, int(t.row_k[row]))
                out.omegas.append(OmegaDecision(job.job_id, omega, "delay_assignment"))

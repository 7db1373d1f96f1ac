"""DollyMP (paper 000, Sections 4-5): Algorithm 1 priorities, Algorithm 2 placement, clones, delay assignment.

Round: (1) v_j(t), e_j(t) per job (Eq. 15-17) and the size classes p_j of Algorithm 1, recomputed when a job
arrives (Section 5; option recompute="every_round" recomputes each round); (2) pass 1: per class in
increasing order, every job's first available phase, best fit (policies/placement.py); (3) passes
2..1+max_clones: one more copy for running tasks, same order, only with the resources left after pass 1;
(4) delay assignment omega for downstream phases that got clones; (5) kills of copies whose task
already finished.

"First available phase" (Section 5): the first ready phase in topological order with tasks still waiting;
when nothing more of it fits, the job's next ready phase becomes available, so an original never waits
behind a clone while it fits somewhere. Ties within a class: best fit per server, then rank (arrival, id).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pyscheduler.estimate.pareto import quantile_samples
from pyscheduler.estimate.transfer import TransferStats
from pyscheduler.objects import Job
from pyscheduler.policies.base import (
    CloneGrant,
    Decisions,
    OmegaDecision,
    Priority,
    Snapshot,
    register_policy,
)
from pyscheduler.policies.cloning import (
    REASON_COROLLARY,
    REASON_IDLE,
    REASON_UPSTREAM,
    CloneBook,
    clones_in_use,
    dolly_grant,
    upstream_copy_limit,
)
from pyscheduler.policies.common import (
    REASON_BEST_FIT,
    REASON_CLONE,
    defer_unplaced,
    engine_for,
    kill_losers,
    original_entry,
    ready_pending_phases,
    record,
)
from pyscheduler.policies.delay import choose_omega, sample_pairs
from pyscheduler.policies.dolly import DollyBudget
from pyscheduler.policies.model import clone_copies, dominant_share, job_measures, transient_priorities
from pyscheduler.policies.placement import Entry, PlacementEngine

CLONE_RULES = ("idle", "corollary", "dolly")


@register_policy("dollymp")
class DollyMPPolicy:
    """Options: max_clones 0..3 (DollyMP0..3), clone_rule, sigma_factor, recompute, order
    ("size_class" | "arrival"), clone_timing ("after_originals" | "with_job"), Dolly's beta/tau/epsilon/
    straggler_p, delay assignment's output_bytes and transfer statistics."""

    name = "dollymp"

    def __init__(
        self,
        max_clones: int = 2,
        clone_rule: str = "idle",
        sigma_factor: float = 1.0,
        recompute: str = "arrival",
        order: str = "size_class",
        clone_timing: str = "after_originals",
        beta: float = 0.05,
        tau: float = 0.95,
        epsilon: float = 0.05,
        straggler_p: float | None = None,
        output_bytes: float = 64e6,
        transfer: TransferStats | None = None,
        omega_samples: int = 32,
    ) -> None:
        if isinstance(max_clones, bool) or max_clones not in (0, 1, 2, 3):
            raise ValueError(f"dollymp option max_clones must be 0, 1, 2 or 3, got {max_clones!r}")
        _choice("clone_rule", clone_rule, CLONE_RULES)
        _choice("recompute", recompute, ("arrival", "every_round"))
        _choice("order", order, ("size_class", "arrival"))
        _choice("clone_timing", clone_timing, ("after_originals", "with_job"))
        if not (math.isfinite(sigma_factor) and sigma_factor >= 0):
            raise ValueError(f"dollymp option sigma_factor must be finite >= 0, got {sigma_factor!r}")
        if not (math.isfinite(output_bytes) and output_bytes >= 0) or omega_samples < 2:
            raise ValueError("dollymp options output_bytes must be >= 0 and omega_samples >= 2")
        self.max_clones = max_clones
        self.clone_rule = clone_rule
        self.sigma_factor = sigma_factor
        self.recompute = recompute
        self.order = order
        self.clone_timing = clone_timing
        self.dolly = (beta, tau, epsilon, straggler_p)
        DollyBudget(beta, tau, epsilon, straggler_p)  # validates
        self.output_bytes = output_bytes
        self.transfer = transfer or TransferStats()
        self.omega_samples = omega_samples
        self._cached: dict[str, int] = {}
        self._omega_cache: dict[tuple[float, ...], float] = {}

    # -- priorities (Algorithm 1) ------------------------------------------------------------------------
    def _priorities(self, snapshot: Snapshot, total: list[float]) -> tuple[list[int], list[float]]:
        jobs = snapshot.jobs
        times = [0.0] * len(jobs)
        if self.order == "arrival":
            return list(range(len(jobs))), times
        need = self.recompute == "every_round" or any(j.job_id not in self._cached for j in jobs)
        vols = np.empty(len(jobs))
        tarr = np.empty(len(jobs))
        dmax = 0.0
        for i, j in enumerate(jobs):
            v, e, d = job_measures(j, snapshot.theta_sigma, total, self.sigma_factor)
            vols[i], tarr[i], times[i] = v, e, e
            dmax = max(dmax, d)
        if need:
            finite = np.isfinite(vols) & np.isfinite(tarr)
            prio = np.full(len(jobs), 1 << 20, np.int64)  # unschedulable jobs last (they are deferred)
            prio[finite] = transient_priorities(
                vols[finite], tarr[finite], dmax if math.isfinite(dmax) else 1.0
            )
            self._cached = {j.job_id: int(p) for j, p in zip(jobs, prio.tolist(), strict=True)}
        return [self._cached[j.job_id] for j in jobs], times

    def decide(self, snapshot: Snapshot) -> Decisions:
        snapshot.validate()
        jobs = snapshot.jobs
        cluster = snapshot.cluster
        out = Decisions(snapshot.time, jobs, cluster.node_ids)
        total = cluster.total_capacity().tolist()
        prio, times = self._priorities(snapshot, total)
        order = sorted(range(len(jobs)), key=lambda i: (prio[i], jobs[i].arrival, jobs[i].job_id))
        reason = "size_class" if self.order == "size_class" else "arrival_order"
        groups: list[list[int]] = []
        for rank, pos in enumerate(order):
            out.priorities.append(Priority(jobs[pos].job_id, prio[pos], rank, reason))
            key = prio[pos] if self.clone_timing == "after_originals" else rank
            if groups and key == (
                prio[groups[-1][0]] if self.clone_timing == "after_originals" else rank - 1
            ):
                groups[-1].append(pos)
            else:
                groups.append([pos])
        engine = engine_for(snapshot)
        if jobs:
            engine.prune(np.min([p.demand.as_array() for j in jobs for p in j.phases], axis=0))
        rnd = _Round(self, snapshot, out, engine, prio, times, total)
        if self.clone_timing == "with_job":
            for g in groups:
                rnd.originals(g)
                rnd.clones([g])
        else:
            for g in groups:
                rnd.originals(g)
            rnd.clones(groups)
        defer_unplaced(out, jobs, rnd.entries, rnd.placed, engine)
        kill_losers(out, snapshot)
        return out

    def omega_for(self, snapshot: Snapshot, job: Job, k: int) -> float:
        """Delay assignment's omega for phase k reading its first parent's outputs (policies/delay.py)."""
        up = job.phases[job.parent_idx[k][0]]
        tu, su = snapshot.theta_sigma(job, up)
        td, sd = snapshot.theta_sigma(job, job.phases[k])
        bw, alpha = self.transfer.bandwidth(), self.transfer.alpha()
        key = tuple(float(f"{x:.3g}") for x in (tu, su, td, sd, bw, alpha))
        cached = self._omega_cache.get(key)
        if cached is not None:
            return cached
        n = self.omega_samples
        est = snapshot.estimator
        obs_up = list(getattr(est, "samples", lambda *_: [])(job, up)) if est is not None else []
        obs_down = list(getattr(est, "samples", lambda *_: [])(job, job.phases[k])) if est is not None else []
        ups = obs_up if len(obs_up) >= 2 else quantile_samples(tu, su, n)
        downs = obs_down if len(obs_down) >= 2 else quantile_samples(td, sd, n)
        m = min(len(ups), len(downs))
        gaps, c1, c2 = sample_pairs(ups[:m], downs[:m])
        omega, _ = choose_omega(self.output_bytes, bw, alpha, gaps, c1, c2)
        if len(self._omega_cache) > 4096:
            self._omega_cache.clear()
        self._omega_cache[key] = omega
        return omega


class _Round:
    """Working state of one decision round."""

    def __init__(
        self,
        policy: DollyMPPolicy,
        snapshot: Snapshot,
        out: Decisions,
        engine: PlacementEngine,
        prio: list[int],
        times: list[float],
        total: list[float],
    ) -> None:
        self.policy, self.snapshot, self.out, self.engine = policy, snapshot, out, engine
        self.prio, self.times, self.total = prio, times, total
        self.entries: list[Entry] = []
        self.placed: dict[tuple[int, int], int] = {}
        self.book = CloneBook()
        self.budget: DollyBudget | None = None
        self.omega_done: set[int] = set()

    def originals(self, group: list[int]) -> None:
        jobs = self.snapshot.jobs
        queue = {pos: ready_pending_phases(jobs[pos]) for pos in group}
        while True:
            entries = []
            for pos in group:
                phases = queue[pos]
                while phases:
                    e = original_entry(jobs[pos], pos, phases.pop(0))
                    self.entries.append(e)
                    if self.engine.feasible(e.demand):
                        entries.append(e)
                        break
            if not entries:
                return
            for e, got in zip(entries, self.engine.place_group(entries, best_fit=True), strict=True):
                record(self.out, e, got, False, REASON_BEST_FIT)
                self.placed[(e.job_pos, e.phase_k)] = len(got.tasks)
                if len(got.tasks):
                    self.book.add(
                        e.job_pos, e.phase_k, got.tasks, jobs[e.job_pos].phases[e.phase_k].num_tasks
                    )

    def clones(self, groups: list[list[int]]) -> None:
        """Passes 2..1+max_clones of Algorithm 2: one more copy per pass, classes in priority order."""
        for copy in range(2, self.policy.max_clones + 2):
            for group in groups:
                if self.engine.cand.size == 0:
                    return
                self._clone_group(group, copy)

    def _clone_group(self, group: list[int], copy: int) -> None:
        pol, jobs = self.policy, self.snapshot.jobs
        entries = []
        for pos in group:
            entry = self._clone_entry(jobs[pos], pos, copy)
            if entry is not None:
                entries.append(entry)
        if entries:
            for e, got in zip(entries, self.engine.place_group(entries, best_fit=True), strict=True):
                record(self.out, e, got, True, REASON_CLONE)
                if not len(got.tasks):
                    continue
                job = jobs[e.job_pos]
                self.book.add(e.job_pos, e.phase_k, got.tasks, job.phases[e.phase_k].num_tasks)
                if job.parent_idx[e.phase_k] and e.job_pos not in self.omega_done:
                    self.omega_done.add(e.job_pos)
                    omega = pol.omega_for(self.snapshot, job, e.phase_k)
                    self.out.omegas.append(OmegaDecision(job.job_id, omega, "delay_assignment"))

    def _clone_entry(self, job: Job, pos: int, copy: int) -> Entry | None:
        for k in job.topo:
            p = job.phases[k]
            if p.num_finished == p.num_tasks or not job.ready(k):
                continue
            if p.num_pending == p.num_tasks - p.num_finished and (pos, k) not in self.book.extra:
                continue  # nothing of this phase runs yet
            if self._allowed(job, pos, k) + 1 < copy:
                continue
            tasks = self.book.candidates(job, pos, k, copy - 1)
            if tasks.size:
                return Entry(pos, k, p.demand.as_array(), tasks)
        return None

    def _allowed(self, job: Job, pos: int, k: int) -> int:
        """Clones per task granted to phase k (computed once per round, logged as a CloneGrant)."""
        got = self.book.granted.get((pos, k))
        if got is not None:
            return got[0]
        pol = self.policy
        phase = job.phases[k]
        if pol.clone_rule == "idle":
            clones, reason = pol.max_clones, REASON_IDLE
        elif pol.clone_rule == "corollary":
            theta, sigma = self.snapshot.theta_sigma(job, phase)
            level = max(1, self.prio[pos])
            clones = clone_copies(level, self.times[pos], theta, sigma, 1 + pol.max_clones) - 1
            reason = REASON_COROLLARY
        else:
            theta, sigma = self.snapshot.theta_sigma(job, phase)
            clones, reason = dolly_grant(
                job,
                k,
                self._dolly_budget(),
                dominant_share(phase.demand.values, self.total),
                theta,
                sigma,
                pol.max_clones,
            )
        if job.parent_idx[k]:
            limit = upstream_copy_limit(job, k) - 1
            if limit < clones:
                clones, reason = max(0, limit), REASON_UPSTREAM
        self.book.granted[(pos, k)] = (clones, reason)
        self.out.clone_grants.append(CloneGrant(job.job_id, phase.phase_id, clones, reason))
        return clones

    def _dolly_budget(self) -> DollyBudget:
        if self.budget is None:
            beta, tau, eps, p = self.policy.dolly
            c = self.snapshot.cluster
            cap = c.capacity[c.active].sum(axis=0)
            used = cap - c.free[c.active].sum(axis=0)
            util = (
                float(np.max(np.where(cap > 0, used / np.where(cap > 0, cap, 1.0), 0.0))) if cap.size else 0.0
            )
            in_use = 0.0
            for j in self.snapshot.jobs:
                in_use += clones_in_use(j, [dominant_share(p.demand.values, self.total) for p in j.phases])
            self.budget = DollyBudget(beta, tau, eps, p, used_by_clones=in_use, utilization=util)
        return self.budget


def _choice(option: str, value: Any, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"dollymp option {option} must be one of {allowed}, got {value!r}")


@register_policy("dolly")
def dolly_policy(**options: Any) -> DollyMPPolicy:
    """Dolly: arrival order, each job's clones right with its originals, Pseudocode 1 budget (beta, tau,
    epsilon, straggler_p options), at most two clones per task."""
    options.setdefault("max_clones", 2)
    policy = DollyMPPolicy(clone_rule="dolly", order="arrival", clone_timing="with_job", **options)
    policy.name = "dolly"
    return policy

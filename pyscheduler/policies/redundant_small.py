"""Redundant-small (paper 003, Sec. IV): FIFO, and a job gets redundancy at expansion rate r only if its
demand is below a threshold d.

Adaptation to this cluster model (documented choice): the paper's coded redundancy (any k of ceil(k r)
tasks) becomes replication: ceil(k r) - k extra copies, one per task in task order, launched together with
the originals. The threshold has two modes (option `threshold`):

* "mgc" (default): d = d*, the threshold that minimises the paper's M/G/c approximation of the mean response
  time (Sec. IV, Eq. 2-11, Claim 1; policies/redundancy_model.py). Its inputs are the workload's and the
  cluster's parameters, estimated online from the last `window` jobs the policy has seen: the job mix (each
  job's phases as k tasks of minimum service time b = the phase's declared mean, the paper's known b, asking
  a dominant share r of the cluster total, so N C = 1), the arrival rate lambda = (jobs in the sample - 1) /
  their arrival span -- or, with option `load` = rho0 > 0, lambda = rho0 / (E[D] E[S]), rho0 the offered load
  without redundancy -- and the slowdown S ~ Pareto(1, `alpha`) (default 3, the paper's Sec. II value; the
  scheduler cannot observe it). A job is redundant iff its demand D = sum over phases of k r b is <= d*.
  Before `min_jobs` jobs were seen, d = 0. d* is re-estimated whenever the jobs seen have grown by `refresh`
  (a fraction) since the last estimate (one estimate costs O(n log n): one per arrival would make a run
  quadratic). `model`: the per-job latency and cost of "replication" (what the policy runs) or "coded"
  (the paper's Eq. 5).
* "fixed": the former rule, kept as an explicit option: the demand is the job's remaining task-seconds
  sum_k n_k(t) theta_k and d = `demand_threshold` (default 100, e.g. 10 tasks of 10 s) while the cluster's
  allocated dominant share is below `load_cap`, else 0 (the regime rule of d*: large at low load, 0 near 1).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence

import numpy as np

from pyscheduler.objects import Job
from pyscheduler.policies.base import Decisions, Snapshot, register_policy
from pyscheduler.policies.baseline_common import order_by, place_copies, place_in_classes, remaining_workload
from pyscheduler.policies.common import ready_pending_phases
from pyscheduler.policies.redundancy_model import MODELS, job_moments, optimal_threshold

REASON_REDUNDANT = "redundant_small"
THRESHOLDS = ("mgc", "fixed")


@register_policy("redundant-small")
class RedundantSmallPolicy:
    name = "redundant-small"

    def __init__(
        self,
        rate: float = 2.0,
        threshold: str = "mgc",
        alpha: float = 3.0,
        model: str = "replication",
        load: float = 0.0,
        min_jobs: int = 10,
        refresh: float = 0.05,
        window: int = 10000,
        demand_threshold: float = 100.0,
        load_cap: float = 0.8,
    ) -> None:
        if rate < 1:
            raise ValueError(f"rate must be >= 1, got {rate!r}")
        if threshold not in THRESHOLDS:
            raise ValueError(f"threshold must be one of {THRESHOLDS}, got {threshold!r}")
        if model not in MODELS:
            raise ValueError(f"model must be one of {MODELS}, got {model!r}")
        if not alpha > 1:
            raise ValueError(f"alpha must be > 1, got {alpha!r}")
        if not (load >= 0 and refresh >= 0):
            raise ValueError(f"load and refresh must be >= 0, got {load!r}, {refresh!r}")
        self.rate, self.threshold, self.alpha, self.model = rate, threshold, alpha, model
        self.load, self.min_jobs, self.refresh = load, max(2, int(min_jobs)), refresh
        self.demand_threshold, self.load_cap = demand_threshold, load_cap
        # the sample: the last `window` jobs seen (arrival, demand, moments without / with redundancy)
        self._demand_of: dict[str, float] = {}  # active jobs' demands
        self._sample: deque[tuple[float, float, np.ndarray, np.ndarray]] = deque(maxlen=max(2, int(window)))
        self._seen = 0  # jobs seen
        self._estimated_at = 0  # jobs seen at the last estimate
        self.d_star = 0.0  # the current threshold d* ("mgc")

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        c = snapshot.cluster
        total = c.total_capacity()
        order = order_by(jobs, [j.arrival for j in jobs])
        pending = {pos: ready_pending_phases(jobs[pos]) for pos in order}
        engine = place_in_classes(snapshot, out, [[p] for p in order], best_fit=False)
        if self.threshold == "fixed":
            used = float(((c.capacity[c.active] - c.free[c.active]).sum(axis=0) / total).max())
            if used >= self.load_cap:
                return out
            redundant = [remaining_workload(jobs[p], snapshot, 0.0) <= self.demand_threshold for p in order]
        else:
            self._observe(jobs, total)
            d = self._threshold()
            redundant = [self._demand_of[jobs[p].job_id] <= d for p in order]
        placed: dict[tuple[int, int], list[int]] = {}
        for ch in out.chunks:
            for jp, k, t in zip(
                ch.job_pos.tolist(), ch.phase_k.tolist(), ch.task_index.tolist(), strict=True
            ):
                placed.setdefault((jp, k), []).append(t)
        for pos, red in zip(order, redundant, strict=True):
            job = jobs[pos]
            if not red:
                continue
            for k in pending[pos]:
                tasks = np.array(placed.get((pos, k), []), dtype=np.int64)
                extra = math.ceil(len(tasks) * self.rate) - len(tasks)
                if extra > 0:
                    reps = np.resize(tasks, extra)
                    for start in range(0, extra, len(tasks)):
                        place_copies(
                            out, engine, job, pos, k, reps[start : start + len(tasks)], REASON_REDUNDANT
                        )
            if not engine.cand.size:
                break
        return out

    def _observe(self, jobs: Sequence[Job], total: np.ndarray) -> None:
        """Add the jobs not seen before to the sample (their whole demand, as on arrival); forget the
        demands of jobs no longer active."""
        safe = np.where(total > 0, total, np.inf)
        known = self._demand_of
        self._demand_of = {}
        for job in jobs:
            if job.job_id in known:
                self._demand_of[job.job_id] = known[job.job_id]
                continue
            phases = [(p.num_tasks, p.mean, float((p.demand.as_array() / safe).max())) for p in job.phases]
            demand, plain, red = job_moments(phases, self.alpha, self.rate, self.model)
            self._demand_of[job.job_id] = demand
            self._sample.append((job.arrival, demand, plain, red))
            self._seen += 1

    def _threshold(self) -> float:
        """d*, re-estimated when the sample grew by `refresh` (see the module docstring)."""
        if self._seen < self.min_jobs:
            return 0.0
        if self._estimated_at and self._seen < self._estimated_at * (1 + self.refresh):
            return self.d_star
        self._estimated_at = self._seen
        arrival = np.array([s[0] for s in self._sample])
        demand = np.array([s[1] for s in self._sample])
        if self.load > 0:
            lam = self.load / (float(demand.mean()) * self.alpha / (self.alpha - 1))
        else:
            span = float(arrival.max() - arrival.min())
            lam = (len(arrival) - 1) / span if span > 0 else math.inf
        if not (math.isfinite(lam) and lam > 0):
            self.d_star = 0.0
            return 0.0
        plain = np.stack([s[2] for s in self._sample])
        red = np.stack([s[3] for s in self._sample])
        self.d_star = optimal_threshold(demand, plain, red, lam)
        return self.d_star

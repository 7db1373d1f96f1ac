"""Carbyne (Grandl, Chowdhury, Akella, Ananthanarayanan, "Altruistic Scheduling in Multi-Resource Clusters",
OSDI'16): the state-of-the-art baseline of DollyMP Sec. 6.3.2 ("adopts ideas from DRF and Tetris, and applies
altruistic scheduling to collect leftover resources", which "are then redistributed"). No redundancy.

Sources. The paper's own text was not available here (only its abstract: "jobs yield fractions of their
allocated resources without impacting their own completion times ... leftover resources collected via
altruisms of many jobs can then be rescheduled to further secondary goals such as application-level
performance and cluster efficiency"), so its section numbers below are those of its design (Sec. 4) as far as
they could be placed, not checked against the text. The split into an inter-job scheduler (fair shares), an
intra-job scheduler (which tasks of a job run, given its share) and a leftover allocator is the paper's (its
talk); the authors' public simulator, read to understand the design and not copied, plans a job's remaining
DAG in reverse with Tetris packing on a virtual cluster of its quota and hands what is left to jobs in SRTF
order. Every reconstruction for this codebase's model (phases of identical tasks) is marked below.

Step 1, inter-job fair share (Carbyne Sec. 4, inter-job scheduler: DRF, Ghodsi et al. NSDI'11).
    Job j wants D_j: the resources of its running copies plus the pending tasks of its ready phases (phases
    no node can hold are left out). At level L a job is offered D_j x min(1, L / c_j), c_j = max_r D_j[r] /
    total[r] its dominant share; L is the largest level the cluster holds in every resource (bisection: the
    fixed point DRF's progressive filling converges to). f_j = min(c_j, L) is the job's fair share.
Step 2, altruism (Carbyne Sec. 4, intra-job scheduler): a job takes only what it needs *now* to finish
    when it would finish with its fair share, and leaves the rest of its share to the others. The paper plans
    the job's remaining DAG on a virtual cluster of its share and schedules it in reverse (as late as
    possible, ALAP). [reconstruction, in waves instead of a packed simulation of the DAG: the ALAP plan of
    a phase of identical tasks on S slots is known in closed form, and a round stays linear in the phases]
    * planning share F = min(L, 1): phase k runs S_k = max(1, floor(F / d_k)) tasks at a time (d_k = dominant
      share of one task, DollyMP Eq. 15); the share is the level, not c_j, because a phase that is not ready
      yet will get the level when it is;
    * phase k with n_k unfinished tasks of mean theta_k takes W_k = ceil(n_k / S_k) waves, l_k = W_k theta_k
      (a running task counts as a whole wave from now: an over-estimate of at most theta_k, renewed at every
      round, so the plan is re-anchored at every event);
    * completion under the fair share: T = now + the longest path of l_k through the unfinished phases (the
      critical path); tail_k = the longest path from k to the job's end; slack_k = T - now - tail_k;
    * ALAP: a ready phase with slack starts nothing now (the job asks for a round at now + slack_k through
      Decisions.wake_at); a phase without slack runs its partial wave first, m_k = n_k - (W_k - 1) S_k tasks,
      of which the running ones count: it must start max(0, m_k - running_k) pending tasks now;
    * phases on parallel branches are each planned with the whole share (the path lengths do not see their
      contention: optimistic for a branch's slack); the quota bounds what they must start together;
    * what it must start never exceeds its quota: fair share minus what it holds (least slack first).
    `altruism=False` turns the step off: each job takes its whole quota (DRF shares, then step 3).
Step 3, leftover (Carbyne Sec. 4, leftover allocation): whatever no job must use now goes to jobs by SRTF --
    least remaining work sum_k n_k theta_k d_k first (DollyMP Eq. 10's volume), donors included, so the
    scheduler stays work-conserving -- packed Tetris-like [choice, as policies/tetris.py]: jobs whose
    remaining work lies within a factor 1 + 1/epsilon form a class, and inside a class every node takes the
    pending task whose demand aligns best with its free resources.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pyscheduler.objects import Job
from pyscheduler.objects.resources import FloatArray
from pyscheduler.policies.base import Decisions, Deferral, IntArray, Priority, Snapshot, register_policy
from pyscheduler.policies.common import (
    REASON_INFEASIBLE,
    REASON_WAITING,
    engine_for,
    pending_tasks,
    record,
)
from pyscheduler.policies.placement import Entry, PlacementEngine

REASON_MUST_START = "carbyne_must_start"  # tasks the ALAP plan starts now (within the job's fair share)
REASON_LEFTOVER = "carbyne_leftover"  # tasks placed on leftover resources (SRTF + packing)
_EPS = 1e-9


@dataclass(slots=True)
class _Phase:
    k: int
    n: int  # unfinished tasks
    running: int
    theta: float
    d: float  # dominant share of one task
    demand: FloatArray
    ready: bool  # parents finished, pending tasks, and some node can hold one
    pending: IntArray | None = None  # pending task indices (ready phases only)


@dataclass(slots=True)
class _JobView:
    pos: int
    phases: dict[int, _Phase]  # unfinished phases by index
    held: FloatArray  # resources of running copies
    want: FloatArray  # held + pending tasks of ready phases
    work: float  # remaining volume sum n theta d (SRTF key)
    placed: dict[int, int] = field(default_factory=dict)  # phase -> pending tasks placed this round


def _view(job: Job, pos: int, snapshot: Snapshot, total: FloatArray, engine: PlacementEngine) -> _JobView:
    safe = np.where(total > 0, total, np.inf)
    held = np.zeros(len(total))
    want = np.zeros(len(total))
    phases: dict[int, _Phase] = {}
    work = 0.0
    for k, p in enumerate(job.phases):
        copies = p.num_remaining - p.num_pending + p.num_losers
        if not copies and p.finished:
            continue
        dem = p.demand.as_array()
        if copies:
            held += copies * dem
        if p.finished:
            continue
        theta = snapshot.theta_sigma(job, p)[0]
        d = float((dem / safe).max())
        ready = p.num_pending > 0 and job.ready(k) and engine.feasible(dem)
        ph = _Phase(k, p.num_remaining, p.num_remaining - p.num_pending, theta, d, dem, ready)
        if ready:
            ph.pending = pending_tasks(job, k)
            want += p.num_pending * dem
        phases[k] = ph
        work += p.num_remaining * theta * d
    return _JobView(pos, phases, held, held + want, work)


def drf_level(want: FloatArray, total: FloatArray) -> float:
    """The DRF water level L: the largest L with sum_j want_j min(1, L / c_j) <= total (inf: all fit)."""
    if want.size == 0 or (want.sum(axis=0) <= total * (1 + _EPS)).all():
        return math.inf
    safe = np.where(total > 0, total, np.inf)
    cap = (want / safe).max(axis=1)
    pos = cap > 0
    want, cap = want[pos], cap[pos]
    lo, hi = 0.0, float(cap.max())
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        alloc = (want * np.minimum(1.0, mid / cap)[:, None]).sum(axis=0)
        if (alloc <= total * (1 + _EPS)).all():
            lo = mid
        else:
            hi = mid
    return lo


def alap_needs(job: Job, v: _JobView, share: float) -> tuple[dict[int, int], dict[int, float]]:
    """Step 2: pending tasks each ready phase must start now to keep the completion time it would have with
    dominant share `share`, and the slack of the phases that can wait (see the module docstring)."""
    length: dict[int, float] = {}
    waves: dict[int, tuple[int, int]] = {}
    for k, ph in v.phases.items():
        s = max(1, math.floor(share / ph.d + _EPS)) if ph.d > 0 else ph.n
        w = math.ceil(ph.n / s)
        waves[k] = (s, w)
        length[k] = w * ph.theta
    head: dict[int, float] = {}  # longest path ending with phase k (unfinished phases only)
    for k in job.topo:
        if k in length:
            head[k] = length[k] + max((head[q] for q in job.parent_idx[k] if q in head), default=0.0)
    span = max(head.values(), default=0.0)
    tail: dict[int, float] = {}  # longest path starting with phase k
    below: dict[int, float] = {}
    for k in reversed(job.topo):
        if k in length:
            tail[k] = length[k] + below.get(k, 0.0)
            for q in job.parent_idx[k]:
                below[q] = max(below.get(q, 0.0), tail[k])
    need: dict[int, int] = {}
    slack: dict[int, float] = {}
    for k, ph in v.phases.items():
        if not ph.ready:
            continue
        sk = span - tail[k]
        if sk > _EPS * max(span, 1.0):
            slack[k] = sk
            continue
        s, w = waves[k]
        first = ph.n - (w - 1) * s  # the partial wave runs first in the ALAP plan
        need[k] = min(max(0, first - ph.running), ph.n - ph.running)
    return need, slack


@register_policy("carbyne")
class CarbynePolicy:
    name = "carbyne"
    timer_driven = False  # acts on arrivals and ends of copies, and at its own wake_at (a slack running out)

    def __init__(self, altruism: bool = True, epsilon: float = 1.0) -> None:
        if not epsilon > 0:
            raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
        self.altruism = bool(altruism)
        self.epsilon = epsilon

    def decide(self, snapshot: Snapshot) -> Decisions:
        jobs = snapshot.jobs
        out = Decisions(snapshot.time, jobs, snapshot.cluster.node_ids)
        if not jobs:
            return out
        total = snapshot.cluster.total_capacity()
        safe = np.where(total > 0, total, np.inf)
        engine = engine_for(snapshot)
        views = [_view(j, i, snapshot, total, engine) for i, j in enumerate(jobs)]
        # step 1: DRF fair shares
        level = drf_level(np.stack([v.want for v in views]), total)
        wake = math.inf
        slacks: dict[tuple[int, int], float] = {}
        must: list[Entry] = []
        held_dom = [float((v.held / safe).max()) for v in views]
        share = [min(float((v.want / safe).max()), level) for v in views]
        drf_order = sorted(
            range(len(jobs)), key=lambda i: (held_dom[i] / max(share[i], _EPS), jobs[i].arrival)
        )
        # step 2: what each job must start now (altruism), within its quota
        for pos in drf_order:
            v = views[pos]
            ready = [ph for ph in v.phases.values() if ph.ready]
            if not ready:
                continue
            if self.altruism:
                need, slack = alap_needs(jobs[pos], v, min(level, 1.0))
                slacks.update({(pos, k): s for k, s in slack.items()})
            else:
                need = {ph.k: ph.n - ph.running for ph in ready}
            quota = share[pos] - held_dom[pos]
            for ph in sorted(ready, key=lambda p: slacks.get((pos, p.k), 0.0)):
                n = need.get(ph.k, 0)
                if ph.d > 0:
                    n = min(n, max(0, math.floor(quota / ph.d + _EPS)))
                if n > 0:
                    assert ph.pending is not None
                    must.append(Entry(pos, ph.k, ph.demand, ph.pending[:n]))
                    quota -= n * ph.d
        if must and engine.cand.size:
            for e, got in zip(must, engine.place_group(must, best_fit=True), strict=True):
                record(out, e, got, False, REASON_MUST_START)
                views[e.job_pos].placed[e.phase_k] = len(got.tasks)
        # step 3: leftover by SRTF, Tetris-like packing inside classes of similar remaining work
        srtf = sorted(range(len(jobs)), key=lambda i: (views[i].work, jobs[i].arrival, jobs[i].job_id))
        base = math.log(1 + 1 / self.epsilon)
        level_of = -1
        last: int | None = None
        group: list[Entry] = []
        for rank, pos in enumerate(srtf):
            v = views[pos]
            c = math.floor(math.log(max(v.work, 1e-12)) / base)
            if c != last:
                self._place(out, engine, group, views)
                group = []
                last = c
                level_of += 1
            out.priorities.append(Priority(jobs[pos].job_id, level_of, rank, "carbyne_srtf"))
            if not engine.cand.size:
                continue
            for ph in v.phases.values():
                done = v.placed.get(ph.k, 0)
                if ph.ready and ph.pending is not None and done < len(ph.pending):
                    group.append(Entry(pos, ph.k, ph.demand, ph.pending[done:]))
        self._place(out, engine, group, views)
        # deferrals, and a wake-up when the first altruistically deferred phase runs out of slack
        for v in views:
            job = jobs[v.pos]
            for ph in v.phases.values():
                left = job.phases[ph.k].num_pending - v.placed.get(ph.k, 0)
                if left <= 0:
                    continue
                pid = job.phases[ph.k].phase_id
                if ph.ready:
                    out.deferrals.append(Deferral(job.job_id, pid, left, REASON_WAITING))
                    wake = min(wake, snapshot.time + slacks.get((v.pos, ph.k), math.inf))
                elif job.ready(ph.k) and not engine.feasible(ph.demand):
                    out.deferrals.append(
                        Deferral(
                            job.job_id,
                            pid,
                            left,
                            REASON_INFEASIBLE,
                            f"demand {ph.demand.tolist()} exceeds every node's capacity",
                        )
                    )
        out.wake_at = wake
        return out

    @staticmethod
    def _place(out: Decisions, engine: PlacementEngine, group: list[Entry], views: list[_JobView]) -> None:
        if not group or not engine.cand.size:
            return
        for e, got in zip(group, engine.place_group(group, best_fit=True), strict=True):
            record(out, e, got, False, REASON_LEFTOVER)
            v = views[e.job_pos]
            v.placed[e.phase_k] = v.placed.get(e.phase_k, 0) + len(got.tasks)

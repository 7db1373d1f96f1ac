"""The AM plan: the ClonePlan a job's AM helper gets back, decided by the same core policy that places
containers.

The job's profile becomes a core Job (phases, tasks, demand, DAG; θ/σ from the durations reported so far,
else the recurring-job history, else 1 s / 0) with the attempts reported so far replayed onto it (so a
reduce phase is runnable, and clonable, once its maps finished); the cluster and the other jobs are
translated from the view that the last round of the RM session owning the application left (else of a
session that knows it, else of any: service/round/planview.py), without that session's lock; the
policy's `clone_grants` / `omegas` for that job are the answer. A policy that grants no clones answers 0
clones and ω = 0 with its reason.

Two kinds of clones reach the AM:
* per phase (`clones_per_phase`): clones of every task of the phase at its start (Algorithm 2's idle
  passes, Corollary 4.1, small-job launch clones); a grant for late tasks only or for the phase tail is
  not one of these (policies/dollymp.py `PER_TASK_REASONS`);
* per task (`task_clones`): the tasks judged on their own (a late task, the phase tail) that the core
  placed a clone of in this decision, with the clones each should have in all and why (`task_clones`),
  and tasks whose clones wait while every copy straggles (estimate/copies.py `slow_waiting`); only these
  clones are launched again after they yield their containers.

Cost bound (`appmaster.plans_per_s`): each fresh plan is a full core round over the cluster, and every
running job's AM asks about once a second. `PlanBudget` is a token bucket of fresh plans per second
shared by all jobs; when it is empty a job gets its last plan again (counted in
`dollymp_appmaster_plans_cached`). A job's first plan is always fresh.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pyscheduler import metrics
from pyscheduler.estimate.copies import slow_waiting
from pyscheduler.estimate.runtimes import FRAMEWORK
from pyscheduler.objects import MAX_CLONES, ClusterState, DecisionKind, Job
from pyscheduler.objects.decision import DecisionRecorder
from pyscheduler.policies import Policy, Snapshot
from pyscheduler.policies.cloning import REASON_PHASE_TAIL
from pyscheduler.policies.dollymp import PER_TASK_REASONS
from pyscheduler.service.round.amjob import job_of, no_data_means, replay_counted, running
from pyscheduler.service.round.planview import PlanView
from pyscheduler.service.round.translate import to_snapshot
from pyscheduler.service.roundsfirst import checkpoint
from pyscheduler.service.state.amregistry import JUDGED_ALONE, AmRegistry
from pyscheduler.service.state.amreports import task_index
from pyscheduler.service.state.named_tasks import RULE_CORE, RULE_SLOW_WAITING, Named
from pyscheduler.wire import pb

log = logging.getLogger("dollymp.appmaster")
DEFAULT_PLANS_PER_S = 50.0  # fresh plans per second for all AMs (`appmaster.plans_per_s`)


class PlanBudget:
    """A token bucket: at most `rate` fresh plans per second on average, bursts up to `burst`."""

    def __init__(self, rate: float, burst: float | None = None, clock: Callable[[], float] = time.monotonic):
        if not (math.isfinite(rate) and rate > 0):
            raise ValueError(f"appmaster.plans_per_s must be finite > 0, got {rate!r}")
        self.rate = float(rate)
        self.burst = max(1.0, float(burst if burst is not None else rate))
        self._clock = clock
        self._tokens = self.burst
        self._at = clock()
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return True
            return False


def task_clones(app_id: str, decisions: Any, attempts: Sequence[Any]) -> dict[str, tuple[int, int]]:
    """Hadoop task id -> (clones the task should have in all, pb reason), for the tasks judged on their own
    that the core placed a clone of this round: a late task (Decisions.late, or a phase granted by a late
    rule) is REASON_CLONE_LATE_COPY, a phase tail's REASON_CLONE_PHASE_TAIL. The count is the clones the
    AM already launched (any not failed or killed) plus the clones placed now.

    A clone of a phase granted at launch (clones_per_phase) is not named: the AM launches it from the
    phase's count, and does not launch it again once it yielded its container (service/round/yielding.py), or
    clones at launch would be preempted and relaunched in turn whenever originals arrive."""
    late = {(j, ph, i) for j, ph, i in decisions.late if j == app_id}
    why = {g.phase_id: g.reason for g in decisions.clone_grants if g.job_id == app_id}
    placed: dict[tuple[str, int], int] = {}
    reason: dict[tuple[str, int], int] = {}
    for pl in decisions.iter_placements(app_id, clones_only=True):
        key = (pl.phase_id, pl.task_index)
        grant = why.get(pl.phase_id)
        if grant == REASON_PHASE_TAIL:
            reason[key] = pb.REASON_CLONE_PHASE_TAIL
        elif (app_id, *key) in late or grant is None or grant in PER_TASK_REASONS:
            reason[key] = pb.REASON_CLONE_LATE_COPY  # (no grant: named, as before reasons were told apart)
        else:
            continue  # a clone at launch: the phase's count says so (module docstring)
        placed[key] = placed.get(key, 0) + 1
    for _, phase_id, i in late:  # late but no room in this round: one clone, which may take a launch clone's
        if (phase_id, i) not in placed:  # container (service/round/yielding.py)
            placed[(phase_id, i)], reason[(phase_id, i)] = 1, pb.REASON_CLONE_LATE_COPY
    if not placed:
        return {}
    ids: dict[tuple[str, int], str] = {}
    have: dict[str, int] = {}
    for a in attempts:
        i = task_index(a.task_id)
        if i is not None:
            ids[(a.phase_id, i)] = a.task_id
            live = a.is_clone and a.state not in (pb.ATTEMPT_FAILED, pb.ATTEMPT_KILLED)
            have[a.task_id] = have.get(a.task_id, 0) + live
    out: dict[str, tuple[int, int]] = {}
    for key, n in placed.items():
        task_id = ids.get(key)
        if task_id is not None:
            out[task_id] = (min(MAX_CLONES, have.get(task_id, 0) + n), reason[key])
    return out


class ProfileNodes:
    """The nodes of the AM plans' cluster (vcores and memory of every node of the chosen mirror), kept while
    the nodes and their capacities stay as they were: each plan copies it with the mirror's free room
    (`ClusterState.with_free`) instead of building and checking the whole cluster again. The kept state is
    never handed to a policy."""

    def __init__(self) -> None:
        self._kept: ClusterState | None = None

    def of(self, c: ClusterState, keep: int) -> ClusterState:
        """`c`'s first `keep` dimensions as a new ClusterState, every row active (`from_arrays`)."""
        cap, free, dims = c.capacity[:, :keep], c.free[:, :keep], c.dims[:keep]
        kept = self._kept
        if (
            kept is None
            or kept.dims != dims
            or kept.node_ids != c.node_ids
            or not np.array_equal(kept.capacity, cap)
        ):
            kept = ClusterState.from_arrays(list(c.node_ids), cap, cap, dims)
            self._kept = kept
        return kept.with_free(free)


def context_of(
    view: PlanView | None, app_id: str, hints: Any, now: float, nodes: ProfileNodes | None = None
) -> tuple[ClusterState, list[Job]]:
    """The cluster and every other application's pending work, translated from `view`: the state the
    last round of the RM session that owns the application left (service/round/planview.py), with the AM
    reports of now (`hints`); the plan for one job is decided among the jobs it competes with, so clones
    are granted only where the core would place them. No lock: the view is never written, and the
    translation writes only its own copy of the rounds' memory."""
    if view is None:
        return ClusterState(), []
    snap, _, _ = to_snapshot(view.mirror, view.memory.for_plan(), now, hints)
    c = snap.cluster
    keep = len(c.dims) if len(c.dims) <= 2 else 2  # the profile speaks vcores and memory only
    cluster = (nodes or ProfileNodes()).of(c, keep)
    others = [
        j
        for j in snap.jobs
        if j.job_id != app_id and (keep == len(c.dims) or all(len(ph.demand.values) <= 2 for ph in j.phases))
    ]
    return cluster, others


class AmPlanner:
    """Decides ClonePlans for the applications of an `AmRegistry` (module docstring)."""

    def __init__(
        self,
        apps: AmRegistry,
        views: Callable[[str], PlanView | None],
        policy: Policy | None,
        recorder: DecisionRecorder,
        budget: PlanBudget | None = None,
    ) -> None:
        self.apps = apps
        # an application's session's latest view (SessionRegistry.plan_view, service/rmproxy/session.py)
        self.views = views
        self.policy = policy
        self.recorder = recorder
        self.budget = budget if budget is not None else PlanBudget(DEFAULT_PLANS_PER_S)
        self.nodes = ProfileNodes()

    def plan(self, app_id: str) -> Any:
        with self.apps.lock:
            cached = self.apps.apps[app_id].plan
        if cached is not None and not self.budget.take():
            metrics.APPMASTER_PLANS_CACHED.inc()
            return cached
        try:
            plan = self._fresh(app_id)
        except Exception as exc:  # this application only: no clones this time, said why (isolate.py)
            log.exception("clone plan for %s failed", app_id)
            return pb.ClonePlan(application_id=app_id, detail=f"excluded: {type(exc).__name__}: {exc}"[:300])
        with self.apps.lock:
            st = self.apps.apps.get(app_id)
            if st is not None:
                st.plan = plan
        return plan

    def _fresh(self, app_id: str) -> Any:
        now = self.apps.clock.now()
        reg = self.apps
        checkpoint()  # RM rounds first (service/roundsfirst.py), here and between the steps below
        with reg.lock:
            st = reg.apps[app_id]
            stats = reg.estimates(st)  # the framework prior too: θ/σ as the RM rounds see this job
            job = job_of(st.profile, {p: (e.mean, e.sd) for p, e in stats.items()})
            reported = list(st.attempts.values())
            live = st.kept.live_attempts(st.attempts)  # running or waiting: the only copies `running` reads
            first = {a.attempt_id: f for a in live if (f := st.first_progress.get(a.attempt_id)) is not None}
            startup = reg.startups.median()  # under the lock: `record` appends to it
            judged = set(st.per_task)
            reports = list(st.kept.reports.values())  # kept as the AM reports (service/state/amkept.py)
            counts = st.kept.task_rows()
            # the copies' times, which `slow_waiting` reads and the next RM round would (a job whose clones
            # yield): kept per report, paid for here by the AM rather than by the round
            times = (
                reg.copy_times(st)[0] if st.profile.clones_preemptible or any(st.waiting.values()) else None
            )
        replay_counted(job, counts, reported)  # the job is this call's; the reports kept are not changed
        plan = pb.ClonePlan(application_id=app_id)
        for ph in st.profile.phases:
            plan.clones_per_phase[ph.phase_id] = 0
        if self.policy is None:
            plan.detail = "the policy grants no clones"
            return plan
        checkpoint()
        cluster, others = context_of(self.views(app_id), app_id, reg.hints, now, self.nodes)
        checkpoint()
        copies = running(app_id, live, first, now, startup)
        measured = frozenset(p for p, e in stats.items() if e.source != FRAMEWORK)
        no_data_means(job, measured, copies, now)
        snap = Snapshot(now, cluster, [*others, job], copies, startup_s=startup or 0.0)
        checkpoint()
        decisions = self.policy.decide(snap)
        checkpoint()
        for g in decisions.clone_grants:
            # clones at launch for every task of the phase; a grant for late tasks or the phase tail
            # (PER_TASK_REASONS) is carried out by the per-task clones below, or the AM would clone
            # every task of the phase
            launch = g.reason not in PER_TASK_REASONS
            if g.job_id == app_id and g.phase_id in plan.clones_per_phase and launch:
                plan.clones_per_phase[g.phase_id] = max(0, min(MAX_CLONES, g.clones))
        named = task_clones(app_id, decisions, reported)
        rules = dict.fromkeys(named, RULE_CORE)
        checkpoint()
        for task_id, n in slow_waiting(reports, now, {*named, *judged}, startup, times).items():
            named[task_id] = (n, pb.REASON_CLONE_LATE_COPY)
            rules[task_id] = RULE_SLOW_WAITING
        checkpoint()
        for task_id, (n, why) in sorted(named.items()):
            plan.task_clones.add(task_id=task_id, clones=n, reason=why, detail="clone placed by the core")
        if named:
            with reg.lock:
                st.version += 1
                st.per_task.update({t: why for t, (_, why) in named.items() if why in JUDGED_ALONE})
                for a in st.attempts.values():  # clones already waiting (`slow_waiting`) are alone now
                    if st.waits_alone(a):
                        st.waiting_alone[a.attempt_id] = a.phase_id
        for o in decisions.omegas:
            if o.job_id == app_id and math.isfinite(o.omega) and o.omega >= 0:
                plan.delay_assignment_wait_s = o.omega
        records = [
            r
            for r in decisions.to_records(app_id, clones_only=True)
            if (
                r.kind in (DecisionKind.CLONE_GRANT, DecisionKind.OMEGA)
                or (r.kind == DecisionKind.PLACEMENT and r.inputs.get("is_clone"))
            )
        ]
        plan.detail = f"policy {self.policy.name}: " + (
            ", ".join(sorted({r.reason for r in records})) if records else "no clone grants"
        )
        memo = repr(
            (
                sorted(plan.clones_per_phase.items()),
                plan.delay_assignment_wait_s,
                [(t.task_id, t.clones) for t in plan.task_clones],
            )
        )
        checkpoint()
        where = {a.task_id: a.phase_id for a in reported if a.task_id in named} if named else {}
        listed = [
            Named(t, where[t], i, n, why, rules[t])
            for t, (n, why) in sorted(named.items())
            if t in where and (i := task_index(t)) is not None
        ]
        with reg.lock:
            changed = st.last_plan != memo
            st.last_plan = memo
            newly = st.named_log.records(now, app_id, listed, job, copies)
        if newly:  # a task when it is named, or named with another count
            self.recorder.append(newly)
        if records and changed:  # log grants and ω when they change, not on every report
            self.recorder.append(records)
            tasks = {ph.phase_id: ph.tasks for ph in st.profile.phases}
            per_phase = sum(c * tasks.get(p, 0) for p, c in plan.clones_per_phase.items())
            metrics.CLONES_GRANTED.inc(per_phase + sum(t.clones for t in plan.task_clones))
        return plan

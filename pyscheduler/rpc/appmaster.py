"""AppMasterService: what the AM helper tells the service (job profile, attempts) and the ClonePlan back.

The clone counts per phase and ω come from the same core policy that places containers: the job's
profile becomes a core Job (phases, tasks, demand, DAG; θ/σ from the durations reported so far, else
the recurring-job history, else 1 s / 0) with the attempts reported so far replayed onto it (so a
reduce phase is runnable, and clonable, once its maps finished), the cluster and the other jobs are
those of the mirror of the session that knows the application (any session if none does), and the
policy's `clone_grants` / `omegas` for that job are the answer. A policy that grants no clones
(fcfs, yarn-fcfs) answers 0 clones and ω = 0 with its reason.

Two kinds of clones reach the AM:
* per phase (`clones_per_phase`): clones of every task of the phase at its start (Algorithm 2's idle
  passes, Corollary 4.1, small-job launch clones); a grant for late tasks only (the residual and
  progress rules) or for the phase tail is not one of these (policies/dollymp.py `PER_TASK_REASONS`);
* per task (`task_clones`): the tasks judged on their own (a late task, the phase tail) that the core
  placed a clone of in this decision, with the clones each should have in all and why (`_task_clones`);
  only these clones are launched again after they yield their containers. The running copies the AM
  reported, with their progress and launch time, are the snapshot's attempts, so a rule that reads a
  copy's progress sees it as in the simulator. The AM asks again every `dollymp.am.plan-poll-ms`.

Cost bound (`appmaster.plans_per_s`): each fresh plan is a full core round over the cluster, and every
running job's AM asks about once a second, so on a cluster with many jobs the AM calls alone would take
the service's CPU. `PlanBudget` is a token bucket of fresh plans per second shared by all jobs; when it
is empty a job gets its last plan again (reports are still recorded, and the next fresh plan sees them),
counted in `dollymp_appmaster_plans_cached`. A job's first plan is always fresh.
"""

from __future__ import annotations

import logging
import math
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import grpc

from pyscheduler import metrics
from pyscheduler.objects import Attempt, ClusterState, DecisionKind, Job, Phase, Resources
from pyscheduler.policies import Policy, Snapshot
from pyscheduler.policies.dollymp import PER_TASK_REASONS, REASON_PHASE_TAIL
from pyscheduler.rpc import ambounds, validate
from pyscheduler.rpc.limits import DEFAULTS, Limits, Refusal
from pyscheduler.rpc.medians import LeaveOut
from pyscheduler.rpc.named import RULE_CORE, RULE_SLOW_WAITING, Named, NamedLog
from pyscheduler.rpc.outcomes import outcome_records
from pyscheduler.rpc.servicer import Malformed, lenient
from pyscheduler.rpc.session import DecisionRecorder, SessionRegistry
from pyscheduler.rpc.translate import PhaseHint, to_snapshot
from pyscheduler.rpc.yielding import Copy
from pyscheduler.wire import pb

SERVICE_NAME = "dollymp.v1.AppMasterService"
log = logging.getLogger("dollymp.appmaster")
MAX_CLONES = 2  # at most two clones per task (DollyMP, design.md)
DEFAULT_PLANS_PER_S = 50.0  # fresh plans per second for all AMs (`appmaster.plans_per_s`)
_FINAL = (pb.ATTEMPT_SUCCEEDED, pb.ATTEMPT_FAILED, pb.ATTEMPT_KILLED)
# TaskClones reasons of tasks judged on their own (late, the phase tail): their clones never yield
_JUDGED_ALONE = frozenset({pb.REASON_CLONE_LATE_COPY, pb.REASON_CLONE_PHASE_TAIL})


def _profile(p: Any) -> None:
    validate.nonempty(p.application_id, "application_id")
    validate.at_least(p.submit_time_ms, 0, "submit_time_ms")
    if not p.phases:
        raise validate.InvalidMessage("phases", "must list at least one phase")
    ids = [ph.phase_id for ph in p.phases]
    for i, ph in enumerate(p.phases):
        at = f"phases[{i}]"
        validate.nonempty(ph.phase_id, f"{at}.phase_id")
        if ph.phase_id in ids[:i]:
            raise validate.InvalidMessage(f"{at}.phase_id", f"duplicate phase {ph.phase_id!r}")
        validate.at_least(ph.tasks, 1, f"{at}.tasks")
        validate.resource(ph.demand, f"{at}.demand", ph, "demand")
        if ph.demand.memory_mb == 0 and ph.demand.vcores == 0:
            raise validate.InvalidMessage(f"{at}.demand", "must be non-zero")
        validate.at_least(ph.yarn_priority, 0, f"{at}.yarn_priority")
        for j, parent in enumerate(ph.parents):
            if parent not in ids or parent == ph.phase_id:
                raise validate.InvalidMessage(f"{at}.parents[{j}]", f"unknown phase {parent!r}")
    try:  # the core rejects DAG cycles; say which field
        _job_of(p, {})
    except ValueError as exc:
        raise validate.InvalidMessage("phases", str(exc)) from None


def _reports(r: Any) -> None:
    validate.nonempty(r.application_id, "application_id")
    for i, a in enumerate(r.attempts):
        at = f"attempts[{i}]"
        validate.nonempty(a.task_id, f"{at}.task_id")
        validate.nonempty(a.attempt_id, f"{at}.attempt_id")
        validate.nonempty(a.phase_id, f"{at}.phase_id")
        validate.enum_value(a.state, pb.AttemptState, f"{at}.state")
        validate.finite_nonneg(a.duration_s, f"{at}.duration_s")
        validate.at_least(a.time_ms, 0, f"{at}.time_ms")
        validate.finite_nonneg(a.progress, f"{at}.progress")
        if a.progress > 1.0:
            raise validate.InvalidMessage(f"{at}.progress", f"must be at most 1, got {a.progress!r}")
        validate.at_least(a.launch_time_ms, 0, f"{at}.launch_time_ms")


def _waiting_clone(a: Any) -> bool:
    """A clone the AM launched that still waits for a container (rpc/clones.py places those last)."""
    return bool(a.is_clone) and a.state == pb.ATTEMPT_WAITING


def _job_of(p: Any, stats: dict[str, tuple[float, float]]) -> Job:
    phases = [
        Phase(
            ph.phase_id,
            ph.tasks,
            Resources((float(ph.demand.vcores), float(ph.demand.memory_mb))),
            *stats.get(ph.phase_id, (1.0, 0.0)),
            tuple(ph.parents),
        )
        for ph in p.phases
    ]
    return Job(p.application_id, p.submit_time_ms / 1000.0, phases, p.job_name, p.application_id)


def _task_index(task_id: str) -> int | None:
    """Hadoop's task ids end in the task's index (task_<cluster>_<app>_m_000003 -> 3)."""
    tail = task_id.rsplit("_", 1)[-1]
    return int(tail) if tail.isdigit() and len(tail) <= 9 else None  # (no 5,000-digit int parse)


def _replay(job: Job, attempts: Sequence[Any]) -> None:
    """Puts the AM's reported attempts on the job's phases, so the core sees the job as it runs: copies
    started (one per attempt that had a container, and per clone waiting for one), losers ended, a
    success finishing its task. A phase whose parents all finished becomes runnable, and its clones are
    bounded by the parents' copies (Dolly 3.2), as in the simulator. Attempts of unknown tasks are
    ignored."""
    by_task: dict[tuple[str, int], list[Any]] = {}
    for a in attempts:
        i = _task_index(a.task_id)
        if i is not None and (a.state != pb.ATTEMPT_WAITING or _waiting_clone(a)):
            by_task.setdefault((a.phase_id, i), []).append(a)
    phases = {ph.phase_id: ph for ph in job.phases}
    for (phase_id, i), copies in by_task.items():
        ph = phases.get(phase_id)
        if ph is None or i >= ph.num_tasks:
            continue
        for _ in copies:
            ph.start_copy(i)
        for a in copies:
            if a.state in (pb.ATTEMPT_FAILED, pb.ATTEMPT_KILLED):
                ph.end_copy(i, False)
        if any(a.state == pb.ATTEMPT_SUCCEEDED for a in copies):
            ph.end_copy(i, True)


@dataclass(frozen=True, slots=True)
class ReportedAttempt(Attempt):
    """A running attempt as the AM reported it, with Hadoop's progress score (fraction of its work done):
    the attribute policies read for a copy's progress, as from the simulator's attempts."""

    progress: float = 0.0


def work_start(launch_s: float, first: tuple[float, float] | None, last: tuple[float, float]) -> float | None:
    """When an attempt's work began, seen from two of its progress reports (time s, progress): the rate
    between the first report with progress and the latest, extended back to progress 0. Choice: a task
    JVM's start-up (seconds on a busy node) reports no progress, and LATE's estimate from the launch
    time would count it as slowness, so every young copy would look late; the rate between two reports
    leaves it out. None until two reports show progress growing (the copy is not judged by progress
    yet). Not chosen: judging at the first report with the median start-up of other attempts
    (`StartupEstimate`) as the start of work. On a busy node a JVM that took longer than the median looks
    late at once: bench-cluster run b28 cloned all four maps of a job 18-20 s after their launch, and every
    clone lost."""
    if first is None:
        return None
    (t1, p1), (t2, p2) = first, last
    if not (p2 > p1 > 0 and t2 > t1):
        return None
    return max(launch_s, t2 - p2 * (t2 - t1) / (p2 - p1))


def _finish_at_rate_ms(a: Any, first: tuple[float, float] | None) -> float | None:
    """When attempt `a` finishes at the rate its progress grew since its work began (`work_start`: the
    JVM's start-up left out), ms on the AM's clock; None until two reports show progress growing."""
    last = (a.time_ms / 1000.0, a.progress)
    began = work_start((a.launch_time_ms or a.time_ms) / 1000.0, first, last)
    if began is None or a.progress <= 0:
        return None
    return float((began + (last[0] - began) / min(a.progress, 1.0)) * 1000.0)


def _finish_at_least_ms(a: Any, first: tuple[float, float] | None) -> float | None:
    """The earliest attempt `a` can finish, ms on the AM's clock, from its first report with progress
    (t1, p1) and its latest (t, p): its work, begun after its launch, takes at least (t - t1) / p.
    None before a report with progress.

    Why a bound: progress grows in steps (a real map's records, the StragglerJob's
    `dollymp.straggler.progress-steps`, 20 by default), and the rate (`_finish_at_rate_ms`) needs a second
    step, which a straggler reaches late: a map whose copy drew 752 s showed its second step 75 s after its
    work began (bench run b55), so it was judged neither straggling nor late while its clones waited and
    yielded. The bound holds when one step is at most p1 (the copy's progress is below p + p1 at t and at
    least p1 at t1, at a constant rate: D > (t - t1) / p), and it grows with every report that shows no
    new step: at 9 s after a 37.6 s first step, that copy's work takes at least 180 s."""
    if first is None or a.progress <= 0:
        return None
    t = a.time_ms / 1000.0
    launch = (a.launch_time_ms or a.time_ms) / 1000.0
    return float((launch + max(0.0, t - first[0]) / min(a.progress, 1.0)) * 1000.0)


class StartupEstimate:
    """How long recent attempts took from their launch to their first report with progress, across the
    service's jobs: the median of the last `keep`, once `least` were seen. It covers the JVM start-up,
    the first unit of work and the report's delay. Choice: this and not the start of work extrapolated
    from two reports (`work_start`), which came out at about 5 s on the bench machine while copies showed
    no progress for 15 s: the stalled rule (`_running`) then cloned every young copy (bench-cluster run
    b29). As the cost a clone pays before it works (`Snapshot.startup_s`) it errs on the long side, so
    clones come less eagerly."""

    def __init__(self, keep: int = 64, least: int = 3) -> None:
        self._seen: deque[float] = deque(maxlen=keep)
        self.least = least

    def add(self, seconds: float) -> None:
        if math.isfinite(seconds) and seconds >= 0:
            self._seen.append(seconds)

    def median(self) -> float | None:
        return statistics.median(self._seen) if len(self._seen) >= self.least else None


def _running(
    job_id: str,
    attempts: Sequence[Any],
    first: dict[str, tuple[float, float]],
    now: float,
    startup_s: float | None = None,
) -> list[ReportedAttempt]:
    """The job's running copies (in a container) for the snapshot, with the start of their work
    (`work_start`) and progress, and the clones still waiting for a container (progress nan, from when
    they were reported: in the simulator a clone runs once placed, and a late task gets its next clone
    only when that one is late as well; counted as nothing, a waiting clone let the same task get its
    second clone a round later, seen in bench-cluster run b28). A copy that still reports progress 0 once
    the start-up other attempts showed (`startup_s`) is over carries progress 0 from launch + startup_s:
    after the policy's progress_after seconds of such work it is stalled, so late (`residual.late_copies`;
    at 0 progress LATE has no rate, and a job of a few tasks would otherwise wait for its straggler to
    report twice). Any other copy without a rate yet carries progress nan (judged by the elapsed-time rule
    from its launch)."""
    out: list[ReportedAttempt] = []
    for a in attempts:
        i = _task_index(a.task_id)
        if i is None:
            continue
        if _waiting_clone(a):  # a copy asked for: not late, so it holds off the next clone
            at = min(a.time_ms / 1000.0, now)
            out.append(ReportedAttempt(a.attempt_id, job_id, a.phase_id, i, "", True, at, math.nan))
            continue
        if a.state != pb.ATTEMPT_RUNNING or not a.container_id:
            continue
        launch = (a.launch_time_ms or a.time_ms) / 1000.0
        began = work_start(launch, first.get(a.attempt_id), (a.time_ms / 1000.0, a.progress))
        if began is not None:
            start, progress = began, a.progress
        elif a.progress == 0 and startup_s is not None and launch + startup_s < now:
            start, progress = launch + startup_s, 0.0  # stalled once progress_after has passed
        else:
            start, progress = launch, math.nan
        out.append(
            ReportedAttempt(
                a.attempt_id, job_id, a.phase_id, i, a.node_id, a.is_clone, min(start, now), progress
            )
        )
    return out


def _no_data_means(job: Job, known: frozenset[str], running: Sequence[ReportedAttempt], now: float) -> None:
    """A phase with no finished task and no recurring-job history has no estimate of a fresh copy's run
    time (`_job_of` puts 1 s there, a placeholder). Choice: it takes the median projected run time
    (elapsed work / progress, LATE's rate) of its own running copies that report progress, so that a
    fresh copy is expected to take what its running copies take. Without it the late-copy rule compared
    every copy against 1 s: any task alone in its phase (a job's one reduce), or judged before its
    siblings reported twice, looked late and got clones at once (bench-cluster run b24). As Hadoop's
    speculator, which estimates from the job's finished tasks of the same type, a phase with nothing to
    compare against now gets no late clone by progress: a lone copy cannot be late against itself."""
    for ph in job.phases:
        if ph.phase_id in known:
            continue
        totals = [
            (now - a.start_time) / a.progress
            for a in running
            if a.phase_id == ph.phase_id
            and math.isfinite(a.progress)
            and a.progress > 0
            and now > a.start_time
        ]
        if totals:
            ph.mean = statistics.median(totals)


# Hadoop's MapTask splits its progress score in two when its job has reduces: reading its input (its "map"
# phase, 0.667 of the score) and sorting its output (0.333). The service times a map copy by its map
# phase (`work_progress`).
MAP_PHASE_SHARE = 0.667


def work_progress(progress: float, share: float = MAP_PHASE_SHARE) -> float:
    """A map copy's progress through its map phase, from Hadoop's progress score of a MapTask whose job
    has reduces (`MAP_PHASE_SHARE`): min(1, progress / share).

    Why: every estimate here extends a copy's rate to progress 1 (`_finish_at_rate_ms`,
    `_finish_at_least_ms`, `_no_data_means`, LATE's rate in the core), but a map's score reaches only
    0.667 when its input is read, at the rate of its reading; so a map copy's run was taken for 1.5 x
    its length, and a fresh copy's (bench runs b61-b66: the phase's fresh-copy estimate t_new_s was
    132-176 s in the decision log for maps whose draws were 40-140 s). Choice: the sort that follows is
    not timed. It is short where a map's output is small (the StragglerJob's: 100 records), and a real
    map with a long sort is taken for shorter than it is, by its sort; Hadoop's own estimators (LATE's
    rate) extend the score to 1 as before."""
    return min(1.0, progress / share) if progress > 0 else progress


def _upstream(profile: Any) -> frozenset[str]:
    """Phases some phase waits for: a MapReduce job's maps when it has reduces (`work_progress`)."""
    return frozenset(q for ph in profile.phases for q in ph.parents)


def _last_stages(profile: Any) -> frozenset[str]:
    """Phases of the job's last stage: with parents (upstream phases), and no phase waits for them."""
    parents = {q for ph in profile.phases for q in ph.parents}
    return frozenset(ph.phase_id for ph in profile.phases if ph.parents and ph.phase_id not in parents)


def _waits_alone(st: _AppState, a: Any) -> bool:
    """Whether attempt `a` is a clone waiting for its container that goes before clones at launch, which
    yield their containers to it (`_AppState.waiting_alone`; rpc/clones.py, rpc/yielding.py): a clone of a
    task judged on its own (a late copy, the phase tail), or of the job's last stage. A last-stage task
    (its reduce) is what the job's finish waits for, with the least work left of any running job's
    phase; a clone at launch of another job's map is a fresh draw of one of its several tasks (bench
    runs b53, b55, b56: a job's reduce, whose original drew 41 s and its best of three draws 31 s, ran
    without its clones while other jobs' clones at launch held every container)."""
    if not _waiting_clone(a):
        return False
    return st.per_task.get(a.task_id) in _JUDGED_ALONE or a.phase_id in st.last_stages


def _task_clones(app_id: str, decisions: Any, attempts: Sequence[Any]) -> dict[str, tuple[int, int]]:
    """Hadoop task id -> (clones the task should have in all, pb reason), for the tasks judged on their own
    that the core placed a clone of this round: a late task (Decisions.late, or a phase granted by a late
    rule) is REASON_CLONE_LATE_COPY, a phase tail's REASON_CLONE_PHASE_TAIL. The count is the clones the
    AM already launched (any not failed or killed) plus the clones placed now.

    A clone of a phase granted at launch (clones_per_phase: small jobs, Algorithm 2's idle passes) is not
    named: the AM launches it from the phase's count, and does not launch it again once it yielded its
    container (rpc/yielding.py), or clones at launch would be preempted and relaunched in turn whenever
    originals arrive (bench-cluster run b41: one map of a 4-map job had 10 clones started)."""
    late = {(j, ph, i) for j, ph, i in decisions.late if j == app_id}
    why = {g.phase_id: g.reason for g in decisions.clone_grants if g.job_id == app_id}
    placed: dict[tuple[str, int], int] = {}
    reason: dict[tuple[str, int], int] = {}
    for pl in decisions.iter_placements():
        if pl.job_id != app_id or not pl.is_clone:
            continue
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
        if (phase_id, i) not in placed:  # container (rpc/yielding.py)
            placed[(phase_id, i)], reason[(phase_id, i)] = 1, pb.REASON_CLONE_LATE_COPY
    if not placed:
        return {}
    ids: dict[tuple[str, int], str] = {}
    have: dict[str, int] = {}
    for a in attempts:
        i = _task_index(a.task_id)
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


class _Left(NamedTuple):
    """A running copy's time left, s (None: no report with progress yet), and whether its rate is known
    (`_finish_at_rate_ms`) or only its earliest finish (`_finish_at_least_ms`)."""

    s: float | None
    rated: bool


# A running copy still at progress 0 after this much work (its launch plus the usual start-up, `startup_s`)
# and this fraction of a fresh copy's run time has at least a fresh copy's time left (`_time_left`).
STALL_MIN_S = 10.0
STALL_FRAC = 0.15


def _time_left(
    attempts: Sequence[Any],
    first: dict[str, tuple[float, float]],
    now_s: float,
    startup_s: float | None = None,
) -> tuple[dict[str, list[_Left]], dict[str, float]]:
    """Per task, from its attempts as last reported: (its running copies' time left, each at the later
    of its rate since its work began and its earliest finish; what a fresh copy of its phase takes: the
    median run time, launch to finish, of the phase's other tasks' copies, finished ones and running ones
    at their rates, only for tasks whose phase has such copies).

    A copy with no progress yet has neither a rate nor an earliest finish; with the usual start-up
    (`startup_s`) known, one that has worked more than STALL_MIN_S and STALL_FRAC of a fresh copy's run
    time without a first step counts as having more time left than a fresh copy (time left infinite, not
    rated). Choice, like the core's stalled rule (`_running`): progress comes in steps (a real map's
    records, the StragglerJob's twentieths), and a copy whose first step takes 0.15 of a fresh copy's
    whole run is a straggler by any step count above six (a StragglerJob copy: it runs 3 x a fresh
    copy). Bench run b60: a map whose original drew 752 s (first step after 37.6 s of work) had three
    clones at launch yield 5-13 s after their start, 29-42 s after the original's, while nothing marked
    it as straggling; its winning clone started 108 s after it. With a quarter (b61), its two clones at
    launch still yielded, after about 18 s and 23 s of the original's work.
    """
    phase_of: dict[str, str] = {}
    left: dict[str, list[_Left]] = {}
    totals: dict[str, list[tuple[str, float]]] = {}
    stalled: dict[str, list[float]] = {}  # task -> work done at progress 0, s, per such copy
    for a in attempts:
        t = a.task_id
        phase_of[t] = a.phase_id
        if _waiting_clone(a):
            continue
        if a.state == pb.ATTEMPT_SUCCEEDED and a.duration_s > 0:
            totals.setdefault(a.phase_id, []).append((t, a.duration_s))
        elif a.state == pb.ATTEMPT_RUNNING and a.container_id:
            ends = _finish_at_rate_ms(a, first.get(a.attempt_id))
            least = _finish_at_least_ms(a, first.get(a.attempt_id))
            if ends is not None:
                totals.setdefault(a.phase_id, []).append(
                    (t, (ends - (a.launch_time_ms or a.time_ms)) / 1000.0)
                )
            known = [e for e in (ends, least) if e is not None]
            at = max(now_s, a.time_ms / 1000.0)
            if not known and a.progress <= 0 and startup_s is not None:
                work = at - (a.launch_time_ms or a.time_ms) / 1000.0 - startup_s
                stalled.setdefault(t, []).append(work)
                continue
            left.setdefault(t, []).append(
                _Left(max(known) / 1000.0 - at if known else None, ends is not None)
            )
    fresh: dict[str, float] = {}
    medians = {phase_id: LeaveOut(pairs) for phase_id, pairs in totals.items()}  # (rpc/medians.py)
    for t, phase_id in phase_of.items():
        m = medians[phase_id].median_without(t) if phase_id in medians else None
        if m is not None:
            fresh[t] = m
    for t, works in stalled.items():
        cut = max(STALL_MIN_S, STALL_FRAC * fresh[t]) if t in fresh else math.inf
        left.setdefault(t, []).extend(_Left(math.inf if w > cut else None, False) for w in works)
    return left, fresh


def _straggling(
    attempts: Sequence[Any],
    first: dict[str, tuple[float, float]],
    now_s: float,
    startup_s: float | None = None,
) -> set[str]:
    """Tasks with a running copy that has more time left than a fresh copy of their phase takes
    (`_time_left`, with a copy stalled at progress 0 counted so given `startup_s`) and no copy timed at
    its rate that has not: a copy without a rate (a young clone) whose earliest finish does not say it
    straggles is left out. Their clones at launch do not yield their containers (rpc/yielding.py
    `Copy.straggling`)."""
    return _judge(attempts, first, now_s, startup_s)[0]


def _judge(
    attempts: Sequence[Any],
    first: dict[str, tuple[float, float]],
    now_s: float,
    startup_s: float | None = None,
) -> tuple[set[str], set[str]]:
    """(`_straggling`'s tasks, the tasks covered): a task is covered when a copy timed at its rate has at
    most a fresh copy's run time of its phase left (`_time_left`): it will finish about as soon as a
    clone launched now could, so its clones are worth the least to its job (rpc/yielding.py
    `Copy.covered`)."""
    left, fresh = _time_left(attempts, first, now_s, startup_s)
    slow_tasks: set[str] = set()
    covered: set[str] = set()
    for t, copies in left.items():
        if t not in fresh:
            continue
        slow = [c.s is not None and c.s > fresh[t] for c in copies]
        if any(slow) and all(s or not c.rated for c, s in zip(copies, slow, strict=True)):
            slow_tasks.add(t)
        if any(c.rated and c.s is not None and c.s <= fresh[t] for c in copies):
            covered.add(t)
    return slow_tasks, covered


def _slow_waiting(
    attempts: Sequence[Any],
    first: dict[str, tuple[float, float]],
    now_s: float,
    skip: Collection[str],
    startup_s: float | None = None,
) -> dict[str, int]:
    """Tasks whose clones at launch still wait for a container while every running copy of the task has
    more time left than a fresh copy of its phase takes (`_time_left`: at its rate since its work began,
    or at least its earliest finish, or stalled at progress 0 given `startup_s`): task id -> its live
    clones. Tasks in `skip` are left out.

    Why: the core judges a task late only below its copy cap, and a clone that waits for its container
    counts as a copy (so a late task's next clone waits for the last one to be late too). A task whose
    two clones at launch wait was therefore never late, however far its original straggled, and its
    clones waited with every other job's clones at launch for idle capacity (bench run b48: a map whose
    original ran 119 s got its clones 58 s after its start). Named as a late copy, its waiting clones
    are placed before clones at launch, which yield their containers to them (rpc/clones.py,
    rpc/yielding.py); no further clone is asked for."""
    waiting: dict[str, int] = {}
    live: dict[str, int] = {}
    for a in attempts:
        if a.is_clone and a.state not in (pb.ATTEMPT_FAILED, pb.ATTEMPT_KILLED):
            live[a.task_id] = live.get(a.task_id, 0) + 1
        if _waiting_clone(a):
            waiting[a.task_id] = waiting.get(a.task_id, 0) + 1
    left, fresh = _time_left(attempts, first, now_s, startup_s)
    out: dict[str, int] = {}
    for t in sorted(waiting):
        copies = left.get(t, [])
        if t in skip or t not in fresh or not copies:
            continue
        if all(c.s is not None and c.s > fresh[t] for c in copies):
            out[t] = live.get(t, 0)
    return out


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


@dataclass
class _AppState:
    profile: Any
    durations: dict[str, list[float]] = field(default_factory=dict)
    attempts: dict[str, Any] = field(default_factory=dict)  # attempt id -> last report
    first_progress: dict[str, tuple[float, float]] = field(default_factory=dict)  # (time s, progress)
    waiting: dict[str, int] = field(default_factory=dict)  # phase id -> clones waiting for a container
    last_plan: str = ""
    plan: Any = None  # the last ClonePlan sent (answered again when the plan budget is spent)
    per_task: dict[str, int] = field(default_factory=dict)  # task id -> pb reason it was last named with
    # waiting clones (ATTEMPT_WAITING) of tasks judged on their own or of the last stage (`_waits_alone`):
    # attempt id -> phase id
    waiting_alone: dict[str, str] = field(default_factory=dict)
    last_stages: frozenset[str] = frozenset()  # `_last_stages` of the profile, which a job keeps
    upstream: frozenset[str] = frozenset()  # `_upstream`: phases whose progress is `work_progress`
    named_log: NamedLog = field(default_factory=NamedLog)  # tasks named on their own, logged once each

    def __post_init__(self) -> None:
        self.last_stages = _last_stages(self.profile)
        self.upstream = _upstream(self.profile)


History = Callable[[str, str], tuple[float, float] | None]  # (job name, phase) -> (mean, sd)


class AppMasterServicer:
    def __init__(
        self,
        registry: SessionRegistry,
        policy: Policy | None,
        recorder: DecisionRecorder,
        history: Any | None = None,
        max_apps: int = 10_000,
        budget: PlanBudget | None = None,
        limits: Limits = DEFAULTS,
    ) -> None:
        self.registry = registry
        self.limits = limits
        self.policy = policy
        self.recorder = recorder
        self.history = history  # pyscheduler.store StatisticsHistory, or None
        self.max_apps = max_apps
        self.budget = budget if budget is not None else PlanBudget(DEFAULT_PLANS_PER_S)
        self._lock = threading.Lock()
        self._apps: dict[str, _AppState] = {}
        self.startups = StartupEstimate()  # guarded by _lock
        # The job name the RM knows an application by, None if it knows none (pyscheduler.rpc.auth): the
        # recurring-job history is written only for such applications, under that name.
        self.rm_job_name: Callable[[str], str | None] | None = None

    # ---- what translate.py asks for: θ/σ per YARN priority ----------------------------------

    def hints(self, app_id: str) -> dict[int, PhaseHint]:
        with self._lock:
            st = self._apps.get(app_id)
            if st is None:
                return {}
            stats = self._stats(st)
            alone: dict[str, int] = {}
            for phase_id in st.waiting_alone.values():
                alone[phase_id] = alone.get(phase_id, 0) + 1
            first = self._waiting_first(st) if st.profile.clones_preemptible else {}
            return {
                ph.yarn_priority: PhaseHint(
                    ph.phase_id,
                    *stats.get(ph.phase_id, (1.0, 0.0)),
                    st.waiting.get(ph.phase_id, 0),
                    alone.get(ph.phase_id, 0),
                    first.get(ph.phase_id, 0),
                )
                for ph in st.profile.phases
            }

    def _waiting_first(self, st: _AppState) -> dict[str, int]:
        """Per phase, the waiting clones at launch that would be their task's first running clone, of
        tasks not `_judge`d covered (`PhaseHint.waiting_first`; caller holds the lock)."""
        attempts = list(st.attempts.values())
        waiting = [a for a in attempts if _waiting_clone(a) and a.attempt_id not in st.waiting_alone]
        if not waiting:
            return {}
        cloned = {a.task_id for a in attempts if a.is_clone and a.state == pb.ATTEMPT_RUNNING}
        _, covered = _judge(attempts, st.first_progress, time.time(), self.startups.median())
        out: dict[str, int] = {}
        seen: set[str] = set()
        for a in sorted(waiting, key=lambda a: a.attempt_id):
            if a.task_id in cloned or a.task_id in covered or a.task_id in seen:
                continue
            seen.add(a.task_id)  # one per task: its second clone is a third copy
            out[a.phase_id] = out.get(a.phase_id, 0) + 1
        return out

    def running_copies(self, apps: Collection[str] | None = None) -> list[Copy]:
        """Every attempt the AM helpers last reported RUNNING in a container (rpc/yielding.py), of jobs
        whose AM lets a preempted clone go unreplaced (JobProfile.clones_preemptible): Hadoop's own AM
        would schedule a replacement attempt, which would wait for a container in its turn. Each copy says
        whether its task was named per task (`_task_clones`), whether it is of the job's last stage (a
        phase with parents that no phase waits for), whether its task straggles (`_straggling`) and whether
        it is covered by a copy about to finish (`_judge`)."""
        out: list[Copy] = []
        with self._lock:
            startup = self.startups.median()
            chosen = (
                self._apps.items() if apps is None else [(a, self._apps[a]) for a in apps if a in self._apps]
            )
            for app_id, st in chosen:  # of `apps` only (a session's: not other tenants')
                if not st.profile.clones_preemptible:  # the project's AM: a preempted clone is not replaced
                    continue
                last = st.last_stages
                slow, covered = _judge(list(st.attempts.values()), st.first_progress, time.time(), startup)
                out.extend(
                    Copy(
                        app_id,
                        a.task_id,
                        a.attempt_id,
                        a.container_id,
                        a.is_clone,
                        a.progress,
                        a.launch_time_ms,
                        per_task=a.task_id in st.per_task,
                        last_stage=a.phase_id in last,
                        finish_est_ms=_finish_at_rate_ms(a, st.first_progress.get(a.attempt_id)),
                        straggling=a.task_id in slow,
                        covered=a.task_id in covered,
                    )
                    for a in st.attempts.values()
                    if a.state == pb.ATTEMPT_RUNNING and a.container_id
                )
        return out

    def _stats(self, st: _AppState) -> dict[str, tuple[float, float]]:
        """θ and σ per phase in DollyMP Sec. 5.2's order (as estimate/stats.py): the recurring job's
        history first, then the phase's own finished tasks."""
        out: dict[str, tuple[float, float]] = {}
        for ph in st.profile.phases:
            m = None
            if self.history is not None and st.profile.job_name:
                m = self.history.moments(st.profile.job_name, ph.phase_id)
            seen = st.durations.get(ph.phase_id, [])
            if m is not None and math.isfinite(m.mean):
                out[ph.phase_id] = (m.mean, m.sd)
            elif seen:
                out[ph.phase_id] = (statistics.fmean(seen), statistics.pstdev(seen) if len(seen) > 1 else 0.0)
        return out

    # ---- RPCs ------------------------------------------------------------------------------

    def report_job_profile(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._check(request, lambda p: ambounds.profile(p, self.limits, _profile), context)
        with self._lock:
            old = self._apps.get(request.application_id)
            self._apps[request.application_id] = _AppState(
                request, *(() if old is None else (old.durations,))
            )
            while len(self._apps) > self.max_apps:  # bounded: forget the oldest profile
                self._apps.pop(next(iter(self._apps)))
        plan = self._plan(request.application_id)
        log.info(
            "ReportJobProfile %s (%s): phases %s -> clones %s, omega %.3g s",
            request.application_id,
            request.job_name,
            {ph.phase_id: ph.tasks for ph in request.phases},
            dict(plan.clones_per_phase),
            plan.delay_assignment_wait_s,
        )
        return plan

    def report_attempts(self, request: Any, context: grpc.ServicerContext) -> Any:
        self._check(request, lambda r: ambounds.reports(r, self.limits, _reports), context)
        finished: dict[str, list[float]] = {}
        changes: list[tuple[Any, Any]] = []
        with self._lock:
            st = self._apps.get(request.application_id)
            if st is None:
                context.abort(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    f"application_id: no job profile for {request.application_id!r}; report it first",
                )
            known = {ph.phase_id for ph in st.profile.phases}
            for i, a in enumerate(request.attempts):
                if a.phase_id not in known:
                    context.abort(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        f"attempts[{i}].phase_id: unknown phase {a.phase_id!r}",
                    )
            try:
                ambounds.make_room(st, request.attempts, self.limits)
            except Refusal as exc:
                context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, str(exc))
            for a in request.attempts:
                if a.phase_id in st.upstream:  # a map's map phase (`work_progress`)
                    a.progress = work_progress(a.progress)
                prev = st.attempts.get(a.attempt_id)
                st.attempts[a.attempt_id] = a
                changes.append((a, prev))
                if a.state == pb.ATTEMPT_RUNNING and a.progress > 0 and a.attempt_id not in st.first_progress:
                    st.first_progress[a.attempt_id] = (a.time_ms / 1000.0, a.progress)
                    if a.launch_time_ms:
                        self.startups.add((a.time_ms - a.launch_time_ms) / 1000.0)
                was = prev is not None and _waiting_clone(prev)
                st.waiting[a.phase_id] = st.waiting.get(a.phase_id, 0) + _waiting_clone(a) - was
                if _waits_alone(st, a):
                    st.waiting_alone[a.attempt_id] = a.phase_id
                else:
                    st.waiting_alone.pop(a.attempt_id, None)
                if a.state == pb.ATTEMPT_SUCCEEDED and (prev is None or prev.state != pb.ATTEMPT_SUCCEEDED):
                    st.durations.setdefault(a.phase_id, []).append(a.duration_s)
                    finished.setdefault(a.phase_id, []).append(a.duration_s)
            job_name = st.profile.job_name
            outcomes = outcome_records(request.application_id, changes, st.attempts)
        if outcomes:
            self.recorder.append(outcomes)
        if self.rm_job_name is not None and self.rm_job_name(request.application_id) != job_name:
            finished = {}  # an application the RM does not know, or by another name: no history
        if self.history is not None and job_name:
            for phase_id, ds in finished.items():
                self.history.record(job_name, phase_id, ds)
        log.info(
            "ReportAttempts %s: %d attempt(s), %d clone(s) (%d waiting for a container), %d finished",
            request.application_id,
            len(request.attempts),
            sum(1 for a in request.attempts if a.is_clone),
            sum(1 for a in request.attempts if _waiting_clone(a)),
            sum(1 for a in request.attempts if a.state in _FINAL),
        )
        return self._plan(request.application_id)

    def get_clone_plan(self, request: Any, context: grpc.ServicerContext) -> Any:
        if isinstance(request, Malformed):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.describe())
        if not request.application_id:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "application_id: must be non-empty")
        with self._lock:
            known = request.application_id in self._apps
        if not known:
            context.abort(
                grpc.StatusCode.NOT_FOUND, f"application_id: no job profile for {request.application_id!r}"
            )
        return self._plan(request.application_id)

    @staticmethod
    def _check(request: Any, check: Callable[[Any], None], context: grpc.ServicerContext) -> None:
        if isinstance(request, Malformed):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.describe())
        try:
            check(request)
        except validate.InvalidMessage as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(exc))

    # ---- the plan --------------------------------------------------------------------------

    def _context(self, app_id: str) -> tuple[ClusterState, list[Job]]:
        """The cluster and every other application's pending work, from the mirror of the session that
        knows the application (any session if none does): the plan for one job is decided among the
        jobs it competes with, so clones are granted only where the core would place them."""
        sessions = self.registry.sessions()
        chosen = next((s for s in sessions if app_id in s.mirror.apps), sessions[0] if sessions else None)
        if chosen is None:
            return ClusterState(), []
        with chosen.lock:
            snap, _, _ = to_snapshot(chosen.mirror, time.time(), self.hints)
        others = [j for j in snap.jobs if j.job_id != app_id]
        c = snap.cluster
        if len(c.dims) > 2:  # the profile speaks vcores and memory only
            c = ClusterState.from_arrays(c.node_ids, c.capacity[:, :2], c.free[:, :2])
            others = [j for j in others if all(len(ph.demand.values) <= 2 for ph in j.phases)]
        return c, others

    def _plan(self, app_id: str) -> Any:
        with self._lock:
            cached = self._apps[app_id].plan
        if cached is not None and not self.budget.take():
            metrics.APPMASTER_PLANS_CACHED.inc()
            return cached
        try:
            plan = self._fresh_plan(app_id)
        except Exception as exc:  # this application only: no clones this time, said why (rpc/isolate.py)
            log.exception("clone plan for %s failed", app_id)
            return pb.ClonePlan(application_id=app_id, detail=f"excluded: {type(exc).__name__}: {exc}"[:300])
        with self._lock:
            st = self._apps.get(app_id)
            if st is not None:
                st.plan = plan
        return plan

    def _fresh_plan(self, app_id: str) -> Any:
        now = time.time()
        with self._lock:
            st = self._apps[app_id]
            stats = self._stats(st)
            job = _job_of(st.profile, stats)
            reported = list(st.attempts.values())
            first = dict(st.first_progress)
            startup = self.startups.median()  # under the lock: report_attempts appends to it
            _replay(job, reported)
        plan = pb.ClonePlan(application_id=app_id)
        for ph in st.profile.phases:
            plan.clones_per_phase[ph.phase_id] = 0
        if self.policy is None:
            plan.detail = "the policy grants no clones"
            return plan
        cluster, others = self._context(app_id)
        running = _running(app_id, reported, first, now, startup)
        _no_data_means(job, frozenset(stats), running, now)
        snap = Snapshot(now, cluster, [*others, job], running, startup_s=startup or 0.0)
        decisions = self.policy.decide(snap)
        for g in decisions.clone_grants:
            # clones at launch for every task of the phase; a grant for late tasks or the phase tail
            # (PER_TASK_REASONS) is carried out by the per-task clones below. (Until session 6 only the
            # elapsed-time rule's reason was left out here: a grant by progress made the AM clone every
            # task of the phase twice, measured in bench-cluster runs: 53 clones for 34 tasks.)
            launch = g.reason not in PER_TASK_REASONS
            if g.job_id == app_id and g.phase_id in plan.clones_per_phase and launch:
                plan.clones_per_phase[g.phase_id] = max(0, min(MAX_CLONES, g.clones))
        named = _task_clones(app_id, decisions, reported)
        rules = dict.fromkeys(named, RULE_CORE)
        with self._lock:
            judged = set(st.per_task)
        for task_id, n in _slow_waiting(reported, first, now, {*named, *judged}, startup).items():
            named[task_id] = (n, pb.REASON_CLONE_LATE_COPY)
            rules[task_id] = RULE_SLOW_WAITING
        for task_id, (n, why) in sorted(named.items()):
            plan.task_clones.add(task_id=task_id, clones=n, reason=why, detail="clone placed by the core")
        if named:
            with self._lock:
                st.per_task.update({t: why for t, (_, why) in named.items() if why in _JUDGED_ALONE})
                for a in st.attempts.values():  # clones already waiting (`_slow_waiting`) are alone now
                    if _waits_alone(st, a):
                        st.waiting_alone[a.attempt_id] = a.phase_id
        for o in decisions.omegas:
            if o.job_id == app_id and math.isfinite(o.omega) and o.omega >= 0:
                plan.delay_assignment_wait_s = o.omega
        records = [
            r
            for r in decisions.to_records()
            if r.job_id == app_id
            and (
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
        with self._lock:
            changed = st.last_plan != memo
            st.last_plan = memo
        where = {a.task_id: (a.phase_id, _task_index(a.task_id)) for a in reported}
        listed = [
            Named(t, where[t][0], i, n, why, rules[t])
            for t, (n, why) in sorted(named.items())
            if t in where and (i := where[t][1]) is not None
        ]
        with self._lock:
            newly = st.named_log.records(now, app_id, listed, job, running)
        if newly:  # a task when it is named, or named with another count
            self.recorder.append(newly)
        if records and changed:  # log grants and ω when they change, not on every report
            self.recorder.append(records)
            tasks = {ph.phase_id: ph.tasks for ph in st.profile.phases}
            per_phase = sum(c * tasks.get(p, 0) for p, c in plan.clones_per_phase.items())
            metrics.CLONES_GRANTED.inc(per_phase + sum(t.clones for t in plan.task_clones))
        return plan


def generic_handler(servicer: AppMasterServicer) -> grpc.GenericRpcHandler[Any, Any]:
    def unary(fn: Callable[[Any, grpc.ServicerContext], Any], req: Any, resp: Any) -> Any:
        return grpc.unary_unary_rpc_method_handler(
            fn, request_deserializer=lenient(req), response_serializer=resp.SerializeToString
        )

    return grpc.method_handlers_generic_handler(
        SERVICE_NAME,
        {
            "ReportJobProfile": unary(servicer.report_job_profile, pb.JobProfile, pb.ClonePlan),
            "ReportAttempts": unary(servicer.report_attempts, pb.AttemptReports, pb.ClonePlan),
            "GetClonePlan": unary(servicer.get_clone_plan, pb.ClonePlanRequest, pb.ClonePlan),
        },
    )


__all__: Sequence[str] = ("SERVICE_NAME", "AppMasterServicer", "generic_handler")

"""The AM registry: what each application's AM helper reported (its job profile, its attempts as last
reported, the phases' finished durations), kept per application under one lock, and what the RM rounds
read of it, both at once at a round's start (`round_view`, service/state/amview.py): θ/σ hints per YARN
priority (`hints`) and the running copies the service may preempt (`running_copies`), each judged by the copy
estimator (estimate/copies.py).

Bounded: at most `max_apps` profiles (the oldest forgotten), and the attempts per application by
`limits.attempts_per_app` (`make_room`)."""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from pyscheduler.core.clock import Clock, WallClock
from pyscheduler.echo import shown
from pyscheduler.estimate.copies import (
    CopyTimes,
    Kind,
    Report,
    StartupEstimate,
    copy_times_of,
    finish_at_rate,
    judge,
    judge_left,
    reduce_work_progress,
    time_left,
    work_progress,
)
from pyscheduler.estimate.runtimes import FIRST_TASKS, FRAMEWORK, HISTORY, PRIOR_ESTIMATE, Estimate
from pyscheduler.service.limits import Limits, Refusal
from pyscheduler.service.roundsfirst import EVERY, am_paused, checkpoint
from pyscheduler.service.state.amcopies import Copy
from pyscheduler.service.state.amkept import KeptReports
from pyscheduler.service.state.amreports import (
    FINAL,
    downstream,
    last_stages,
    upstream,
    waiting_clone,
)
from pyscheduler.service.state.amview import AmView
from pyscheduler.service.state.mapreads import read_records
from pyscheduler.service.state.named_tasks import NamedLog
from pyscheduler.service.state.outcomes import outcome_records
from pyscheduler.service.state.phasehints import PhaseHint
from pyscheduler.store.history import JobKey
from pyscheduler.wire import pb

# TaskClones reasons of tasks judged on their own (late, the phase tail): their clones never yield
JUDGED_ALONE = frozenset({pb.REASON_CLONE_LATE_COPY, pb.REASON_CLONE_PHASE_TAIL})
# A round waits at most this long for an AM call that holds the registry's lock, then decides on the last
# round's view (`AmRegistry.round_view`)
VIEW_WAIT_S = 0.005
VIEW_POLL_S = 0.0005  # `round_view` looks this often whether the lock's AM call paused


@dataclass
class AppState:
    profile: Any
    durations: dict[str, list[float]] = field(default_factory=dict)
    attempts: dict[str, Any] = field(default_factory=dict)  # attempt id -> last report
    first_progress: dict[str, Report] = field(default_factory=dict)  # (time s, progress)
    waiting: dict[str, int] = field(default_factory=dict)  # phase id -> clones waiting for a container
    last_plan: str = ""
    plan: Any = None  # the last ClonePlan sent (answered again when the plan budget is spent)
    per_task: dict[str, int] = field(default_factory=dict)  # task id -> pb reason it was last named with
    # waiting clones (ATTEMPT_WAITING) of tasks judged on their own or of the last stage (`waits_alone`):
    # attempt id -> phase id
    waiting_alone: dict[str, str] = field(default_factory=dict)
    last_stages: frozenset[str] = frozenset()  # `amjob.last_stages` of the profile, which a job keeps
    upstream: frozenset[str] = frozenset()  # `amjob.upstream`: phases whose progress is `work_progress`
    downstream: frozenset[str] = frozenset()  # `amjob.downstream`: with reduce_phase, `reduce_work_progress`
    named_log: NamedLog = field(default_factory=NamedLog)  # tasks named on their own, logged once each
    map_reads: dict[str, set[str]] = field(default_factory=dict)  # reduce attempt -> map tasks read (logged)
    # the recurring-job history key: the RM's (queue, user, name) of the application, as of its last
    # report; None when the RM knows no such application or knows it by another name (`attributed`)
    tenant: JobKey | None = None
    # bumped by every change of `attempts`, `first_progress`, `per_task` or `waiting_alone`: the key of
    # `first_memo`, `AmRegistry._waiting_first` as of (version, clock, start-up median)
    version: int = 0
    first_memo: tuple[tuple[int, float, float | None], dict[str, int]] | None = None
    # what the attempts imply, kept as they are stored and dropped (`AmRegistry.record`, `make_room`):
    # service/state/amkept.py
    kept: KeptReports = field(default_factory=KeptReports)
    # the key `kept.version` and, of it, the copies' `CopyTimes` and the running copies in containers (the
    # attempt, its finish at its rate), which every RM round reads (`AmRegistry.copy_times`)
    times_memo: tuple[int, CopyTimes, list[tuple[Any, float | None]]] | None = None
    durations_version: int = 0  # bumped by every change of `durations`: the key of `own_memo`
    own_memo: tuple[int, dict[str, tuple[float, float]]] | None = None  # `_own_moments`

    def __post_init__(self) -> None:
        self.last_stages = last_stages(self.profile)
        self.upstream = upstream(self.profile)
        self.downstream = downstream(self.profile)

    def waits_alone(self, a: Any) -> bool:
        """Whether attempt `a` is a clone waiting for its container that goes before clones at launch,
        which yield their containers to it (service/round/clones.py, service/round/yielding.py): a clone of a
        task judged on its own (a late copy, the phase tail), or of the job's last stage, which the job's
        finish waits for, with the least work left of any running job's phase (a clone at launch of another
        job's map is a fresh draw of one of its several tasks)."""
        if not waiting_clone(a):
            return False
        return self.per_task.get(a.task_id) in JUDGED_ALONE or a.phase_id in self.last_stages


def attributed(profile: Any, rm_key: JobKey | None) -> JobKey | None:
    """The history key of an application whose AM reported `profile`: the RM's (queue, user, name), when
    the RM knows the application by the job name its AM reports and its queue and user are given; None
    otherwise (no history written or read)."""
    if rm_key is None or not profile.job_name or rm_key.job_name != profile.job_name:
        return None
    return rm_key if rm_key.queue and rm_key.user else None


PRIOR_TTL_S = 10.0  # how long a queue's framework prior is kept before the history is read again


class UnknownPhase(ValueError):
    def __init__(self, index: int, phase_id: str) -> None:
        super().__init__(f"attempts[{index}].phase_id: unknown phase {shown(phase_id)}")


def make_room(st: Any, incoming: Any, limits: Limits) -> int:
    """Drop the application's oldest finished attempts so that `incoming` fits in
    `limits.attempts_per_app`; returns how many were dropped. Raises Refusal (nothing dropped) when the
    live attempts alone leave no room."""
    new = len({a.attempt_id for a in incoming if a.attempt_id not in st.attempts})
    over = len(st.attempts) + new - limits.attempts_per_app
    if over <= 0:
        return 0
    done = [k for k, a in st.attempts.items() if a.state in FINAL]
    if len(done) < over:
        raise Refusal(
            "attempts",
            f"the application would have {len(st.attempts) + new} attempts, {len(st.attempts) - len(done)} "
            f"of them live, limit {limits.attempts_per_app} (limits.attempts_per_app)",
        )
    for k in done[:over]:
        st.kept.drop(st.attempts.pop(k))
        st.first_progress.pop(k, None)
        st.waiting_alone.pop(k, None)
        st.map_reads.pop(k, None)
    for ds in st.durations.values():  # the phase statistics keep the latest durations only
        if len(ds) > limits.attempts_per_app:
            del ds[: len(ds) - limits.attempts_per_app]
            st.durations_version += 1
    return over


class AmRegistry:
    """Per-application AM state; every read and write under `lock`."""

    def __init__(
        self,
        history: Any | None = None,
        max_apps: int = 10_000,
        clock: Clock | None = None,
        reduce_phase: bool = False,
        framework_prior: bool = False,
    ) -> None:
        self.history = history  # pyscheduler.store StatisticsHistory, or None
        # appmaster.framework_prior: a phase nobody measured takes its queue's earlier jobs' phase of the
        # same id (`priors`); kept per (queue, phase) for PRIOR_TTL_S of the registry's clock
        self.framework_prior = framework_prior
        self._priors: dict[tuple[str, str], tuple[float, Estimate | None]] = {}
        self.clock: Clock = clock if clock is not None else WallClock()  # the AM reports' time (epoch s)
        self.max_apps = max_apps
        self.lock = threading.Lock()
        self.apps: dict[str, AppState] = {}
        self.startups = StartupEstimate()  # guarded by lock
        # appmaster.reduce_phase_progress: a reduce's progress is its reduce phase's (`reduce_work_progress`)
        self.reduce_phase = reduce_phase
        self.view_wait_s = VIEW_WAIT_S  # `round_view`: how long a round waits for an AM call in progress
        self._last_view = AmView()
        self.stale_views = 0  # rounds that decided on the last view (an AM call held the lock)

    def put_profile(self, profile: Any, rm_key: JobKey | None = None) -> None:
        """A job profile, reported first or again (the durations seen so far are kept). `rm_key`: the RM's
        (queue, user, name) of the application (`attributed`)."""
        with self.lock:
            old = self.apps.get(profile.application_id)
            st = AppState(profile, *(() if old is None else (old.durations,)))
            st.tenant = attributed(profile, rm_key)
            self.apps[profile.application_id] = st
            while len(self.apps) > self.max_apps:  # bounded: forget the oldest profile
                self.apps.pop(next(iter(self.apps)))

    def described(self, app_id: str) -> bool:
        """Whether an AM helper reported a job profile for `app_id` (still kept). Read without the lock (one
        dict lookup, atomic under the GIL): an RM round asks it and must not wait for an AM call in
        progress."""
        return app_id in self.apps

    def record(
        self, request: Any, limits: Limits, rm_key: JobKey | None = None
    ) -> tuple[dict[str, list[float]], JobKey | None, list[Any]]:
        """Keeps an AttemptReports: (durations finished now per phase, the job's history key from `rm_key`
        (`attributed`), the decision-log records of the attempts' outcomes). Raises KeyError for an
        application without a profile, UnknownPhase, or limits.Refusal (nothing kept)."""
        finished: dict[str, list[float]] = {}
        changes: list[tuple[Any, Any]] = []
        checkpoint()  # RM rounds first (service/roundsfirst.py); not under the lock, which rounds read
        with self.lock:
            st = self.apps[request.application_id]
            st.version += 1
            st.tenant = attributed(st.profile, rm_key)
            known = {ph.phase_id for ph in st.profile.phases}
            for i, a in enumerate(request.attempts):
                if i % EVERY == 0:
                    checkpoint()
                if a.phase_id not in known:
                    raise UnknownPhase(i, a.phase_id)
            make_room(st, request.attempts, limits)
            checkpoint()
            reads = read_records(request.application_id, request.attempts, st.map_reads)
            checkpoint()
            for n, a in enumerate(request.attempts):
                if n % EVERY == 0:  # rounds do not wait for this lock (round_view): pausing here is safe
                    checkpoint()
                del a.map_reads[:]  # logged (`reads`): the attempt is kept as last reported, without them
                if a.phase_id in st.upstream:  # a map's map phase (`work_progress`)
                    a.progress = work_progress(a.progress)
                elif self.reduce_phase and a.phase_id in st.downstream:
                    a.progress = reduce_work_progress(a.progress)
                prev = st.attempts.get(a.attempt_id)
                st.attempts[a.attempt_id] = a
                changes.append((a, prev))
                if a.state == pb.ATTEMPT_RUNNING and a.progress > 0 and a.attempt_id not in st.first_progress:
                    st.first_progress[a.attempt_id] = (a.time_ms / 1000.0, a.progress)
                    if a.launch_time_ms:
                        self.startups.add((a.time_ms - a.launch_time_ms) / 1000.0)
                st.kept.put(a, prev, st.first_progress.get(a.attempt_id))
                was = prev is not None and waiting_clone(prev)
                st.waiting[a.phase_id] = st.waiting.get(a.phase_id, 0) + waiting_clone(a) - was
                if st.waits_alone(a):
                    st.waiting_alone[a.attempt_id] = a.phase_id
                else:
                    st.waiting_alone.pop(a.attempt_id, None)
                if a.state == pb.ATTEMPT_SUCCEEDED and (prev is None or prev.state != pb.ATTEMPT_SUCCEEDED):
                    st.durations.setdefault(a.phase_id, []).append(a.duration_s)
                    st.durations_version += 1
                    finished.setdefault(a.phase_id, []).append(a.duration_s)
            checkpoint()
            return (
                finished,
                st.tenant,
                outcome_records(request.application_id, changes, st.attempts, won=st.kept.succeeded) + reads,
            )

    def stats(self, st: AppState) -> dict[str, tuple[float, float]]:
        """θ and σ per phase measured for this job, in DollyMP Sec. 5.2's order (as estimate/stats.py):
        the recurring job's history in its own tenant (`AppState.tenant`) first, then the phase's own
        finished tasks (caller holds the lock)."""
        return {p: (e.mean, e.sd) for p, e in self.estimates(st, prior=False).items()}

    def estimates(self, st: AppState, prior: bool = True) -> dict[str, Estimate]:
        """`stats` with where each came from and, with `prior`, for a phase that neither gives, the
        framework prior of its queue (`priors`); a phase with none of the three is left out (1 s and 0,
        nothing measured). Caller holds the lock."""
        out: dict[str, Estimate] = {}
        for ph in st.profile.phases:
            m = None
            if self.history is not None and st.tenant is not None:
                m = self.history.moments(st.tenant, ph.phase_id)
            if m is not None and math.isfinite(m.mean):
                out[ph.phase_id] = Estimate(m.mean, m.sd, HISTORY, m.count)
            elif ph.phase_id in (own := _own_moments(st)):
                mean, sd = own[ph.phase_id]
                out[ph.phase_id] = Estimate(mean, sd, FIRST_TASKS, len(st.durations[ph.phase_id]))
            elif prior:
                e = self.prior_of(st, ph.phase_id)
                if e is not None:
                    out[ph.phase_id] = e
        return out

    def forget_priors(self, queue: str, phase_ids: Collection[str]) -> None:
        """The queue's kept priors of `phase_ids`, forgotten: durations were just written to its history."""
        with self.lock:
            for phase_id in phase_ids:
                self._priors.pop((queue, phase_id), None)

    def prior_of(self, st: AppState, phase_id: str) -> Estimate | None:
        """The framework prior of `phase_id` in the job's queue (StatisticsHistory.framework), for a job the
        RM attributed to a tenant; None without one, or with appmaster.framework_prior off."""
        if not self.framework_prior or self.history is None or st.tenant is None:
            return None
        key, now = (st.tenant.queue, phase_id), self.clock.now()
        kept = self._priors.get(key)
        if kept is not None and now - kept[0] < PRIOR_TTL_S:
            return kept[1]
        m = self.history.framework(st.tenant.queue, phase_id)
        e = Estimate(m.mean, m.sd, FRAMEWORK, m.count) if m is not None and math.isfinite(m.mean) else None
        self._priors[key] = (now, e)
        while len(self._priors) > self.max_apps:  # bounded as the profiles are
            self._priors.pop(next(iter(self._priors)))
        return e

    # ---- what the RM rounds read --------------------------------------------------------------

    def round_view(
        self, hint_apps: Collection[str], copy_apps: Collection[str] | None, with_copies: bool = True
    ) -> AmView:
        """One RM round's AM reports, read under one hold of the lock (service/state/amview.py): the hints of
        `hint_apps` (an application whose hints raise is named in `failed`) and, `with_copies`, the running
        copies of `copy_apps` (None: of every application)."""
        hints: dict[str, dict[int, PhaseHint]] = {}
        failed: dict[str, Exception] = {}
        # A round never waits for an AM call in progress (an application's report of 10,000 attempts holds
        # the lock for ~0.1 s): past `view_wait_s` it decides on the view of the last round that read one,
        # as it would have had the report come a tick later (issue 57: one tenant's AM, another's rounds).
        if not self._lock_for_round():
            last = self._last_view
            self.stale_views += 1
            return AmView(
                {a: last.hints[a] for a in hint_apps if a in last.hints},
                {a: last.failed[a] for a in hint_apps if a in last.failed},
                last.copies if with_copies else None,
            )
        try:
            for app_id in hint_apps:
                st = self.apps.get(app_id)
                if st is None:
                    continue
                try:
                    hints[app_id] = self._hints(st)
                except Exception as exc:
                    failed[app_id] = exc
            copies = self._running_copies(copy_apps) if with_copies else None
            self._last_view = view = AmView(hints, failed, copies)
        finally:
            self.lock.release()
        return view

    def _lock_for_round(self) -> bool:
        """The lock, within `view_wait_s`; False sooner once an AM call waits at a checkpoint
        (service/roundsfirst.py): one that holds the lock keeps it until this round ends, so waiting on
        would only cost the round the whole `view_wait_s` (measured: every round beside a fresh call of
        `dollymp bench tenants`' flood waited 5.1 ms here)."""
        deadline = time.monotonic() + self.view_wait_s
        while True:
            left = deadline - time.monotonic()
            if self.lock.acquire(timeout=max(0.0, min(VIEW_POLL_S, left))):
                return True
            if left <= VIEW_POLL_S or am_paused():
                return False

    def hints(self, app_id: str) -> dict[int, PhaseHint]:
        """θ/σ and the waiting clones per YARN priority of the application's phases
        (service/round/translate.py)."""
        with self.lock:
            st = self.apps.get(app_id)
            return {} if st is None else self._hints(st)

    def _hints(self, st: AppState) -> dict[int, PhaseHint]:
        """`hints` of one application (caller holds the lock)."""
        stats = self.estimates(st)
        alone: dict[str, int] = {}
        for phase_id in st.waiting_alone.values():
            alone[phase_id] = alone.get(phase_id, 0) + 1
        first = self._waiting_first(st) if st.profile.clones_preemptible else {}
        return {
            ph.yarn_priority: PhaseHint(
                ph.phase_id,
                e.mean,
                e.sd,
                st.waiting.get(ph.phase_id, 0),
                alone.get(ph.phase_id, 0),
                first.get(ph.phase_id, 0),
                source=e.source,
                samples=e.samples,
            )
            for ph in st.profile.phases
            for e in (stats.get(ph.phase_id, PRIOR_ESTIMATE),)
        }

    def _waiting_first(self, st: AppState) -> dict[str, int]:
        """Per phase, the waiting clones at launch that would be their task's first running clone, of
        tasks not covered (`judge`; `PhaseHint.waiting_first`; caller holds the lock). Kept while the
        application's attempts, the clock and the start-up estimate stay as they were (`AppState.version`):
        every AM plan request translates every application's asks, so one round of N AMs' requests would
        judge every application's attempts N times."""
        startup = self.startups.median()
        key = (st.version, self.clock.now(), startup)
        if st.first_memo is not None and st.first_memo[0] == key:
            return dict(st.first_memo[1])
        out = self._judge_first(st, startup)
        st.first_memo = (key, dict(out))
        return out

    def _judge_first(self, st: AppState, startup: float | None) -> dict[str, int]:
        """`_waiting_first` judged afresh."""
        attempts = st.kept.live_attempts(st.attempts)  # (waiting clones and running copies are live)
        waiting = [a for a in attempts if waiting_clone(a) and a.attempt_id not in st.waiting_alone]
        if not waiting:
            return {}
        cloned = {a.task_id for a in attempts if a.is_clone and a.state == pb.ATTEMPT_RUNNING}
        _, covered = judge(self.copy_times(st)[0], self.clock.now(), startup)
        out: dict[str, int] = {}
        seen: set[str] = set()
        for a in sorted(waiting, key=lambda a: a.attempt_id):
            if a.task_id in cloned or a.task_id in covered or a.task_id in seen:
                continue
            seen.add(a.task_id)  # one per task: its second clone is a third copy
            out[a.phase_id] = out.get(a.phase_id, 0) + 1
        return out

    def running_copies(self, apps: Collection[str] | None = None) -> list[Copy]:
        """Every attempt the AM helpers last reported RUNNING in a container (service/round/yielding.py), of
        jobs whose AM lets a preempted clone go unreplaced (JobProfile.clones_preemptible): Hadoop's own AM
        would schedule a replacement attempt, which would wait for a container in its turn. Each copy says
        whether its task was named per task, whether it is of the job's last stage, whether its task
        straggles and whether it is covered by a copy about to finish (`judge`)."""
        with self.lock:
            return self._running_copies(apps)

    def _running_copies(self, apps: Collection[str] | None) -> list[Copy]:
        """`running_copies` (caller holds the lock)."""
        out: list[Copy] = []
        startup = self.startups.median()
        chosen = self.apps.items() if apps is None else [(a, self.apps[a]) for a in apps if a in self.apps]
        for app_id, st in chosen:  # of `apps` only (a session's: not other tenants')
            if not st.profile.clones_preemptible:  # the project's AM: a preempted clone is not replaced
                continue
            times, running = self.copy_times(st)
            slow, covered = judge_left(*time_left(times, self.clock.now(), startup))
            for a, ends in running:  # (in a container)
                out.append(
                    Copy(
                        app_id,
                        a.task_id,
                        a.attempt_id,
                        a.container_id,
                        a.is_clone,
                        a.progress,
                        a.launch_time_ms,
                        per_task=a.task_id in st.per_task,
                        last_stage=a.phase_id in st.last_stages,
                        finish_est_ms=None if ends is None else ends * 1000.0,
                        straggling=a.task_id in slow,
                        covered=a.task_id in covered,
                    )
                )
        return out

    def copy_times(self, st: AppState) -> tuple[CopyTimes, list[tuple[Any, float | None]]]:
        """The application's `CopyTimes` and its running copies (in a container: the attempt and its finish at
        its rate), kept while its reports stay as they were (`KeptReports.version`): every RM round reads
        them, and a job's reports change only when its AM reports (caller holds the lock)."""
        memo = st.times_memo
        if memo is None or memo[0] != st.kept.version:
            running = [
                (a, r)
                for a in st.kept.live_attempts(st.attempts)
                if (r := st.kept.reports[a.attempt_id]).kind is Kind.RUNNING
            ]
            times = copy_times_of([r for _, r in running], st.kept.finished)
            memo = st.times_memo = (st.kept.version, times, [(a, finish_at_rate(r)) for a, r in running])
        return memo[1], memo[2]


def _own_moments(st: AppState) -> dict[str, tuple[float, float]]:
    """Mean and SD of each phase's finished run times this job reported (its estimate from its first tasks,
    FIRST_TASKS); kept while they stay as they were (`AppState.durations_version`; caller holds the lock)."""
    if st.own_memo is None or st.own_memo[0] != st.durations_version:
        own = {
            phase_id: (statistics.fmean(ds), statistics.pstdev(ds) if len(ds) > 1 else 0.0)
            for phase_id, ds in st.durations.items()
            if ds
        }
        st.own_memo = (st.durations_version, own)
    return st.own_memo[1]

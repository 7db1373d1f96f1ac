"""The AM helper as the simulator plays it: what the project's MapReduce AM does with the service
(yarn-plugin's CloneBook and CloningSpeculator).

At submit it reports the job profile; every AM interval it reports its attempts in containers and its
clones waiting for one (state, progress since the work began, launch and finish times, container and
node; an original waiting for its container is only its ask), those changed since their last report
or whose progress passed another tenth or grew since a report 3 s old; with none to report it asks for
its plan. Progress is the share of the copy's work
done since its start-up, as Hadoop's score: a map of a job with reduces reaches 0.667 at its input's
end. Each ClonePlan sets the clones per phase and raises the per-task counts it names (kept once seen).
A task gets clones only while one of its copies runs and none succeeded: the larger of its phase's
count and its own, at most 2 in all and three live copies (with `Workload.clone_after_start_s`, only
once a copy reported progress or was launched that long ago); a phase's clones at launch go round robin
(every task's k-th before any (k+1)-th); a clone that ended before its task succeeded (preempted) is
launched again only for a task the plan named. Clones ask for containers of their task's phase (same
priority). The first copy of a task to finish wins and the AM kills the others; a task left without
any live copy gets a new attempt. The AM runs in its own container when the workload gives it one
(cluster.py), else outside the cluster (an unmanaged AM); either way it acts only from `ready_s` on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pyscheduler.objects import MAX_CLONES
from pyscheduler.sim.live import speculator
from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.workload import JobSpec, Workload
from pyscheduler.sim.straggler import copy_unit
from pyscheduler.wire import pb

CLUSTER_TS = "1700000000000"
PROGRESS_REPORT_S = 3.0  # a running attempt's progress again after this long (dollymp.am.progress-report-ms)
LIVE = (pb.ATTEMPT_WAITING, pb.ATTEMPT_RUNNING)
REPORT_STREAM = 7  # copy_unit's stream for an attempt's progress-report phase (progress.py)


def app_id(n: int) -> str:
    return f"application_{CLUSTER_TS}_{n:04d}"


@dataclass(slots=True)
class Attempt:
    attempt_id: str
    task_id: str
    phase: int
    task: int
    nth: int  # the task's n-th copy (0: the original), keys its run time draw
    is_clone: bool
    why: str  # "original", "phase" (a clone at launch), "task" (a per-task clone), "relaunch"
    state: int = pb.ATTEMPT_WAITING
    container_id: str = ""
    node_id: str = ""
    launch_s: float = 0.0
    work_begin_s: float = math.inf  # when its work began: its container's start-up done (inf: not yet)
    work_s: float = 0.0  # the work's length once started (drawn at launch)
    end_s: float = 0.0  # when the work ends (RUNNING) or the attempt ended (final)


@dataclass
class AppMaster:
    wl: Workload
    j: int  # index of the job in the workload
    record: LiveRecord
    attempts: dict[str, Attempt] = field(default_factory=dict)
    copies: dict[tuple[int, int], int] = field(default_factory=dict)  # (phase, task) -> copies made
    done: dict[tuple[int, int], str] = field(default_factory=dict)  # (phase, task) -> winning attempt
    started: set[int] = field(default_factory=set)  # phases whose tasks were launched
    per_phase: dict[str, int] = field(default_factory=dict)  # the last plan's clones per phase
    granted: dict[str, int] = field(default_factory=dict)  # task id -> clones named per task (kept)
    sent: dict[tuple[int, int], int] = field(default_factory=dict)  # (phase, task) -> clones launched
    reported: dict[str, tuple[int, str, int]] = field(default_factory=dict)  # (state, container, tenth)
    sent_progress: dict[str, tuple[float, float]] = field(default_factory=dict)  # (progress, time s)
    finish_s: float | None = None
    speculation: bool = False  # Hadoop's own speculation (speculator.py), as the stock MRAppMaster's
    next_speculation_s: float = 0.0
    ready_s: float | None = None  # when the AM is up (its container started + its start-up); None: not yet
    am_container_id: str = ""
    # the attempts by task and by phase, in the order they were made (as `attempts`): speed only
    of_task: dict[tuple[int, int], list[Attempt]] = field(default_factory=dict)
    of_phase: dict[int, list[Attempt]] = field(default_factory=dict)
    by_container: dict[str, Attempt] = field(default_factory=dict)
    # the attempts not yet reported in a final state, in the order they were made (as `attempts`): an
    # ended attempt, once reported, never changes again, so `report` and `finish_due` pass it by (speed)
    unsettled: dict[str, Attempt] = field(default_factory=dict)

    @property
    def spec(self) -> JobSpec:
        return self.wl.jobs[self.j]

    @property
    def app_id(self) -> str:
        return app_id(self.spec.n)

    def _ids(self, phase: int, task: int, nth: int) -> tuple[str, str]:
        # Hadoop's map and reduce; a DAG's further phases (a trace's jobs) "r2", "r3", ...: ids end in the
        # task's index within its phase, as service/round/amjob.py reads them
        kind = "m" if phase == 0 else "r" if phase == 1 else f"r{phase}"
        task_id = f"task_{CLUSTER_TS}_{self.spec.n:04d}_{kind}_{task:06d}"
        return task_id, f"attempt_{CLUSTER_TS}_{self.spec.n:04d}_{kind}_{task:06d}_{nth}"

    # ---- messages to the service ----------------------------------------------------------------------

    def profile(self) -> Any:
        return pb.JobProfile(
            application_id=self.app_id,
            job_name=self.spec.name,
            submit_time_ms=self.record.epoch_ms(self.spec.submit_s),
            clones_preemptible=True,
            phases=[
                pb.PhaseProfile(
                    phase_id=ph.phase_id,
                    tasks=ph.tasks,
                    demand=pb.Resource(memory_mb=ph.mem_mb, vcores=ph.vcores),
                    parents=list(ph.parents),
                    yarn_priority=ph.priority,
                )
                for ph in self.spec.phases
            ],
        )

    def report(self, now: float) -> Any:
        """The attempts whose state or container changed since they were last reported, or whose progress
        passed another tenth or grew since a report `PROGRESS_REPORT_S` old (CloneBook.changes)."""
        out = pb.AttemptReports(application_id=self.app_id)
        upstream = self._upstream()
        for a in list(self.unsettled.values()):
            if a.state not in LIVE:  # reported now or before (below), or never to be: settled
                del self.unsettled[a.attempt_id]
            if not a.container_id and not (a.is_clone and a.state in LIVE):
                continue  # an original waiting for its container: its ask is all the service needs
            running = a.state == pb.ATTEMPT_RUNNING
            progress = self._progress(a, now, upstream) if running else 0.0
            key = (a.state, a.container_id, int(10 * progress) if running else 0)
            last = self.sent_progress.get(a.attempt_id)
            due = running and last is not None and progress > last[0] and now - last[1] >= PROGRESS_REPORT_S
            if self.reported.get(a.attempt_id) == key and not due:
                continue
            self.reported[a.attempt_id] = key
            if running:
                self.sent_progress[a.attempt_id] = (progress, now)
            else:
                self.sent_progress.pop(a.attempt_id, None)
            out.attempts.add(
                task_id=a.task_id,
                attempt_id=a.attempt_id,
                phase_id=self.spec.phases[a.phase].phase_id,
                container_id=a.container_id,
                node_id=a.node_id,
                is_clone=a.is_clone,
                state=a.state,
                duration_s=a.end_s - a.launch_s if a.state not in LIVE and a.container_id else 0.0,
                time_ms=self.record.epoch_ms(now),
                progress=progress,
                launch_time_ms=self.record.epoch_ms(a.launch_s) if a.container_id else 0,
            )
        return out

    def _upstream(self) -> set[int]:
        ids = [ph.phase_id for ph in self.spec.phases]
        return {ids.index(q) for ph in self.spec.phases for q in ph.parents}

    def _progress(self, a: Attempt, now: float, upstream: set[int]) -> float:
        """What a running attempt reports: its score as the AM holds it at `now` (progress.py, the
        workload's model), 0 before its work began."""
        if a.state != pb.ATTEMPT_RUNNING or a.work_s <= 0:
            return 0.0
        model = self.wl.progress
        offset = copy_unit(self.wl.seed, self.spec.n, a.phase, a.task, a.nth, REPORT_STREAM)
        seen = model.seen_at(now, a.work_begin_s, offset)
        if seen <= a.work_begin_s:
            return 0.0
        return model.score((seen - a.work_begin_s) / a.work_s, a.phase == 0, a.phase in upstream)

    # ---- the AM's own steps ---------------------------------------------------------------------------

    def speculate(self, now: float) -> None:
        """With `speculation`, Hadoop's speculator's round when due (speculator.py): a speculative attempt
        (not a clone: it asks as any attempt of its phase does) for each task it picks."""
        if not self.speculation or now < self.next_speculation_s:
            return
        upstream = self._upstream()
        views, succeeded = [], {}
        for p in sorted(self.started):
            succeeded[p] = [
                a.end_s - a.launch_s
                for a in self.attempts.values()
                if a.phase == p and a.state == pb.ATTEMPT_SUCCEEDED
            ]
            for t in range(self.spec.phases[p].tasks):
                if (p, t) in self.done:
                    continue
                live = self._live(p, t)
                running = tuple(
                    (a.launch_s, self._progress(a, now, upstream))
                    for a in live
                    if a.state == pb.ATTEMPT_RUNNING
                )
                views.append(speculator.TaskView(p, t, running, any(not a.container_id for a in live)))
        total = sum(ph.tasks for ph in self.spec.phases)
        picked = speculator.speculate(views, succeeded, total, now)
        for p, t in picked:
            self._new(p, t, False, "speculative", now)
            self.record.clone(now, self.app_id, self._ids(p, t, self.copies[(p, t)] - 1)[1], "speculative")
        wait = speculator.RETRY_AFTER_SPECULATE_S if picked else speculator.RETRY_AFTER_NO_SPECULATE_S
        self.next_speculation_s = now + wait

    def _new(self, phase: int, task: int, is_clone: bool, why: str, now: float) -> None:
        nth = self.copies.get((phase, task), 0)
        self.copies[(phase, task)] = nth + 1
        task_id, attempt_id = self._ids(phase, task, nth)
        a = self.attempts[attempt_id] = Attempt(attempt_id, task_id, phase, task, nth, is_clone, why)
        self.unsettled[attempt_id] = a
        self.of_task.setdefault((phase, task), []).append(a)
        self.of_phase.setdefault(phase, []).append(a)
        if is_clone:
            self.record.clone(now, self.app_id, attempt_id, why)

    def _live(self, phase: int, task: int) -> list[Attempt]:
        return [a for a in self.of_task.get((phase, task), ()) if a.state in LIVE]

    def start_ready(self, now: float) -> None:
        """Launch the originals of the phases whose parents finished."""
        ids = [ph.phase_id for ph in self.spec.phases]
        for p, ph in enumerate(self.spec.phases):
            if p not in self.started and all(self._phase_done(ids.index(q)) for q in ph.parents):
                self.started.add(p)
                for t in range(ph.tasks):
                    self._new(p, t, False, "original", now)

    def _phase_done(self, p: int) -> bool:
        return all((p, t) in self.done for t in range(self.spec.phases[p].tasks))

    def act(self, plan: Any, now: float) -> None:
        """Take a ClonePlan and launch the clones it gives (module docstring)."""
        self.per_phase = dict(plan.clones_per_phase)
        for tc in plan.task_clones:
            self.granted[tc.task_id] = max(self.granted.get(tc.task_id, 0), tc.clones)
        tasks = [(p, t) for p in sorted(self.started) for t in range(self.spec.phases[p].tasks)]
        floor = self._launch_floor(tasks)
        upstream = self._upstream()
        for p, t in tasks:
            copies = self.of_task.get((p, t), [])
            if (p, t) in self.done or not any(a.state == pb.ATTEMPT_RUNNING for a in copies):
                continue  # clones only while the task runs (Hadoop's TaskImpl takes them only then)
            if not self._at_work(copies, now, upstream):
                continue
            task_id = copies[0].task_id
            live = sum(1 for a in copies if a.state in LIVE)
            lost = sum(
                1 for a in copies if a.is_clone and a.state not in LIVE and a.state != pb.ATTEMPT_SUCCEEDED
            )
            want = (
                self._clones_for(task_id, p) if lost == 0 else min(MAX_CLONES, self.granted.get(task_id, 0))
            )
            sent = self.sent.get((p, t), 0)
            c = min(want - (sent - lost), 1 + MAX_CLONES - live)
            if lost == 0 and task_id not in self.granted and p in floor:
                c = min(c, floor[p] + 1 - sent)  # clones at launch: every task's k-th before a (k+1)-th
            if c <= 0:
                continue
            self.sent[(p, t)] = sent + c
            for _ in range(c):
                self._new(p, t, True, "task" if task_id in self.granted else "phase", now)

    def _at_work(self, copies: list[Attempt], now: float, upstream: set[int]) -> bool:
        """With `Workload.clone_after_start_s` (the AM helper's dollymp.am.clone.after-start-ms): a copy
        of the task reported progress, or its first copy was launched that long ago (CloneBook.started)."""
        wait = self.wl.clone_after_start_s
        if wait <= 0:
            return True
        return any(
            self._progress(a, now, upstream) > 0 or (a.container_id and now - a.launch_s >= wait)
            for a in copies
        )

    def _clones_for(self, task_id: str, p: int) -> int:
        phase_id = self.spec.phases[p].phase_id
        return max(0, min(MAX_CLONES, max(self.per_phase.get(phase_id, 0), self.granted.get(task_id, 0))))

    def _launch_floor(self, tasks: list[tuple[int, int]]) -> dict[int, int]:
        """Per phase, the fewest clones launched for an unfinished task not named on its own that the
        phase's count still gives more."""
        floor: dict[int, int] = {}
        for p, t in tasks:
            if (p, t) in self.done:
                continue
            sent = self.sent.get((p, t), 0)
            at_launch = min(MAX_CLONES, self.per_phase.get(self.spec.phases[p].phase_id, 0))
            if at_launch > sent and self._ids(p, t, 0)[0] not in self.granted:
                floor[p] = min(floor.get(p, sent), sent)
        return floor

    def waiting(self, priority: int) -> list[Attempt]:
        """Attempts of the phase at `priority` waiting for a container: originals first, then by id."""
        p = next(i for i, ph in enumerate(self.spec.phases) if ph.priority == priority)
        out = [a for a in self.of_phase.get(p, ()) if a.state == pb.ATTEMPT_WAITING]
        return sorted(out, key=lambda a: (a.is_clone, a.attempt_id))

    def launch(self, a: Attempt, container_id: str, node_id: str, now: float, node: int = 0) -> None:
        a.state, a.container_id, a.node_id, a.launch_s = pb.ATTEMPT_RUNNING, container_id, node_id, now
        self.by_container[container_id] = a
        a.work_s = self.wl.run_s(self.j, a.phase, a.task, a.nth, a.is_clone, node)
        a.end_s = math.inf  # until its start-up is done (`work_begins`)
        if self.wl.host_cores <= 0:  # start-ups do not contend: each takes its flat time
            self.work_begins(a, now + self.wl.startup_fixed_s + self.wl.startup_s)

    def work_begins(self, a: Attempt, at: float) -> None:
        """Attempt `a`'s container finished its start-up at `at`: its work runs from then."""
        a.work_begin_s = at
        a.end_s = at + a.work_s

    def finish_due(self, now: float) -> list[tuple[str, int, float]]:
        """Copies whose work ended by `now` succeed (the first of a task wins; the AM kills the others):
        the containers released, as (container id, exit kind, time)."""
        out: list[tuple[str, int, float]] = []
        due = [a for a in self.unsettled.values() if a.state == pb.ATTEMPT_RUNNING and a.end_s <= now]
        for a in sorted(due, key=lambda a: (a.end_s, a.attempt_id)):
            if a.state != pb.ATTEMPT_RUNNING:  # killed as a loser earlier in this loop
                continue
            a.state = pb.ATTEMPT_SUCCEEDED
            self.done[(a.phase, a.task)] = a.attempt_id
            out.append((a.container_id, pb.CONTAINER_EXIT_SUCCESS, a.end_s))
            for other in self._live(a.phase, a.task):
                at = max(a.end_s, other.launch_s)
                if other.state == pb.ATTEMPT_RUNNING:
                    out.append((other.container_id, pb.CONTAINER_EXIT_KILLED, at))
                self.record.kill(now, self.app_id, other.attempt_id, other.container_id, "am", "task won")
                other.state, other.end_s = pb.ATTEMPT_KILLED, at
        if out and all(self._phase_done(p) for p in range(len(self.spec.phases))):
            self.finish_s = max(a.end_s for a in self.attempts.values() if a.state == pb.ATTEMPT_SUCCEEDED)
            self.record.finish(self.app_id, self.finish_s - self.spec.submit_s)
        return out

    def preempted(self, container_id: str, now: float) -> None:
        """The RM killed a container (the service's plan): its attempt is KILLED; a task left without a
        live copy gets a new attempt."""
        a = self.by_container.get(container_id)
        if a is None or a.state != pb.ATTEMPT_RUNNING:
            return
        a.state, a.end_s = pb.ATTEMPT_KILLED, now
        if (a.phase, a.task) not in self.done and not self._live(a.phase, a.task):
            self._new(a.phase, a.task, False, "relaunch", now)

"""The AM helper as the simulator plays it: what the project's MapReduce AM does with the service.

At submit it reports the job profile; every AM interval it reports every attempt (state, progress since
its work began, launch and finish times, container and node). From each ClonePlan it launches clones: per
phase (`clones_per_phase`, each clone at launch once: one that yielded its container is not launched
again) and per task (`task_clones`: the clones the task should have in all, counting live ones). Clones
ask for containers of their task's phase (same priority). The first copy of a task to finish wins and the
AM kills the others; a task left without any live copy (its copies preempted) gets a new attempt.
The AM itself runs outside the cluster (an unmanaged AM): it takes no container.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.workload import Workload
from pyscheduler.wire import pb

CLUSTER_TS = "1700000000000"
MAX_CLONES = 2  # clones per task at most (as the service's plans)
LIVE = (pb.ATTEMPT_WAITING, pb.ATTEMPT_RUNNING)


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
    launch_clones: dict[int, int] = field(default_factory=dict)  # phase -> clones at launch per task
    finish_s: float | None = None

    @property
    def spec(self) -> Any:
        return self.wl.jobs[self.j]

    @property
    def app_id(self) -> str:
        return app_id(self.spec.n)

    def _ids(self, phase: int, task: int, nth: int) -> tuple[str, str]:
        kind = "m" if phase == 0 else "r"
        task_id = f"task_{CLUSTER_TS}_{self.spec.n:04d}_{kind}_{task:06d}"
        return task_id, f"attempt_{CLUSTER_TS}_{self.spec.n:04d}_{kind}_{task:06d}_{nth}"

    # ---- messages to the service ----------------------------------------------------------------------

    def profile(self) -> Any:
        return pb.JobProfile(
            application_id=self.app_id,
            job_name=self.spec.name,
            submit_time_ms=int(self.record.epoch_ms(self.spec.submit_s)),
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
        out = pb.AttemptReports(application_id=self.app_id)
        for a in self.attempts.values():
            running = a.state == pb.ATTEMPT_RUNNING
            begun = a.launch_s + self.wl.startup_s
            progress = min(0.999, max(0.0, (now - begun) / a.work_s)) if running and a.work_s > 0 else 0.0
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
                progress=1.0 if a.state == pb.ATTEMPT_SUCCEEDED else progress,
                launch_time_ms=self.record.epoch_ms(a.launch_s) if a.container_id else 0,
            )
        return out

    # ---- the AM's own steps ---------------------------------------------------------------------------

    def _new(self, phase: int, task: int, is_clone: bool, why: str, now: float) -> None:
        nth = self.copies.get((phase, task), 0)
        self.copies[(phase, task)] = nth + 1
        task_id, attempt_id = self._ids(phase, task, nth)
        self.attempts[attempt_id] = Attempt(attempt_id, task_id, phase, task, nth, is_clone, why)
        if is_clone:
            self.record.clone(now, self.app_id, attempt_id, why)

    def _live(self, phase: int, task: int) -> list[Attempt]:
        return [a for a in self.attempts.values() if (a.phase, a.task) == (phase, task) and a.state in LIVE]

    def start_ready(self, now: float) -> None:
        """Launch the phases whose parents finished: originals, and clones at launch per the last plan."""
        ids = [ph.phase_id for ph in self.spec.phases]
        for p, ph in enumerate(self.spec.phases):
            if p in self.started:
                continue
            parents = [ids.index(q) for q in ph.parents]
            if all(self._phase_done(q) for q in parents):
                self.started.add(p)
                for t in range(ph.tasks):
                    self._new(p, t, False, "original", now)
                self._clone_at_launch(p, now)

    def _phase_done(self, p: int) -> bool:
        return all((p, t) in self.done for t in range(self.spec.phases[p].tasks))

    def _clone_at_launch(self, p: int, now: float) -> None:
        want = min(MAX_CLONES, self.launch_clones.get(p, 0))
        for t in range(self.spec.phases[p].tasks):
            if (p, t) in self.done:
                continue
            made = sum(1 for a in self.attempts.values() if (a.phase, a.task) == (p, t) and a.why == "phase")
            for _ in range(want - made):
                self._new(p, t, True, "phase", now)

    def act(self, plan: Any, now: float) -> None:
        """Launch the clones a ClonePlan asks for (module docstring)."""
        ids = [ph.phase_id for ph in self.spec.phases]
        for phase_id, n in sorted(plan.clones_per_phase.items()):
            if phase_id in ids:
                self.launch_clones[ids.index(phase_id)] = n
        for p in sorted(self.started):
            self._clone_at_launch(p, now)
        for tc in plan.task_clones:
            match = next((a for a in self.attempts.values() if a.task_id == tc.task_id), None)
            if match is None or (match.phase, match.task) in self.done:
                continue
            key = (match.phase, match.task)
            live = sum(1 for a in self._live(*key) if a.is_clone)
            for _ in range(min(MAX_CLONES, tc.clones) - live):
                self._new(*key, True, "task", now)

    def waiting(self, priority: int) -> list[Attempt]:
        """Attempts of the phase at `priority` waiting for a container: originals first, then by id."""
        p = next(i for i, ph in enumerate(self.spec.phases) if ph.priority == priority)
        out = [a for a in self.attempts.values() if a.phase == p and a.state == pb.ATTEMPT_WAITING]
        return sorted(out, key=lambda a: (a.is_clone, a.attempt_id))

    def launch(self, a: Attempt, container_id: str, node_id: str, now: float) -> None:
        a.state, a.container_id, a.node_id, a.launch_s = pb.ATTEMPT_RUNNING, container_id, node_id, now
        a.work_s = self.wl.run_s(self.j, a.phase, a.task, a.nth)
        a.end_s = now + self.wl.startup_s + a.work_s

    def finish_due(self, now: float) -> list[tuple[str, int, float]]:
        """Copies whose work ended by `now` succeed (the first of a task wins; the AM kills the others):
        the containers released, as (container id, exit kind, time)."""
        out: list[tuple[str, int, float]] = []
        due = [a for a in self.attempts.values() if a.state == pb.ATTEMPT_RUNNING and a.end_s <= now]
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
        a = next((a for a in self.attempts.values() if a.container_id == container_id), None)
        if a is None or a.state != pb.ATTEMPT_RUNNING:
            return
        a.state, a.end_s = pb.ATTEMPT_KILLED, now
        if (a.phase, a.task) not in self.done and not self._live(a.phase, a.task):
            self._new(a.phase, a.task, False, "relaunch", now)

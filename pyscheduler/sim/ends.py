"""How a copy's end plays out in the simulator (the AM helper's part, see sim/engine.py's docstring): its
resources return to the node, the first copy of a task to finish wins and its duration feeds the
estimator, the other copies are killed (unless a downstream phase reads them exclusively, Dolly Sec. 4),
a finished phase readies its children, and under delay assignment upstream copies still running ω after
the phase ended are killed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyscheduler.estimate import TaskStatistics
from pyscheduler.objects import Job, TaskState
from pyscheduler.objects.resources import FloatArray
from pyscheduler.sim.copies import ALIVE, END, UID, RunCopy, SimAttempt
from pyscheduler.sim.events import KILL as _KILL
from pyscheduler.sim.events import EventQueue
from pyscheduler.sim.loadmeter import LoadMeter
from pyscheduler.sim.running import RunningColumns
from pyscheduler.sim.shuffle import ShuffleReads

_FINISHED = int(TaskState.FINISHED)


class CopyEnds(EventQueue, ShuffleReads):
    """The copy-end part of `Simulation` (a mixin: the attributes below are the simulation's)."""

    running: dict[int, RunCopy]
    _attempts: dict[int, SimAttempt]
    columns: RunningColumns | None
    _ff: FloatArray
    meter: LoadMeter
    estimator: TaskStatistics
    wasted: float
    useful: float
    round_pending: bool
    shuffle_parents: set[tuple[int, int]]
    completion: list[float]
    done: int
    active: dict[int, Job]

    if TYPE_CHECKING:

        def _want_round(self) -> None: ...

    def _release(self, r: RunCopy) -> None:
        r[ALIVE] = False
        uid, node = r[UID], r[4]
        del self.running[uid]
        if self._attempts:
            self._attempts.pop(uid, None)
        if self.columns is not None:
            self.columns.ended.append(uid)
        ff, n2 = self._ff, 2 * node
        ff[n2] = ff.item(n2) + r[8]
        ff[n2 + 1] = ff.item(n2 + 1) + r[9]

    def _kill(self, r: RunCopy, wasted: bool) -> None:
        self._release(r)
        _, jidx, k, task, _, start, end, _, cpu, mem, share, _, job = r
        if self.now < end:  # the meter logged the copy until `end`
            self.meter.cut_short(self.now, end, cpu, mem)
        used = (self.now - start) * share
        if wasted:
            self.wasted += used
        else:
            self.useful += used
        job.phases[k].end_copy(task, False)
        self._forget((jidx, k, task))
        if not self.round_pending:  # (checked here too: one call less per copy end)
            self._want_round()

    def _forget(self, key: tuple[int, int, int]) -> None:
        """Drop the task's copy list once none of its copies is alive."""
        lst = self.copies.get(key)
        if lst is not None:
            for x in lst:
                if x[ALIVE]:
                    return
            del self.copies[key]

    def _finish(self, r: RunCopy) -> None:
        self._release(r)
        _, jidx, k, task, _, start, end, _, _, _, share, _, job = r
        ph = job.phases[k]
        dur = end - start
        share = dur * share
        key = (jidx, k, task)
        if ph.state.item(task) == _FINISHED:
            self.wasted += share  # a surplus copy kept for CAC / delay assignment
            ph.end_copy(task, False)
            self._forget(key)
            if not self.round_pending:  # (checked here too: one call less per copy end)
                self._want_round()
            return
        self.useful += share
        ph.end_copy(task, True)
        self.estimator.record_task(job, ph.phase_id, dur, end=end)
        lst = self.copies.get(key)
        if lst is not None and len(lst) == 1:  # the task's only copy (_forget's answer: speed)
            del self.copies[key]
        else:
            if (
                lst is not None
                and len(lst) > 1
                and (self.shuffle_mode == "cc" or (jidx, k) not in self.shuffle_parents)
            ):
                for other in list(lst):
                    if other[ALIVE]:
                        self._kill(other, wasted=True)
            self._forget(key)
        if ph.num_finished == ph.num_tasks:
            self._phase_done(jidx, job, k)
        if not self.round_pending:  # (checked here too: one call less per copy end)
            self._want_round()

    def _phase_done(self, jidx: int, job: Job, k: int) -> None:
        if job.finished:
            self.completion[jidx] = self.now
            self.done += 1
            del self.active[jidx]
            self.estimator.job_finished(job)
        for c in range(len(job.phases)):
            if c != k and job.parent_idx[c] and k in job.parent_idx[c] and job.ready(c):
                self.ready_at[(jidx, c)] = self.now
                if self.shuffle_mode != "cc":
                    self._prepare_exclusive(jidx, job, c)
        if (jidx, k) in self.shuffle_parents and self.shuffle_mode == "delay" and not job.finished:
            deadline = self.now + self.omega.get(job.job_id, self.default_omega)
            # only tasks with a running copy (all finished: the race's losers) have a live copy listed
            for t in job.phases[k].copies.nonzero()[0].tolist():
                for other in self.copies.get((jidx, k, t), ()):
                    if other[ALIVE] and other[END] > deadline:
                        self._push(deadline, _KILL, other[UID])

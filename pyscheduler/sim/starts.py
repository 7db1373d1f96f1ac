"""How a decision round's placements start copies in the simulator (the ResourceManager shim's part, see
sim/engine.py's docstring): ω and kills first, then each placement re-validated against the task's state
and the node's free resources (stale ones dropped and counted), the copies' run times drawn together from
the straggler model, and each copy launched with its shuffle read in the order placed."""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from operator import itemgetter

from pyscheduler.objects import Job, Phase, TaskState
from pyscheduler.policies.base import Decisions
from pyscheduler.sim.ends import CopyEnds
from pyscheduler.sim.events import FINISH as _FINISH
from pyscheduler.sim.straggler import StragglerModel
from pyscheduler.sim.workload import JobSpec

_FINISHED = int(TaskState.FINISHED)
_CPU, _MEM = itemgetter(5), itemgetter(6)  # of a start in `_start_all` (sim/loadmeter.py's log)


class CopyStarts(CopyEnds):
    """The copy-start part of `Simulation` (a mixin: the attributes below are the simulation's)."""

    specs: Sequence[JobSpec]
    pos_of: dict[str, int]
    restarts: dict[tuple[int, int, int], int]
    stale: int
    _keyed_slowdown: bool
    model: StragglerModel
    bases: Sequence[Sequence[Sequence[float]]]
    speed: list[float]
    tot_cpu: float
    tot_mem: float
    uid: int
    clones: int

    def _apply(self, dec: Decisions) -> None:
        for o in dec.omegas:
            self.omega[o.job_id] = max(0.0, o.omega)
        for kd in dec.kills:
            try:
                r = self.running.get(int(kd.attempt_id))
            except ValueError:
                r = None
            if r is not None:
                self._kill(r, wasted=True)
        ff = self._ff
        jobs = dec.jobs
        pos_of = self.pos_of
        restarts = self.restarts
        stale = 0
        # per (job position, phase) placed this round: (job, phase, job index, cpu, memory, ready); a
        # chunk's placements come in runs of one phase, so the last one is kept at hand (speed)
        phase_of: dict[tuple[int, int], tuple[Job, Phase, int, float, float, bool]] = {}
        last: tuple[int, int] = (-1, -1)
        # the placements that hold, in order, with their copy's n-th start and clone flag; their slowdowns
        # are drawn together below (one compiled call per round, not per copy: speed)
        starts: list[tuple[int, Job, int, int, int, float, float, int, bool]] = []
        for c in dec.chunks:
            cols = (c.job_pos.tolist(), c.phase_k.tolist(), c.task_index.tolist(), c.node_row.tolist())
            for jp, k, t, n in zip(*cols, strict=True):
                if jp != last[0] or k != last[1]:
                    last = (jp, k)
                    got = phase_of.get(last)
                    if got is None:
                        job = jobs[jp]
                        ph = job.phases[k]
                        cpu, mem = ph.demand.values
                        got = phase_of[last] = (job, ph, pos_of[job.job_id], cpu, mem, job.ready(k))
                    job, ph, jidx, cpu, mem, ok = got
                n2 = 2 * n
                free_cpu, free_mem = ff.item(n2), ff.item(n2 + 1)  # Python floats: faster arithmetic
                if not ok or ph.state.item(t) == _FINISHED or free_cpu + 1e-9 < cpu or free_mem + 1e-9 < mem:
                    stale += 1
                    continue
                ff[n2] = free_cpu - cpu
                ff[n2 + 1] = free_mem - mem
                nth = 0  # copies of this task started before (common random numbers, straggler.py)
                if ph.peak.item(t):
                    key = (jidx, k, t)
                    nth = restarts[key] = restarts.get(key, 0) + 1
                starts.append((jidx, job, k, t, n, cpu, mem, nth, ph.start_copy(t)))
        self.stale += stale
        if not starts:
            return
        by_field = list(zip(*starts, strict=True))  # the starts' fields as columns, in one pass
        if self._keyed_slowdown:  # copy_time's own formula for these models (speed)
            slow = self.model.slowdowns_of(by_field[0], by_field[2], by_field[3], by_field[7])
            bases, speed = self.bases, self.speed
            runs = [
                bases[jidx][k][t] * sd / speed[n]
                for jidx, k, t, n, sd in zip(
                    by_field[0], by_field[2], by_field[3], by_field[4], slow, strict=True
                )
            ]
        else:
            runs = []
            for jidx, _, k, t, n, _, _, nth, is_clone in starts:
                phase_bases = self.bases[jidx][k]
                run = self.model.copy_time(phase_bases[t], phase_bases, is_clone, (jidx, k, t, nth))
                runs.append(run / self.speed[n])
        self._start_all(starts, runs)

    def _start_all(
        self, starts: list[tuple[int, Job, int, int, int, float, float, int, bool]], runs: list[float]
    ) -> None:
        """Launch the copies `starts` (job index, job, phase, task, node, cpu, memory, n-th start, clone),
        each running its `runs` seconds before its shuffle read (the phase's start_copy done), in order:
        a copy's shuffle read depends on the copies of its task started before it."""
        now = self.now
        specs, copies, running, at_time, events = (
            self.specs,
            self.copies,
            self.running,
            self.at_time,
            self.events,
        )
        tot_cpu, tot_mem = self.tot_cpu, self.tot_mem
        ends: list[float] = []
        uid = self.uid
        clones = 0
        heappush = heapq.heappush
        for (jidx, job, k, t, n, cpu, mem, _, is_clone), run in zip(starts, runs, strict=True):
            key = (jidx, k, t)
            lst = copies.get(key)
            spec = specs[jidx].phases[k]
            if spec.read_mb > 0 and spec.parents:
                run += self._read_delay(jidx, job, k, 0 if lst is None else len(lst), spec.read_mb)
            uid += 1
            end = now + run
            share, other = cpu / tot_cpu, mem / tot_mem
            if other > share:  # max(share, other) without the call (speed)
                share = other
            r = [uid, jidx, k, t, n, now, end, is_clone, cpu, mem, share, True, job]  # a RunCopy (copies.py)
            running[uid] = r
            ends.append(end)
            if lst is None:
                copies[key] = [r]
            else:
                lst.append(r)
            if is_clone:
                clones += 1
            same = at_time.get(end)  # self._push(end, _FINISH, uid), inlined (once per copy: speed)
            if same is None:
                at_time[end] = [1, _FINISH, uid]
                heappush(events, end)
            else:
                same += (_FINISH, uid)
        if now <= self.meter.until:
            self.meter.started(now, ends, list(map(_CPU, starts)), list(map(_MEM, starts)))
        if self.columns is not None:  # the round's copies as one block (sim/running.py)
            first = self.uid + 1
            by_field = list(zip(*starts, strict=True))
            self.columns.started.append(
                (range(first, uid + 1), by_field[0], by_field[2], by_field[3], now, ends)
            )
        self.uid = uid
        self.clones += clones

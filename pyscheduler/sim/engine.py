"""The policy-only trace engine (`dollymp simulate --mechanism core`, `dollymp report`): drives a registered
policy through pyscheduler.core.DecisionLoop with a ManualClock set to event time and a TaskStatistics
estimator fed with the winning copies' durations. Nothing here knows which policy runs. The policy's
`decide` is the one the live service calls; the service's round around it (translation, isolation, the
fit re-check, clones only in idle capacity, yielding, queue shares, the AM plan: pyscheduler/core/loop.py
lists them) does not run here: `dollymp simulate`'s default mechanism (sim/live/fromtrace.py) runs it, on
this engine's workloads, draws and measures, two orders of magnitude slower.

The simulator plays the parts of the ResourceManager shim and of the ApplicationMaster helper:

* job arrivals create `pyscheduler.objects.Job`s; a downstream phase becomes ready when its parents finish;
* a decision round runs when something changed (arrival, a copy ended), at most once per `tick` seconds;
  placements are re-validated (task not finished, resources still free) and stale ones dropped and counted;
* an attempt's run time is base time x slowdown / node speed (`straggler.py`); the first copy of a task to
  finish wins, the AM kills the other copies and their resources are freed;
* shuffle reads (`read_mb` of a phase with parents) take read_mb / bandwidth, with Dolly Section 4's three
  ways of feeding downstream clones (`shuffle`):
  - `cc` (contention cloning): every copy of a downstream task reads the first upstream copy; the c-th copy
    (c = 0 original) shares the source with the c copies before it, at bandwidth B / (c + 1);
  - `cac` (contention-avoidance cloning): upstream losers are not killed; copy c waits for the (c+1)-th
    finished copy of every upstream task and reads it alone at B (if upstream had fewer copies it contends);
  - `delay` (delay assignment): like `cac` but copy c waits at most omega after the upstream phase ended;
    then it reads with contention, and upstream copies still running at that moment are killed. omega comes
    from the policy's OmegaDecision for the job, else `default_omega`.
  Time spent waiting for an exclusive copy holds the container (the resource cost Dolly weighs).

Parts: the event queue (sim/events.py), a round's placements starting copies (sim/starts.py), copies
ending (sim/ends.py), the running copies and the attempts a policy reads (sim/copies.py, with their numpy
columns in sim/running.py), the shuffle reads (sim/shuffle.py), the load the run met: utilisation and
rounds with a task waiting for room (sim/loadmeter.py).
"""

from __future__ import annotations

import gc
import heapq
import math
import sys
import time as wallclock
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from pyscheduler.core import DecisionLoop, ManualClock
from pyscheduler.estimate import TaskStatistics
from pyscheduler.objects import ClusterState, Job, Phase, Resources
from pyscheduler.policies.attempts import AttemptColumns
from pyscheduler.policies.base import Policy
from pyscheduler.sim.copies import LazyAttempts, RunCopy, SimAttempt
from pyscheduler.sim.events import ARRIVAL as _ARRIVAL
from pyscheduler.sim.events import FINISH as _FINISH
from pyscheduler.sim.events import HEARTBEAT as _HEARTBEAT
from pyscheduler.sim.events import KILL as _KILL
from pyscheduler.sim.events import ROUND as _ROUND
from pyscheduler.sim.events import WAKE as _WAKE
from pyscheduler.sim.events import EventQueue
from pyscheduler.sim.loadmeter import LoadMeter
from pyscheduler.sim.metrics import RunMetrics
from pyscheduler.sim.running import RunningColumns
from pyscheduler.sim.starts import CopyStarts
from pyscheduler.sim.straggler import StragglerModel, StragglerSpec
from pyscheduler.sim.workload import ClusterSpec, JobSpec

SHUFFLE_MODES = ("cc", "cac", "delay")
GC_EVERY_ROUNDS = 4096  # young-generation collections while the collector's automatic passes are off


@dataclass(slots=True)
class SimConfig:
    straggler: StragglerSpec = field(default_factory=StragglerSpec)
    seed: int = 1
    tick: float = 1.0
    heartbeat: float = 5.0  # a round at least this often while copies run (timers: LATE, relaunch)
    shuffle: str = "delay"
    bandwidth_mb_s: float = 100.0  # per-reader network bandwidth (1 Gbit/s links, Dolly Sec. 5.1)
    default_omega: float = 3.0  # Dolly Sec. 5.3: omega between 2.5 s and 5.2 s
    progress: bool = False
    max_sim_time: float = math.inf


class Simulation(CopyStarts):
    """The simulation of one policy over a workload on a cluster (module docstring)."""

    def __init__(
        self,
        specs: Sequence[JobSpec],
        cluster: ClusterSpec,
        policy: Policy,
        config: SimConfig,
        bases: Sequence[Sequence[Sequence[float]]],
    ) -> None:
        if config.shuffle not in SHUFFLE_MODES:
            raise ValueError(f"shuffle must be one of {SHUFFLE_MODES}, got {config.shuffle!r}")
        self.specs = specs
        self.policy = policy
        self.clock = ManualClock()
        # the AM helper's role: winning copies' durations feed the estimator (the service sets θ/σ on its
        # phases instead: service/round/translate.py)
        self.estimator = TaskStatistics()
        self.loop = DecisionLoop(policy, self.clock, estimator=self.estimator)
        self.cfg = config
        self.shuffle_mode, self.bandwidth = config.shuffle, config.bandwidth_mb_s  # (ShuffleReads)
        self.default_omega = config.default_omega
        self.bases = bases
        self.model = StragglerModel(config.straggler, config.seed)
        self._keyed_slowdown = config.straggler.kind != "empirical"  # copy_time = base x slowdown_of
        self.node_ids = [f"n{i}" for i in range(len(cluster.nodes))]
        cap = np.array([[n.cpu, n.mem_mb] for n in cluster.nodes], dtype=np.float64)
        self.cluster = ClusterState.from_arrays(self.node_ids, cap, cap.copy())
        self.free = self.cluster.free  # a view: in-place updates reach the ClusterState
        self._ff = self.free.view()  # the same memory, flat: row n is [2n] (cpu), [2n + 1] (memory)
        self._ff.shape = (-1,)  # raises rather than copy, so updates through it reach the ClusterState
        self.speed = [n.speed for n in cluster.nodes]
        self.tot_cpu, self.tot_mem = cluster.total_cpu, cluster.total_mem_mb
        arrivals = (s.arrival for s in specs)  # measured load (sim/loadmeter.py)
        self.meter = LoadMeter(arrivals, self.cluster.distinct_capacities(), self.cluster.total_capacity())
        self.jobs: dict[int, Job] = {}
        self.active: dict[int, Job] = {}
        self.pos_of: dict[str, int] = {}
        self.running: dict[int, RunCopy] = {}
        self._attempts: dict[int, SimAttempt] = {}  # per running copy, built when a policy first reads it
        self.columns: RunningColumns | None = None  # the running copies as arrays, once a policy reads them
        self.copies: dict[tuple[int, int, int], list[RunCopy]] = {}
        self.restarts: dict[tuple[int, int, int], int] = {}  # tasks started more than once
        self.ready_at: dict[tuple[int, int], float] = {}
        self.avail: dict[tuple[int, int], list[float]] = {}
        self.omega: dict[str, float] = {}
        self.shuffle_parents: set[tuple[int, int]] = set()
        self.now = 0.0
        EventQueue.__init__(self)  # sim/events.py
        self.uid = 0
        self.round_pending = False
        self.heartbeat_pending = False
        self.timer_driven = bool(getattr(policy, "timer_driven", True))  # heartbeat rounds (LATE, Mantri)
        self.wake_seq = 0
        self.last_round = -math.inf
        self.completion = [math.nan] * len(specs)
        self.useful = 0.0
        self.wasted = 0.0
        self.clones = 0
        self.stale = 0
        self.rounds = 0
        self.done = 0

    def attempt_of(self, r: RunCopy) -> SimAttempt:
        uid, jidx, k, task, node, start, end, is_clone = r[:8]
        a = self._attempts.get(uid)
        if a is None:
            job = self.jobs[jidx]
            a = self._attempts[uid] = SimAttempt(
                str(uid),
                job.job_id,
                job.phases[k].phase_id,
                task,
                self.node_ids[node],
                is_clone,
                start,
                expected_end=end,
                clock=self.clock,
            )
        return a

    def attempt_columns(self, jobs: Sequence[Job]) -> AttemptColumns:
        """The running copies of `jobs` as columns (the same attempts, order and progress as the
        SimAttempt objects); the column store is filled on the first call and kept up to date after."""
        if self.columns is None:
            self.columns = RunningColumns(len(self.specs))
            if self.running:  # the copies so far as one block (sim/running.py)
                uid, jidx, k, task, _, start, end = list(zip(*self.running.values(), strict=True))[:7]
                self.columns.started = [(uid, jidx, k, task, start, end)]
        if len(jobs) == len(self.active):  # the round's jobs, list(self.active.values()), all kept
            index = np.fromiter(self.active.keys(), np.int64, len(jobs))
        else:
            index = np.fromiter((self.pos_of[j.job_id] for j in jobs), np.int64, len(jobs))
        return self.columns.columns(index, self.clock.now())

    def _want_heartbeat(self) -> None:
        if not self.heartbeat_pending and self.running:
            self.heartbeat_pending = True
            self._push(max(self.now, self.last_round) + self.cfg.heartbeat, _HEARTBEAT, 0)

    def _want_round(self) -> None:
        if not self.round_pending and self.active:
            self.round_pending = True
            self._push(max(self.now, self.last_round + self.cfg.tick), _ROUND, 0)

    def run(self, on_progress: Callable[[float, int], None] | None = None) -> RunMetrics:
        # the workload, bases and jobs built so far live for the whole run: keep them out of the cyclic
        # collector's passes while the run allocates (speed only; unfrozen afterwards). The collector's
        # automatic passes are off during the run (about 5% of its time; a run makes almost no cycles):
        # `_round` collects the young generations every GC_EVERY_ROUNDS rounds instead.
        gc.collect()
        gc.freeze()
        was_enabled = gc.isenabled()
        gc.disable()
        try:
            return self._run(on_progress)
        finally:
            if was_enabled:
                gc.enable()
            gc.unfreeze()

    def _run(self, on_progress: Callable[[float, int], None] | None) -> RunMetrics:
        t0 = wallclock.perf_counter()
        c0 = wallclock.process_time()
        # Arrivals come from their own sorted list, not the heap (a heap of every arrival to come made each
        # pop slower: speed). They were pushed first, so at equal times they precede every other event, in
        # job order: the merge below keeps that order.
        arrivals = sorted((s.arrival, i) for i, s in enumerate(self.specs))
        arrivals.append((math.inf, -1))
        next_arrival = 0
        last_report = t0
        events, at_time, running = self.events, self.at_time, self.running
        n_specs, max_time, heappop = len(self.specs), self.cfg.max_sim_time, heapq.heappop
        while events or next_arrival < n_specs:
            at, i = arrivals[next_arrival]
            if not events or at <= events[0]:
                next_arrival += 1
                t, kind, ref = at, _ARRIVAL, i
            else:  # self._pop(), inlined (one call less per event: speed)
                t = events[0]
                same = at_time[t]
                j = same[0]
                kind, ref = same[j], same[j + 1]
                j += 2
                if j == len(same):
                    heappop(events)
                    del at_time[t]
                else:
                    same[0] = j
            if t > max_time:
                break
            self.now = t
            if kind == _FINISH:
                r = running.get(ref)
                if r is not None:
                    self._finish(r)
            elif kind == _ARRIVAL:
                self._arrive(ref)
            elif kind == _HEARTBEAT:
                self.heartbeat_pending = False
                if not self.round_pending and self.now - self.last_round >= self.cfg.heartbeat - 1e-9:
                    self._round()
                self._want_heartbeat()
            elif kind == _WAKE:
                if ref == self.wake_seq:  # the policy's latest timer, not a superseded one
                    self._want_round()
            elif kind == _KILL:
                r = self.running.get(ref)
                if r is not None:
                    self._kill(r, wasted=True)
            else:
                self.round_pending = False
                self._round()
            if on_progress is not None and self.rounds % 64 == 0:
                w = wallclock.perf_counter()
                if w - last_report > 1.0:
                    on_progress(self.now, self.done)
                    last_report = w
        flows = np.array(
            [c - s.arrival for c, s in zip(self.completion, self.specs, strict=True) if not math.isnan(c)]
        )
        done_mask = [not math.isnan(c) for c in self.completion]
        util = self.meter.by_resource(self.now)
        return RunMetrics(
            policy=self.policy.name,
            flowtimes=flows,
            sizes=np.array([s.task_count for s, d in zip(self.specs, done_mask, strict=True) if d]),
            arrivals=np.array([s.arrival for s in self.specs]),
            completions=np.array([c for c in self.completion if not math.isnan(c)]),
            useful_resource_s=self.useful,
            wasted_resource_s=self.wasted,
            clones_launched=self.clones,
            speculative_launched=0,
            jobs_completed=self.done,
            jobs_unfinished=len(self.specs) - self.done,
            wall_seconds=wallclock.perf_counter() - t0,
            rounds=self.rounds,
            utilisation=util["dominant"],
            wait_rounds=self.meter.wait_rounds(),
            extra={
                "utilisation_by_resource": util,
                "stale_placements": self.stale,
                "cpu_seconds": wallclock.process_time() - c0,
                "span_rounds": self.meter.rounds,
            },
        )

    def _arrive(self, i: int) -> None:
        s = self.specs[i]
        phases = [
            Phase(p.id, p.tasks, Resources((p.cpu, p.mem_mb)), p.mean, p.sd, p.parents) for p in s.phases
        ]
        job = Job(s.id, s.arrival, phases, s.name, application_id=f"app_{i}")
        self.jobs[i] = job
        jidx = i
        self.pos_of[s.id] = jidx
        self.active[jidx] = job
        for k, p in enumerate(s.phases):
            if p.parents and p.read_mb > 0:
                for q in p.parents:
                    self.shuffle_parents.add((jidx, job.phase_index[q]))
            if not p.parents:
                self.ready_at[(jidx, k)] = self.now
        self._want_round()

    # ---- decisions ----------------------------------------------------------------------------------
    def _round(self) -> None:
        self.last_round = self.now
        self.rounds += 1
        if self.rounds % GC_EVERY_ROUNDS == 0:
            gc.collect(1)  # each survivor scanned once, then left to the (frozen-out) old generation
        self.clock.set(self.now)
        dec = self.loop.round(self.cluster, list(self.active.values()), LazyAttempts(self))
        self._apply(dec)
        self.meter.after_round(self.now, self.active.values(), self.free)
        if self.timer_driven:
            self._want_heartbeat()
        elif dec.wake_at < math.inf:  # the policy's own timer (Decisions.wake_at)
            self.wake_seq += 1
            self._push(max(dec.wake_at, self.now), _WAKE, self.wake_seq)


def print_progress(total_jobs: int, label: str) -> Callable[[float, int], None]:
    def report(now: float, done: int) -> None:
        print(
            f"\r  {label}: t={now:,.0f}s  jobs done {done}/{total_jobs}", end="", file=sys.stderr, flush=True
        )

    return report

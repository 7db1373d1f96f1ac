"""The policy-only engine's decision loop: state + clock -> snapshot -> a policy's decisions.

`dollymp simulate --mechanism core` and `dollymp report` (pyscheduler/sim/engine.py) own the state (a
ClusterState they update incrementally, the Job objects, running attempts) and call
`DecisionLoop.round(...)` once per scheduling event, with a ManualClock at event time and a TaskStatistics
estimator. The loop reads the clock, keeps only active jobs (A_t = {j : a_j <= t, not finished}, DollyMP
Algorithm 2 line 2), runs the policy's `decide`, hands the decisions to the sinks and keeps latency figures.
The simulator plays the ResourceManager shim (sim/starts.py: placements re-validated, copies started where
the policy put them, clones included, the policy's kills carried out) and the AM helper (sim/ends.py: the
first copy wins, the others are killed, the winner's duration feeds the estimator) itself.

The decision service does not run this loop. It shares with the simulator what the loop calls: the
policies (pyscheduler/policies, each `decide(Snapshot) -> Decisions`, from the same registry), the core's
objects (pyscheduler/objects) and the Snapshot, and the estimates the policies make themselves
(pyscheduler/estimate's Pareto fit and transfer statistics). Not shared: its θ and σ are set on the
phases before the round (service/round/translate.py, estimate/runtimes.py: the AM helper's profile, the
recurring-job history, the application's own containers, the framework prior), not by a Snapshot
estimator, and its round (service/round/coreround.py) runs passes of its own around `decide`: the
mirror's translation (strict-locality and blacklisted asks to the FCFS placer, the AM helper's waiting
clone asks left out), fault isolation per application (isolate.py), the re-check of each placement against
the mirror's free room and locality, the AM containers spread (amspread.py), clone asks placed only in
idle capacity after the originals (clones.py), beaten clones released and running clones yielding to
waiting containers (yielding.py), the queue shares and their reclaim (queueshare.py,
queuereclaim.py, over core/queues.py, core/queue_limits.py and core/preempt.py); the policy's own clone
placements are not sent to the RM, and a job's clones come from the AM plan instead (amplan.py: one
`decide` per job among the jobs it competes with, carried out by the AM helper). The service also changes
the policies' options (service/round/policy.py LIVE_DEFAULTS: `replace` off for dollymp-ext). The path
that runs the service's round is pyscheduler/sim/live, and `dollymp simulate` takes it by default
(`--mechanism service`, sim/live/fromtrace.py): a simulated shim and AM helper drive the real
DecisionService on a simulated clock, in-process or over gRPC, on a trace's jobs, cluster and straggler
draws.

A malformed snapshot makes the policy raise pyscheduler.policies.SnapshotError (a ValueError naming the
field) before any sink sees anything; the loop lets it reach its driver.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from pyscheduler.core.clock import Clock
from pyscheduler.objects import ClusterState, Job
from pyscheduler.objects.job import Attempt
from pyscheduler.policies import Decisions, PhaseEstimator, Policy, Snapshot

Sink = Callable[[Decisions], None]


@dataclass(slots=True)
class LoopStats:
    rounds: int = 0
    last_ms: float = 0.0
    total_ms: float = 0.0
    placements: int = 0
    latencies_ms: list[float] = field(default_factory=list)
    keep: int = 1024

    def add(self, ms: float, placements: int) -> None:
        self.rounds += 1
        self.last_ms = ms
        self.total_ms += ms
        self.placements += placements
        self.latencies_ms.append(ms)
        if len(self.latencies_ms) > self.keep:
            del self.latencies_ms[: len(self.latencies_ms) - self.keep]


class DecisionLoop:
    def __init__(
        self,
        policy: Policy,
        clock: Clock,
        estimator: PhaseEstimator | None = None,
        sinks: Sequence[Sink] = (),
    ) -> None:
        self.policy = policy
        self.clock = clock
        self.estimator = estimator
        self.sinks = list(sinks)
        self.stats = LoopStats()

    def snapshot(
        self, cluster: ClusterState, jobs: Sequence[Job], attempts: Sequence[Attempt] = ()
    ) -> Snapshot:
        t = self.clock.now()
        active = [j for j in jobs if j.arrival <= t and not j.finished]
        return Snapshot(t, cluster, active, attempts, self.estimator)

    def round(
        self, cluster: ClusterState, jobs: Sequence[Job], attempts: Sequence[Attempt] = ()
    ) -> Decisions:
        snap = self.snapshot(cluster, jobs, attempts)
        start = time.perf_counter()
        decisions = self.policy.decide(snap)
        self.stats.add((time.perf_counter() - start) * 1e3, decisions.num_placements)
        for sink in self.sinks:
            sink(decisions)
        return decisions

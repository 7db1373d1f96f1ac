"""The decision loop shared by the gRPC service and the simulator: state + clock -> snapshot -> decisions.

Drivers own the state (a ClusterState they update incrementally, the Job objects, running attempts) and
call `DecisionLoop.round(...)` once per tick (service) or per scheduling event (simulator). The loop reads
the injected clock, keeps only active jobs (A_t = {j : a_j <= t, not finished}, DollyMP Algorithm 2 line 2),
runs the policy, hands the decisions to the sinks (e.g. the decision log) and keeps latency figures.
There is no simulation flag anywhere: the clock and the drivers are the only difference.
A malformed snapshot raises pyscheduler.policies.SnapshotError (a ValueError naming the field) before any
sink sees anything; drivers turn it into an error reply.
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

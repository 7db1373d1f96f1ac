"""Yield models compared on the live mechanism: each workload run over several seeds under each
`appmaster.yield_model`, summarised per model as the median and range over the seeds of the mean flowtime
and of the clones' share of container-seconds (and of the share held by copies that lost their task's
race). Seeds change only the run time draws (common random
numbers: each model sees the same draws for the same copies)."""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.run import LiveOptions, run
from pyscheduler.sim.live.workload import Workload


def bench_service() -> dict[str, object]:
    """The service configuration of the cluster benchmark (deploy/benchmix.py BENCH_POLICY)."""
    from pyscheduler.deploy import benchmix as bench

    return {"policy.name": bench.BENCH_POLICY, "policy.options": json.loads(bench.BENCH_POLICY_OPTIONS)}


@dataclass(frozen=True, slots=True)
class Spread:
    median: float
    low: float
    high: float

    @staticmethod
    def of(xs: Sequence[float]) -> Spread:
        return Spread(statistics.median(xs), min(xs), max(xs))

    def text(self, fmt: str) -> str:
        return f"{self.median:{fmt}} [{self.low:{fmt}}, {self.high:{fmt}}]"


@dataclass(frozen=True, slots=True)
class ModelResult:
    workload: str
    yield_model: str
    seeds: tuple[int, ...]
    flowtime: Spread  # mean flowtime per seed, s
    clone_share: Spread  # clones' container-seconds share per seed
    preempted: int  # the service's preemptions over all seeds (clone_yields, clone_beaten)
    clones: int  # clones launched over all seeds
    flowtimes: tuple[float, ...] = ()  # mean flowtime per seed, in `seeds` order
    lost_share: Spread = Spread(0.0, 0.0, 0.0)  # container-seconds share of copies that lost, per seed


def paired(base: ModelResult, other: ModelResult) -> Spread:
    """`other`'s mean flowtime minus `base`'s, seed by seed (the same draws: common random numbers)."""
    if base.seeds != other.seeds:
        raise ValueError("paired results need the same seeds")
    return Spread.of([o - b for b, o in zip(base.flowtimes, other.flowtimes, strict=True)])


def compare(
    workload: Callable[[int], Workload],
    seeds: Sequence[int],
    models: Sequence[str],
    service: dict[str, object],
    on_run: Callable[[str, int, LiveRecord], None] | None = None,
    am_speculation: bool = False,
) -> list[ModelResult]:
    out = []
    for model in models:
        records = []
        for seed in seeds:
            opts = LiveOptions(yield_model=model, service=dict(service), am_speculation=am_speculation)
            rec = run(workload(seed), opts)
            records.append(rec)
            if on_run is not None:
                on_run(model, seed, rec)
        out.append(
            ModelResult(
                workload(seeds[0]).name,
                model,
                tuple(seeds),
                Spread.of([r.mean_flowtime for r in records]),
                Spread.of([r.clone_share for r in records]),
                sum(1 for r in records for k in r.kills if k[4] == "service"),
                sum(len(r.clones) for r in records),
                tuple(r.mean_flowtime for r in records),
                Spread.of([r.lost_share for r in records]),
            )
        )
    return out

"""The live mechanism measured over seeds, so that configurations can be compared: a workload run over
several seeds, summarised as the median and range over the seeds of the mean flowtime and of the clones'
share of container-seconds (and of the share held by copies that lost their task's race). Seeds change only
the run time draws (common random numbers: every configuration sees the same draws for the same copies).

With `warm`, each measured run follows a run of the same jobs at seed + WARM_SEED_OFFSET on the same decision
log, so the recurring-job history (DollyMP Sec. 5.2's first source of θ and σ) holds their run times, as it
does for a cluster's recurring jobs; without it the service starts cold, as the cluster benchmark's does."""

from __future__ import annotations

import json
import statistics
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pyscheduler.sim.live.cluster import SHIM_COMMIT
from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.run import LiveOptions, run
from pyscheduler.sim.live.workload import Workload

WARM_SEED_OFFSET = 1000  # the warm-up run's seed: the same jobs, other draws


def run_warm(
    workload: Callable[[int], Workload], seed: int, opts: LiveOptions, store_dir: Path | None = None
) -> LiveRecord:
    """`workload(seed)` run after `workload(seed + WARM_SEED_OFFSET)` on one decision log (its history),
    kept in `store_dir` when given."""
    if store_dir is None:
        with tempfile.TemporaryDirectory(prefix="dollymp-warm-") as tmp:
            return run_warm(workload, seed, opts, Path(tmp))
    run(workload(seed + WARM_SEED_OFFSET), opts, store_dir)
    return run(workload(seed), opts, store_dir)


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
class SeedsResult:
    workload: str
    seeds: tuple[int, ...]
    flowtime: Spread  # mean flowtime per seed, s
    clone_share: Spread  # clones' container-seconds share per seed
    preempted: int  # the service's preemptions over all seeds (clone_yields, clone_beaten)
    clones: int  # clones launched over all seeds
    flowtimes: tuple[float, ...] = ()  # mean flowtime per seed, in `seeds` order
    lost_share: Spread = Spread(0.0, 0.0, 0.0)  # container-seconds share of copies that lost, per seed


def over_seeds(
    workload: Callable[[int], Workload],
    seeds: Sequence[int],
    service: dict[str, object],
    on_run: Callable[[int, LiveRecord], None] | None = None,
    am_speculation: bool = False,
    warm: bool = False,
    commit: str = SHIM_COMMIT,
) -> SeedsResult:
    """`workload` at each of `seeds` through the service configured by `service`, summarised; `commit`:
    when the simulated shim carries out a plan (cluster.py)."""
    records = []
    for seed in seeds:
        opts = LiveOptions(service=dict(service), am_speculation=am_speculation, commit=commit)
        rec = run_warm(workload, seed, opts) if warm else run(workload(seed), opts)
        records.append(rec)
        if on_run is not None:
            on_run(seed, rec)
    return SeedsResult(
        workload(seeds[0]).name,
        tuple(seeds),
        Spread.of([r.mean_flowtime for r in records]),
        Spread.of([r.clone_share for r in records]),
        sum(1 for r in records for k in r.kills if k[4] == "service"),
        sum(len(r.clones) for r in records),
        tuple(r.mean_flowtime for r in records),
        Spread.of([r.lost_share for r in records]),
    )

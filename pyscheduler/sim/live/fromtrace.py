"""A trace run through the service's round: `dollymp simulate --mechanism service` (the default).

The trace engine's workload (sim/loaders: jobs of phases, each task's base time drawn by sim/runner.py
`draw_bases`), cluster (sim/workload.py `ClusterSpec`) and straggler model become a live-mechanism
`Workload` (workload.py), which run.py plays against the real `DecisionService` in simulated time: the
simulated RM and NodeManagers (cluster.py) heartbeat every tick and the shim commits a plan's
placements as it arrives (its default commit=plan), the simulated AM helpers (appmaster.py) report their
attempts every tick and launch the clones their ClonePlans give, the first copy of a task to finish wins
and the others are killed. What the service decides is what `dollymp serve` decides for the same state.

Mapped as the shim maps YARN: a task's cpu to vcores in tenths of a core (`VCORE_UNITS`: YARN's vcores
are integers, the traces' cpu fractional), its memory to whole MB; a phase's containers ask at the
phase's YARN priority (map 20, reduce 10, a DAG's further phases 22, 23, ...). A copy's run time is the
trace engine's for the same (job, phase, task, n-th copy), seed and node (base x slowdown / speed,
sim/straggler.py), then its shuffle read at the full bandwidth (read_mb / bandwidth: the AM helper steers
each reduce clone to a map output of its own, so no copy contends for one). Containers start at once
(the engine has no start-up) and each AM is unmanaged (no container of its own).

Where it differs from `--mechanism core` (tests/sim/test_trace_mechanisms.py shows it; `dollymp bench
mechanisms` measures it over seeds): a task's ask reaches the service at the AM's next tick and a round
places it at the tick after, so a task starts a tick or two later; a downstream phase is asked for at the
first tick after its parents end; and a job's clones come from its AM plan: the AM helper clones the tasks
of a phase that are already running whenever the plan grants that phase clones (it grants none before the
phase has statistics), where the engine's policy places a task's clones with it at its launch or not at all.

The measures are the engine's (sim/metrics.py `RunMetrics`): flowtimes by job, dominant-share-seconds of
the copies that won and lost, clones launched, and the time-weighted utilisation over the arrival span,
per resource in `extra`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from pyscheduler.sim.live.appmaster import app_id
from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.run import LiveOptions, Unfinished, run
from pyscheduler.sim.live.workload import JobSpec, NodeKind, PhaseSpec, Workload
from pyscheduler.sim.metrics import RunMetrics
from pyscheduler.sim.straggler import StragglerSpec
from pyscheduler.sim.workload import ClusterSpec
from pyscheduler.sim.workload import JobSpec as TraceJob

VCORE_UNITS = 10  # vcores per trace cpu (tenths of a core)
# A run gives up this long after the last arrival (its unfinished jobs counted as such)
GIVE_UP_AFTER_S = 7 * 86400.0
MAP_PRIORITY, REDUCE_PRIORITY = 20, 10


def _vcores(cpu: float) -> int:
    return max(1, round(cpu * VCORE_UNITS))


def phase_priority(k: int) -> int:
    """The YARN priority phase `k` asks at: MapReduce's map and reduce, then one of its own per phase."""
    return MAP_PRIORITY if k == 0 else REDUCE_PRIORITY if k == 1 else MAP_PRIORITY + k


def trace_workload(
    jobs: Sequence[TraceJob],
    cluster: ClusterSpec,
    bases: Sequence[Sequence[Sequence[float]]],
    straggler: StragglerSpec,
    seed: int,
    bandwidth_mb_s: float,
    name: str = "trace",
) -> Workload:
    """The trace's jobs (at their arrivals, as the engine has them), cluster and draws as a live
    `Workload`."""
    out = []
    for i, (j, jb) in enumerate(zip(jobs, bases, strict=True)):
        phases = tuple(
            PhaseSpec(
                ph.id,
                ph.tasks,
                float(np.mean(b)) if len(b) else 0.0,
                phase_priority(k),
                tuple(ph.parents),
                mem_mb=max(1, round(ph.mem_mb)),
                vcores=_vcores(ph.cpu),
                task_base_s=tuple(float(x) for x in b),
                read_s=ph.read_mb / bandwidth_mb_s if ph.parents and ph.read_mb > 0 else 0.0,
            )
            for k, (ph, b) in enumerate(zip(j.phases, jb, strict=True))
        )
        out.append(JobSpec(i + 1, j.name or j.id, j.arrival, phases))
    kinds = tuple(NodeKind(max(1, round(n.mem_mb)), _vcores(n.cpu), n.speed) for n in cluster.nodes)
    return Workload(
        name,
        seed,
        tuple(out),
        nodes=len(kinds),
        startup_s=0.0,
        draws="model",
        node_kinds=kinds,
        straggler=straggler,
    )


def service_options(name: str, options: dict[str, Any], tick_s: float, last_arrival_s: float) -> LiveOptions:
    """The live run of policy `name` with `options`, the service's round every `tick_s` and the AM
    helpers reporting at the same interval; idle hours skipped (nothing to decide in them)."""
    return LiveOptions(
        tick_s=tick_s,
        am_interval_s=tick_s,
        max_s=last_arrival_s + GIVE_UP_AFTER_S,
        service={"policy.name": name, "policy.options": options},
        skip_idle=True,
        count_waits=True,
    )


def utilisation(record: LiveRecord, wl: Workload, span: tuple[float, float]) -> dict[str, float]:
    """Time-weighted utilisation of vcores, memory and the dominant of the two over `span` (the arrivals'),
    from every container a copy held."""
    lo, hi = span
    mem = sum(wl.capacity(i)[0] for i in range(wl.node_count))
    cores = sum(wl.capacity(i)[1] for i in range(wl.node_count))
    if not hi > lo or not record.spans:
        return {"cpu": math.nan, "mem": math.nan, "dominant": math.nan}
    s = np.asarray(record.spans, np.float64)
    t = np.concatenate([s[:, 0], s[:, 1]])
    order = np.argsort(t, kind="stable")
    d_cpu = np.concatenate([s[:, 2], -s[:, 2]])[order].cumsum() / cores
    d_mem = np.concatenate([s[:, 3], -s[:, 3]])[order].cumsum() / mem
    edges = np.diff(np.clip(np.append(t[order], hi), lo, hi))
    return {
        "cpu": float((edges * d_cpu).sum() / (hi - lo)),
        "mem": float((edges * d_mem).sum() / (hi - lo)),
        "dominant": float((edges * np.maximum(d_cpu, d_mem)).sum() / (hi - lo)),
    }


def trace_metrics(record: LiveRecord, wl: Workload, label: str, wall_s: float, cpu_s: float) -> RunMetrics:
    """The engine's measures of a live run (module docstring)."""
    arrivals = np.array([j.submit_s for j in wl.jobs], np.float64)
    done = [(j, record.flowtimes[app_id(j.n)]) for j in wl.jobs if app_id(j.n) in record.flowtimes]
    flows = np.array([f for _, f in done], np.float64)
    util = utilisation(
        record, wl, (float(arrivals.min()), float(arrivals.max())) if arrivals.size else (0, 0)
    )
    clones = sum(1 for c in record.clones if c[3] != "speculative")
    return RunMetrics(
        policy=label,
        flowtimes=flows,
        sizes=np.array([sum(p.tasks for p in j.phases) for j, _ in done]),
        arrivals=arrivals,
        completions=np.array([j.submit_s + f for j, f in done], np.float64),
        useful_resource_s=record.share_s.get(True, 0.0),
        wasted_resource_s=record.share_s.get(False, 0.0),
        clones_launched=clones,
        speculative_launched=len(record.clones) - clones,
        jobs_completed=len(done),
        jobs_unfinished=len(wl.jobs) - len(done),
        wall_seconds=wall_s,
        rounds=record.rounds,
        utilisation=util["dominant"],
        wait_rounds=record.wait_rounds / record.span_rounds if record.span_rounds else math.nan,
        extra={
            "mechanism": "service",
            "utilisation_by_resource": util,
            "cpu_seconds": cpu_s,
            "span_rounds": record.span_rounds,
            "service_kills": sum(1 for k in record.kills if k[4] == "service"),
            "dropped_placements": len(record.dropped),
        },
    )


def run_service(wl: Workload, label: str, name: str, options: dict[str, Any], tick_s: float) -> RunMetrics:
    """Policy `name` (with `options`) on `wl` through the service's round; the engine's measures."""
    t0, c0 = time.perf_counter(), time.process_time()
    last = max((j.submit_s for j in wl.jobs), default=0.0)
    try:
        record = run(wl, service_options(name, options, tick_s, last))
    except Unfinished as exc:
        record = exc.record
    return trace_metrics(record, wl, label, time.perf_counter() - t0, time.process_time() - c0)

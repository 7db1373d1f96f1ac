"""Run several policies on the same workload, cluster, straggler model and seed, side by side."""

from __future__ import annotations

import math
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from pyscheduler.policies import get_policy
from pyscheduler.sim.engine import SimConfig, Simulation, print_progress
from pyscheduler.sim.live.fromtrace import run_service, trace_workload
from pyscheduler.sim.lowerbound import LowerBound, lower_bound
from pyscheduler.sim.metrics import RunMetrics
from pyscheduler.sim.owntime import decompose, own_times
from pyscheduler.sim.straggler import StragglerModel
from pyscheduler.sim.workload import ClusterSpec, JobSpec, NodeSpec

BASE_SEED_SALT = 0xBA5E
MECHANISMS = ("service", "core")


def draw_bases(jobs: Sequence[JobSpec], config: SimConfig) -> list[list[list[float]]]:
    """Base run times of every task, drawn once per run so every policy sees the same ones."""
    model = StragglerModel(config.straggler, config.seed ^ BASE_SEED_SALT)
    return [[model.base_times(p.tasks, p.mean, p.sd, p.durations) for p in j.phases] for j in jobs]


def offered_load(
    jobs: Sequence[JobSpec],
    cluster: ClusterSpec,
    mean_slowdown: float,
    bases: Sequence[Sequence[Sequence[float]]] | None = None,
) -> float:
    """Offered load: sum over tasks of base x E[S] x dominant share of the speed-weighted cluster (DollyMP
    Eq. 15), divided by the arrival span. 1.0 means the cluster would be busy all the time without cloning."""
    cap_cpu = sum(n.cpu * n.speed for n in cluster.nodes)
    cap_mem = sum(n.mem_mb * n.speed for n in cluster.nodes)
    work = 0.0
    for j, job in enumerate(jobs):
        for k, p in enumerate(job.phases):
            total = sum(bases[j][k]) if bases is not None else p.mean * p.tasks
            work += total * max(p.cpu / cap_cpu, p.mem_mb / cap_mem)
    arrivals = [j.arrival for j in jobs]
    span = max(arrivals) - min(arrivals) if arrivals else 0.0
    if span <= 0:
        return math.inf
    return work * mean_slowdown / span


def scale_to_load(jobs: Sequence[JobSpec], factor: float) -> list[JobSpec]:
    """Multiply arrival times (relative to the first) by `factor`: < 1 compresses, raising the load."""
    if not jobs:
        return []
    t0 = min(j.arrival for j in jobs)
    return [replace(j, arrival=t0 + (j.arrival - t0) * factor) for j in jobs]


def scale_cluster(cluster: ClusterSpec, factor: float) -> ClusterSpec:
    """Keep `factor` of every node type (same cpu, memory, speed), at least one node of each: the DollyMP
    paper's way of raising the load (Sec. 6.3.1: "we fix the job workload while varying the number of CPU
    cores in the cluster"). Arrival times, and so the trace's burstiness, stay as recorded."""
    if not (math.isfinite(factor) and factor > 0):
        raise ValueError(f"cluster scale factor must be finite and > 0, got {factor!r}")
    counts: dict[NodeSpec, int] = {}
    for n in cluster.nodes:
        counts[n] = counts.get(n, 0) + 1
    nodes: list[NodeSpec] = []
    for spec, count in counts.items():
        nodes.extend([spec] * max(1, round(count * factor)))
    return ClusterSpec(nodes=tuple(nodes))


def apply_load(
    jobs: Sequence[JobSpec], cluster: ClusterSpec, load: float, mean_slowdown: float, by: str
) -> tuple[list[JobSpec], ClusterSpec, str]:
    """Reach offered load `load` by compressing arrivals (`by="arrivals"`) or shrinking the cluster
    (`by="cluster"`); returns the new jobs, cluster and a line saying what was done."""
    if not (math.isfinite(load) and load > 0):
        raise ValueError(f"--load must be > 0, got {load!r}")
    before = offered_load(jobs, cluster, mean_slowdown)
    if by == "arrivals":
        return (
            scale_to_load(jobs, before / load),
            cluster,
            (f"offered load {before:.3f} -> {load:.3f} (arrival times x {before / load:.4g})"),
        )
    if by != "cluster":
        raise ValueError(f"--load-by must be 'arrivals' or 'cluster', got {by!r}")
    scaled = scale_cluster(cluster, before / load)
    after = offered_load(jobs, scaled, mean_slowdown)
    return (
        list(jobs),
        scaled,
        (
            f"offered load {before:.3f} -> {after:.3f} "
            f"(cluster {len(cluster.nodes)} -> {len(scaled.nodes)} nodes)"
        ),
    )


@dataclass(slots=True)
class Comparison:
    results: dict[str, RunMetrics]
    bound: LowerBound
    load: float
    settings: dict[str, Any]

    def no_clone_reference(self) -> RunMetrics | None:
        """The run the paper's extra-resource measure compares against: DollyMP0 (DollyMP Fig. 10) if it
        ran, else the first policy that launched no copy at all."""
        for name, m in self.results.items():
            if parse_policy(name)[1:] == ("dollymp", {"max_clones": 0}):
                return m
        return next((m for m in self.results.values() if m.clones_launched == 0), None)

    def as_json(self) -> dict[str, Any]:
        ref = self.no_clone_reference()
        policies = {name: m.as_dict(self.bound.avg) for name, m in self.results.items()}
        if ref is not None:
            for name, m in self.results.items():
                policies[name]["extra_resource_vs_no_clones"] = m.extra_vs(ref)
                policies[name]["no_clone_reference"] = ref.policy
        return {
            "policies": policies,
            "lower_bound_avg_flowtime": self.bound.avg,
            "lower_bound": {
                "critical_path_total": self.bound.critical_path_total,
                "volume_total": self.bound.volume_total,
            },
            "offered_load": self.load,
            "settings": self.settings,
        }


def parse_policy(text: str) -> tuple[str, str, dict[str, Any]]:
    """`dollymp(max_clones=2)` or `dollymp2` style names -> (label, registry name, options)."""
    text = text.strip()
    label = text
    if "(" in text and text.endswith(")"):
        name, _, args = text[:-1].partition("(")
        opts: dict[str, Any] = {}
        for item in filter(None, (a.strip() for a in args.split(";"))):
            key, eq, val = item.partition("=")
            if not eq:
                raise ValueError(f"--policies: option {item!r} of {name!r} must be key=value")
            opts[key.strip()] = _value(val.strip())
        return label, name.strip(), opts
    alias = ALIASES.get(text.lower())
    if alias is not None:
        return label, alias[0], dict(alias[1])
    return label, text, {}


ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "dollymp0": ("dollymp", {"max_clones": 0}),
    "dollymp1": ("dollymp", {"max_clones": 1}),
    "dollymp2": ("dollymp", {"max_clones": 2}),
    "dollymp3": ("dollymp", {"max_clones": 3}),
}


def _value(text: str) -> Any:
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    return text


def compare(
    jobs: Sequence[JobSpec],
    cluster: ClusterSpec,
    policies: Sequence[str],
    config: SimConfig,
    *,
    show_progress: bool = False,
    mechanism: str = "core",
) -> Comparison:
    """`policies` side by side on one workload. `mechanism` "service": each through the decision service's
    own round, the simulator playing the RM and the AM helpers (sim/live/fromtrace.py); "core": the
    policy alone in the trace engine (sim/engine.py), a faster approximation of it."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"--mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
    bases = draw_bases(jobs, config)
    load = offered_load(jobs, cluster, config.straggler.mean_slowdown, bases)
    min_slow = config.straggler.xm if config.straggler.kind == "pareto" else 1.0
    if config.straggler.kind == "empirical":
        bases_lb = [[[min(b)] * len(b) for b in jb] for jb in bases]
    else:
        bases_lb = bases
    bound = lower_bound(jobs, bases_lb, cluster, min_slow, config.bandwidth_mb_s)
    model = StragglerModel(config.straggler, config.seed)
    own = own_times(jobs, bases, cluster, model, config.bandwidth_mb_s)
    own2 = own_times(jobs, bases, cluster, model, config.bandwidth_mb_s, clones=2)
    results: dict[str, RunMetrics] = {}
    live = None
    if mechanism == "service":
        live = trace_workload(jobs, cluster, bases, config.straggler, config.seed, config.bandwidth_mb_s)
    for text in policies:
        label, name, opts = parse_policy(text)
        if live is not None:
            get_policy(name, **opts)  # an unknown name or option refused before the run
            if show_progress:
                print(f"  {label}: through the service's round ...", file=sys.stderr)
            m = run_service(live, label, name, opts, config.tick)
            if not m.jobs_unfinished:
                m.extra["flowtime_split"] = decompose(m.flowtimes, own).as_dict()
            results[label] = m
            continue
        policy = get_policy(name, **opts)
        sim = Simulation(jobs, cluster, policy, config, bases)
        cb = print_progress(len(jobs), label) if show_progress else None
        m = sim.run(cb)
        if show_progress:
            print("", file=sys.stderr)
        m.policy = label
        if not m.jobs_unfinished:  # flowtimes are the completed jobs' (engine order): all of them here
            m.extra["flowtime_split"] = decompose(m.flowtimes, own).as_dict()
        results[label] = m
    settings = {
        "mechanism": mechanism,
        "jobs": len(jobs),
        "nodes": len(cluster.nodes),
        "seed": config.seed,
        "straggler": config.straggler.describe(),
        "shuffle": config.shuffle,
        "tick": config.tick,
        "bandwidth_mb_s": config.bandwidth_mb_s,
        "total_tasks": int(np.sum([j.task_count for j in jobs])),
        "own_time_avg": float(own.mean()) if own.size else 0.0,
        "own_time_2_clones_avg": float(own2.mean()) if own2.size else 0.0,
    }
    return Comparison(results, bound, load, settings)

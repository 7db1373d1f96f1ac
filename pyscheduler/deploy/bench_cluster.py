"""The cluster benchmark (``make bench-cluster``, ``python -m pyscheduler.deploy.bench_cluster``).

Starts a local YARN cluster of separate processes (ResourceManager + N NodeManagers, ``file://``; the
first NodeManager runs at ``nice 19``, a slow node) twice and runs the same straggler job mix on each,
side by side: CapacityScheduler with Hadoop's stock speculative execution, then the DollyMP shim with
the decision service and the AM helper (``mapreduce.framework.name=dollymp``: clones, delay
assignment). The jobs are ``io.dollymp.yarn.workload.StragglerJob``: every attempt sleeps
base x Pareto(shape) (capped), drawn per (job, task, attempt number), so originals draw the same
durations under both schedulers and clones are independent draws.

Prints per-job flowtimes (the RM's elapsed time), their average, median and p90, the extra
container-seconds spent on clones (from the AM helper's attempt records), and the ratio. The last
line is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyscheduler.deploy import artifacts, jobs, repeats
from pyscheduler.deploy.benchcds import AM_JVM_OPTS, TASK_JVM_OPTS, ArchiveCache
from pyscheduler.deploy.benchmix import (
    BASE_MS,
    BENCH_POLICY,
    BENCH_POLICY_OPTIONS,
    CONTAINER_MB,
    DEFAULT_GAP_S,
    MIX,
    MIXES,
    NM_VCORES,
    STRAGGLER_CAP,
    STRAGGLER_SHAPE,
    MixJob,
    mix,
    service_env,
)
from pyscheduler.deploy.benchreads import clone_overhead, clone_s_while_waiting, kills_by_reason
from pyscheduler.deploy.cputally import CpuTally, cpu_line
from pyscheduler.deploy.display import Display
from pyscheduler.deploy.localcluster import LocalCluster

STRAGGLER_JOB = "io.dollymp.yarn.workload.StragglerJob"
CPU_SAMPLE_EVERY = 4  # loop passes (0.5 s each) between CPU samples (deploy/cputally.py)


@dataclass
class Run:
    scheduler: str
    results: dict[str, jobs.JobResult] = field(default_factory=dict)
    clone_s: float = 0.0  # container-seconds of attempts launched as clones
    attempt_s: float = 0.0  # container-seconds of all attempts
    lost_s: float = 0.0  # container-seconds of attempts whose work was not used
    clones: int = 0
    kills: dict[str, int] = field(default_factory=dict)  # the service's preemptions, per reason
    # container-seconds clones held while an original of any job waited for room (the service's metric)
    clone_wait_s: float | None = None
    load: list[float] = field(default_factory=list)  # the 1-minute load average, sampled while jobs ran
    cpu: CpuTally = field(default_factory=CpuTally)  # the cluster's CPU-seconds while jobs ran, by kind

    def flowtimes(self) -> list[float]:
        return [r.rm_elapsed_s for r in self.results.values() if r.rm_elapsed_s is not None]


def p90(xs: Sequence[float]) -> float:
    """Nearest-rank 90th percentile."""
    s = sorted(xs)
    return s[max(0, math.ceil(0.9 * len(s)) - 1)]


def nm_vcores(args: argparse.Namespace) -> int:
    return int(args.nm_vcores) if args.nm_vcores is not None else NM_VCORES[args.mix]


def base_ms(args: argparse.Namespace) -> int:
    return int(args.base_ms) if args.base_ms is not None else BASE_MS[args.mix]


def job_args(
    args: argparse.Namespace, scheduler: str, records: Path, job: MixJob, jvm_opts: str = ""
) -> list[str]:
    """The job's -D options; `jvm_opts` is added to every JVM's (the class-data archive's)."""
    extra = f" {jvm_opts}" if jvm_opts else ""
    common = {
        "dollymp.straggler.maps": job.maps,
        "dollymp.straggler.reduces": job.reduces,
        "dollymp.straggler.map.base-ms": base_ms(args),
        "dollymp.straggler.reduce.base-ms": base_ms(args) // 2,
        "dollymp.straggler.pareto-shape": args.shape,
        "dollymp.straggler.cap": args.cap,
        "dollymp.straggler.seed": args.seed,
        "mapreduce.map.speculative": "true",  # stock speculation (capacity) / the speculator hook (dollymp)
        "mapreduce.reduce.speculative": "true",
        # Reduces start when their maps are done (the papers' DAG: a phase runs after its parents), for
        # both schedulers: an early reduce would only hold a container while it waits.
        "mapreduce.job.reduce.slowstart.completedmaps": "1.0",
        # Task JVMs that start cheaply (C1 only, serial GC): on a small shared machine a container's
        # start-up CPU, not its slot, would otherwise be what every extra copy costs.
        "mapreduce.map.java.opts": TASK_JVM_OPTS + extra,
        "mapreduce.reduce.java.opts": TASK_JVM_OPTS + extra,
        # The same for the job's ApplicationMaster, whose start-up is most of a small job's flowtime here.
        "yarn.app.mapreduce.am.command-opts": AM_JVM_OPTS + extra,
    }
    if scheduler == "dollymp":
        common["mapreduce.framework.name"] = "dollymp"
        common["dollymp.am.record.dir"] = records.as_uri()
        common["dollymp.am.clone.after-start-ms"] = args.clone_after_start_ms
    return [*(f"-D{k}={v}" for k, v in common.items()), job.name]


def floor_args(args: argparse.Namespace) -> argparse.Namespace:
    """The same bench without stragglers: every attempt's factor capped at 1, i.e. exactly its base.

    Each attempt takes at least its base under any scheduler (the Pareto factor is >= 1), so this run's
    flowtimes are what no straggler handling can go below on this machine: start-ups, commits, waiting.
    """
    return argparse.Namespace(**{**vars(args), "cap": 1.0})


def new_cluster(scheduler: str, args: argparse.Namespace, base: Path, show: Display) -> LocalCluster:
    """The bench's cluster for `scheduler` in `base` (not started: use it in a `with`)."""
    return LocalCluster(
        nodes=args.nodes,
        scheduler=scheduler,
        policy=args.policy,
        base_dir=base,
        slow_nodes=1,
        nm_vcores=nm_vcores(args),
        nm_memory_mb=nm_vcores(args) * CONTAINER_MB,
        service_args=() if args.policy_options is None else ("--policy-options", args.policy_options),
        progress=lambda m: show.say(f"  {m}"),
    )


def run_scheduler(
    scheduler: str,
    args: argparse.Namespace,
    show: Display,
    label: str = "",
    archive: ArchiveCache | None = None,
) -> Run:
    label = label or scheduler
    run = Run(label)
    base = args.work_dir / label
    shutil.rmtree(base, ignore_errors=True)
    records = base / "records"
    show.say(f"{label}: starting RM + {args.nodes} NodeManagers (nm-0 at nice 19)")
    if scheduler == "dollymp":
        show.say(f"{label}: service policy {args.policy} {args.policy_options or '{}'}")
    with new_cluster(scheduler, args, base, show) as cluster:
        jvm_opts = archive.opts(cluster, show) if archive is not None else ""
        handles: dict[str, jobs.JobHandle] = {}
        start = time.monotonic()
        pending = list(mix(args.mix, args.gap_s))
        while pending or any(h.alive() for h in handles.values()):
            now = time.monotonic() - start
            while pending and pending[0].delay_s <= now:
                j = pending.pop(0)
                handles[j.name] = cluster.submit(
                    j.name, STRAGGLER_JOB, job_args(args, scheduler, records, j, jvm_opts)
                )
                show.say(f"  submitted {j.name} ({j.maps} maps, {j.reduces} reduce)")
            if now > args.timeout_s:
                raise TimeoutError(f"job mix not finished after {args.timeout_s} s")
            run.load.append(os.getloadavg()[0])
            if len(run.load) % CPU_SAMPLE_EVERY == 1:
                run.cpu.sample(cluster.pids())
            time.sleep(0.5)
        run.cpu.sample(cluster.pids())
        run.results = {name: h.wait(timeout_s=10) for name, h in handles.items()}
        run.kills = kills_by_reason(cluster.service_db)
        if scheduler == "dollymp":
            run.clone_wait_s = clone_s_while_waiting(cluster.service_api_url)
    for name, r in run.results.items():
        show.say(f"  {name}: {r.final_status} in {r.rm_elapsed_s} s ({r.app_id})")
    if records.exists():
        run.clone_s, run.attempt_s, run.lost_s, run.clones = clone_overhead(records)
    return run


def report(runs: dict[str, Run], jobs_run: Sequence[MixJob] = MIX) -> tuple[str, dict[str, object]]:
    cap, dmp = runs["capacity"], runs["dollymp"]
    lines = [f"{'job':<14}{'Capacity+spec':>16}{'DollyMP':>12}{'ratio':>8}", "-" * 50]
    for j in jobs_run:
        a, b = cap.results.get(j.name), dmp.results.get(j.name)
        av = a.rm_elapsed_s if a else None
        bv = b.rm_elapsed_s if b else None
        ratio = f"{bv / av:8.2f}" if av and bv else f"{'n/a':>8}"
        lines.append(
            f"{j.name:<14}{av if av is not None else 'n/a':>16}{bv if bv is not None else 'n/a':>12}{ratio}"
        )
    out: dict[str, object] = {}
    for label, run in (("capacity", cap), ("dollymp", dmp)):
        xs = run.flowtimes()
        out[f"{label}_avg_flowtime_s"] = round(statistics.fmean(xs), 2) if xs else None
        out[f"{label}_median_flowtime_s"] = round(statistics.median(xs), 2) if xs else None
        out[f"{label}_p90_flowtime_s"] = round(p90(xs), 2) if xs else None
        out[f"{label}_failed_jobs"] = sum(not r.ok for r in run.results.values())
        # The machine's load while the mix ran: a noisy neighbour shows here (compare the two runs).
        out[f"{label}_load_avg"] = round(statistics.fmean(run.load), 2) if run.load else None
        out[f"{label}_cpu_s"] = run.cpu.by_kind()
        # what users pay: every container the RM granted the half's jobs, by the RM's own accounting
        vc = [r.vcore_s for r in run.results.values()]
        out[f"{label}_vcore_s"] = (
            round(sum(v for v in vc if v is not None), 1) if vc and None not in vc else None
        )
    da, ca = out["dollymp_avg_flowtime_s"], out["capacity_avg_flowtime_s"]
    out["ratio"] = round(da / ca, 3) if isinstance(da, float) and isinstance(ca, float) and ca > 0 else None
    dv, cv = out["dollymp_vcore_s"], out["capacity_vcore_s"]
    out["vcore_s_ratio"] = (
        round(dv / cv, 3) if isinstance(dv, float) and isinstance(cv, float) and cv > 0 else None
    )
    out["clone_extra_container_s"] = round(dmp.clone_s, 1)
    out["clone_extra_container_s_frac"] = round(dmp.clone_s / dmp.attempt_s, 3) if dmp.attempt_s else 0.0
    out["lost_container_s_frac"] = round(dmp.lost_s / dmp.attempt_s, 3) if dmp.attempt_s else 0.0
    out["clones"] = dmp.clones
    out["clone_s_while_originals_waited"] = None if dmp.clone_wait_s is None else round(dmp.clone_wait_s, 1)
    out["clone_s_while_originals_waited_frac"] = (
        round(dmp.clone_wait_s / dmp.attempt_s, 4) if dmp.clone_wait_s is not None and dmp.attempt_s else None
    )
    out["clones_yielded"] = dmp.kills.get("clone_yields", 0)
    out["clones_beaten"] = dmp.kills.get("clone_beaten", 0)
    out["originals_beaten"] = dmp.kills.get("original_beaten", 0)
    out["jobs"] = len(jobs_run)
    for key in ("avg", "median", "p90"):
        c, d = out[f"capacity_{key}_flowtime_s"], out[f"dollymp_{key}_flowtime_s"]
        lines.append(f"{key + ' flowtime':<14}{c!s:>16}{d!s:>12}")
    lines.append(
        f"clones: {dmp.clones}, {dmp.clone_s:.1f} container-s of {dmp.attempt_s:.1f} "
        f"({out['clone_extra_container_s_frac']}), copies not used {dmp.lost_s:.1f} container-s "
        f"({out['lost_container_s_frac']}); preempted by the service: {out['clones_yielded']} "
        f"for waiting originals, {out['clones_beaten']} beaten; originals beaten: {out['originals_beaten']}"
    )
    lines.append(
        f"clones held {out['clone_s_while_originals_waited']} container-s while an original of some job "
        f"waited for room ({out['clone_s_while_originals_waited_frac']} of all attempts' container-s)"
    )
    lines.append(
        f"vcore-seconds the RM granted (every container, AMs, clones and killed copies included): "
        f"Capacity {out['capacity_vcore_s']}, DollyMP {out['dollymp_vcore_s']} ({out['vcore_s_ratio']} x)"
    )
    lines.append(f"load average while the mix ran: {out['capacity_load_avg']} / {out['dollymp_load_avg']}")
    lines.extend(
        cpu_line(label, run.cpu, CPU_SAMPLE_EVERY / 2) for label, run in (("capacity", cap), ("dollymp", dmp))
    )
    floor = runs.get("floor")
    if floor is not None:
        xs = floor.flowtimes()
        fa = round(statistics.fmean(xs), 2) if xs else None
        out["floor_avg_flowtime_s"] = fa
        out["floor_ratio"] = None
        if fa is not None and isinstance(ca, float) and ca > 0:
            out["floor_ratio"] = round(fa / ca, 3)
        lines.append(
            f"straggler-free floor (Capacity, every attempt at its base): avg {fa} s, "
            f"{out['floor_ratio']} x Capacity+spec: the lowest ratio straggler handling alone can reach"
        )
    return "\n".join(lines), out


MAX_SEEDS = 50


def parse_seeds(text: str) -> list[int]:
    """`A..B` (inclusive) or a comma list of seeds >= 1, at most MAX_SEEDS of them."""
    try:
        if ".." in text:
            lo, _, hi = text.partition("..")
            seeds = list(range(int(lo), int(hi) + 1))
        else:
            seeds = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: seeds are A..B or a comma list of integers") from None
    if not seeds or min(seeds) < 1 or len(seeds) > MAX_SEEDS:
        raise argparse.ArgumentTypeError(f"{text!r}: between 1 and {MAX_SEEDS} seeds, each >= 1")
    return seeds


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=4, help="NodeManagers (default 4)")
    p.add_argument(
        "--base-ms",
        type=int,
        default=None,
        help="map base duration, ms (reduce: half; default per mix: loaded 20000, light 40000)",
    )
    p.add_argument(
        "--shape", type=float, default=STRAGGLER_SHAPE, help="Pareto shape of the straggler factor"
    )
    p.add_argument(
        "--cap",
        type=float,
        default=STRAGGLER_CAP,
        help="cap of the straggler factor (default %(default)s, as the simulator's)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument(
        "--seeds",
        type=parse_seeds,
        default=None,
        help="run the side-by-side pair once per seed, e.g. 1..5 or 1,3,4 (at most "
        f"{MAX_SEEDS}), and print each figure's median and min-max over them; replaces --seed",
    )
    p.add_argument(
        "--nm-vcores",
        type=int,
        default=None,
        help="vcores (containers) per NodeManager (default per mix: light 8, loaded 4)",
    )
    p.add_argument(
        "--mix",
        choices=MIXES,
        default="light",
        help="the job mix (default light: 8 small jobs --gap-s apart; loaded: a 30-map job, then 6 small "
        "jobs 10 s apart)",
    )
    p.add_argument(
        "--gap-s",
        type=float,
        default=DEFAULT_GAP_S,
        help=f"light mix: seconds between job arrivals (default {DEFAULT_GAP_S:g})",
    )
    p.add_argument(
        "--policy",
        default=BENCH_POLICY,
        help="the service's policy (default %(default)s: the production configuration `dollymp serve` runs; "
        "dollymp: the paper's DollyMP)",
    )
    p.add_argument(
        "--policy-options",
        default=BENCH_POLICY_OPTIONS,
        help="the service's policy options as JSON (default %(default)s: the policy's own configuration)",
    )
    p.add_argument(
        "--clone-after-start-ms",
        type=int,
        default=0,
        help="the AM helper's dollymp.am.clone.after-start-ms: a task's clones wait until a copy reports "
        "progress or its first copy is this old (default 0: no wait)",
    )
    p.add_argument(
        "--floor",
        action="store_true",
        help="a third run: CapacityScheduler without stragglers (every attempt at its base), printed as "
        "floor_avg_flowtime_s and floor_ratio (floor / Capacity+spec)",
    )
    p.add_argument(
        "--no-cds",
        dest="cds",
        action="store_false",
        help="start the task and AM JVMs without the bench's class-data archive (pyscheduler/deploy/cds.py)",
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="run the side-by-side pair this many times and print each figure's median and min-max "
        "(deploy/repeats.py); the last line is then the summary",
    )
    p.add_argument(
        "--service",
        default=None,
        help="further service configuration keys as a JSON object, e.g. "
        "'{\"appmaster.release_beaten_originals\": true}' (checked as dollymp serve checks them)",
    )
    p.add_argument("--timeout-s", type=float, default=1200.0)
    p.add_argument("--work-dir", type=Path, default=artifacts.ROOT / "build" / "bench-cluster")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench-cluster", description=__doc__.splitlines()[0])
    add_arguments(parser)
    args = parser.parse_args(argv)
    if args.nodes < 4:
        print("bench-cluster: --nodes must be >= 4", file=sys.stderr)
        return 2
    try:
        service_env(args.service)
    except ValueError as exc:
        print(f"bench-cluster: {exc}", file=sys.stderr)
        return 2
    show = Display()
    try:
        artifacts.hadoop_lib(show.say)
        jar = artifacts.plugin_jar(show.say)
        show.say(f"plugin jar {jar.path} ({jar.origin})")
        os.environ.update(service_env(args.service))
        archive = ArchiveCache(
            args.cds, args.work_dir, STRAGGLER_JOB, lambda sched, base: new_cluster(sched, args, base, show)
        )
        outs: list[dict[str, object]] = []
        seeds = args.seeds or [args.seed]
        for seed, i in ((seed, i) for seed in seeds for i in range(max(1, args.repeats))):
            args.seed = seed  # the straggler draws of both halves (job_args)
            if args.repeats > 1 or len(seeds) > 1:
                show.say(f"seed {seed}, repeat {i + 1} of {args.repeats}")
            runs = {s: run_scheduler(s, args, show, archive=archive) for s in ("capacity", "dollymp")}
            if args.floor:
                runs["floor"] = run_scheduler(
                    "capacity", floor_args(args), show, label="floor", archive=archive
                )
            text, out = report(runs, mix(args.mix, args.gap_s))
            out["mix"] = args.mix
            out["seed"] = args.seed
            out["service"] = json.loads(args.service) if args.service else {}
            print(text, flush=True)
            print(json.dumps(out, sort_keys=True), flush=True)
            outs.append(out)
    except KeyboardInterrupt:
        return 130
    except (artifacts.BuildError, OSError, RuntimeError) as exc:
        show.say(f"FAILED: {exc}")
        return 1
    if len(outs) > 1:
        summary = {**repeats.summarise(outs), "mix": args.mix, "seeds": seeds}
        print(repeats.table(summary), flush=True)
        print(json.dumps(summary, sort_keys=True), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The newcomer's demo (``make demo``, ``dollymp demo``, ``python -m pyscheduler.deploy.demo``).

Builds what it needs (Hadoop's jars from Maven, the plugin jar), then runs the same short mix of real
Hadoop jobs on a local multi-process YARN cluster twice, side by side: once with CapacityScheduler and
once with the DollyMP shim and the decision service. One NodeManager runs at ``nice 19``: a slow,
contended machine, so tasks placed there straggle. Prints each job's flowtime under both schedulers,
then where to look (RM UI, the decision-log API, a query that explains one decision). Ctrl-C stops
everything; no process is left behind.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pyscheduler.deploy import amrecords, artifacts, bench_cluster, jobs
from pyscheduler.deploy.display import Display
from pyscheduler.deploy.localcluster import LocalCluster
from pyscheduler.deploy.rest import get_json

SCHEDULER_NAMES = {"capacity": "CapacityScheduler", "dollymp": "DollyMP"}


@dataclass(frozen=True)
class MixJob:
    name: str
    kind: str  # "wordcount" or "straggler" (io.dollymp.yarn.workload.StragglerJob)
    maps: int
    reduces: int
    delay_s: float = 0.0  # arrival after the first job


# A short mix, arriving 3 s apart: Hadoop's wordcount, and two jobs whose tasks sleep for heavy-tailed
# times (the papers' straggler model; SleepJob cannot clone: it turns speculation off, and the AM
# helper launches clones through the speculator).
MIX = (
    MixJob("wordcount", "wordcount", maps=3, reduces=1),
    MixJob("straggler-large", "straggler", maps=6, reduces=1, delay_s=3.0),
    MixJob("straggler-small", "straggler", maps=2, reduces=1, delay_s=6.0),
)
# The straggler jobs' task base times (maps; reduces half), the Pareto shape and cap of their factor.
STRAGGLER_BASE_MS = 4000
STRAGGLER_SHAPE, STRAGGLER_CAP = 1.5, 20.0


def straggler_options(j: MixJob, seed: int = 1) -> list[str]:
    """A straggler job's -D options. Both schedulers speculate (stock speculation under
    CapacityScheduler; the AM helper's clones under DollyMP)."""
    opts = {
        "dollymp.straggler.maps": j.maps,
        "dollymp.straggler.reduces": j.reduces,
        "dollymp.straggler.map.base-ms": STRAGGLER_BASE_MS,
        "dollymp.straggler.reduce.base-ms": STRAGGLER_BASE_MS // 2,
        "dollymp.straggler.pareto-shape": STRAGGLER_SHAPE,
        "dollymp.straggler.cap": STRAGGLER_CAP,
        "dollymp.straggler.seed": seed,
        "mapreduce.map.speculative": "true",
        "mapreduce.reduce.speculative": "true",
        "mapreduce.job.reduce.slowstart.completedmaps": "1.0",
    }
    return [f"-D{k}={v}" for k, v in opts.items()]


@dataclass
class Run:
    scheduler: str
    results: dict[str, jobs.JobResult] = field(default_factory=dict)
    placements: dict[str, int] = field(default_factory=dict)  # job -> placements logged by the service
    containers: dict[str, int] = field(default_factory=dict)  # job -> containers that ran (NM log dirs)
    missions: dict[str, amrecords.Mission] = field(default_factory=dict)  # job -> what the AM helper did
    records: Path | None = None  # the AM helper's record directory
    wall_s: float = 0.0


def _metrics(cluster: LocalCluster) -> str:
    try:
        m = (get_json(f"{cluster.rm_web_url}/ws/v1/cluster/metrics") or {}).get("clusterMetrics", {})
    except OSError:
        return ""
    return (
        f"apps running {m.get('appsRunning', 0)}, completed {m.get('appsCompleted', 0)}; "
        f"containers {m.get('containersAllocated', 0)}, memory used {m.get('allocatedMB', 0)} MB"
    )


def run_mix(
    cluster: LocalCluster, work: Path, show: Display, extra: Sequence[str] = (), timeout_s: float = 600.0
) -> dict[str, jobs.JobResult]:
    """Submit MIX with its arrival delays (each job with the -D options `extra`); progress every few
    seconds; results by job name."""
    jobs.write_text(work / "wc-in", files=MIX[0].maps, words_per_file=20000)
    handles: dict[str, jobs.JobHandle] = {}
    start = time.monotonic()
    pending = list(MIX)
    last_line, last_print = "", 0.0
    while pending or any(h.alive() for h in handles.values()):
        now = time.monotonic() - start
        while pending and pending[0].delay_s <= now:
            j = pending.pop(0)
            if j.kind == "wordcount":
                handles[j.name] = cluster.submit_wordcount(
                    work / "wc-in", work / "wc-out", j.reduces, j.name, extra=extra
                )
            else:
                argv = [*straggler_options(j), *extra, j.name]
                handles[j.name] = cluster.submit(j.name, bench_cluster.STRAGGLER_JOB, argv)
            show.say(f"  submitted {j.name} ({j.maps} maps, {j.reduces} reduce)")
        done = sum(not h.alive() for h in handles.values())
        line = f"  {done}/{len(MIX)} jobs done; {_metrics(cluster)}"
        if line != last_line and now - last_print >= 5:
            show.say(line)
            last_line, last_print = line, now
        if now > timeout_s:
            raise TimeoutError(f"job mix not finished after {timeout_s} s")
        time.sleep(0.5)
    return {name: h.wait(timeout_s=10) for name, h in handles.items()}


def _placements(cluster: LocalCluster, app_id: str | None) -> int:
    if app_id is None or cluster.service_api_url is None:
        return 0
    page = get_json(f"{cluster.service_api_url}/v1/decisions?application={app_id}&kind=placement&limit=1000")
    return len((page or {}).get("items", []))


def _containers_ran(cluster: LocalCluster, app_id: str | None) -> int:
    """Containers of `app_id` that the NodeManagers actually launched (their container log folders)."""
    if app_id is None:
        return 0
    return sum(1 for _ in cluster.base.glob(f"nm-*/logs/{app_id}/container_*"))


def dollymp_job_options(records: Path) -> list[str]:
    """-D options of the mix's jobs under DollyMP: the AM helper (framework `dollymp`: clones, first
    copy wins, losers killed, delay assignment) writing its records to `records`."""
    return ["-Dmapreduce.framework.name=dollymp", f"-Ddollymp.am.record.dir={records.as_uri()}"]


def run_scheduler(
    scheduler: str,
    nodes: int,
    root: Path,
    show: Display,
    hold: bool,
    policy: tuple[str, str | None],
    rounds: int = 1,
) -> Run:
    """The mix `rounds` times on one cluster under `scheduler`; the last round's results.

    DollyMP estimates a phase's task time and spread from the job's earlier runs (recurring jobs,
    Sec. 5.2), so a first round of the same jobs is what gives it the spread its clone counts need."""
    run = Run(scheduler)
    base = root / scheduler
    shutil.rmtree(base, ignore_errors=True)
    extra: list[str] = []
    if scheduler == "dollymp":
        run.records = base / "records"
        extra = dollymp_job_options(run.records)
        show.say(f"  service policy {policy[0]} {policy[1] or ''}; jobs run with framework dollymp")
    show.say(
        f"{SCHEDULER_NAMES[scheduler]}: starting RM + {nodes} NodeManagers (nm-0 at nice 19, a slow node)"
    )
    t0 = time.monotonic()
    cluster = LocalCluster(
        nodes=nodes,
        scheduler=scheduler,
        policy=policy[0],
        service_args=() if policy[1] is None else ("--policy-options", policy[1]),
        history_server=False,
        base_dir=base,
        slow_nodes=1,
        progress=lambda m: show.say(f"  {m}"),
    )
    with cluster:
        if cluster.service_api_url:
            show.say(f"  decision service: gRPC 127.0.0.1:{cluster.grpc_port}, API {cluster.service_api_url}")
            show.say(f"  operator page: {page_url(cluster.service_api_url)}")
        show.say(f"  RM UI: {cluster.rm_web_url}   logs: {cluster.log_dir}")
        for i in range(1, rounds + 1):
            if rounds > 1:
                what = "measured" if i == rounds else "the service learns the recurring jobs' run times"
                show.say(f"  round {i} of {rounds} ({what})")
            run.results = run_mix(cluster, base / f"data-{i}", show, extra)
        for name, r in run.results.items():
            run.placements[name] = _placements(cluster, r.app_id)
            run.containers[name] = _containers_ran(cluster, r.app_id)
            if run.records is not None and r.app_id:
                run.missions[name] = amrecords.read_app(run.records, r.app_id)
            show.say(f"  {name}: {r.final_status} in {_fmt(r.rm_elapsed_s)} ({r.app_id})")
        if scheduler == "dollymp":
            explain(cluster, run, show)
            if hold:
                show.say("cluster kept running; press Ctrl-C to stop it")
                while True:
                    time.sleep(1)
    run.wall_s = time.monotonic() - t0
    return run


def page_url(api: str, application_id: str | None = None) -> str:
    """The service's operator page (pyscheduler.api.ui), or one application's timeline on it."""
    return f"{api}/ui/" + (f"#app={application_id}" if application_id else "")


def explain(cluster: LocalCluster, run: Run, show: Display) -> None:
    """Print where to look while the cluster is up, and one decision explained by the service."""
    api = cluster.service_api_url
    app = next((r.app_id for r in run.results.values() if r.app_id), None)
    if api is None or app is None:
        return
    show.say("where to look (while the cluster runs; `--hold` keeps it up):")
    show.say(f"  operator page        {page_url(api)}")
    show.say(f"  this job's timeline  {page_url(api, app)}   (clones, winners, losers killed)")
    show.say(f"  clone economics      {page_url(api)}#economics")
    show.say(
        f"  RM UI                {cluster.rm_web_url}/cluster/apps   (diagnostics: each job's last decision)"
    )
    show.say(f"  decision log API     {api}/v1/decisions?application={app}&kind=placement")
    show.say(f"  why this placement   curl -s '{api}/v1/applications/{app}/why'")
    show.say(f"  decision log file    {cluster.service_db}")
    show.say(f"  clones granted       {api}/v1/decisions?application={app}&kind=clone_grant")
    show.say(f"  copies killed        {api}/v1/decisions?kind=kill")
    if run.records is not None:
        show.say(f"  AM helper records    {run.records}/<application>.tsv, reduce fetches in fetch/")
    page = get_json(f"{api}/v1/decisions?application={app}&kind=placement&limit=50") or {}
    items = page.get("items") or []
    # A task's placement says more than the AM container's; fall back to whatever was logged.
    d = next((i for i in items if i["reason"] != "am_container"), items[0] if items else None)
    if d is not None:
        what = d["task_id"] or d["job_id"] or d["application_id"]
        show.say(
            f"  one decision: {d['kind']} of {what} on {d['node_id']}, reason {d['reason']!r}: {d['detail']}"
        )
        show.say(f"  its inputs: {json.dumps(d['inputs'], sort_keys=True)[:300]}")


def _fmt(seconds: float | None) -> str:
    return f"{seconds:6.1f} s" if seconds is not None else "     n/a"


def summary(runs: Sequence[Run]) -> str:
    """Side-by-side flowtime table (the RM's elapsed time per application) with medians and ratios."""
    head = f"{'job':<16}" + "".join(f"{SCHEDULER_NAMES[r.scheduler]:>20}" for r in runs)
    if len(runs) == 2:
        head += f"{'ratio':>9}"
    lines = [head, "-" * len(head)]
    for j in MIX:
        row = f"{j.name:<16}"
        vals = [r.results.get(j.name) for r in runs]
        for v in vals:
            row += f"{(_fmt(v.rm_elapsed_s) + ('' if v.ok else ' FAILED')) if v else 'n/a':>20}"
        if len(runs) == 2 and all(v and v.rm_elapsed_s for v in vals):
            a, b = (v.rm_elapsed_s for v in vals if v)
            row += f"{(b or 0) / (a or 1):9.2f}"
        lines.append(row)
    for label, fn in (("mean", statistics.fmean), ("median", statistics.median)):
        row = f"{label + ' flowtime':<16}"
        agg = []
        for r in runs:
            xs = [x.rm_elapsed_s for x in r.results.values() if x.rm_elapsed_s is not None]
            agg.append(fn(xs) if xs else None)
            row += f"{_fmt(agg[-1]):>20}"
        if len(runs) == 2 and all(agg):
            row += f"{(agg[1] or 0) / (agg[0] or 1):9.2f}"
        lines.append(row)
    for r in runs:
        ran = sum(r.containers.values())
        if r.scheduler == "dollymp":
            placed = sum(r.placements.values())
            lines.append(
                f"DollyMP: {ran} containers ran; {placed} placements decided by the decision service"
            )
            lines.extend(mission_lines(r))
    lines.append(
        "One run per scheduler, same jobs and cluster shape, one after the other on this machine: "
        "background load differs between the runs, so treat small differences as noise."
    )
    return "\n".join(lines)


def _mission_row(name: str, m: amrecords.Mission) -> str:
    cells = (m.clones, m.clones_won, m.losers_killed, m.reduce_clone_reads, m.own_copy_reads, m.omega_elapsed)
    return f"{name:<16}" + "".join(f"{c:>{w}}" for c, w in zip(cells, _MISSION_WIDTHS, strict=True))


_MISSION_HEAD = ("clones", "won", "killed", "reduce-clone reads", "own copy", "ω elapsed")
_MISSION_WIDTHS = (8, 6, 8, 20, 10, 11)


def mission_lines(run: Run) -> list[str]:
    """Per job: clones launched, clones that won, losers killed, and the map outputs reduce clones read
    (from their own map copy within ω, or from the first copy after ω), from the AM helper's records."""
    if not run.missions:
        return []
    head = f"{'job':<16}" + "".join(f"{h:>{w}}" for h, w in zip(_MISSION_HEAD, _MISSION_WIDTHS, strict=True))
    lines = [f"DollyMP's clones (AM helper records in {run.records}):", head]
    total = amrecords.Mission()
    for j in MIX:
        m = run.missions.get(j.name)
        if m is not None:
            total.add(m)
            lines.append(_mission_row(j.name, m))
    lines.append(_mission_row("all", total))
    if total.attempt_s > 0:
        lines.append(
            f"clones took {total.clone_s:.0f} of {total.attempt_s:.0f} container-seconds "
            f"({total.clone_s / total.attempt_s:.0%}); the decision log's `clone_grant` and `kill` records "
            "say why each was granted or killed"
        )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dollymp demo", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=4, help="NodeManagers per cluster (default 4)")
    p.add_argument(
        "--schedulers",
        default="capacity,dollymp",
        help="comma-separated, run in this order: capacity, dollymp (default both)",
    )
    p.add_argument("--work-dir", type=Path, default=artifacts.ROOT / "build" / "demo", help="logs and data")
    p.add_argument("--hold", action="store_true", help="keep the DollyMP cluster up after the summary")
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        choices=range(1, 6),
        metavar="{1..5}",
        help="runs of the mix per scheduler on one cluster, the last one measured (default 1; with 2 the "
        "first run teaches the service the recurring jobs' run times, DollyMP Sec. 5.2)",
    )
    p.add_argument(
        "--policy",
        default=bench_cluster.BENCH_POLICY,
        help="the decision service's policy (default %(default)s, the cluster benchmark's: the paper's "
        "DollyMP with the project's live extensions; `dollymp` is the paper's algorithm alone, whose "
        "clone counts need the spread of task times that recurring runs of a job teach it: see --rounds)",
    )
    p.add_argument(
        "--policy-options",
        default=bench_cluster.BENCH_POLICY_OPTIONS,
        help="the policy's options as JSON (default %(default)s; '{}' for the policy's own defaults)",
    )


def run(args: argparse.Namespace) -> int:
    show = Display()
    names = [s.strip() for s in args.schedulers.split(",") if s.strip()]
    bad = [s for s in names if s not in SCHEDULER_NAMES]
    if bad or not names:
        print(f"dollymp demo: --schedulers: unknown {bad}; choose from capacity, dollymp", file=sys.stderr)
        return 2
    try:
        show.say("building what the demo needs (cached after the first run)")
        lib = artifacts.hadoop_lib(show.say)
        jar = artifacts.plugin_jar(show.say)
        show.say(f"  Hadoop jars: {lib}; plugin jar: {jar.path} ({jar.origin})")
        policy = (args.policy, args.policy_options)
        runs = [
            run_scheduler(s, args.nodes, args.work_dir, show, args.hold, policy, args.rounds) for s in names
        ]
    except KeyboardInterrupt:
        show.say("interrupted: every process stopped")
        return 130
    except (artifacts.BuildError, OSError, RuntimeError) as exc:
        show.say(f"FAILED: {exc}")
        return 1
    print()
    print(summary(runs))
    print()
    ok = all(r.ok for run_ in runs for r in run_.results.values())
    ok = ok and all(sum(r.placements.values()) > 0 for r in runs if r.scheduler == "dollymp")
    show.say(
        f"demo {'OK' if ok else 'FAILED'} in {time.monotonic() - show.t0:.0f} s; logs in {args.work_dir}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""The newcomer's demo (``make demo``, ``dollymp demo``, ``python -m pyscheduler.deploy.demo``).

Builds what it needs (Hadoop's jars from Maven, the plugin jar), then runs the same short mix of real
Hadoop jobs on a local multi-process YARN cluster twice, side by side: once with CapacityScheduler and
once with the DollyMP shim and the decision service. One NodeManager runs at ``nice 19``: a slow,
contended machine, so tasks placed there straggle. Prints each job's flowtime under both schedulers,
then where to look (RM UI, the decision-log API, a query that explains one decision); the summary
ends with the operator page's address and the timeline there of each job that got clones (``--hold``
keeps the cluster, and so the page, up after it). Ctrl-C stops everything; no process is left behind.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from pyscheduler.deploy import amrecords, artifacts, bench_cluster, benchmix, jobs
from pyscheduler.deploy.demomix import (
    MIX,
    SCHEDULER_NAMES,
    STRAGGLER_BASE_MS,
    STRAGGLER_CAP,
    STRAGGLER_SHAPE,
    MixJob,
    Run,
    fmt_s,
    page_url,
    summary,
)
from pyscheduler.deploy.display import Display
from pyscheduler.deploy.localcluster import LocalCluster
from pyscheduler.deploy.rest import get_json


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
    hold: Callable[[Run], None] | None,
    policy: tuple[str, str | None],
    rounds: int = 1,
) -> Run:
    """The mix `rounds` times on one cluster under `scheduler`; the last round's results. Under DollyMP,
    `hold` (if any) is called with them while the cluster is still up (`--hold`: it never returns).

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
        run.api = cluster.service_api_url
        if cluster.service_api_url:
            show.say(f"  decision service: gRPC 127.0.0.1:{cluster.grpc_port}, API {cluster.service_api_url}")
            show.say(f"  operator page: {page_url(cluster.service_api_url)}")
        show.say(f"  RM UI: {cluster.rm_web_url}   logs: {cluster.log_dir}")
        for i in range(1, rounds + 1):
            if rounds > 1:
                what = "measured" if i == rounds else "the service learns the recurring jobs' run times"
                show.say(f"  round {i} of {rounds} ({what})")
            run.results = run_mix(cluster, base / f"data-{i}", show, extra)
            run.load_avg = os.getloadavg()[0]
        for name, r in run.results.items():
            run.placements[name] = _placements(cluster, r.app_id)
            run.containers[name] = _containers_ran(cluster, r.app_id)
            if run.records is not None and r.app_id:
                run.missions[name] = amrecords.read_app(run.records, r.app_id)
            show.say(f"  {name}: {r.final_status} in {fmt_s(r.rm_elapsed_s)} ({r.app_id})")
        if scheduler == "dollymp":
            explain(cluster, run, show)
            if hold is not None:
                hold(run)
    run.wall_s = time.monotonic() - t0
    return run


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
    show.say(f"  reduce map reads     {api}/v1/decisions?kind=map_read   (own or first map copy)")
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
        default=benchmix.BENCH_POLICY,
        help="the decision service's policy (default %(default)s: the production configuration, which "
        "`dollymp serve` runs with no flags; `dollymp` is the paper's algorithm alone, whose "
        "clone counts need the spread of task times that recurring runs of a job teach it: see --rounds)",
    )
    p.add_argument(
        "--policy-options",
        default=benchmix.BENCH_POLICY_OPTIONS,
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
        runs: list[Run] = []

        def hold(last: Run) -> None:  # the summary, then the cluster stays up for its pages
            _print_summary([*runs, last])
            show.say("cluster kept running; press Ctrl-C to stop it")
            while True:
                time.sleep(1)

        for s in names:
            runs.append(
                run_scheduler(
                    s, args.nodes, args.work_dir, show, hold if args.hold else None, policy, args.rounds
                )
            )
    except KeyboardInterrupt:
        show.say("interrupted: every process stopped")
        return 130
    except (artifacts.BuildError, OSError, RuntimeError) as exc:
        show.say(f"FAILED: {exc}")
        return 1
    _print_summary(runs)
    ok = all(r.ok for run_ in runs for r in run_.results.values())
    ok = ok and all(sum(r.placements.values()) > 0 for r in runs if r.scheduler == "dollymp")
    show.say(
        f"demo {'OK' if ok else 'FAILED'} in {time.monotonic() - show.t0:.0f} s; logs in {args.work_dir}"
    )
    return 0 if ok else 1


def _print_summary(runs: Sequence[Run]) -> None:
    print()
    print(summary(runs))
    print()


if __name__ == "__main__":
    sys.exit(main())

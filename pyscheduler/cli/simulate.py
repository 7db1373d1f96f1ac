"""`dollymp simulate`: run policies side by side on one workload, cluster, straggler model and seed."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from pyscheduler.sim.engine import SHUFFLE_MODES, SimConfig
from pyscheduler.sim.loaders import FORMATS, SwimDerivation, load_workload
from pyscheduler.sim.runner import Comparison, apply_load, compare, scale_cluster
from pyscheduler.sim.straggler import parse_straggler
from pyscheduler.sim.workload import TraceError, load_cluster

DEFAULT_POLICIES = "fifo,capacity,drf,tetris,dollymp2"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("simulate", help="trace-driven simulation of several policies side by side")
    p.add_argument(
        "--workload",
        required=True,
        help="trace or native JSONL file (or Google shard folder); with --format synthetic a generator: "
        "dag[:jobs=N,rate=R,...] (multi-phase DAGs, heavy-tailed sizes, pyscheduler/sim/synthetic_dag.py) or "
        "mw[:jobs=N] (paper 003's Master-Worker model), seeded by --seed unless seed=S is given",
    )
    p.add_argument("--format", choices=FORMATS, default="native")
    p.add_argument(
        "--cluster", required=True, help='cluster JSON: {"nodes": [{"count", "cpu", "mem_mb", "speed"}]}'
    )
    p.add_argument(
        "--policies",
        default=DEFAULT_POLICIES,
        help="comma-separated registered names; dollympN = dollymp with max_clones N; "
        "name(key=value;key=value) passes options",
    )
    p.add_argument(
        "--straggler",
        default="pareto:alpha=1.5,cap=20",
        help="pareto:alpha=A[,xm=1][,cap=C] | empirical | none; default: capped at 20x (DollyMP Sec. 6.3)",
    )
    p.add_argument(
        "--load",
        type=float,
        default=None,
        help="raise or lower the offered load (with E[slowdown]) to X, see --load-by",
    )
    p.add_argument(
        "--load-by",
        choices=("arrivals", "cluster"),
        default="arrivals",
        help="reach --load by rescaling arrival times (default) or by shrinking the cluster's node "
        "counts (DollyMP Sec. 6.3.1), which keeps the trace's arrival process",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", dest="json_out", default=None, help="write the results as JSON here")
    p.add_argument("--report", default=None, help="write CDF plots (PNG) and a Markdown summary into DIR")
    p.add_argument("--limit", type=int, default=None, help="keep only the first N jobs by arrival")
    p.add_argument(
        "--every",
        type=int,
        default=1,
        help="keep every N-th job by arrival (before --limit): the trace's whole window with 1/N of its "
        "jobs; pair with --cluster-scale 1/N",
    )
    p.add_argument(
        "--cluster-scale",
        type=float,
        default=None,
        help="multiply every node type's count by F (at least one node each), before --load",
    )
    p.add_argument("--tick", type=float, default=1.0, help="minimum seconds between decision rounds")
    p.add_argument("--shuffle", choices=SHUFFLE_MODES, default="delay", help="how downstream clones read")
    p.add_argument("--bandwidth", type=float, default=100.0, help="shuffle read bandwidth per reader, MB/s")
    p.add_argument(
        "--swim-max-tasks",
        type=int,
        default=SwimDerivation().max_tasks,
        help="SWIM: at most this many tasks per phase",
    )
    p.add_argument("--quiet", action="store_true", help="no progress line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        return _run(args)
    except (ValueError, TraceError, FileNotFoundError) as exc:
        print(f"dollymp simulate: error: {exc}", file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    straggler = parse_straggler(args.straggler)
    for name, v in (("--tick", args.tick), ("--bandwidth", args.bandwidth)):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be > 0, got {v!r}")
    cluster = load_cluster(args.cluster)
    jobs, report = load_workload(
        args.workload,
        args.format,
        limit=args.limit,
        every=args.every,
        swim=SwimDerivation(max_tasks=args.swim_max_tasks),
        seed=args.seed,
    )
    print(report.summary())
    for err in report.errors:
        print(f"  malformed: {err}")
    if report.notes:
        print(f"  notes: {len(report.notes)} (first: {report.notes[0]})")
    if not jobs:
        raise ValueError(f"{args.workload}: no usable jobs")
    config = SimConfig(
        straggler=straggler,
        seed=args.seed,
        tick=args.tick,
        shuffle=args.shuffle,
        bandwidth_mb_s=args.bandwidth,
    )
    if args.cluster_scale is not None:
        n = len(cluster.nodes)
        cluster = scale_cluster(cluster, args.cluster_scale)
        print(f"cluster {n} -> {len(cluster.nodes)} nodes (--cluster-scale {args.cluster_scale:g})")
    if args.load is not None:
        jobs, cluster, line = apply_load(jobs, cluster, args.load, straggler.mean_slowdown, args.load_by)
        print(line)
    policies = [p for p in (x.strip() for x in args.policies.split(",")) if p]
    if not policies:
        raise ValueError("--policies: name at least one policy")
    cmp = compare(jobs, cluster, policies, config, show_progress=not args.quiet and sys.stderr.isatty())
    print(format_table(cmp))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(cmp.as_json(), indent=2, default=float))
    if args.report:
        from pyscheduler.sim.report import write_run_report

        write_run_report(cmp, Path(args.report), " ".join(sys.argv))
    incomplete = [n for n, m in cmp.results.items() if m.jobs_unfinished]
    if incomplete:
        print(f"warning: unfinished jobs under {', '.join(incomplete)}", file=sys.stderr)
    return 0


def format_table(cmp: Comparison) -> str:
    from pyscheduler.sim.metrics import DOLLY_BINS

    s = cmp.settings
    lines = [
        f"{s['jobs']} jobs ({s['total_tasks']} tasks) on {s['nodes']} nodes, straggler {s['straggler']}, "
        f"seed {s['seed']}, shuffle {s['shuffle']}, offered load {cmp.load:.3f}",
        f"lower bound avg flowtime {cmp.bound.avg:.2f} s",
    ]
    bins = [b[0] for b in DOLLY_BINS]
    head = (
        f"{'policy':<22}{'avg':>9}{'p50':>9}{'p90':>9}{'p99':>10}"
        + "".join(f"{b:>10}" for b in bins)
        + f"{'clone%':>8}{'extra%':>8}{'makespan':>11}{'LBx':>7}{'util':>7}{'wait%':>7}{'done':>13}"
        + f"{'wall s':>8}"
    )
    ref = cmp.no_clone_reference()
    if ref is not None:
        lines.append(f"clone% = losing copies' share of resource-seconds; extra% = resources vs {ref.policy}")
    lines.append(
        "util = time-weighted dominant utilisation over the arrival span; "
        "wait% = share of its rounds leaving a task waiting for room"
    )
    lines.append(head)
    for name, m in cmp.results.items():
        byb = m.by_bin()
        cells = "".join(f"{byb[b]['avg_flowtime']:>10.1f}" if b in byb else f"{'-':>10}" for b in bins)
        ratio = m.avg_flowtime / cmp.bound.avg if cmp.bound.avg else math.nan
        extra = f"{100 * m.extra_vs(ref):.1f}%" if ref is not None else "-"
        lines.append(
            f"{name:<22}{m.avg_flowtime:>9.1f}{m.pct(50):>9.1f}{m.pct(90):>9.1f}{m.pct(99):>10.1f}"
            f"{cells}{100 * m.clone_extra_resource_frac:>7.1f}%{extra:>8}{m.makespan:>11.0f}{ratio:>7.2f}"
            f"{m.utilisation:>7.3f}{100 * m.wait_rounds:>6.1f}%"
            f"{m.jobs_completed:>7}/{m.jobs_completed + m.jobs_unfinished:<5}{m.wall_seconds:>8.1f}"
        )
    lines.extend(_split_lines(cmp))
    return "\n".join(lines)


def _split_lines(cmp: Comparison) -> list[str]:
    """avg flowtime = own time + waiting - saved, per policy (sim/owntime.py)."""
    own = cmp.settings.get("own_time_avg")
    split = {n: m.extra["flowtime_split"] for n, m in cmp.results.items() if "flowtime_split" in m.extra}
    if own is None or not split:
        return []
    jobs = cmp.bound.jobs
    floor = cmp.bound.critical_path_total / jobs if jobs else 0.0
    two = float(cmp.settings.get("own_time_2_clones_avg", own))
    lines = [
        f"own time avg {own:.1f} s (each job alone on the fastest nodes, its originals winning); "
        "avg flowtime = own + waiting - saved by clones; top1% = share of all waiting in the 1% of jobs "
        "that wait longest",
        f"clones can save at most {max(own - floor, 0.0):.1f} s of it (own time less the lower bound's "
        f"critical path, {floor:.1f} s: every task as short as any copy of it can be); with two clones of "
        f"every task from its start and no restart, alone: {two:.1f} s",
        f"{'policy':<22}{'waiting':>9}{'saved':>9}{'top1%':>7}",
    ]
    for name, d in split.items():
        lines.append(f"{name:<22}{d['waiting']:>9.1f}{d['saved']:>9.1f}{100 * d['top_share']:>6.0f}%")
    return lines

"""`dollymp simulate`: run policies side by side on one workload, cluster, straggler model and seed."""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from pyscheduler.sim.engine import SHUFFLE_MODES, SimConfig
from pyscheduler.sim.loaders import FORMATS, SwimDerivation, load_workload
from pyscheduler.sim.runner import MECHANISMS, apply_load, compare, scale_cluster
from pyscheduler.sim.straggler import parse_straggler
from pyscheduler.sim.table import format_table
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
    p.add_argument(
        "--mechanism",
        choices=MECHANISMS,
        default="service",
        help="service (default): each policy through the decision service's own round, the simulator "
        "playing the RM and the AM helpers (what `dollymp serve` decides); core: the policy alone in the "
        "trace engine, a faster approximation (pyscheduler/sim/live/fromtrace.py says what differs)",
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
    cmp = compare(
        jobs,
        cluster,
        policies,
        config,
        show_progress=not args.quiet and sys.stderr.isatty(),
        mechanism=args.mechanism,
    )
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

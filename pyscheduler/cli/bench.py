"""`dollymp bench <target>`: benchmarks that print their figures. Targets live in BENCH_TARGETS.

Add a target by writing `_add_<name>(parser)` / `_run_<name>(args) -> int` and one line in BENCH_TARGETS.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from pyscheduler.service.rmproxy.stats import percentile

AddArgs = Callable[[argparse.ArgumentParser], None]
Run = Callable[[argparse.Namespace], int]


def _positive(value: str) -> int:
    n = int(value)
    if n < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    return n


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # Linux reports KiB


def _add_engine(p: argparse.ArgumentParser) -> None:
    p.add_argument("--jobs", type=_positive, default=1000, help="active jobs in the snapshot")
    p.add_argument("--nodes", type=_positive, default=30000, help="nodes in the snapshot")
    p.add_argument("--rounds", type=_positive, default=20, help="decision rounds to time")
    p.add_argument("--policy", default="default", help="registered policy name (default %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--max-median-ms", type=float, default=None, help="exit 1 if the median round is slower")
    p.add_argument(
        "--max-cpu-median-ms",
        type=float,
        default=None,
        help="exit 1 if the median CPU time per round is higher (robust on a busy host)",
    )


def _run_engine(args: argparse.Namespace) -> int:
    from pyscheduler.bench.engine_data import random_snapshot
    from pyscheduler.policies import get_policy

    options: dict[str, Any] = {"recompute": "every_round"} if args.policy == "dollymp" else {}
    policy = get_policy(args.policy, **options)
    snap = random_snapshot(args.jobs, args.nodes, args.seed)
    policy.decide(snap)  # warm-up (imports, caches)
    times: list[float] = []
    cpu: list[float] = []
    placed = 0
    for _ in range(args.rounds):
        start, start_cpu = time.perf_counter(), time.process_time()
        decisions = policy.decide(snap)
        times.append((time.perf_counter() - start) * 1e3)
        cpu.append((time.process_time() - start_cpu) * 1e3)
        placed = decisions.num_placements
    result = {
        "jobs": args.jobs,
        "nodes": args.nodes,
        "rounds": args.rounds,
        "median_ms": round(statistics.median(times), 3),
        "p99_ms": round(percentile(times, 99), 3),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "cpu_median_ms": round(statistics.median(cpu), 3),  # this process's CPU time: robust to a busy host
        "placements": placed,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(
            f"policy {args.policy}: {args.jobs} jobs x {args.nodes} nodes, {args.rounds} rounds, "
            f"{placed} placements per round"
        )
        print(
            f"median {result['median_ms']} ms (CPU {result['cpu_median_ms']} ms), p99 {result['p99_ms']} ms "
            f"per round, peak RSS {result['peak_rss_mb']} MB"
        )
    failed = [
        f"{key} {result[key]} > {limit}"
        for key, limit in (("median_ms", args.max_median_ms), ("cpu_median_ms", args.max_cpu_median_ms))
        if limit is not None and float(result[key]) > limit
    ]
    if failed:
        print("threshold exceeded: " + "; ".join(failed), file=sys.stderr)
        return 1
    return 0


def _add_service(p: argparse.ArgumentParser) -> None:
    from pyscheduler.bench import service_load

    service_load.add_args(p)


def _run_service(args: argparse.Namespace) -> int:
    from pyscheduler.bench import service_load

    return service_load.run(args)


def _add_ui(p: argparse.ArgumentParser) -> None:
    from pyscheduler.bench import ui

    ui.add_args(p)


def _run_ui(args: argparse.Namespace) -> int:
    from pyscheduler.bench import ui

    return ui.run(args)


def _add_streams(p: argparse.ArgumentParser) -> None:
    from pyscheduler.bench import streams

    streams.add_args(p)


def _run_streams(args: argparse.Namespace) -> int:
    from pyscheduler.bench import streams

    return streams.run(args)


def _add_sls(p: argparse.ArgumentParser) -> None:
    from pyscheduler.bench import sls

    sls.add_args(p)


def _run_sls(args: argparse.Namespace) -> int:
    from pyscheduler.bench import sls

    return sls.run(args)


def _add_mechanisms(p: argparse.ArgumentParser) -> None:
    from pyscheduler.bench import mechanisms

    mechanisms.add_args(p)


def _run_mechanisms(args: argparse.Namespace) -> int:
    from pyscheduler.bench import mechanisms

    return mechanisms.run(args)


def _add_choose(p: argparse.ArgumentParser) -> None:
    from pyscheduler.bench import choose

    choose.add_args(p)


def _run_choose(args: argparse.Namespace) -> int:
    from pyscheduler.bench import choose

    return choose.run(args)


def _add_all(p: argparse.ArgumentParser) -> None:
    from pyscheduler.bench import suite

    suite.add_args(p)


def _run_all(args: argparse.Namespace) -> int:
    from pyscheduler.bench import suite

    return suite.run_all(args)


def _add_compare(p: argparse.ArgumentParser) -> None:
    from pyscheduler.bench import suite

    suite.add_compare_args(p)


def _run_compare(args: argparse.Namespace) -> int:
    from pyscheduler.bench import suite

    return suite.run_compare(args)


def _add_tenants(p: argparse.ArgumentParser) -> None:
    from pyscheduler.bench import tenants

    tenants.add_args(p)


def _run_tenants(args: argparse.Namespace) -> int:
    from pyscheduler.bench import tenants

    return tenants.run(args)


def _add_am(p: argparse.ArgumentParser) -> None:
    from pyscheduler.bench import am

    am.add_args(p)


def _run_am(args: argparse.Namespace) -> int:
    from pyscheduler.bench import am

    return am.run(args)


def _add_record_history(p: argparse.ArgumentParser) -> None:
    from pyscheduler.deploy import yarnhistory

    yarnhistory.add_args(p)


def _run_record_history(args: argparse.Namespace) -> int:
    from pyscheduler.deploy import yarnhistory

    return yarnhistory.run(args)


BENCH_TARGETS: dict[str, tuple[str, AddArgs, Run]] = {
    "all": ("every scenario of pyscheduler/bench/scenarios.toml, one table (make bench)", _add_all, _run_all),
    "compare": ("the scenarios at another git revision and here, side by side", _add_compare, _run_compare),
    "engine": ("decision rounds of a policy on a random snapshot", _add_engine, _run_engine),
    "service": ("the gRPC service driven by a shim-like load generator", _add_service, _run_service),
    "sls": (
        "one trace through Hadoop SLS under CapacityScheduler, FairScheduler and DollyMP",
        _add_sls,
        _run_sls,
    ),
    "record-history": (
        "save a running cluster's JobHistory and RM answers as a trace for bench sls (--format yarn-history)",
        _add_record_history,
        _run_record_history,
    ),
    "streams": ("other HTTP queries and memory under many live SSE subscribers", _add_streams, _run_streams),
    "mechanisms": (
        "dollymp simulate's service round against the policy-only engine over seeds",
        _add_mechanisms,
        _run_mechanisms,
    ),
    "choose": (
        "the declared procedure that picks the production configuration (policy default)",
        _add_choose,
        _run_choose,
    ),
    "tenants": (
        "one tenant's RM rounds with and without another tenant's AM flood",
        _add_tenants,
        _run_tenants,
    ),
    "am": (
        "one large job's AM plan requests beside a cluster's RM rounds, with and without the AM",
        _add_am,
        _run_am,
    ),
    "ui": ("the operator page in headless Chromium under a stream of decisions", _add_ui, _run_ui),
}


def register(subparsers: Any) -> None:
    bench = subparsers.add_parser("bench", help="benchmarks that print their figures")
    targets = bench.add_subparsers(dest="target", required=True)
    for name, (help_text, add_args, run) in BENCH_TARGETS.items():
        p = targets.add_parser(name, help=help_text)
        add_args(p)
        p.set_defaults(func=run)

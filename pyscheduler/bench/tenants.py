"""`dollymp bench tenants`: one tenant's RM rounds with and without another tenant's AM flood.

A `dollymp serve` process (loopback, no HTTP API) is driven by the shim-like load of `dollymp bench service`
(pyscheduler.bench.service_load: a pretend RM of `--nodes` nodes and `--apps` applications in queue
`default`, one batch a tick). Its full resync also mirrors one more application, in queue `adhoc`: the
flooder. In the `flood` phase another process is that application's AM helper and sends, one call after
another as fast as they are answered, what stays within every bound (issue 57): a job profile of
`--flood-phases` phases of `--flood-tasks` tasks, attempt reports of `--flood-attempts` attempts and plan
requests. The `quiet` phase runs the same load without it. Each repeat runs both phases on a fresh
service (in alternating order); measured per phase: the service's round time (p50, p99: its SYNC_STATS,
which time every round of the RM's session) and the pretend RM's batch-to-plan time, and the flooder's
calls answered (fresh, deferred: the AM budget's reason, refused).

Prints, per figure, the median over the repeats and the spread [min, max], the flood's effect on the
round p99 (median of flood / median of quiet - 1), and last one JSON line. Not a timed test: run it by
hand (a shared machine's noise is larger than 10% on single runs: use repeats).

Measured (2 cores shared with other work, 200 nodes, 50 applications, 15 s phases after 10 s, median
[min, max]): before the AM budgets (one repeat) round p99 quiet 7.38 ms, flooded 173 ms (+2246%), all 42
flood calls fresh. At the defaults (`--repeats 5`, load 3 to 6): quiet 7.23 ms [5.05, 13.69], flooded
14.44 ms [7.69, 63.41] (+100%), round CPU p99 3.62 and 4.17 ms, p50 2.47 and 2.69 ms; 147 flood calls,
15 fresh and 132 deferred. With appmaster.cpu_burst_s = 1 (`--repeats 3`, a quieter machine): quiet
6.74 ms [6.64, 7.93], flooded 6.25 ms [4.90, 10.81] (-7.3%).
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import statistics
import sys
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pyscheduler.bench.service_load import drive, paired_phases, start_serve, stop_serve, wait_address
from pyscheduler.bench.shim_model import ShimModel
from pyscheduler.wire import pb

FLOOD_APP = 999_999  # the flooder's application number (pyscheduler.bench.shim_model ids)


class _TwoTenants(ShimModel):
    """The pretend RM with one more application, in queue adhoc, that has no asks: the flooder."""

    def full_resync(self, session_id: str) -> Any:
        batch = super().full_resync(session_id)
        batch.apps_upserted.append(
            pb.ApplicationInfo(
                application_id=f"application_1700000000000_{FLOOD_APP:06d}",
                attempt_id=self.attempt(FLOOD_APP),
                queue="adhoc",
                user="mallory",
                name="flood",
                submit_time_ms=1_700_000_000_000,
                application_type="MAPREDUCE",
            )
        )
        return batch


def _profile(app_id: str, phases: int, tasks: int) -> Any:
    return pb.JobProfile(
        application_id=app_id,
        job_name="flood",
        submit_time_ms=1,
        phases=[
            pb.PhaseProfile(
                phase_id=f"p{i}",
                tasks=tasks,
                demand=pb.Resource(memory_mb=1024, vcores=1),
                parents=[f"p{i - 1}"] if i else [],
                yarn_priority=20,
            )
            for i in range(phases)
        ],
    )


def _reports(app_id: str, attempts: int, round_no: int) -> Any:
    seq = app_id.rsplit("_", 1)[1]
    now = int(time.time() * 1000)
    out = pb.AttemptReports(application_id=app_id)
    for i in range(attempts):
        done = (i + round_no) % 3 == 0
        out.attempts.add(
            task_id=f"task_1700000000000_{seq}_m_{i:06d}",
            attempt_id=f"attempt_1700000000000_{seq}_m_{i:06d}_0",
            phase_id="p0",
            container_id=f"container_1700000000000_{seq}_01_{i + 2:06d}",
            node_id=f"node{i % 100}:8041",
            state=pb.ATTEMPT_SUCCEEDED if done else pb.ATTEMPT_RUNNING,
            duration_s=30.0 + i % 7 if done else 0.0,
            progress=1.0 if done else 0.5,
            time_ms=now,
            launch_time_ms=now - 30_000,
        )
    return out


def _flood(address: str, args: dict[str, Any], seconds: float, out: Connection) -> None:
    """The flooder's AM helper, in a process of its own: calls until `seconds` pass; sends its counts."""
    import grpc

    from pyscheduler.wire import pb_grpc

    app_id = f"application_1700000000000_{FLOOD_APP:06d}"
    counts = {"calls": 0, "fresh": 0, "deferred": 0, "refused": 0}
    reasons: dict[str, int] = {}
    profile = _profile(app_id, args["phases"], args["tasks"])
    with grpc.insecure_channel(
        address,
        options=[("grpc.max_send_message_length", 256 << 20), ("grpc.max_receive_message_length", 256 << 20)],
    ) as ch:
        am = pb_grpc.AppMasterServiceStub(ch)
        deadline = time.monotonic() + seconds
        n = 0
        while time.monotonic() < deadline:
            n += 1
            report = _reports(app_id, args["attempts"], n)
            calls: tuple[Callable[[], Any], ...] = (
                lambda: am.ReportJobProfile(profile, timeout=60),
                lambda: am.ReportAttempts(report, timeout=60),  # noqa: B023 (called in this iteration)
                lambda: am.GetClonePlan(pb.ClonePlanRequest(application_id=app_id), timeout=60),
            )
            for call in calls:
                counts["calls"] += 1
                try:
                    plan = call()
                except grpc.RpcError as exc:
                    counts["refused"] += 1
                    key = f"{exc.code().name}: {(exc.details() or '')[:80]}"
                    reasons[key] = reasons.get(key, 0) + 1
                    continue
                if plan.detail.startswith("deferred"):
                    counts["deferred"] += 1
                    key = plan.detail[:100]
                    reasons[key] = reasons.get(key, 0) + 1
                else:
                    counts["fresh"] += 1
    out.send({**counts, "reasons": reasons})
    out.close()


def _phase(args: argparse.Namespace, name: str, tmp: Path, index: int) -> dict[str, Any]:
    """Phase `name` (quiet, flood) on a fresh `dollymp serve`: its figures."""
    flood = name == "flood"
    proc, port_file = start_serve(tmp, f"phase{index}")
    flooder: Any = None
    try:
        address = wait_address(proc, port_file)
        if address is None:
            raise RuntimeError("the service did not start")
        model = _TwoTenants(
            args.nodes, args.apps, args.seed, (5.0, 30.0), (20, 200), "heartbeat", start="warm"
        )
        receive: Connection | None = None
        if flood:
            ctx = multiprocessing.get_context("spawn")
            receive, send = ctx.Pipe(duplex=False)
            spec = {"phases": args.flood_phases, "tasks": args.flood_tasks, "attempts": args.flood_attempts}
            # starts during the warm-up (the resync comes first), ends with the window
            flooder = ctx.Process(
                target=_flood, args=(address, spec, args.warmup + args.seconds + 2.0, send), daemon=True
            )
            flooder.start()
        result = drive(address, model, args.seconds, 2.0 * args.nodes, 0.1, proc.pid, args.warmup)
        calls: dict[str, Any] = {}
        if receive is not None and receive.poll(120):
            calls = receive.recv()
    finally:
        stats = stop_serve(proc)
        if flooder is not None:
            flooder.join(10)
            if flooder.is_alive():
                flooder.terminate()
    return {
        "round_p50_ms": stats.get("round_p50_ms"),
        "round_p99_ms": stats.get("round_p99_ms"),
        "round_cpu_p99_ms": stats.get("round_cpu_p99_ms"),
        "rounds": stats.get("rounds"),
        "batch_p99_ms": result["round_p99_ms"],
        "service_cpu_per_s": result["service_cpu_per_s"],
        "flood_calls": calls,
    }


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} [{min(values):.2f}, {max(values):.2f}]"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--nodes", type=int, default=200)
    p.add_argument("--apps", type=int, default=50)
    p.add_argument("--seconds", type=float, default=15.0, help="measured seconds per phase (default 15)")
    p.add_argument("--warmup", type=float, default=10.0, help="seconds driven before measuring (default 10)")
    p.add_argument("--repeats", type=int, default=3, help="runs of both phases (default 3)")
    p.add_argument("--flood-phases", type=int, default=1000, help="phases of the flood's profile (limit)")
    p.add_argument(
        "--flood-tasks", type=int, default=100_000, help="tasks per phase (limits.tasks_per_phase)"
    )
    p.add_argument("--flood-attempts", type=int, default=10_000, help="attempts per report (the limit)")
    p.add_argument("--seed", type=int, default=0)


def run(args: argparse.Namespace) -> int:
    if min(args.nodes, args.apps, args.repeats) <= 0 or args.seconds <= 0:
        print("dollymp bench tenants: --nodes, --apps, --repeats and --seconds must be > 0", file=sys.stderr)
        return 2
    runs = paired_phases("tenants", args.repeats, ("quiet", "flood"), functools.partial(_phase, args))
    if runs is None:
        return 1
    summary: dict[str, Any] = {"nodes": args.nodes, "apps": args.apps, "repeats": args.repeats}
    for name, figs in runs.items():
        for key in ("round_p50_ms", "round_p99_ms", "round_cpu_p99_ms", "batch_p99_ms"):
            values = [float(f[key]) for f in figs if f[key] is not None]
            if values:
                summary[f"{name}_{key}"] = {
                    "median": round(statistics.median(values), 3),
                    "min": round(min(values), 3),
                    "max": round(max(values), 3),
                }
                print(f"{name:5s} {key:16s} {_spread(values)}")
    calls = [f["flood_calls"] for f in runs["flood"] if f["flood_calls"]]
    if calls:
        summary["flood_calls"] = calls
        tot = {k: sum(c[k] for c in calls) for k in ("calls", "fresh", "deferred", "refused")}
        print(f"flood calls over the repeats: {tot}")
    q, f = summary.get("quiet_round_p99_ms"), summary.get("flood_round_p99_ms")
    if q and f and q["median"] > 0:
        summary["flood_effect_on_round_p99"] = round(f["median"] / q["median"] - 1.0, 3)
        print(f"the other tenant's round p99: {summary['flood_effect_on_round_p99']:+.1%} with the flood")
    print(json.dumps(summary))
    return 0

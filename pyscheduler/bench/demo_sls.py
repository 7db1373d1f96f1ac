"""The demo's last part (`dollymp demo`, `make demo`): a short Scheduler Load Simulator comparison beside the
real jobs, so that a newcomer sees a scheduling result where scheduling, not this machine, decides it.

The real jobs before it run a handful of containers of real JVMs on this machine's cores: each task JVM's
start-up costs about 1.5 CPU-seconds, so when the machine is contended their times say more about its CPU
than about the scheduler (the demo's summary then says so and prints no ratio, pyscheduler/deploy/
demomix.py). This part runs `dollymp bench sls` (pyscheduler/bench/sls.py) small: DEMO_JOBS jobs of the
FB-2010 day on DEMO_NODES simulated NodeManagers, at offered load 0.8, under CapacityScheduler (stock
speculation), FairScheduler and the DollyMP shim with the decision service running the production
configuration, one seed; the real ResourceManager and scheduler code, simulated nodes and AMs, straggler
slowdowns drawn as `dollymp simulate` draws them. It prints each scheduler's average flowtime, its jobs of
1-10 tasks, the clones, the ratios, `dollymp simulate`'s prediction and the service's round time, and what
each part shows. The full benchmark is `make bench-sls` (1,000 NodeManagers, 500 jobs, `--seeds N`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from pyscheduler.bench.sls import DEFAULT_TRACE, SlsSettings, run_bench
from pyscheduler.bench.sls_trace import SlsCluster, SlsInputError

DEMO_NODES = 500
DEMO_JOBS = 80
DEMO_TIME_SCALE = 0.05  # task times x this: each scheduler's run is about a minute here
NAMES = {"capacity": "CapacityScheduler", "fair": "FairScheduler", "dollymp": "DollyMP"}


def settings(jobs: int = DEMO_JOBS, nodes: int = DEMO_NODES) -> SlsSettings:
    return SlsSettings(
        trace=str(DEFAULT_TRACE),
        fmt="swim",
        jobs=jobs,
        cluster=SlsCluster(nodes=nodes),
        time_scale=DEMO_TIME_SCALE,
        timeout_s=600,
        java_heap="3g",
    )


def lines(r: dict[str, Any]) -> list[str]:
    """The section's table and what it shows, from one `run_bench` result."""
    out = [
        f"Scheduler Load Simulator: {r['jobs']} jobs of the FB-2010 day on {r['nodes']} simulated "
        "NodeManagers, the real ResourceManager and schedulers, one seed",
        f"{'scheduler':<20}{'avg flowtime':>14}{'jobs 1-10 tasks':>17}{'clones':>8}{'won':>6}{'killed':>8}"
        f"{'jobs done':>11}",
    ]
    small = r.get("small_jobs_avg_s", {})
    for k, name in NAMES.items():
        c = r["extra_copies"].get(k, {})
        out.append(
            f"{name:<20}{r[f'{k}_avg_s']:>13.1f}s{small.get(k, float('nan')):>16.1f}s"
            f"{c.get('launched', 0):>8}{c.get('won', 0):>6}{c.get('killed', 0):>8}"
            f"{r['jobs_finished'].get(k, 0):>8}/{r['jobs']}"
        )
    out += [
        f"DollyMP / CapacityScheduler {r['ratio_capacity']:.2f} (simulate predicted "
        f"{r['predicted_ratio_capacity']:.2f}); DollyMP / FairScheduler {r['ratio_fair']:.2f} "
        f"(predicted {r['predicted_ratio_fair']:.2f})",
        f"decision service: round p50/p99 {r['round_p50_ms']}/{r['round_p99_ms']} ms, "
        f"{100 * r['stale_frac']:.2f}% of proposals stale, node heartbeat handling "
        f"{r['heartbeat_p99_added_ms']:+.3f} ms at p99 over CapacityScheduler",
        "What each part shows: the real jobs above show the mechanics on real containers (clones launched, "
        "the first copy kept, the losers killed, the reduce clones' map reads); this part shows the "
        "scheduling result at a cluster's scale, one seed (make bench-sls --seeds 3 for medians and spread).",
    ]
    return out


def run_section(jobs: int, nodes: int, work: Path, log: Any = sys.stderr) -> tuple[int, list[str]]:
    """(exit code, the lines to print): 0 when every job finished under all three schedulers."""
    try:
        r = run_bench(settings(jobs, nodes), work, [1], log)
    except (SlsInputError, RuntimeError, OSError) as exc:
        return 1, [f"Scheduler Load Simulator part FAILED: {exc}"]
    done = all(n == r["jobs"] for n in r["jobs_finished"].values())
    return (0 if done else 1), lines(r)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--sls-jobs",
        type=int,
        default=DEMO_JOBS,
        help="jobs in the demo's Scheduler Load Simulator part (default %(default)s; 0 skips it)",
    )
    p.add_argument(
        "--sls-nodes",
        type=int,
        default=DEMO_NODES,
        help="simulated NodeManagers in that part (default %(default)s)",
    )

"""`python -m pyscheduler.sim.live`: the live mechanism measured over seeds (compare.py).

python -m pyscheduler.sim.live --seeds 5 --workload loaded,light
python -m pyscheduler.sim.live --workload light --policy-options '{"max_clones": 1}'
python -m pyscheduler.sim.live --workload light --service '{"appmaster.beaten_margin_s": 2}'
python -m pyscheduler.sim.live --workload loaded --policy capacity --am-speculation --host-cores 2
python -m pyscheduler.sim.live --workload light --host-cores 2 --progress hadoop
python -m pyscheduler.sim.live --seeds 5 --commit plan,heartbeat
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from pyscheduler import config
from pyscheduler.sim.live.cluster import COMMITS, SHIM_COMMIT
from pyscheduler.sim.live.compare import Spread, bench_service, over_seeds
from pyscheduler.sim.live.progress import MODELS, ProgressModel
from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.workload import WORKLOADS, Workload


def _json_object(ap: argparse.ArgumentParser, flag: str, text: str) -> dict[str, Any]:
    try:
        return config.json_object(flag, text)
    except ValueError as exc:
        ap.error(str(exc))


def _check(ap: argparse.ArgumentParser, flag: str, service: dict[str, Any]) -> None:
    """`service` checked as `dollymp serve` checks its configuration (the keys, then the policy's name
    and options, as service/rmproxy/service.py resolves them); an error names the key under `flag`."""
    from pyscheduler.service.round import policy as round_policy

    try:
        cfg = config.load(None, env={}, overrides=service)
        round_policy.resolve(cfg["policy.name"], cfg["policy.options"])
    except (config.ConfigError, ValueError) as exc:
        ap.error(f"{flag}: {exc}")


def _with(workload: Callable[[int], Workload], changes: dict[str, Any], seed: int) -> Workload:
    return dataclasses.replace(workload(seed), **changes)


# Start-up and AM clone-wait flags -> Workload fields (a flag left out keeps the workload's own value)
_STARTUP_FLAGS = {
    "host_cores": "start-ups contend on this many cores (default 0: they do not)",
    "startup_s": "a task container's start-up, CPU-seconds with --host-cores, else seconds",
    "am_startup_s": "an AM container's start-up, as --startup-s",
    "startup_fixed_s": "wall time of every start-up that takes no shared CPU (before its CPU-seconds)",
    "clone_after_start_s": "the AM helper's clone wait: a task's clones wait until a copy reports progress "
    "or its first copy is this many seconds old (dollymp.am.clone.after-start-ms / 1000; default 0)",
}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pyscheduler.sim.live", description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds 1..N (default %(default)s)")
    ap.add_argument(
        "--workload",
        default="loaded,light,swim-fb2010",
        help=f"comma-separated, of {', '.join(WORKLOADS)} (default %(default)s)",
    )
    ap.add_argument("--policy", default=None, help="the service's policy.name (default: the benchmark's)")
    ap.add_argument(
        "--policy-options",
        default=None,
        help="the policy's options as a JSON object (default: the benchmark's with its policy, else the "
        "policy's own); with no --policy, laid over the benchmark's options",
    )
    ap.add_argument(
        "--service",
        default=None,
        help="further service configuration keys as a JSON object (as dollymp serve's config file's)",
    )
    ap.add_argument(
        "--am-speculation",
        action="store_true",
        help="the AMs speculate as Hadoop's stock MRAppMaster (with --policy capacity: the cluster "
        "benchmark's Capacity+speculation half)",
    )
    for field, text in _STARTUP_FLAGS.items():
        ap.add_argument(
            "--" + field.replace("_", "-"), type=float, default=None, help=f"{text} (Workload.{field})"
        )
    ap.add_argument(
        "--progress",
        choices=MODELS,
        default=None,
        help="what an AM sees of its attempts' progress (sim/live/progress.py): exact, or hadoop (a map's "
        "score in StragglerJob's 20 steps, a reduce's from 2/3, each as of its task's last report every "
        "3 s); default: the workload's own",
    )
    ap.add_argument(
        "--warm-history",
        action="store_true",
        help="each measured run follows a run of the same jobs at another seed on the same decision log, "
        "so the recurring-job history holds their run times (default: the service starts cold)",
    )
    ap.add_argument(
        "--commit",
        default=SHIM_COMMIT,
        help="when the simulated shim carries out a plan, comma-separated to compare them seed by seed: plan "
        "(as it arrives) or heartbeat (at the next tick's heartbeat); yarn.scheduler.dollymp.commit "
        "(default %(default)s, the shim's)",
    )
    ap.add_argument("-v", "--verbose", action="store_true", help="one line per run")
    args = ap.parse_args(argv)
    names = [w for w in args.workload.split(",") if w]
    unknown = [w for w in names if w not in WORKLOADS]
    changes: dict[str, Any] = {f: getattr(args, f) for f in _STARTUP_FLAGS if getattr(args, f) is not None}
    if args.progress is not None:
        changes["progress"] = ProgressModel.named(args.progress)
    try:  # each value checked as the Workload checks it, named by its flag
        dataclasses.replace(WORKLOADS["light"](1), **changes)
    except ValueError as exc:
        field = str(exc).split(":")[0].removeprefix("Workload.")
        ap.error(f"--{field.replace('_', '-')}: {str(exc).split(': ', 1)[1]}")
    commits = [c for c in args.commit.split(",") if c]
    if not commits or any(c not in COMMITS for c in commits):
        ap.error(f"--commit: expected plan, heartbeat or both, got {args.commit!r}")
    if unknown or args.seeds < 1:
        ap.error(f"unknown workload(s) {unknown}" if unknown else "need at least one seed")
    service = bench_service() if args.policy is None else {"policy.name": args.policy}
    if args.policy_options is not None:
        extra = _json_object(ap, "--policy-options", args.policy_options)
        base = service.get("policy.options") if args.policy is None else None
        service["policy.options"] = {**(base if isinstance(base, dict) else {}), **extra}
    # refused up front, the key named, as `dollymp serve` refuses it, under the flag that gave it
    _check(ap, "--policy/--policy-options", service)
    if args.service is not None:
        service.update(_json_object(ap, "--service", args.service))
        _check(ap, "--service", service)
    seeds = list(range(1, args.seeds + 1))

    def said(seed: int, rec: LiveRecord) -> None:
        if args.verbose:
            print(
                f"  seed {seed}: mean flowtime {rec.mean_flowtime:.1f} s, clone share "
                f"{rec.clone_share:.3f}, lost share {rec.lost_share:.3f}, clones {len(rec.clones)}, "
                f"kills {len(rec.kills)}; container-s: "
                + ", ".join(f"{k} {v:.3f}" for k, v in rec.held_share().items()),
                flush=True,
            )

    spec = "; AMs speculate as Hadoop's" if args.am_speculation else ""
    spec += f"; progress {args.progress}" if args.progress else ""
    spec += "; after a warm-up run of the same jobs (recurring-job history)" if args.warm_history else ""
    print(f"service: {service}{spec}; seeds {seeds[0]}..{seeds[-1]}; median [min, max] over seeds")
    for name in names:
        t0 = time.monotonic()
        workload = WORKLOADS[name]
        if changes:
            workload = functools.partial(_with, workload, changes)
        results = {}
        for commit in commits:
            r = over_seeds(workload, seeds, service, said, args.am_speculation, args.warm_history, commit)
            results[commit] = r
            label = f"{name}, commit {commit}" if len(commits) > 1 else name
            print(f"{label} ({time.monotonic() - t0:.0f} s of wall time)")
            print(
                f"  mean flowtime {r.flowtime.text('.1f')} s   clone share {r.clone_share.text('.3f')}   "
                f"lost share {r.lost_share.text('.3f')}   service preemptions {r.preempted}, "
                f"clones {r.clones}",
                flush=True,
            )
        if len(commits) == 2:  # the second minus the first, seed by seed
            a, b = (results[c].flowtimes for c in commits)
            diff = Spread.of([y - x for x, y in zip(a, b, strict=True)])
            print(f"  {commits[1]} minus {commits[0]}, seed by seed: {diff.text('+.1f')} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

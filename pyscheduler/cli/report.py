"""`dollymp report`: rerun the reproduction scenarios and rewrite docs/reproduction.md."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from pyscheduler.sim import reproduce_pool

if TYPE_CHECKING:
    from pyscheduler.sim.reproduce_runs import Scenario
    from pyscheduler.sim.runner import Comparison

REPO = Path(__file__).resolve().parents[2]
# the committed report is the full one; a quick run (slices) goes where it cannot overwrite it
FULL = ("docs/reproduction.md", "docs/reproduction")
QUICK = ("var/reproduction/quick/reproduction.md", "var/reproduction/quick/reproduction")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("report", help="run the papers' comparisons and write the reproduction report")
    p.add_argument("--quick", action="store_true", help="slices of the traces (minutes instead of hours)")
    p.add_argument("--only", default="", help="comma-separated scenario keys (default: all)")
    p.add_argument("--traces", default=str(REPO.parent / "shared" / "traces"))
    p.add_argument("--out", default=None, help=f"default {FULL[0]} ({QUICK[0]} with --quick)")
    p.add_argument("--figures", default=None, help=f"PNG folder, default {FULL[1]} ({QUICK[1]} with --quick)")
    at_once = p.add_mutually_exclusive_group()
    at_once.add_argument("--jobs", type=int, default=1, help="run scenarios in this many processes")
    at_once.add_argument(
        "--ray",
        metavar="ADDRESS",
        default=None,
        help="run them as tasks on the Ray cluster at ADDRESS instead: its head's HOST:PORT (as `ray start "
        "--head` prints it), `auto` (the cluster `ray start` started on this machine, or $RAY_ADDRESS's) or "
        "`local` (a new one on this machine's cores, for this report alone). Every node needs this dollymp "
        "with Ray (the `ray` extra), and the traces and the --cache folder at the same paths: on several "
        "machines a shared filesystem (a run is kept there by the node that ran it, --reuse reads it there)",
    )
    p.add_argument(
        "--cache",
        default=str(REPO / "var" / "reproduction" / "cache"),
        help="keep each run's results here, named by its exact command (git-ignored)",
    )
    p.add_argument("--reuse", action="store_true", help="read back kept runs whose command is unchanged")
    p.add_argument(
        "--kept-only", action="store_true", help="with --reuse: leave out the runs that were not kept"
    )
    p.set_defaults(func=run)


def outputs(args: argparse.Namespace) -> tuple[str, str]:
    """Where the report and its plots go: as given, else the committed place, or var/ for a quick run."""
    where = QUICK if args.quick else FULL
    return args.out or str(REPO / where[0]), args.figures or str(REPO / where[1])


def _command(args: argparse.Namespace, keys: list[str]) -> str:
    text = "dollymp report" + (" --quick" if args.quick else "") + (f" --only {args.only}" if keys else "")
    text += " --reuse" if args.reuse else ""
    text += " --kept-only" if args.kept_only else ""
    text += f" --ray {args.ray}" if args.ray else ""
    return text + (f" --jobs {args.jobs}" if args.jobs > 1 else "")


def _run_one(
    key: str, label: str, traces: Path, quick: bool, cache: Path, reuse: bool, kept_only: bool
) -> tuple[dict[str, Comparison], list[str]]:
    """One run, in a process of --jobs or a Ray task: its results and its log lines (the caller prints
    them, so a Ray worker's lines come out whole, in the run's order). The run keeps itself in `cache` where
    it ran, as a serial report does, rather than the caller keeping what it returns: with --reuse the node
    that runs it reads the folder anyway (a kept run, or one kept with fewer policies, decides what runs),
    and a finished run stays kept if the caller dies. On a Ray cluster of several machines `cache` is
    therefore a folder every node shares."""
    from pyscheduler.sim.reproduce import SCENARIOS, run_scenario

    sc = next(s for s in SCENARIOS if s.key == key)
    said: list[str] = []
    run_scenario(sc, traces, quick, said.append, only=label, cache=cache, reuse=reuse, kept_only=kept_only)
    # taken out: a worker process runs several runs of a scenario, and returns each one alone
    found = sc.results.pop(label, None)
    return ({} if found is None else {label: found}), said


def run(args: argparse.Namespace) -> int:
    from pyscheduler.sim.reproduce import SCENARIOS, run_scenario, write_report

    keys = [k for k in args.only.split(",") if k]
    unknown = set(keys) - {s.key for s in SCENARIOS}
    if unknown:
        print(
            f"dollymp report: error: unknown scenario(s) {sorted(unknown)}; known: "
            f"{', '.join(s.key for s in SCENARIOS)}",
            file=sys.stderr,
        )
        return 2
    traces = Path(args.traces)
    if not traces.is_dir():
        print(f"dollymp report: error: --traces {traces} is not a folder", file=sys.stderr)
        return 2
    chosen = [s for s in SCENARIOS if not keys or s.key in keys]
    args.out, args.figures = outputs(args)
    t0 = time.perf_counter()
    if args.jobs > 1 or args.ray:
        try:
            _run_at_once(chosen, traces, args, _command(args, keys), t0)
        except reproduce_pool.Unreachable as e:
            print(f"dollymp report: error: --ray {args.ray}: {e}", file=sys.stderr)
            return 2
    else:
        for sc in chosen:
            print(f"scenario {sc.key}: {sc.title}", flush=True)
            kept = {"cache": Path(args.cache), "reuse": args.reuse, "kept_only": args.kept_only}
            run_scenario(sc, traces, args.quick, lambda m: print(m, flush=True), **kept)
    write_report(
        chosen, Path(args.out), Path(args.figures), args.quick, _command(args, keys), time.perf_counter() - t0
    )
    print(f"wrote {args.out}")
    return 0


def _run_at_once(
    chosen: list[Scenario], traces: Path, args: argparse.Namespace, command: str, t0: float
) -> None:
    """Each run in a process of --jobs or a task on the --ray cluster; a scenario is reported once all its
    runs are in, and the report is rewritten then with the scenarios done so far (partial reports survive)."""
    from pyscheduler.sim.reproduce import write_report

    # absolute: a Ray worker runs in a folder of its own
    cache, traces = Path(args.cache).absolute(), traces.absolute()
    runs = [(sc, run.label) for sc in chosen for run in sc.runs]
    calls = [(sc.key, label, traces, args.quick, cache, args.reuse, args.kept_only) for sc, label in runs]
    left = {sc.key: len(sc.runs) for sc in chosen}
    for i, (results, said) in reproduce_pool.completed(_run_one, calls, args.jobs, args.ray):
        sc = runs[i][0]
        for line in said:
            print(line, flush=True)
        sc.results.update(results)
        left[sc.key] -= 1
        if left[sc.key]:
            continue
        print(f"scenario {sc.key} done", flush=True)
        # in the runs' order, as a serial report has them, not the order they finished in
        sc.results = {r.label: sc.results[r.label] for r in sc.runs if r.label in sc.results}
        done = [x for x in chosen if not left[x.key]]
        write_report(done, Path(args.out), Path(args.figures), args.quick, command, time.perf_counter() - t0)

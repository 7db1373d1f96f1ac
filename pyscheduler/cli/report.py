"""`dollymp report`: rerun the reproduction scenarios and rewrite docs/reproduction.md."""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    p.add_argument("--jobs", type=int, default=1, help="run scenarios in this many processes")
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
    return text + (f" --jobs {args.jobs}" if args.jobs > 1 else "")


def _run_one(
    key: str, label: str, traces: Path, quick: bool, cache: Path, reuse: bool
) -> dict[str, Comparison]:
    from pyscheduler.sim.reproduce import SCENARIOS, run_scenario

    sc = next(s for s in SCENARIOS if s.key == key)
    run_scenario(sc, traces, quick, lambda m: print(m, flush=True), only=label, cache=cache, reuse=reuse)
    return sc.results


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
    if args.jobs > 1:
        # one process per run (a scenario may have several); a scenario is reported once all its runs are in
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            futures = {
                pool.submit(_run_one, sc.key, run.label, traces, args.quick, Path(args.cache), args.reuse): sc
                for sc in chosen
                for run in sc.runs
            }
            for fut in as_completed(futures):
                sc = futures[fut]
                sc.results.update(fut.result())
                if len(sc.results) < len(sc.runs):
                    continue
                print(f"scenario {sc.key} done", flush=True)
                done = [x for x in chosen if len(x.results) == len(x.runs)]  # partial reports survive
                write_report(
                    done,
                    Path(args.out),
                    Path(args.figures),
                    args.quick,
                    _command(args, keys),
                    time.perf_counter() - t0,
                )
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

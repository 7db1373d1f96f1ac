"""`dollymp report`: rerun the reproduction scenarios and rewrite docs/reproduction.md."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("report", help="run the papers' comparisons and write the reproduction report")
    p.add_argument("--quick", action="store_true", help="slices of the traces (minutes instead of hours)")
    p.add_argument("--only", default="", help="comma-separated scenario keys (default: all)")
    p.add_argument("--traces", default=str(REPO.parent / "shared" / "traces"))
    p.add_argument("--out", default=str(REPO / "docs" / "reproduction.md"))
    p.add_argument("--figures", default=str(REPO / "var" / "reproduction"), help="PNG folder (git-ignored)")
    p.set_defaults(func=run)


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
    t0 = time.perf_counter()
    for sc in chosen:
        print(f"scenario {sc.key}: {sc.title}", flush=True)
        run_scenario(sc, traces, args.quick, lambda m: print(m, flush=True))
    command = "dollymp report" + (" --quick" if args.quick else "") + (f" --only {args.only}" if keys else "")
    write_report(chosen, Path(args.out), Path(args.figures), args.quick, command, time.perf_counter() - t0)
    print(f"wrote {args.out}")
    return 0

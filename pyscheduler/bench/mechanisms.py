"""`dollymp bench mechanisms`: `dollymp simulate`'s two mechanisms side by side over seeds and straggler
models, on one trace slice: the service's round (sim/live/fromtrace.py, the default) and the policy-only
engine (`--mechanism core`). Both runs of a seed see the same jobs, cluster, base times and straggler
draws (sim/runner.py `compare`), so what differs is the mechanism. Prints, per straggler model and policy,
the median [min, max] over seeds of the average flowtime under each, the service's over the core's, and
each policy's ratio to `--reference` under each mechanism (what a headline would claim); then one JSON
line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

from pyscheduler.sim.engine import SimConfig
from pyscheduler.sim.loaders import FORMATS, load_workload
from pyscheduler.sim.runner import apply_load, compare, scale_cluster
from pyscheduler.sim.straggler import parse_straggler
from pyscheduler.sim.workload import load_cluster

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT.parent / "shared" / "traces"
DEFAULT_WORKLOAD = TRACES / "swim_facebook" / "FB-2010_samples_24_times_1hr_0.tsv"
DEFAULT_CLUSTER = ROOT / "pyscheduler" / "sim" / "clusters" / "fb3000.json"
MECHANISMS = ("core", "service")


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--workload", default=str(DEFAULT_WORKLOAD), help="trace file (default: FB-2010's day)")
    p.add_argument("--format", choices=FORMATS, default="swim")
    p.add_argument("--cluster", default=str(DEFAULT_CLUSTER), help="cluster JSON (default: fb3000.json)")
    p.add_argument("--limit", type=int, default=40, help="the first N jobs by arrival")
    p.add_argument("--every", type=int, default=1, help="every N-th job by arrival (before --limit)")
    p.add_argument("--cluster-scale", type=float, default=0.006, help="multiply node counts by F")
    p.add_argument("--load", type=float, default=None, help="offered load, reached by --load-by")
    p.add_argument("--load-by", choices=("arrivals", "cluster"), default="cluster")
    p.add_argument("--policies", default="default,dollymp,dollymp0,tetris,capacity")
    p.add_argument("--reference", default="tetris", help="the policy each ratio divides by")
    p.add_argument("--seeds", type=int, default=5, help="seeds 1..N")
    p.add_argument("--stragglers", default="empirical;pareto:alpha=1.5,cap=20", help="models, ';'-separated")
    p.add_argument("--tick", type=float, default=1.0)
    p.add_argument("--json", dest="json_out", default=None, help="also write the JSON here")


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def _cell(s: dict[str, float], fmt: str = ".1f") -> str:
    return f"{s['median']:{fmt}} [{s['min']:{fmt}}, {s['max']:{fmt}}]"


def run(args: argparse.Namespace) -> int:
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    if args.reference not in policies:
        raise SystemExit(f"--reference {args.reference!r} is not among --policies")
    if args.seeds < 1:
        raise SystemExit(f"--seeds must be >= 1, got {args.seeds}")
    jobs0, report = load_workload(args.workload, args.format, limit=args.limit, every=args.every)
    if not jobs0:
        raise SystemExit(f"{args.workload}: no usable jobs")
    cluster0 = scale_cluster(load_cluster(args.cluster), args.cluster_scale)
    print(f"{report.summary()}; {len(cluster0.nodes)} nodes; seeds 1..{args.seeds}; median [min, max]")
    # model -> mechanism -> policy -> avg flowtime per seed; wall seconds per mechanism
    avg: dict[str, dict[str, dict[str, list[float]]]] = {}
    clones: dict[str, dict[str, dict[str, list[float]]]] = {}  # clones launched, as `avg`
    wall: dict[str, list[float]] = {m: [] for m in MECHANISMS}
    util: dict[str, list[float]] = {m: [] for m in MECHANISMS}
    for text in (s.strip() for s in args.stragglers.split(";") if s.strip()):
        straggler = parse_straggler(text)
        avg[text] = {m: {p: [] for p in policies} for m in MECHANISMS}
        clones[text] = {m: {p: [] for p in policies} for m in MECHANISMS}
        for seed in range(1, args.seeds + 1):
            config = SimConfig(straggler=straggler, seed=seed, tick=args.tick)
            jobs, cluster = jobs0, cluster0
            if args.load is not None:
                jobs, cluster, _ = apply_load(jobs, cluster, args.load, straggler.mean_slowdown, args.load_by)
            for mech in MECHANISMS:
                t0 = time.perf_counter()
                cmp = compare(jobs, cluster, policies, config, mechanism=mech)
                wall[mech].append(time.perf_counter() - t0)
                for p in policies:
                    m = cmp.results[p]
                    if m.jobs_unfinished:
                        raise SystemExit(
                            f"{text} seed {seed} {mech} {p}: {m.jobs_unfinished} jobs unfinished"
                        )
                    avg[text][mech][p].append(m.avg_flowtime)
                    clones[text][mech][p].append(float(m.clones_launched))
                    util[mech].append(m.utilisation)
            print(f"  {text} seed {seed}: " + ", ".join(f"{m} {wall[m][-1]:.1f} s" for m in MECHANISMS))
    out: dict[str, Any] = {
        "jobs": len(jobs0),
        "nodes": len(cluster0.nodes),
        "seeds": args.seeds,
        "wall_s": {m: _spread(wall[m]) for m in MECHANISMS},
        "utilisation": {m: _spread(util[m]) for m in MECHANISMS},
        "models": {},
    }
    ref = args.reference
    for text, by_mech in avg.items():
        print(f"\n{text}: average flowtime (s), service / core, and / {ref} under each mechanism")
        head = ["core", "service", "service/core", f"core/{ref}", f"service/{ref}", "clones core", "service"]
        print(
            f"  {'policy':<14}"
            + "".join(f"{h:>24}" for h in head[:2])
            + "".join(f"{h:>22}" for h in head[2:])
        )
        rows: dict[str, Any] = {}
        for p in policies:
            core, service = by_mech["core"][p], by_mech["service"][p]
            both = [s / c for s, c in zip(service, core, strict=True)]
            core_ref = [c / r for c, r in zip(core, by_mech["core"][ref], strict=True)]
            service_ref = [s / r for s, r in zip(service, by_mech["service"][ref], strict=True)]
            rows[p] = {
                "core_avg_s": _spread(core),
                "service_avg_s": _spread(service),
                "service_over_core": _spread(both),
                f"core_over_{ref}": _spread(core_ref),
                f"service_over_{ref}": _spread(service_ref),
            }
            rows[p]["clones_core"] = _spread(clones[text]["core"][p])
            rows[p]["clones_service"] = _spread(clones[text]["service"][p])
            cells = [_cell(rows[p]["core_avg_s"]), _cell(rows[p]["service_avg_s"])]
            ratios = [rows[p][k] for k in ("service_over_core", f"core_over_{ref}", f"service_over_{ref}")]
            counts = [rows[p]["clones_core"], rows[p]["clones_service"]]
            print(
                f"  {p:<14}"
                + "".join(f"{c:>24}" for c in cells)
                + "".join(f"{_cell(r, '.3f'):>22}" for r in ratios)
                + "".join(f"{_cell(c, '.0f'):>22}" for c in counts)
            )
        out["models"][text] = rows
    print("wall s per seed: " + ", ".join(f"{m} {_cell(out['wall_s'][m])}" for m in MECHANISMS))
    line = json.dumps(out, sort_keys=True)
    if args.json_out:
        Path(args.json_out).write_text(line + "\n")
    print(line)
    return 0
